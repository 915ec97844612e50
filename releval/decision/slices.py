"""Query slices, and the paired comparison of a candidate against a baseline per slice.

``labels`` gives every query one or more labels per dimension (rows: query_id, dimension,
slice). A document is relevant to query q when its visible judgment has grade ≥ rel; R_q is
the set of such documents.

- tag: each tag of q; "untagged" when q has none.
- kind: q's tags other than head/tail and the risk tags (high_risk, its domain, multi_intent),
  sorted and joined with "+"; "untagged" when none.
- length: w = word count of q's text (split on whitespace); with (a, b) = length_buckets:
  w ≤ a "short (≤a words)", a < w ≤ b "medium (a+1–b words)", else "long (>b words)".
- tenant, role: the query's column value.
- freshness: "new" if some d ∈ R_q has 0 ≤ issued_at(q) − published_at(d) ≤ new_days days,
  "old" if R_q ≠ ∅ but none is new, "no relevant" if R_q = ∅ (a relevant document missing
  from ``documents`` has no date, so it is never new).
- route_hit: for the first pair "a|b" of the ``route_hits`` table (which window, a's or b's,
  holds each relevant document): A_q = some d ∈ R_q in a's window, B_q likewise; "both" if
  A_q ∧ B_q, "a-only" if A_q ∧ ¬B_q, "b-only" if ¬A_q ∧ B_q, "neither" if R_q ≠ ∅ and neither
  holds one, "no relevant" if R_q = ∅. Skipped (no rows) without a route_hits table.
- user_activity: over the whole query log, users sorted by their query count c_u descending
  (ties by user_id); with C_i the count of the first i users and N the log size, the first
  i* = min{i : C_i ≥ head_users · N} users are "head users", the rest "tail users".
- history: h = the query's history (its user's interactions before the cut): h <
  long_tail_history "long_tail", else "active".
- returning: h = 0 "new", else "returning".
- country: the query's country column ("unknown" where null).
- holdout: "unseen" where the query's user is held out of every route's fitting data, else
  "seen".
history, returning, country and holdout are skipped (no rows) when the queries lack the
column (retrieval queries have none of them).

``slice_table`` compares candidate with baseline on every slice S (and on "all": every query):
n_queries = |S|, mean_<system> = mean of the system's defined (non-NaN) values over S,
n = queries of S defined in both compared systems; a slice with n < min_n (or fewer than 2
resampling units) is "too small" and not tested, else the ``releval.decision.stats.paired`` fields
(d_j = candidate_j − baseline_j). p_holm: Holm over every tested (slice, measure) row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.stats import holm, holm_verdicts, paired_all
from releval.errors import InputError
from releval.params.slices import Slices

UNTAGGED = "untagged"
NO_RELEVANT = "no relevant"
TOO_SMALL = "too small"
HEAD_TAIL = ("head", "tail")
# not a query's kind: its traffic (head/tail) and its risk (the query set's categories)
NOT_KIND = (*HEAD_TAIL, S.HIGH_RISK_TAG, *S.RISK_DOMAINS, S.MULTI_INTENT_TAG)
RANK_PREFIX = "rank_"
PAIR = "pair"
COMPARISON_COLUMNS = ("mean_diff", "median_diff", "wins", "ties", "losses", "ci_low",
                      "ci_high", "p_value", "verdict", "min_effect", "unit")
CHANGED = ("improved", "regressed")
COUNTRY = "country"  # a context column of the user-queries (recommend.context)


@dataclass(frozen=True)
class _Inputs:
    """What the labellers read: ``chosen`` = the labelled queries (query_ids' order), ``log`` =
    the whole query table, ``relevant`` = visible qrels rows with grade ≥ rel."""

    chosen: pd.DataFrame
    log: pd.DataFrame
    relevant: pd.DataFrame
    documents: pd.DataFrame | None
    route_hits: pd.DataFrame | None
    rel: int
    config: Slices



def _per_query(inp: _Inputs, values: pd.Series, default: str) -> pd.DataFrame:
    """One row per chosen query: ``values`` (indexed by query_id), ``default`` where absent."""
    ids = inp.chosen[S.QUERY_ID]
    return pd.DataFrame({S.QUERY_ID: ids.to_numpy(),
                         S.SLICE: ids.map(values).astype(object).fillna(default).to_numpy()})


def _tags(inp: _Inputs) -> pd.DataFrame:
    """(query_id, tag) per distinct tag; queries without tags have no row."""
    q = S.require_columns(inp.chosen, [S.TAGS], "queries")
    tags = q[[S.QUERY_ID, S.TAGS]].explode(S.TAGS).dropna(subset=[S.TAGS])
    return tags.astype({S.TAGS: str}).drop_duplicates()


def _tag(inp: _Inputs) -> pd.DataFrame:
    tags = _tags(inp).rename(columns={S.TAGS: S.SLICE})
    untagged = inp.chosen.loc[~inp.chosen[S.QUERY_ID].isin(tags[S.QUERY_ID]), [S.QUERY_ID]]
    return pd.concat([tags, untagged.assign(**{S.SLICE: UNTAGGED})], ignore_index=True)


def _kind(inp: _Inputs) -> pd.DataFrame:
    tags = _tags(inp)
    tags = tags[~tags[S.TAGS].isin(NOT_KIND)].sort_values([S.QUERY_ID, S.TAGS])
    return _per_query(inp, tags.groupby(S.QUERY_ID)[S.TAGS].agg("+".join), UNTAGGED)


def _length(inp: _Inputs) -> pd.DataFrame:
    q = S.require_columns(inp.chosen, [S.TEXT], "queries")
    a, b = inp.config.length_buckets
    words = q[S.TEXT].fillna("").astype(str).str.split().str.len()
    names = np.select([words <= a, words <= b],
                      [f"short (≤{a} words)", f"medium ({a + 1}–{b} words)"],
                      default=f"long (>{b} words)")
    return pd.DataFrame({S.QUERY_ID: q[S.QUERY_ID].to_numpy(), S.SLICE: names})


def _column(name: str) -> Callable[[_Inputs], pd.DataFrame]:
    def label(inp: _Inputs) -> pd.DataFrame:
        q = S.require_columns(inp.chosen, [name], "queries")
        return pd.DataFrame({S.QUERY_ID: q[S.QUERY_ID].to_numpy(),
                             S.SLICE: q[name].astype(str).to_numpy()})
    return label


def _utc(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values, utc=True)


def _freshness(inp: _Inputs) -> pd.DataFrame:
    q = S.require_columns(inp.chosen, [S.ISSUED_AT], "queries")
    docs = S.require_columns(inp.documents, [S.DOC_ID, S.PUBLISHED_AT], "documents")
    pairs = inp.relevant[inp.relevant[S.QUERY_ID].isin(q[S.QUERY_ID])]
    pairs = pairs.merge(q[[S.QUERY_ID, S.ISSUED_AT]], on=S.QUERY_ID).merge(
        docs[[S.DOC_ID, S.PUBLISHED_AT]].drop_duplicates(S.DOC_ID), on=S.DOC_ID, how="left")
    age = _utc(pairs[S.ISSUED_AT]) - _utc(pairs[S.PUBLISHED_AT])
    new = (age >= pd.Timedelta(0)) & (age <= pd.Timedelta(days=inp.config.new_days))
    any_new = new.groupby(pairs[S.QUERY_ID]).any()
    return _per_query(inp, any_new.map({True: "new", False: "old"}), NO_RELEVANT)


def _route_pair(hits: pd.DataFrame) -> tuple[str, str, pd.DataFrame]:
    """The first pair (a, b) and its rows; without a ``pair`` column the two rank_ columns."""
    if PAIR in hits.columns:
        first = str(hits[PAIR].iloc[0])
        a, sep, b = first.partition("|")
        if not sep:
            raise InputError(f"pair {first!r} is not 'a|b'", "route_hits")
        hits = hits[hits[PAIR] == first]
    else:
        ranks = [c.removeprefix(RANK_PREFIX) for c in hits.columns if c.startswith(RANK_PREFIX)]
        if len(ranks) != 2:
            raise InputError(f"no pair column and {len(ranks)} rank_ columns (need 2)",
                             "route_hits")
        a, b = ranks
    S.require_columns(hits, [S.QUERY_ID, S.GRADE, RANK_PREFIX + a, RANK_PREFIX + b], "route_hits")
    return a, b, hits


def _route_hit(inp: _Inputs) -> pd.DataFrame | None:
    if inp.route_hits is None or inp.route_hits.empty:
        return None
    a, b, hits = _route_pair(inp.route_hits)
    hits = hits[hits[S.GRADE] >= inp.rel]
    found = pd.DataFrame({"a": hits[RANK_PREFIX + a].notna().to_numpy(),
                          "b": hits[RANK_PREFIX + b].notna().to_numpy()},
                         index=hits[S.QUERY_ID].to_numpy()).groupby(level=0).any()
    names = np.select([found["a"] & found["b"], found["a"], found["b"]],
                      ["both", f"{a}-only", f"{b}-only"], default="neither")
    return _per_query(inp, pd.Series(names, index=found.index), NO_RELEVANT)


def _user_activity(inp: _Inputs) -> pd.DataFrame:
    log = S.require_columns(inp.log, [S.USER_ID], "queries")
    S.require_columns(inp.chosen, [S.USER_ID], "queries")
    counts = log.groupby(S.USER_ID, dropna=False).size().rename("n").reset_index()
    counts = counts.sort_values(["n", S.USER_ID], ascending=[False, True], kind="stable")
    before = counts["n"].cumsum() - counts["n"]  # queries of the more active users
    head = before < inp.config.head_users * len(log) - 1e-9
    names = pd.Series(np.where(head, "head users", "tail users"),
                      index=counts[S.USER_ID].to_numpy())
    users = inp.chosen[S.USER_ID]
    return pd.DataFrame({S.QUERY_ID: inp.chosen[S.QUERY_ID].to_numpy(),
                         S.SLICE: users.map(names).to_numpy()})


def _present(name: str, label: Callable[[_Inputs, pd.Series], np.ndarray]
             ) -> Callable[[_Inputs], pd.DataFrame | None]:
    """A labeller of the queries' column ``name`` that yields no rows when they lack it."""
    def labeller(inp: _Inputs) -> pd.DataFrame | None:
        if name not in inp.chosen.columns:
            return None
        return pd.DataFrame({S.QUERY_ID: inp.chosen[S.QUERY_ID].to_numpy(),
                             S.SLICE: label(inp, inp.chosen[name])})
    return labeller


def _history(inp: _Inputs, history: pd.Series) -> np.ndarray:
    return np.where(history.to_numpy() < inp.config.long_tail_history, "long_tail", "active")


def _returning(inp: _Inputs, history: pd.Series) -> np.ndarray:
    return np.where(history.to_numpy() == 0, "new", "returning")


def _country(inp: _Inputs, country: pd.Series) -> np.ndarray:
    return country.astype(object).where(country.notna(), "unknown").astype(str).to_numpy()


def _holdout(inp: _Inputs, held_out: pd.Series) -> np.ndarray:
    return np.where(held_out.fillna(False).astype(bool).to_numpy(), "unseen", "seen")


LABELLERS: dict[str, Callable[[_Inputs], pd.DataFrame | None]] = {
    "tag": _tag,
    "kind": _kind,
    "length": _length,
    "tenant": _column(S.TENANT),
    "role": _column(S.ROLE),
    "freshness": _freshness,
    "route_hit": _route_hit,
    "user_activity": _user_activity,
    "history": _present(S.HISTORY, _history),
    "returning": _present(S.HISTORY, _returning),
    "country": _present(COUNTRY, _country),
    "holdout": _present(S.HELD_OUT, _holdout),
}


def labels(queries: pd.DataFrame, qrels: pd.DataFrame | None, documents: pd.DataFrame | None,
           route_hits: pd.DataFrame | None, query_ids: Iterable[str], config: Slices, *,
           rel: int = 1) -> pd.DataFrame:
    """(query_id, dimension, slice) rows, all str: one or more per query of ``query_ids`` and
    dimension of ``config.dimensions`` (module docstring), in dimension order. ``qrels``:
    the visible judgments (query_id, doc_id, grade); ``route_hits``: the table of
    ``releval.diagnosis.route_hits.route_hits`` (plus ``pair``), or None / empty to skip
    route_hit."""
    S.require_columns(queries, [S.QUERY_ID], "queries")
    twice = queries[S.QUERY_ID][queries[S.QUERY_ID].duplicated()]
    if len(twice):
        raise InputError(f"query_id {twice.iloc[0]!r} appears twice", "queries")
    ids = pd.Index(pd.unique(pd.Series(list(query_ids), dtype=object)))
    unknown = ids.difference(queries[S.QUERY_ID])
    if len(unknown):
        raise InputError(f"{len(unknown)} query_ids not in queries, e.g. {list(unknown[:5])}",
                         "queries")
    relevant = pd.DataFrame(columns=[S.QUERY_ID, S.DOC_ID, S.GRADE])
    if qrels is not None:
        relevant = S.require_columns(qrels, [S.QUERY_ID, S.DOC_ID, S.GRADE], "qrels")
        relevant = relevant.loc[relevant[S.GRADE] >= rel, [S.QUERY_ID, S.DOC_ID, S.GRADE]]
    inp = _Inputs(chosen=queries.set_index(S.QUERY_ID).loc[ids].reset_index(), log=queries,
                  relevant=relevant, documents=documents, route_hits=route_hits, rel=rel,
                  config=config)
    parts = []
    for dimension in dict.fromkeys(config.dimensions):
        if dimension not in LABELLERS:
            raise InputError(f"unknown slice dimension {dimension!r}", "slices")
        rows = LABELLERS[dimension](inp)
        if rows is not None:
            parts.append(rows[[S.QUERY_ID, S.SLICE]].assign(**{S.DIMENSION: dimension}))
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=str) for c in S.LABEL_COLUMNS})
    out = pd.concat(parts, ignore_index=True)[list(S.LABEL_COLUMNS)]
    return out.astype(str).reset_index(drop=True)


