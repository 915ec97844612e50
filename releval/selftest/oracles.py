"""The oracles of the differential parity check (``releval.selftest.differential``): each an
optional library (pytrec_eval, ranx, ir_measures; imported only when installed) with how it
computes each releval measure (``Entry``), where its semantics differ (the paths it cannot be
compared on, its tie order, a rescaling to releval's quantity) and why it has no counterpart
of a measure. ranx compiles its numba code on first use (about 40 s; cached on disk after
that).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from releval.metrics.spec import Measure
from releval.selftest.paths import DEFINED_WITHOUT_RELEVANT, Cases


@dataclass(frozen=True)
class Entry:
    """One releval measure as an oracle computes it. ``name``: the oracle's name for it;
    ``via``: the implementation behind it where the library delegates; ``ties``: None when
    the oracle gets the tied scores and orders them as trec_eval, else its own tie order (it
    is then handed each list in trec_eval's order, tie-free); ``excluded``: path -> why the
    oracle's semantics differ there; ``rescale``: (what it does, f(oracle values, list
    lengths) -> releval's quantity)."""

    name: str
    via: str = ""
    ties: str | None = None
    excluded: dict[str, str] = field(default_factory=dict)
    rescale: tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] | None = None

    def note(self, m: Measure) -> str:
        """How its values were matched to releval's for ``m``."""
        parts = [f"via {self.via}"] if self.via else []
        if self.ties:
            parts.append(f"given trec_eval's order (its own: {self.ties})")
        if m.family not in DEFINED_WITHOUT_RELEVANT:
            parts.append("0 where |R| = 0 read as undefined")
        if self.rescale:
            parts.append(self.rescale[0])
        return "; ".join(parts)


@dataclass(frozen=True)
class Oracle:
    """An optional library: ``module`` (imported only when found), ``distribution`` (its
    version), ``entries`` (releval measure name -> ``Entry``, or why it has no counterpart),
    and ``compute`` ((cases, {releval name: Entry}) -> values, query_id × releval name)."""

    module: str
    distribution: str
    entries: dict[str, Entry | str]
    compute: Callable[[Cases, dict[str, Entry]], pd.DataFrame]

    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def version(self) -> str:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"


def _nested(frame: pd.DataFrame, column: str, queries: pd.Index) -> dict[str, dict]:
    """{query: {doc: value}} for every query of ``queries`` (an empty dict where none)."""
    out: dict[str, dict] = {q: {} for q in queries}
    for q, d, v in zip(frame["query_id"], frame["doc_id"], frame[column].tolist(), strict=True):
        out[q][d] = v
    return out


def _pytrec_eval(c: Cases, entries: dict[str, Entry]) -> pd.DataFrame:
    """trec_eval -c: every judged query gets a ranking, empty where the run has none."""
    pytrec_eval = importlib.import_module("pytrec_eval")
    queries = c.tags.index
    evaluator = pytrec_eval.RelevanceEvaluator(_nested(c.qrels, "grade", queries),
                                               {e.name for e in entries.values()},
                                               relevance_level=1)
    got = pd.DataFrame.from_dict(evaluator.evaluate(_nested(c.run, "score", queries)),
                                 orient="index")
    return pd.DataFrame({m: got[e.name] for m, e in entries.items()}).reindex(queries)


def _typed_lists(frame: pd.DataFrame, doc: np.ndarray, value: np.ndarray, queries: pd.Index):
    """ranx's input: per query (in order; ``frame`` sorted by query) an array of rows
    (document code, value), shape (0, 2) where the query has none."""
    typed = importlib.import_module("numba.typed")
    counts = frame["query_id"].value_counts().reindex(queries, fill_value=0).to_numpy()
    pairs = np.column_stack([doc, value]).astype(np.float64)
    return typed.List(np.split(pairs, np.cumsum(counts)[:-1]))


def _ranx(c: Cases, entries: dict[str, Entry]) -> pd.DataFrame:
    """ranx on its typed lists: documents as exact integer codes, each ranked list in
    trec_eval's order, each query's judgments by grade descending (ranx reads its ideal
    ranking off the qrels in their order)."""
    numba, ranx = importlib.import_module("numba"), importlib.import_module("ranx")
    queries = c.tags.index
    codes = {d: i for i, d in enumerate(pd.unique(pd.concat([c.qrels.doc_id, c.run.doc_id])))}
    run = c.trec_order()
    qrels = c.qrels.sort_values(["query_id", "grade"], ascending=[True, False], kind="stable")
    run_lists = _typed_lists(run, run.doc_id.map(codes).to_numpy(), -run.position.to_numpy(),
                             queries)
    qrels_lists = _typed_lists(qrels, qrels.doc_id.map(codes).to_numpy(),
                               qrels.grade.to_numpy(), queries)
    names = list(dict.fromkeys(e.name for e in entries.values()))
    # ranx.evaluate looks a single metric up by its bare name (a KeyError for "ndcg@10")
    asked = names * 2 if len(names) == 1 else names
    threads = numba.get_num_threads()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's cast warnings from ranx's own code
            got = ranx.evaluate(qrels_lists, run_lists, asked, return_mean=False)
    finally:
        numba.set_num_threads(threads)  # ranx.evaluate drops to one thread below 10 queries
    return pd.DataFrame({m: got[e.name] for m, e in entries.items()}, index=queries)


