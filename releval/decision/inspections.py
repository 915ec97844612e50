"""What a kind of change also inspects beside the paired comparison (``change.KINDS``).

``INSPECTIONS`` maps each name a kind lists to its inspection; ``change_block`` writes a
comparison's ``change`` (the kind, what it holds fixed on both sides, its inspections).
Each inspection reads a ``Subject`` (the compared pair, its paired rows and its
``conditions.Evidence``) and returns {"definition": its formula in words, "rows": one plain
dict per row (None where undefined), and for some "delta" = candidate − baseline}. Q is the
set of queries both sides are evaluated on, R the visible judgments of Q with grade ≥ rel
(one (query, document) pair each), W_s the pairs of side s's window over Q and T_s its top
k (rank ≤ ``Settings.top_k``).

- unique_relevant: |R ∩ W_c \\ W_b| (added by the candidate) and |R ∩ W_b \\ W_c| (lost),
  with the queries they fall in;
- coverage: |R ∩ W_b| / |R|, |R ∩ W_c| / |R| and |R ∩ (W_b ∪ W_c)| / |R|;
- latency: each side's p50 / p95 / p99 in ms, named here and read from the health stage's
  measurement when shown (a measured figure stays out of comparison.json, which a rerun of
  the same inputs reproduces byte for byte);
- ordering: the paired rows of the ordering measures, those a reordering of a fixed window
  can change (every measure but a set measure, ``SET_FAMILIES``, cut at or beyond the
  smaller window depth);
- calibration: scores are not probabilities, so each side's scores are min–max normalised
  over its judged pairs of W_s (s' = (s − min) / (max − min)) and, with y = 1 when the
  pair is relevant, ECE = Σ_b (n_b / N) |ȳ_b − s̄'_b| over ``BINS`` equal-width bins of
  [0, 1] (bins as ``releval.metrics.calibration``); undefined for fewer than two distinct
  scores;
- cost: cost per query = per_query + per_candidate × the mean candidates per query of the
  side's run_stats, where ``health.cost`` gives the side a model ("not given" otherwise);
- relevance_cost: the paired rows of every compared measure (Δ = candidate − baseline; a
  negative Δ is what diversity costs in relevance);
- topic_coverage: mean over Q of the distinct source_ids in T_s (an empty list: 0);
- repetition: the near-duplicate ratio of T_s (``releval.decision.health.near_duplicates``:
  entries repeating the source_id or the normalised text of a higher-ranked entry of the
  same query, the health stage's definition over the top k); undefined without entries;
- slices: the ``releval.decision.slices.slice_table`` rows of the ``Settings.strata``
  dimension (Holm over the table of every dimension below);
- leakage: the evaluated queries in the training split, and the split report's leakage
  counts;
- negative_transfer: the rows of the slice table over the strata and every slice dimension
  whose verdict is regressed with p_holm ≤ alpha (the candidate significantly worse there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.change import GENERAL_ONLY, KINDS
from releval.decision.conditions import HELD, MEANING, Evidence, in_training
from releval.decision.health import near_duplicates
from releval.decision.slices import slice_table
from releval.metrics.calibration import bin_edges, bin_of
from releval.metrics.names import parse_measure

BINS = 10
SET_FAMILIES = ("P", "R", "R_cap", "Hit", "Judged", "HardNeg", "NumRet", "NumRel",
                "NumRelRet")  # their value depends on the set of the top k, not its order
PAIR = [S.QUERY_ID, S.DOC_ID]
REGRESSED = "regressed"
NOT_GIVEN = "not given"
_SLICE_FIELDS = ("n", "mean_diff", "ci_low", "ci_high", "p_holm", "verdict")
_PAIRED_FIELDS = ("measure", "n", "mean_diff", "ci_low", "ci_high", "p_holm", "verdict")


@dataclass(frozen=True)
class Settings:
    """The comparison's settings the inspections read: the compared ``measures`` (canonical)
    and ``min_effect``, the ``top_k``, the ``strata`` dimension and the slice
    ``dimensions`` with ``min_n``, the paired statistics' ``alpha``, ``resamples``, ``seed``
    and ``clusters`` (query_id -> unit, or None), and ``costs``: system -> a cost model
    (per_query, per_candidate, unit)."""

    measures: list[str]
    min_effect: float | dict[str, float] = 0.0
    top_k: int = 10
    strata: str = "kind"
    dimensions: tuple[str, ...] = ()
    min_n: int = 20
    alpha: float = 0.05
    resamples: int = 10_000
    seed: int = 0
    clusters: pd.Series | None = None
    costs: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Subject:
    """One comparison to inspect: ``baseline`` and ``candidate``, its ``paired`` rows (the
    comparison's, slice "all"), the ``evidence``, the evaluated queries' slice ``labels``
    (query_id, dimension, slice) and the ``settings``."""

    baseline: str
    candidate: str
    paired: list[dict]
    evidence: Evidence
    labels: pd.DataFrame
    settings: Settings

    @property
    def sides(self) -> tuple[str, str]:
        return self.baseline, self.candidate

    @cached_property
    def queries(self) -> np.ndarray:
        """Q: the queries both sides are evaluated on."""
        return np.intersect1d(self.evidence.evaluated(self.baseline),
                              self.evidence.evaluated(self.candidate))

    def window(self, system: str) -> pd.DataFrame:
        """``system``'s window over Q, by query and rank."""
        w = self.evidence.window(system)
        return w[w[S.QUERY_ID].isin(self.queries)]

    def top(self, system: str) -> pd.DataFrame:
        """T_s: the window's entries ranked within the top k."""
        w = self.window(system)
        return w[w[S.RANK] <= self.settings.top_k]

    @cached_property
    def relevant(self) -> pd.DataFrame:
        """R: the (query_id, doc_id) pairs of Q judged relevant, once each."""
        q = self.evidence.qrels
        rows = q[(q[S.GRADE] >= self.evidence.rel) & q[S.QUERY_ID].isin(self.queries)]
        return rows[PAIR].drop_duplicates().reset_index(drop=True)

    @cached_property
    def slice_rows(self) -> pd.DataFrame:
        """The slice table of the pair over the strata and every slice dimension."""
        s = self.settings
        wanted = list(dict.fromkeys([s.strata, *s.dimensions]))
        labels = self.labels[self.labels[S.DIMENSION].isin(wanted)]
        return slice_table(self.evidence.per_query, labels, list(self.sides), s.measures,
                           self.baseline, self.candidate, min_n=s.min_n,
                           min_effect=s.min_effect, resamples=s.resamples, alpha=s.alpha,
                           seed=s.seed, clusters=s.clusters)


Inspection = Callable[[Subject], dict]


def _plain(value):
    """A JSON-ready scalar: None for NaN, Python numbers for numpy ones."""
    if value is None or (isinstance(value, float | np.floating) and np.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _delta(values: dict[str, float | None], sub: Subject) -> float | None:
    b, c = values[sub.baseline], values[sub.candidate]
    return None if b is None or c is None else c - b


def _in(pairs: pd.DataFrame, window: pd.DataFrame) -> np.ndarray:
    """Per row of ``pairs``: whether its (query_id, doc_id) is in ``window``."""
    return pd.MultiIndex.from_frame(pairs[PAIR]).isin(
        pd.MultiIndex.from_frame(window[PAIR])) if len(pairs) else np.zeros(0, bool)


def unique_relevant(sub: Subject) -> dict:
    """|R ∩ W_c \\ W_b| and |R ∩ W_b \\ W_c| with their queries."""
    r = sub.relevant
    in_b, in_c = _in(r, sub.window(sub.baseline)), _in(r, sub.window(sub.candidate))
    rows = [{"relevant documents": what, "count": int(mask.sum()),
             "queries": int(r.loc[mask, S.QUERY_ID].nunique())}
            for what, mask in ((f"in {sub.candidate}'s window only (added)", in_c & ~in_b),
                               (f"in {sub.baseline}'s window only (lost)", in_b & ~in_c))]
    return {"definition": "relevant judged documents in one window and not in the other, over "
                          f"the {len(sub.queries)} queries both answer", "rows": rows}


def coverage(sub: Subject) -> dict:
    """|R ∩ W| / |R| for each window and their union."""
    r = sub.relevant
    in_b, in_c = _in(r, sub.window(sub.baseline)), _in(r, sub.window(sub.candidate))
    rows = [{"window": name, "relevant found": int(mask.sum()), "relevant": len(r),
             "share": float(mask.mean()) if len(r) else None}
            for name, mask in ((sub.baseline, in_b), (sub.candidate, in_c),
                               (f"{sub.baseline} ∪ {sub.candidate}", in_b | in_c))]
    return {"definition": "share of the queries' relevant judged documents in each window "
                          "and in their union", "rows": rows}


def latency(sub: Subject) -> dict:
    """The sides whose p50 / p95 / p99 the report shows from data/health/health.json
    (``measured``); no numbers here: measured latencies are not reproducible."""
    return {"definition": "latency percentiles per query in ms, as measured by this run "
                          "(data/health/health.json; — not measured)",
            "measured": list(sub.sides), "rows": []}


def is_ordering(measure: str, depth: int) -> bool:
    """A reordering of a fixed window of ``depth`` can change ``measure``: it is not a set
    measure (``SET_FAMILIES``) cut at or beyond ``depth`` (or uncut)."""
    m = parse_measure(measure)
    return not (m.family in SET_FAMILIES and (m.cutoff is None or m.cutoff >= depth))


def _paired_rows(rows: list[dict]) -> list[dict]:
    return [{k: _plain(r.get(k)) for k in _PAIRED_FIELDS} for r in rows]


def ordering(sub: Subject) -> dict:
    """The paired rows of the ordering measures."""
    depth = min(int(sub.evidence.stats[s]["depth"]) for s in sub.sides)
    kept = [r for r in sub.paired if is_ordering(r[S.MEASURE], depth)]
    left = [r[S.MEASURE] for r in sub.paired if not is_ordering(r[S.MEASURE], depth)]
    return {"definition": "the paired rows of the measures a reordering of the window can "
                          f"change (window depth {depth}"
                          + (f"; set measures left out: {', '.join(left)})" if left else ")"),
            "rows": _paired_rows(kept)}


def score_ece(window: pd.DataFrame, qrels: pd.DataFrame, rel: int) -> tuple[float, int]:
    """(ECE of the min–max normalised scores of the judged pairs of ``window`` against
    relevance, judged pairs N) as in the module docstring; ECE NaN when N = 0 or the scores
    do not vary."""
    judged = window[[*PAIR, S.SCORE]].merge(qrels[[*PAIR, S.GRADE]].drop_duplicates(PAIR),
                                             on=PAIR)
    scores = judged[S.SCORE].to_numpy(dtype=float)
    if len(scores) == 0 or scores.max() == scores.min():
        return float("nan"), len(scores)
    p = (scores - scores.min()) / (scores.max() - scores.min())
    y = (judged[S.GRADE].to_numpy() >= rel).astype(float)
    ids = bin_of(p, bin_edges(p, BINS, "width"))
    gap = np.abs(np.bincount(ids, weights=y, minlength=BINS)
                 - np.bincount(ids, weights=p, minlength=BINS))
    return float(gap.sum() / len(p)), len(p)


def calibration(sub: Subject) -> dict:
    """Each side's ECE of its min–max normalised scores (module docstring)."""
    rows, ece = [], {}
    for s in sub.sides:
        value, n = score_ece(sub.window(s), sub.evidence.qrels, sub.evidence.rel)
        ece[s] = _plain(value)
        rows.append({"system": s, "judged pairs": n, "ECE": ece[s]})
    return {"definition": f"scores are not probabilities: ECE over {BINS} equal-width bins of "
                          "each system's scores min–max normalised over its judged pairs, "
                          "against relevance (lower: scores track relevance more closely)",
            "rows": rows, "delta": _delta(ece, sub)}


def cost(sub: Subject) -> dict:
    """Cost per query per side from ``Settings.costs`` (module docstring)."""
    rows, per_query, units = [], {}, {}
    for s in sub.sides:
        model = sub.settings.costs.get(s)
        n = _plain((sub.evidence.stats[s].get("candidates_per_query") or {}).get("mean"))
        given = model is not None and n is not None
        per_query[s] = model.per_query + model.per_candidate * n if given else None
        units[s] = model.unit if model is not None else None
        rows.append({"system": s, "candidates per query": n,
                     "cost per query": per_query[s] if given else NOT_GIVEN, "unit": units[s]})
    same_unit = units[sub.baseline] == units[sub.candidate]
    return {"definition": "per_query + per_candidate × mean candidates per query "
                          "(health.cost)", "rows": rows,
            "delta": _delta(per_query, sub) if same_unit else None}


def relevance_cost(sub: Subject) -> dict:
    """The paired rows of every compared measure."""
    return {"definition": "Δ = candidate − baseline of every compared measure: a negative Δ "
                          "is what the change costs in relevance", "rows": _paired_rows(sub.paired)}


def _sources(sub: Subject, top: pd.DataFrame) -> pd.DataFrame:
    """``top`` with each document's source (a document missing from the corpus is its own)."""
    docs = sub.evidence.documents.drop_duplicates(S.DOC_ID).set_index(S.DOC_ID)
    ids = top[S.DOC_ID]
    return top.assign(_source=ids.map(docs[S.SOURCE_ID]).fillna(ids))


def topic_coverage(sub: Subject) -> dict:
    """Mean over Q of the distinct source_ids in T_s."""
    values, rows = {}, []
    for s in sub.sides:
        top = _sources(sub, sub.top(s))
        distinct = top.groupby(S.QUERY_ID)["_source"].nunique().reindex(sub.queries,
                                                                       fill_value=0)
        values[s] = float(distinct.mean()) if len(sub.queries) else None
        rows.append({"system": s, "queries": len(sub.queries), "distinct sources": values[s]})
    return {"definition": f"distinct source_id among the top {sub.settings.top_k}, mean over "
                          "the queries", "rows": rows, "delta": _delta(values, sub)}


def repetition(sub: Subject) -> dict:
    """The share of T_s's entries repeating a higher-ranked entry's source or text."""
    values, rows = {}, []
    for s in sub.sides:
        found = near_duplicates(sub.top(s), sub.evidence.documents)
        values[s] = found["near_duplicate_ratio"] if found["entries"] else None
        rows.append({"system": s, "entries": found["entries"], "repeats": found["duplicates"],
                     "share": values[s]})
    return {"definition": f"share of the top-{sub.settings.top_k} entries repeating the "
                          "source_id or near-identical text of a higher-ranked one",
            "rows": rows, "delta": _delta(values, sub)}


def _slice_records(rows: pd.DataFrame, keys: list[str]) -> list[dict]:
    return _records(rows[[*keys, S.MEASURE, *_SLICE_FIELDS]])


def slices(sub: Subject) -> dict:
    """The slice rows of the strata dimension."""
    table = sub.slice_rows
    rows = table[table[S.DIMENSION] == sub.settings.strata]
    return {"definition": f"Δ per {sub.settings.strata} slice (paired; Holm over "
                          f"{int((~table['too_small']).sum())} slice × measure tests)",
            "rows": _slice_records(rows, [S.SLICE])}


def leakage(sub: Subject) -> dict:
    """Evaluated queries in the training split, and the split report's leakage counts."""
    ev = sub.evidence
    rows = [{"check": f"{s}: evaluated queries in the training split",
             "count": in_training(s, ev)} for s in sub.sides]
    for name, entry in (ev.split_report.get("leakage") or {}).items():
        counts = entry if isinstance(entry, dict) else {"count": entry}
        rows += [{"check": f"{name}: {k.replace('_', ' ')}", "count": _plain(v)}
                 for k, v in counts.items() if isinstance(v, int | float) and
                 not isinstance(v, bool)]
    return {"definition": "queries the candidate could have learnt from: evaluated queries in "
                          "the training split; the split's leakage between training and test",
            "rows": rows}


def negative_transfer(sub: Subject) -> dict:
    """The slices where the candidate is significantly worse (regressed, p_holm ≤ alpha)."""
    table = sub.slice_rows
    worse = table[(table["verdict"] == REGRESSED) & (table["p_holm"] <= sub.settings.alpha)
                  & (table[S.DIMENSION] != S.ALL)]
    tested = int((~table["too_small"]).sum())
    return {"definition": "slices where the candidate is significantly worse: verdict regressed "
                          f"with p_holm ≤ {sub.settings.alpha} (Holm over {tested} slice × "
                          "measure tests)",
            "rows": _slice_records(worse, [S.DIMENSION, S.SLICE]), "tested": tested}


INSPECTIONS: dict[str, Inspection] = {
    "unique_relevant": unique_relevant, "coverage": coverage, "latency": latency,
    "ordering": ordering, "calibration": calibration, "cost": cost,
    "relevance_cost": relevance_cost, "topic_coverage": topic_coverage,
    "repetition": repetition, "slices": slices, "leakage": leakage,
    "negative_transfer": negative_transfer,
}


def change_block(kind: str | None, held: dict[str, dict], subject: Subject) -> dict:
    """The comparison's ``change``: kind, label, ``holds_fixed`` (per condition of the kind:
    condition, what, baseline, candidate, same) and ``inspections`` (name -> its dict)."""
    b, c = subject.baseline, subject.candidate
    if not kind:
        return {"kind": None, "label": GENERAL_ONLY, "holds_fixed": [], "inspections": {}}
    k = KINDS[kind]
    fixed = [{"condition": n, "what": HELD[n].what if n in HELD else MEANING[n],
              "baseline": held[b][n], "candidate": held[c][n], "same": held[b][n] == held[c][n]}
             for n in k.holds_fixed]
    return {"kind": kind, "label": k.label, "holds_fixed": fixed,
            "inspections": {name: INSPECTIONS[name](subject) for name in k.inspections}}
