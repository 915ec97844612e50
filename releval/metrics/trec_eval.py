"""trec_eval's evaluation, line for line: its measure names, query set, aggregation and output
(trec_eval 9.0.8, the version pytrec_eval wraps).

- Query set: the queries in both the run and the qrels, a qrels query without a relevant
  judgment included (its measures are 0 there, not undefined). ``complete`` (trec_eval -c):
  the averages run over every qrels query, a query missing from the run contributing 0;
  num_q is then the number of qrels queries and num_rel counts the judgments with grade > 0
  of every qrels query, whatever the relevance level (trec_eval's rule); num_ret and
  num_rel_ret stay sums over the evaluated queries.
- Aggregation: the family's ``AGGREGATES`` entry (mean; num_* summed; gm_map the geometric
  mean with the floor 10⁻⁵) over the evaluated queries, and under ``complete`` over them and
  a 0 for each missing qrels query.
- ``max_docs`` (trec_eval -M): each ranked list is cut to its first ``max_docs`` documents in
  trec_eval's order before anything else; ``judged_only`` (-J): measured on the ranking
  without its unjudged documents (``releval.metrics.condensed``); ``level`` (-l): the least
  grade counted relevant.
- Output: ``%-22s\\t%s\\t%6.4f`` per value (``%ld`` for the counts), the per-query lines (query
  ids in byte order) before the ``all`` lines, measures in trec_eval's table order
  (``TREC_ORDER``, then the version's own measures; cutoffs ascending); runid and num_q only
  when asked for (by name or in a set); gm_map in the summary only.
- ``undefined_aware``: releval's rule instead of trec_eval's 0: a query where a measure is
  undefined (no relevant judgment) is left out of its mean and gets no per-query line;
  under ``complete`` a missing qrels query is evaluated as an empty ranking (0 where defined,
  its |R| in num_rel); num_q counts the evaluated queries.
- ``version``: the trec_eval version reproduced (``releval.metrics.trec_eval_versions``:
  9.0.8 by default, pytrec_eval's; 10.0): its score precision in the ranking (its order of
  tied scores), its count of relevant documents for a recall level, its per-query lines of
  missing queries under ``complete``, its refusal of a qrels query missing from the run
  without it, and its own measures (``releval.metrics.trec_eval_own``: 10.0's rbp,
  rbp_resid, unj_k, in its ``all_trec``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.errors import InputError
from releval.metrics import engine, trec_eval_own
from releval.metrics.condensed import as_judged_only, condensed
from releval.metrics.measures import MEASURES
from releval.metrics.names import TREC_LINES, TREC_ORDER, TREC_SETS
from releval.metrics.ranking import Ranking, truncated
from releval.metrics.registry import AGGREGATES, option
from releval.metrics.spec import Measure
from releval.metrics.trec_eval_versions import DEFAULT_VERSION, VERSIONS, Version

DEFAULT = ("official",)  # trec_eval's measures when none is named
_NAME = re.compile(r"^(?P<base>.+?)(?:_(?P<param>\d+(?:\.\d+)?))?$")


def trec_name(m: Measure, level: int) -> str | None:
    """trec_eval's name of ``m`` under relevance level ``level``, or None: it has none (a
    measure of its own, an option trec_eval lacks, or a ``rel`` other than ``level``)."""
    family = MEASURES[m.family]
    if "rel" in family.params and m.rel != level:
        return None
    return family.trec(m)


def _order(name: str) -> tuple[int, float]:
    """Where trec_eval prints ``name``: its measure's place in the table (the shared ones,
    then the versions' own), then its cutoff."""
    parts = _NAME.match(name)
    table = TREC_ORDER + tuple(trec_eval_own.OWN)
    return table.index(parts["base"]), float(parts["param"] or 0)


@dataclass(frozen=True)
class Request:
    """What trec_eval's output holds: ``measures``, (trec_eval name, measure as computed)
    in trec_eval's order; ``lines``, the non-measure lines asked for (runid, num_q);
    ``own``, the names of the version's own measures asked for (``trec_eval_own``),
    computed on the condensed list when ``judged_only``."""

    measures: tuple[tuple[str, Measure], ...]
    lines: tuple[str, ...]
    own: tuple[str, ...] = ()
    judged_only: bool = False

    @property
    def names(self) -> list[str]:
        """Every measure's printed name, in trec_eval's order."""
        return sorted([*(name for name, _ in self.measures), *self.own], key=_order)