def _ir_measures(c: Cases, entries: dict[str, Entry]) -> pd.DataFrame:
    """ir_measures.iter_calc on frames: the run as it is for the measures that order ties as
    trec_eval, in trec_eval's order with tie-free scores for the others. A query the run does
    not rank gets ir_measures' default for the measure, 0 (as trec_eval -c)."""
    irm = importlib.import_module("ir_measures")
    qrels = c.qrels.rename(columns={"grade": "relevance"})
    ordered = c.trec_order()
    explicit = ordered.assign(score=-ordered.position.astype(float)).drop(columns="position")
    out: dict[str, dict[str, float]] = {m: {} for m in entries}
    for tie_free, run in ((False, c.run), (True, explicit)):
        wanted = {irm.parse_measure(e.name): m for m, e in entries.items()
                  if (e.ties is not None) == tie_free}
        if wanted:
            for metric in irm.iter_calc(list(wanted), qrels, run):
                out[wanted[metric.measure]][metric.query_id] = metric.value
    return pd.DataFrame(out, index=c.tags.index, columns=list(entries), dtype=float)


def _judged_fraction(k: int) -> tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    return (f"its Judged@{k} divides by the list length when shorter than k: × min(n, k) / k",
            lambda value, n: value * np.minimum(n, k) / k)


RANX_TIES = "its Run sorts by score alone, with numba's quicksort: ties in no defined order"
ASCENDING = "score descending, ties doc_id ascending"
RANX_BPREF = {
    "no_relevant": "ranx's bpref divides by |R| = 0, which stops its loop: the queries after "
                   "it in the batch score 0",
    "negative_grades": "ranx counts a negatively graded document as judged non-relevant; "
                       "trec_eval and releval skip it",
    "no_judged_nonrelevant": "ranx divides by min(|R|, N) = 0 when no judged document is "
                             "non-relevant",
}


def _ranx_entry(name: str, **kw) -> Entry:
    return Entry(name, ties=RANX_TIES, **kw)


def _pte(name: str, **kw) -> Entry:
    return Entry(name, via="pytrec_eval", **kw)


ORACLES: dict[str, Oracle] = {
    "pytrec_eval": Oracle("pytrec_eval", "pytrec-eval-terrier", {
        "nDCG@10": Entry("ndcg_cut_10"), "nDCG": Entry("ndcg"),
        "nDCG(dcg='exp-log2')@10": "trec_eval's ndcg has no exponential gain",
        "P@10": Entry("P_10"), "R@100": Entry("recall_100"), "RR": Entry("recip_rank"),
        "RR@10": "trec_eval's recip_rank has no cutoff", "AP": Entry("map"),
        "AP@10": Entry("map_cut_10"), "Judged@10": "trec_eval has no judged fraction",
        "Rprec": Entry("Rprec"), "Bpref": Entry("bpref"), "Hit@10": Entry("success_10"),
        "IPrec@0.5": Entry("iprec_at_recall_0.50"), "NumRet": Entry("num_ret"),
        "NumRel": Entry("num_rel"), "NumRelRet": Entry("num_rel_ret"),
    }, _pytrec_eval),
    "ranx": Oracle("ranx", "ranx", {
        "nDCG@10": _ranx_entry("ndcg@10"), "nDCG": _ranx_entry("ndcg"),
        "nDCG(dcg='exp-log2')@10": _ranx_entry("ndcg_burges@10"),
        "P@10": _ranx_entry("precision@10"), "R@100": _ranx_entry("recall@100"),
        "RR": _ranx_entry("mrr"), "RR@10": _ranx_entry("mrr@10"), "AP": _ranx_entry("map"),
        "AP@10": _ranx_entry("map@10"), "Judged@10": "ranx has no judged fraction",
        "Rprec": _ranx_entry("r-precision"), "Bpref": _ranx_entry("bpref", excluded=RANX_BPREF),
        "Hit@10": _ranx_entry("hit_rate@10"),
        "IPrec@0.5": "ranx.evaluate has no interpolated precision",
        "NumRet": "ranx has no count of ranked documents",
        "NumRel": "ranx has no count of relevant documents", "NumRelRet": _ranx_entry("hits"),
    }, _ranx),
    "ir_measures": Oracle("ir_measures", "ir_measures", {
        "nDCG@10": _pte("nDCG@10"), "nDCG": _pte("nDCG"),
        "nDCG(dcg='exp-log2')@10": "ir_measures computes it only through gdeval or its ranx "
                                   "bridge (the ranx rows compare ranx itself)",
        "P@10": _pte("P@10"), "R@100": _pte("R@100"), "RR": _pte("RR"),
        "RR@10": Entry("RR@10", via="msmarco", ties=ASCENDING),
        "AP": _pte("AP"), "AP@10": _pte("AP@10"),
        "Judged@10": Entry("Judged@10", via="judged", ties=ASCENDING,
                           rescale=_judged_fraction(10)),
        "Rprec": _pte("Rprec"), "Bpref": _pte("Bpref"), "Hit@10": _pte("Success@10"),
        "IPrec@0.5": _pte("IPrec@0.5"), "NumRet": _pte("NumRet"),
        "NumRel": _pte("NumRel", excluded={
            "empty_ranking": "ir_measures gives a query the run does not rank the default, 0, "
                             "not |R|"}),
        "NumRelRet": _pte("NumRelRet"),
    }, _ir_measures),
}