def _effects(min_effect: float | dict[str, float], measures: list[str]) -> dict[str, float]:
    if not isinstance(min_effect, dict):
        return dict.fromkeys(measures, float(min_effect))
    undeclared = [m for m in measures if m not in min_effect]
    if undeclared:
        raise InputError(f"no min_effect declared for measures {undeclared}", "min_effect")
    return {m: float(min_effect[m]) for m in measures}


def wide_values(per_query: pd.DataFrame, systems: list[str], measures: list[str]) -> pd.DataFrame:
    """(query_id, measure) × system values, checked: systems and measures present, keys
    unique, values numeric."""
    S.require_columns(per_query, [S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE], "per_query")
    present = set(per_query[S.SYSTEM])
    unknown = [s for s in systems if s not in present]
    if unknown:
        raise InputError(f"system(s) {unknown} not in per_query (has {sorted(present)})",
                         "per_query")
    absent = [m for m in measures if m not in set(per_query[S.MEASURE])]
    if absent:
        raise InputError(f"measure(s) {absent} not in per_query", "per_query")
    rows = per_query[per_query[S.SYSTEM].isin(systems) & per_query[S.MEASURE].isin(measures)]
    dup = rows.duplicated([S.SYSTEM, S.QUERY_ID, S.MEASURE])
    if dup.any():
        first = rows[dup].iloc[0]
        raise InputError(f"{int(dup.sum())} duplicate (system, query_id, measure) rows, e.g. "
                         f"({first[S.SYSTEM]!r}, {first[S.QUERY_ID]!r}, {first[S.MEASURE]!r})",
                         "per_query")
    try:
        values = pd.to_numeric(rows[S.VALUE], errors="raise").astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"non-numeric value: {error}", "per_query") from None
    wide = rows.assign(**{S.VALUE: values}).pivot(
        index=[S.QUERY_ID, S.MEASURE], columns=S.SYSTEM, values=S.VALUE)
    return wide.reindex(columns=systems).reset_index()