def _split_own(names: list[str], version: Version) -> tuple[list[str], list[str]]:
    """(``names`` but the own measures, the own measures' printed names): ``all_trec`` adds
    the version's own; an own measure of another version is an InputError."""
    rest, own = [], []
    for text in names:
        found = trec_eval_own.parse(text)
        if found is None:
            rest.append(text)
            if text.strip() == "all_trec":
                own += [name for base in version.own for name in trec_eval_own.parse(base)]
            continue
        base = trec_eval_own.split(found[0])[0]
        if base not in version.own:
            having = [v.name for v in VERSIONS.values() if base in v.own]
            raise InputError(f"trec_eval {version.name} has no measure {base} (trec_eval "
                             f"{', '.join(having)} has)", text.strip())
        own += found
    return rest, list(dict.fromkeys(own))


def request(names: Iterable[str] = DEFAULT, *, level: int = 1, judged_only: bool = False,
            version: str = DEFAULT_VERSION) -> Request:
    """The measures ``names`` (trec_eval's names, releval's, or the sets ``official`` and
    ``all_trec``) in trec_eval ``version``'s output: every one must have a trec_eval name at
    ``level`` or be one of the version's own; ``judged_only`` computes each family that has
    a judged-only form, and the own measures, on the condensed list."""
    names, own = _split_own(list(names), VERSIONS[version])
    asked = {line for text in names for line in TREC_LINES
             if text.strip() == line or line in TREC_SETS.get(text.strip(), ())}
    plain = engine.resolve(names, rel=level)
    for m in plain:
        if trec_name(m, level) is None:
            raise InputError(f"{m.name} has no trec_eval name (trec_eval's output holds "
                             "trec_eval's measures only)", m.name)
    pairs = zip((trec_name(m, level) for m in plain),
                as_judged_only(plain) if judged_only else plain, strict=True)
    return Request(tuple(sorted(pairs, key=lambda p: _order(p[0]))),
                   tuple(line for line in TREC_LINES if line in asked), tuple(own), judged_only)


@dataclass(frozen=True)
class TrecEval:
    """Result of ``evaluate``: ``per_query`` (query_id, name, value; empty unless asked for)
    and ``summary`` (name, value), each in trec_eval's order; ``integer``: the names printed
    as counts;
    ``evaluation``: the engine's ``Evaluation`` it was computed from (its counts, its
    undefined and empty queries per measure)."""

    per_query: pd.DataFrame
    summary: pd.DataFrame
    integer: frozenset[str]
    evaluation: engine.Evaluation

    def text(self, per_query: bool = False) -> str:
        """trec_eval's output: the per-query lines (with ``per_query``), then the summary."""
        frames = [self.per_query] if per_query else []
        frames.append(self.summary.assign(**{S.QUERY_ID: "all"}))
        rows = pd.concat(frames, ignore_index=True)
        number = pd.to_numeric(rows[S.VALUE], errors="coerce").to_numpy(float)  # runid: NaN
        shown = np.where(rows["name"].isin(self.integer),
                         np.char.mod("%d", np.nan_to_num(number).astype(np.int64)),
                         np.char.mod("%6.4f", number))
        shown = np.where(rows["name"] == "runid", rows[S.VALUE].astype(str), shown)
        return "".join(rows["name"].str.ljust(22) + "\t" + rows[S.QUERY_ID].astype(str) + "\t"
                       + shown + "\n")


def as_ranked(run: pd.DataFrame, version: str = DEFAULT_VERSION) -> pd.DataFrame:
    """``run`` with its scores at the precision ``version`` ranks them, in that type
    (float32 for 9.0.8: half the memory, the same values as doubles); a run with a rank
    column (ranked by it), or whose scores already are of that type, unchanged."""
    if S.RANK in run.columns or S.SCORE not in run.columns:
        return run
    kind = VERSIONS[version].score
    if run[S.SCORE].dtype == kind:
        return run
    score = run[S.SCORE].to_numpy(float).astype(kind)
    return run.assign(**{S.SCORE: pd.Series(score, run.index, copy=False)})  # (an array
    # would be copied)


