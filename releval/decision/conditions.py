"""What must be held fixed for a controlled comparison, measured per side.

``CONDITIONS``, each a comparable plain value taken from one system's evaluation:

- queries: the evaluated queries, "<n> queries (<digest>)";
- qrels: the revision of the judgments the queries may see (digest of their visible
  (query_id, doc_id, grade) rows);
- budget: the candidate budget (run stats' ``depth``);
- time_window: first … last query time of the evaluated queries, with the corpus digest
  (queries without times: no window is claimed; no documents: no corpus);
- visibility: whether the route drops from its whole window what the query may not see
  (``releval.retrieval.routes.Route.enforces_visibility``; a fused window: iff both its
  sources do), else "not enforced" (what it returned regardless is the safety stage's
  count, not a condition: two team runs that both flag rather than drop are alike here).

The conditions a kind of change holds fixed besides (``releval.decision.change.KINDS``),
each a ``Condition`` of ``HELD`` read from an ``Evidence``:

- labelling: the labelling protocol, "pool <pool_id> (depth d, guideline g); pooled" when
  the system is one of the pool's systems (a fused window: when both its sources are),
  else "not pooled"; "the dataset's own qrels (no pool judged)" under
  ``judgments.source: dataset``;
- candidate_set: the (query, document) pairs of the system's window over its evaluated
  queries, "<n> pairs over <m> queries (<digest>)";
- feature_snapshot: "corpus <digest>; fields <the document fields the system reads>" (its
  params' ``doc_fields``, else ``FIELDS`` of its route; a fused window: its sources'
  fields; "not recorded" for a route that records none, e.g. a team's run);
- base_scores: the (query, document, base score) triples of that window, the base score
  being the run's ``BASE_SCORE`` column where it has one, else its score (rounded to
  ``SCORE_DECIMALS`` decimals), "<n> base scores (<digest>)";
- independent_eval: "disjoint from the training split", else "<k> of <n> evaluated queries
  in the training split"; required: disjoint;
- explicit_labels: where the relevant labels (grade ≥ rel) of the evaluated queries come
  from, "judgments.source <s>: <j> of <r> relevant labels judged (guideline g)", a label
  being judged when its ``pool_id`` names a pool, not the dataset; required: a source
  other than the dataset's own labels and every relevant label judged.

Digests are the first 12 hex characters of sha256.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import EPOCH
from releval.decision.change import KINDS, holds_fixed
from releval.decision.compare import Uncontrolled
from releval.errors import InputError
from releval.judging.adjudication import DATASET
from releval.judging.pooling import corpus_digest
from releval.retrieval.routes import FUSED, route_of

CONDITIONS = ("queries", "qrels", "budget", "time_window", "visibility")
MEANING = {"queries": "the evaluation cohort: the evaluated queries",
           "qrels": "the revision of the judgments the queries may see",
           "budget": "the total candidate budget: the depth of the window handed on",
           "time_window": "the time window of the queries, with the corpus snapshot",
           "visibility": "whether what a query may not see is dropped"}  # each of CONDITIONS
ENFORCED = "enforced by the route"
NOT_ENFORCED = "not enforced (flagged, not dropped)"
BASE_SCORE = "base_score"  # a reranked run's optional column: the score before reranking
SCORE_DECIMALS = 9
TRAIN = "train"
FIELDS = {"bm25": (S.TITLE, S.TEXT), "popularity": (), "cooccurrence": ()}  # fixed fields
NOT_RECORDED = "not recorded"
DATASET_LABELS = "dataset"  # judgments.source: the dataset's own labels, nobody judged them


def digest(frame: pd.DataFrame) -> str:
    """12 hex characters of sha256 over the rows' pandas hashes (index ignored)."""
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False)
    return hashlib.sha256(rows.to_numpy().tobytes()).hexdigest()[:12]


def qrels_revision(qrels: pd.DataFrame) -> str:
    """The digest of the (query_id, doc_id, grade) rows, sorted by query_id, doc_id."""
    return digest(qrels[[S.QUERY_ID, S.DOC_ID, S.GRADE]].sort_values([S.QUERY_ID, S.DOC_ID]))


def enforced(system: str, stats: dict[str, dict]) -> bool:
    """``system``'s route drops what the query may not see from its whole window; a fused
    window (route ``FUSED``): iff both its ``sources`` (run stats) do."""
    s = stats[system]
    if s["route"] == FUSED:
        return all(enforced(source, stats) for source in s["sources"])
    return route_of(s["route"]).enforces_visibility