def membership(per_query: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """(dimension, slice, query_id) with the "all" slice (every query of either table) first;
    dimensions in order of appearance, slices sorted."""
    S.require_columns(labels, S.LABEL_COLUMNS, "labels")
    if (labels[S.DIMENSION] == S.ALL).any():
        raise InputError(f"dimension {S.ALL!r} is reserved for every query", "labels")
    ids = pd.unique(pd.concat([per_query[S.QUERY_ID], labels[S.QUERY_ID]], ignore_index=True))
    every = pd.DataFrame({S.DIMENSION: S.ALL, S.SLICE: S.ALL, S.QUERY_ID: ids})
    labelled = labels[[S.DIMENSION, S.SLICE, S.QUERY_ID]].astype({S.SLICE: str})
    labelled = labelled.drop_duplicates()
    order = {d: i for i, d in enumerate(pd.unique(labelled[S.DIMENSION]))}
    labelled = labelled.assign(_d=labelled[S.DIMENSION].map(order)).sort_values(
        ["_d", S.SLICE], kind="stable").drop(columns="_d")
    return pd.concat([every, labelled], ignore_index=True)


def slice_table(per_query: pd.DataFrame, labels: pd.DataFrame, systems: Iterable[str],
                measures: Iterable[str], baseline: str, candidate: str, *, min_n: int,
                min_effect: float | dict[str, float], resamples: int, alpha: float, seed: int,
                clusters: pd.Series | None = None) -> pd.DataFrame:
    """One row per (dimension, slice, measure), the ("all", "all") rows first: dimension,
    slice, measure, n, n_queries, mean_<system> per system, too_small, the ``paired`` fields
    of candidate vs baseline (``COMPARISON_COLUMNS``; NaN and verdict "too small" where not
    tested) and p_holm (Holm over all tested rows; an improved/regressed verdict whose p_holm
    exceeds alpha becomes inconclusive: ``stats.holm_verdicts``). ``per_query``: system,
    query_id, measure, value (NaN = undefined); ``labels``: query_id, dimension, slice;
    ``clusters``: query_id → cluster (e.g. user_id), resampled and tested instead of queries."""
    systems, measures = list(dict.fromkeys(systems)), list(dict.fromkeys(measures))
    if not measures:
        raise InputError("no measures to compare", "slices")
    if baseline == candidate:
        raise InputError(f"baseline and candidate are the same system {baseline!r}", "slices")
    effects = _effects(min_effect, measures)
    compared = list(dict.fromkeys([*systems, baseline, candidate]))
    wide = wide_values(per_query, compared, measures)
    if clusters is not None and not clusters.index.is_unique:
        raise InputError("clusters has duplicate query_ids", "clusters")
    members = membership(per_query, labels)
    keys = [S.DIMENSION, S.SLICE]
    skeleton = members[keys].drop_duplicates().merge(
        pd.DataFrame({S.MEASURE: measures}), how="cross")
    sizes = members.groupby(keys, sort=False).size().rename("n_queries")
    long = members.merge(wide, on=S.QUERY_ID)
    long["_both"] = long[baseline].notna() & long[candidate].notna()
    groups = long.groupby([*keys, S.MEASURE], sort=False)
    stats = pd.DataFrame({"n": groups["_both"].sum()})
    if systems:
        stats = stats.join(groups[systems].mean().add_prefix("mean_"))
    table = skeleton.join(sizes, on=keys).join(stats, on=[*keys, S.MEASURE])
    table["n"] = table["n"].fillna(0).astype("int64")
    calls = {}
    for key, rows in long[long["_both"]].groupby([*keys, S.MEASURE], sort=False):
        labels_ = None
        if clusters is not None:
            labels_ = clusters.reindex(rows[S.QUERY_ID]).to_numpy()
            if pd.isna(labels_).any():
                missing = rows[S.QUERY_ID][pd.isna(labels_)].iloc[0]
                raise InputError(f"query {missing!r} has no cluster label", "clusters")
        units = len(rows) if labels_ is None else len(pd.unique(labels_))
        if len(rows) < min_n or units < 2:
            continue
        calls[key] = ((rows[baseline].to_numpy(), rows[candidate].to_numpy()),
                      {"clusters": labels_, "min_effect": effects[key[2]],
                       "resamples": resamples, "alpha": alpha, "seed": seed})
    results = {key: {c: getattr(result, c) for c in COMPARISON_COLUMNS}
               for key, result in zip(calls, paired_all(list(calls.values())), strict=True)}
    index = pd.MultiIndex.from_arrays(
        [list(level) for level in zip(*results, strict=True)] if results else [[], [], []],
        names=[*keys, S.MEASURE])
    tested = pd.DataFrame(list(results.values()), index=index,
                          columns=list(COMPARISON_COLUMNS))
    table = table.join(tested, on=[*keys, S.MEASURE])
    table["too_small"] = table["verdict"].isna()
    table["verdict"] = table["verdict"].fillna(TOO_SMALL)
    table["min_effect"] = table[S.MEASURE].map(effects)
    for col in ("wins", "ties", "losses"):
        table[col] = table[col].astype("Int64")
    table["p_holm"] = holm(table["p_value"].to_numpy(dtype=float))
    table["verdict"] = holm_verdicts(table["verdict"], table["p_holm"], alpha)
    means = [f"mean_{s}" for s in systems]
    columns = [*keys, S.MEASURE, "n", "n_queries", *means, "too_small",
               *COMPARISON_COLUMNS, "p_holm"]
    return table[columns].reset_index(drop=True)


def tested_summary(table: pd.DataFrame, alpha: float) -> dict:
    """Over a ``slice_table``: family (the tested rows, Holm's family), slices (distinct
    (dimension, slice)), tested, too_small, and changed: each tested row whose verdict is in
    ``CHANGED`` with p_holm ≤ alpha (dimension, slice, measure, verdict, n, mean_diff,
    p_holm)."""
    tested = ~table["too_small"]
    changed = table[tested & table["verdict"].isin(CHANGED) & (table["p_holm"] <= alpha)]
    return {
        "family": int(tested.sum()),
        "slices": int(len(table[[S.DIMENSION, S.SLICE]].drop_duplicates())),
        "tested": int(tested.sum()),
        "too_small": int((~tested).sum()),
        "changed": [{S.DIMENSION: r[S.DIMENSION], S.SLICE: r[S.SLICE], S.MEASURE: r[S.MEASURE],
                     "verdict": r["verdict"], "n": int(r["n"]),
                     "mean_diff": float(r["mean_diff"]), "p_holm": float(r["p_holm"])}
                    for r in changed.to_dict("records")],
    }