def _interpolated(run: pd.DataFrame, qrels: pd.DataFrame, xs: list[float], version: Version,
                  level: int, judged_only: bool) -> pd.DataFrame:
    """iprec_at_recall_x per run query (query_id, x, value) by ``version``'s count c of
    relevant documents for x: the best precision at the c-th relevant document or later, 0
    when fewer are ranked or the query has none."""
    key = [S.QUERY_ID, S.DOC_ID]
    rows = run[[*key, *(c for c in (S.SCORE, S.RANK) if c in run.columns)]].merge(
        qrels[[*key, S.GRADE]].drop_duplicates(key), on=key, how="left")
    if judged_only:  # -J: without the unjudged and the negatively graded (trec_eval's)
        rows = rows[rows[S.GRADE] >= 0]
    by = [S.QUERY_ID, S.RANK] if S.RANK in rows.columns else [S.QUERY_ID, S.SCORE, S.DOC_ID]
    rows = rows.sort_values(by, ascending=[True] + [S.RANK in rows.columns] * (len(by) - 1),
                            kind="stable")
    position = rows.groupby(S.QUERY_ID, sort=False).cumcount().to_numpy() + 1
    hit = (rows[S.GRADE] >= level).to_numpy()
    hits = rows.loc[hit, [S.QUERY_ID]].assign(pos=position[hit])
    hits["k"] = hits.groupby(S.QUERY_ID, sort=False).cumcount() + 1
    hits["best"] = (hits["k"] / hits["pos"])[::-1].groupby(hits[S.QUERY_ID][::-1]).cummax()
    queries = pd.Index(rows[S.QUERY_ID].unique(), name=S.QUERY_ID)
    n_rel = qrels[qrels[S.GRADE] >= level].groupby(S.QUERY_ID).size().reindex(queries,
                                                                                fill_value=0)
    best = hits.set_index([S.QUERY_ID, "k"])["best"]
    frames = []
    for x in xs:
        at = pd.MultiIndex.from_arrays([queries, version.needed(x, n_rel.to_numpy())])
        value = best.reindex(at).fillna(0.0).to_numpy() * (n_rel.to_numpy() > 0)
        frames.append(pd.DataFrame({S.QUERY_ID: queries, "x": x, S.VALUE: value}))
    return pd.concat(frames, ignore_index=True)


def _own_values(run: pd.DataFrame, qrels: pd.DataFrame, req: Request, *, level: int,
                max_grade: int, common_only: bool, undefined_aware: bool) -> pd.DataFrame:
    """The per-query values (query_id, name, value) of ``req.own`` on trec_eval's ranking of
    ``run`` (its condensed list under ``req.judged_only``); with ``undefined_aware`` NaN
    where the measure is undefined (``trec_eval_own.Own.defined``)."""
    r = Ranking(run, qrels, max_grade=max_grade, common_only=common_only)
    r = condensed(r) if req.judged_only else r
    frames = []
    for name in req.own:
        base, cutoff = trec_eval_own.split(name)
        own = trec_eval_own.OWN[base]
        value = own.compute(r, cutoff)
        if undefined_aware:
            value = np.where(own.defined(r, level), value, np.nan)
        frames.append(pd.DataFrame({S.QUERY_ID: r.queries, "name": name, S.VALUE: value}))
    return pd.concat(frames, ignore_index=True)


def _missing(run: pd.DataFrame, qrels: pd.DataFrame, req: Request, level: int) -> pd.DataFrame:
    """The per-query values (query_id, name, value) of the qrels queries missing from
    ``run`` as trec_eval 10.0 prints them (it ranks one unjudged placeholder document for
    each, then zeroes num_ret, unj and rbp_resid): num_rel their count of grade ≥ ``level``,
    the rest 0 (under -J its iprec_at_recall there is 0/0: nan, releval's 0)."""
    missing = qrels[~qrels[S.QUERY_ID].isin(run[S.QUERY_ID].unique())]
    n_rel = (missing[S.GRADE] >= level).groupby(missing[S.QUERY_ID]).sum()
    names = pd.Index(req.names, name="name")
    rows = pd.MultiIndex.from_product([n_rel.index, names]).to_frame(index=False)
    return rows.assign(**{S.VALUE: np.where(rows["name"] == "num_rel",
                                            n_rel.reindex(rows[S.QUERY_ID]).to_numpy(), 0.0)})


def _mapped(values: pd.Series, mapping: dict[str, str]) -> pd.api.extensions.ExtensionArray:
    """``values.map(mapping)`` (strings; NaN where it has no entry) for a column of few
    distinct strings: each looked up once, not each row."""
    codes, uniques = pd.factorize(values)
    return pd.array([mapping.get(u) for u in uniques], dtype="str").take(codes, allow_fill=True)


def _positions(values: pd.Series, names: list[str]) -> np.ndarray:
    """Each value's position in ``names`` (-1 where it is not there), each distinct value
    looked up once."""
    codes, uniques = pd.factorize(values)
    where = {name: i for i, name in enumerate(names)}
    return np.array([where.get(u, -1) for u in uniques] + [-1], np.int64)[codes]