def conditions(system: str, per_query: pd.DataFrame, queries: pd.DataFrame, qrels: str,
               corpus: str, stats: dict[str, dict], query_times: bool = True) -> dict:
    """``CONDITIONS`` for ``system``'s evaluation (``per_query`` rows of that system), with
    ``qrels`` the qrels revision and ``corpus`` the corpus digest; ``stats``: system -> its
    run_stats.json; ``query_times`` False: the queries' ``issued_at`` is a stand-in (a BEIR
    collection's: the latest publication), so no time window is claimed."""
    ids = np.sort(per_query.loc[per_query[S.SYSTEM] == system, S.QUERY_ID].unique())
    times = pd.to_datetime(queries.loc[queries[S.QUERY_ID].isin(ids), S.ISSUED_AT], utc=True)
    timed = times[times.notna() & (times != EPOCH)] if query_times else times[:0]
    window = (f"{timed.min():%Y-%m-%d %H:%M} … {timed.max():%Y-%m-%d %H:%M}" if len(timed)
              else "no query times: no time window held fixed" if len(ids) else "—")
    return {
        "queries": f"{len(ids)} queries ({digest(pd.DataFrame({S.QUERY_ID: ids}))})",
        "qrels": qrels,
        "budget": stats[system]["depth"],
        "time_window": f"{window}; corpus {corpus}",
        "visibility": ENFORCED if enforced(system, stats) else NOT_ENFORCED,
    }


def condition_differences(baseline: dict, candidate: dict,
                          names: tuple[str, ...] = CONDITIONS) -> list[str]:
    """One readable line per condition of ``names`` whose value differs between the two
    sides' condition dicts (a condition missing on a side counts as different)."""
    return [f"{key}: baseline {baseline.get(key)!r} ≠ candidate {candidate.get(key)!r}"
            for key in names if baseline.get(key) != candidate.get(key)]


def controlled(held: dict[str, dict], baseline: str, candidate: str,
               allow_uncontrolled: bool, further: list[str] = (), context: str = "") -> list[str]:
    """The condition differences of ``candidate`` against ``baseline`` (``CONDITIONS``),
    then ``further`` (e.g. a kind of change's own differences and unmet requirements);
    ``Uncontrolled`` (refused, the differences listed; ``context`` names what the
    comparison is, e.g. its kind of change) when there is any, unless
    ``allow_uncontrolled``."""
    diffs = [*condition_differences(held[baseline], held[candidate]), *further]
    if diffs and not allow_uncontrolled:
        raise Uncontrolled(f"{candidate} vs {baseline} is not a controlled comparison"
                           f"{context}, refused: {'; '.join(diffs)}. Set "
                           "compare.allow_uncontrolled: true to compare anyway (outputs "
                           "labelled uncontrolled)", "compare")
    return diffs


@dataclass(frozen=True)
class Evidence:
    """What the kinds' conditions (``HELD``) and inspections read. ``per_query``: system,
    query_id, measure, value; ``qrels``: the visible judgments of the evaluated queries
    (with their ``pool_id`` provenance where judged); ``stats``: system -> run_stats.json;
    ``runs``: system -> its run (the compared systems at least); ``pool``: the pool's
    identity.json (pool_id, depth, systems, guideline); ``split``: query_id, split;
    ``split_report``: split_report.json; ``labels_source``: ``judgments.source`` resolved;
    ``rel``: the relevance threshold."""

    per_query: pd.DataFrame
    queries: pd.DataFrame
    documents: pd.DataFrame
    qrels: pd.DataFrame
    stats: dict[str, dict]
    runs: dict[str, pd.DataFrame]
    pool: dict
    split: pd.DataFrame
    split_report: dict
    labels_source: str
    rel: int = 1
    query_times: bool = True  # the queries carry real issue times (False: a stand-in)

    @cached_property
    def corpus(self) -> str:
        """The corpus digest (12 hex characters of ``corpus_digest``); "none (runs only)"
        without documents."""
        return corpus_digest(self.documents)[:12] if len(self.documents) else "none (runs only)"

    @cached_property
    def revision(self) -> str:
        """The qrels revision (``qrels_revision``)."""
        return qrels_revision(self.qrels)

    def evaluated(self, system: str) -> np.ndarray:
        """The query_ids ``system`` is evaluated on (its per_query rows), sorted."""
        return np.sort(self.per_query.loc[self.per_query[S.SYSTEM] == system,
                                          S.QUERY_ID].unique())

    @cached_property
    def _windows(self) -> dict[str, pd.DataFrame]:
        return {}

    def window(self, system: str) -> pd.DataFrame:
        """``system``'s run over its evaluated queries, by query and rank (kept once taken);
        InputError when there is no run of it."""
        if system not in self.runs:
            raise InputError(f"no run of {system!r} to compare", "compare")
        if system not in self._windows:
            run = self.runs[system]
            run = run[run[S.QUERY_ID].isin(self.evaluated(system))]
            self._windows[system] = run.sort_values([S.QUERY_ID, S.RANK], kind="stable")
        return self._windows[system]