def _lines(pq: pd.DataFrame, req: Request, dropped: list[str]) -> pd.DataFrame:
    """The per-query values (query_id, name, value) trec_eval prints: by query id (byte
    order), then in ``req.names``' order; without the ``dropped`` names and NaN values."""
    code = _positions(pq["name"], req.names)
    kept = np.flatnonzero(~np.isin(code, [req.names.index(name) for name in dropped])
                          & pq[S.VALUE].notna().to_numpy())
    order = pc.sort_indices(pa.table({"q": pa.array(pq[S.QUERY_ID].iloc[kept]),
                                      "o": code[kept]}),
                            sort_keys=[("q", "ascending"), ("o", "ascending")])  # stable
    return pq[[S.QUERY_ID, "name", S.VALUE]].take(kept[order.to_numpy()])


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame, req: Request, *, run_id: str,
             level: int = 1, complete: bool = False, max_docs: int | None = None,
             undefined_aware: bool = False, max_grade: int = 3,
             version: str = DEFAULT_VERSION, per_query: bool = True) -> TrecEval:
    """``run`` against ``qrels`` as trec_eval ``version`` evaluates it (the module's
    rules). ``per_query`` False leaves ``TrecEval.per_query`` empty: lines not printed are
    not sorted (a large run's millions)."""
    rules = VERSIONS[version]
    run = as_ranked(run, version)
    if rules.missing_fatal and not complete:
        missing = np.setdiff1d(qrels[S.QUERY_ID].unique(), run[S.QUERY_ID].unique())
        if len(missing):
            raise InputError(f"query {missing[0]} of the qrels is not in the run (trec_eval "
                             f"{version} evaluates every qrels query: ask for the complete "
                             "evaluation, which scores a missing query 0)", "run")
    if max_docs is not None:
        run = truncated(run, max_docs)
    measures = [m for _, m in req.measures]
    common_only = not (complete and undefined_aware)
    result = engine.evaluate(run, qrels, measures, rel=level, max_grade=max_grade,
                             common_only=common_only)
    names = {m.name: name for name, m in req.measures}
    aggregate = {name: MEASURES[m.family].aggregate for name, m in req.measures} \
        | dict.fromkeys(req.own, "mean")
    pq = result.per_query.assign(name=_mapped(result.per_query[S.MEASURE], names))
    if not undefined_aware:
        pq[S.VALUE] = pq[S.VALUE].fillna(0.0)
    iprec = {m.name: option(m, "recall") for _, m in req.measures if m.family == "IPrec"}
    if rules.recall_count != VERSIONS[DEFAULT_VERSION].recall_count and iprec \
            and not undefined_aware:
        judged = any(option(m, "judged_only") for _, m in req.measures if m.name in iprec)
        counted = _interpolated(run, qrels, sorted(set(iprec.values())), rules, level, judged)
        at = pq[S.MEASURE].map(iprec)
        found = pd.MultiIndex.from_arrays([pq[S.QUERY_ID], at])
        value = counted.set_index([S.QUERY_ID, "x"])[S.VALUE].reindex(found).to_numpy()
        pq[S.VALUE] = np.where(at.notna(), value, pq[S.VALUE])
    if req.own:
        own = _own_values(run, qrels, req, level=level, max_grade=max_grade,
                          common_only=common_only, undefined_aware=undefined_aware)
        pq = pd.concat([pq, own], ignore_index=True)
    n_evaluated = result.counts["queries_evaluated"]
    n_qrels = qrels[S.QUERY_ID].nunique() if complete and not undefined_aware else n_evaluated
    if undefined_aware:
        summary = result.summary.assign(name=result.summary[S.MEASURE].map(names))
        values = dict(zip(summary["name"], summary[S.VALUE], strict=True)) \
            | pq[pq["name"].isin(req.own)].groupby("name")[S.VALUE].mean().to_dict()
    else:
        code, value = _positions(pq["name"], req.names), pq[S.VALUE].to_numpy()
        values = {name: AGGREGATES[aggregate[name]](
            np.r_[value[code == i], np.zeros(n_qrels - n_evaluated)])
            for i, name in enumerate(req.names)}
        if complete and "num_rel" in values:
            values["num_rel"] = float((qrels[S.GRADE] > 0).sum())
    lines = {"runid": run_id, "num_q": n_qrels}
    summary = pd.DataFrame([*((line, lines[line]) for line in req.lines),
                            *((name, values[name]) for name in req.names)],
                           columns=["name", S.VALUE], dtype=object)
    summary = summary[summary[S.VALUE].map(lambda v: isinstance(v, str) or not pd.isna(v))]
    geometric = [name for name in req.names if aggregate[name] == "geometric"]
    if not per_query:
        pq = pq.iloc[:0]
    elif rules.missing_printed and complete and not undefined_aware:
        pq = pd.concat([pq, _missing(run, qrels, req, level)], ignore_index=True)
    pq = _lines(pq, req, geometric)
    integer = frozenset({"num_q"} | {name for name in req.names if aggregate[name] == "sum"})
    return TrecEval(pq.reset_index(drop=True), summary.reset_index(drop=True), integer, result)