def pooled(system: str, pool: dict, stats: dict[str, dict]) -> bool:
    """``system`` is one of the pool's systems; a fused window (route ``FUSED``): iff both
    its ``sources`` are."""
    s = stats[system]
    if system in pool.get("systems", []):
        return True
    return s.get("route") == FUSED and all(pooled(x, pool, stats) for x in s["sources"])


def fields_read(system: str, stats: dict[str, dict]) -> tuple[str, ...] | None:
    """The document fields ``system`` reads: its params' ``doc_fields``, else ``FIELDS`` of
    its route; a fused window: its sources' (in order, once each); None when not recorded
    (by it or by a source)."""
    s = stats[system]
    if s.get("route") == FUSED:
        parts = [fields_read(x, stats) for x in s["sources"]]
        return None if None in parts else tuple(dict.fromkeys(f for p in parts for f in p))
    fields = s.get("params", {}).get("doc_fields")
    return tuple(fields) if fields is not None else FIELDS.get(s.get("route"))


def _pairs_key(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].sort_values(columns[:2], kind="stable").reset_index(drop=True)


def _labelling(system: str, ev: Evidence) -> str:
    if ev.labels_source == "dataset":  # no pool was judged: the collection's own qrels
        return "the dataset's own qrels (no pool judged)"
    pool = ev.pool
    status = "pooled" if pooled(system, pool, ev.stats) else "not pooled"
    return (f"pool {pool.get(S.POOL_ID)} (depth {pool.get('depth')}, guideline "
            f"{pool.get(S.GUIDELINE)}); {status}")


def _candidate_set(system: str, ev: Evidence) -> str:
    w = ev.window(system)
    return (f"{len(w)} pairs over {w[S.QUERY_ID].nunique()} queries "
            f"({digest(_pairs_key(w, [S.QUERY_ID, S.DOC_ID]))})")


def _feature_snapshot(system: str, ev: Evidence) -> str:
    fields = fields_read(system, ev.stats)
    return f"corpus {ev.corpus}; fields {NOT_RECORDED if fields is None else ', '.join(fields)}"


def base_scores(window: pd.DataFrame) -> pd.DataFrame:
    """(query_id, doc_id, base) of a window: ``BASE_SCORE`` where the run has it, else its
    score, rounded to ``SCORE_DECIMALS`` decimals."""
    base = window[BASE_SCORE] if BASE_SCORE in window.columns else window[S.SCORE]
    return pd.DataFrame({S.QUERY_ID: window[S.QUERY_ID].to_numpy(),
                         S.DOC_ID: window[S.DOC_ID].to_numpy(),
                         "base": np.round(base.to_numpy(dtype=float), SCORE_DECIMALS)})


def _base_scores(system: str, ev: Evidence) -> str:
    scores = base_scores(ev.window(system))
    return f"{len(scores)} base scores ({digest(_pairs_key(scores, list(scores.columns)))})"


def in_training(system: str, ev: Evidence) -> int:
    """How many of ``system``'s evaluated queries lie in the training split."""
    train = ev.split.loc[ev.split[S.SPLIT] == TRAIN, S.QUERY_ID]
    return int(np.isin(ev.evaluated(system), train.to_numpy()).sum())


def _independent(system: str, ev: Evidence) -> str:
    n, k = len(ev.evaluated(system)), in_training(system, ev)
    return ("disjoint from the training split" if k == 0
            else f"{k} of {n} evaluated queries in the training split")


def _label_counts(system: str, ev: Evidence) -> tuple[int, int]:
    """(judged, all) relevant labels (grade ≥ rel) of ``system``'s evaluated queries."""
    qrels = S.require_columns(ev.qrels, [S.QUERY_ID, S.GRADE, S.POOL_ID], "qrels")
    relevant = qrels[(qrels[S.GRADE] >= ev.rel) & qrels[S.QUERY_ID].isin(ev.evaluated(system))]
    judged = relevant[S.POOL_ID].notna() & (relevant[S.POOL_ID].astype(str) != DATASET)
    return int(judged.sum()), len(relevant)


def _explicit(system: str, ev: Evidence) -> str:
    judged, total = _label_counts(system, ev)
    return (f"judgments.source {ev.labels_source}: {judged} of {total} relevant labels judged "
            f"(guideline {ev.pool.get(S.GUIDELINE)})")


def _explicit_unmet(system: str, ev: Evidence) -> str:
    judged, total = _label_counts(system, ev)
    if ev.labels_source == DATASET_LABELS:
        return "the labels are the dataset's own, not judged"
    return f"{total - judged} relevant labels are not judged" if judged < total else ""


def _query_fingerprints(frame: pd.DataFrame) -> pd.Series:
    """query_id -> an order-free fingerprint of its rows (sum of the rows' hashes)."""
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False)
    return pd.Series(rows.to_numpy(), index=frame[S.QUERY_ID].to_numpy()).groupby(
        level=0).sum()


def _differing(a: pd.DataFrame, b: pd.DataFrame, what: str) -> str:
    """"k of n queries' <what> differ": the queries of either frame whose rows differ."""
    fa, fb = _query_fingerprints(a), _query_fingerprints(b)
    both = fa.index.union(fb.index)
    k = int((fa.reindex(both) != fb.reindex(both)).sum())
    return f"{k} of {len(both)} queries' {what} differ"


@dataclass(frozen=True)
class Condition:
    """One condition a kind of change holds fixed: ``what`` it is, its ``value`` per side
    (a plain comparable string), optionally ``unmet`` (what is wrong with one side's value
    on its own: "" when nothing) and ``detail`` (a line saying how two sides differ)."""

    what: str
    value: Callable[[str, Evidence], str]
    unmet: Callable[[str, Evidence], str] | None = None
    detail: Callable[[str, str, Evidence], str] | None = None


HELD: dict[str, Condition] = {
    "labelling": Condition("the labelling protocol: pool, depth, guideline, the system pooled",
                           _labelling),
    "candidate_set": Condition(
        "the candidate set of every query", _candidate_set,
        detail=lambda b, c, ev: _differing(ev.window(b)[[S.QUERY_ID, S.DOC_ID]],
                                           ev.window(c)[[S.QUERY_ID, S.DOC_ID]],
                                           "candidate sets")),
    "feature_snapshot": Condition("the corpus snapshot and the document fields read",
                                  _feature_snapshot),
    "base_scores": Condition(
        "the candidates' base scores", _base_scores,
        detail=lambda b, c, ev: _differing(base_scores(ev.window(b)),
                                           base_scores(ev.window(c)), "base scores")),
    "independent_eval": Condition(
        "an evaluation set independent of the training split", _independent,
        unmet=lambda s, ev: _independent(s, ev) if in_training(s, ev) else ""),
    "explicit_labels": Condition("explicit (judged) relevance labels", _explicit,
                                 unmet=_explicit_unmet),
}


def held_values(names: tuple[str, ...], systems: tuple[str, ...],
                ev: Evidence) -> dict[str, dict]:
    """system -> {name: value} for the conditions of ``names`` that are in ``HELD``."""
    return {s: {n: HELD[n].value(s, ev) for n in names if n in HELD} for s in systems}


def held_differences(names: tuple[str, ...], held: dict[str, dict], baseline: str,
                     candidate: str, ev: Evidence) -> list[str]:
    """For each ``HELD`` condition of ``names``: its difference line when the two sides'
    values differ (with its ``detail``), and "<name> (<side>): <unmet>" for a side whose value
    breaks the condition on its own."""
    lines = []
    for n in (n for n in names if n in HELD):
        c = HELD[n]
        if held[baseline][n] != held[candidate][n]:
            line = condition_differences(held[baseline], held[candidate], (n,))[0]
            lines.append(line + (f" ({c.detail(baseline, candidate, ev)})" if c.detail else ""))
        if c.unmet:
            lines += [f"{n} ({side}): {why}" for side in (baseline, candidate)
                      if (why := c.unmet(side, ev))]
    return lines


def conditions_of(kind: str | None, baseline: str, candidate: str,
                  ev: Evidence) -> dict[str, dict]:
    """system -> its general ``conditions`` and those ``kind`` holds fixed (``HELD``), for
    the two sides."""
    pair = (baseline, candidate)
    extra = held_values(holds_fixed(kind), pair, ev)
    return {s: conditions(s, ev.per_query, ev.queries, ev.revision, ev.corpus, ev.stats,
                          ev.query_times) | extra[s] for s in pair}


def controlled_change(kind: str | None, held: dict[str, dict], baseline: str, candidate: str,
                      ev: Evidence, allow_uncontrolled: bool) -> list[str]:
    """The differences that make a comparison of ``kind`` uncontrolled: the general
    conditions', then the kind's (``held_differences``); ``Uncontrolled`` naming the kind
    when there is any, unless ``allow_uncontrolled`` (``controlled``)."""
    further = held_differences(holds_fixed(kind), held, baseline, candidate, ev)
    context = f" for a {kind} change ({KINDS[kind].label})" if kind else ""
    return controlled(held, baseline, candidate, allow_uncontrolled, further, context)
