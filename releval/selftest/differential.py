"""Differential parity: the metrics engine against pytrec_eval, ranx and ir_measures, path by path.

Cases are generated queries (``cases``), each tagged, from its own data, with the code paths it
exercises (``PATHS``); one generator per path (``GENERATORS``) draws queries until they exercise
it. Each oracle (``ORACLES``) is optional (``importlib.util.find_spec``): it maps releval measure
names to its own (``Entry``) and states where its semantics differ: the paths it cannot be
compared on and why (their queries never reach it for that measure), its tie order (trec_eval's,
doc_id descending: it gets the tied scores; any other: it is handed each list in trec_eval's
order with tie-free scores, so what is checked is still the engine's own tie order) and any
rescaling to releval's quantity. Every oracle scores 0 where releval's measure is undefined
(NaN); that 0 is read as undefined on the queries without a relevant document, and there only.
``differential`` returns one row per (oracle, measure, path). ranx compiles its numba code on
first use (about 40 s; cached on disk after that).
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from releval.errors import InputError
from releval.metrics import evaluate, resolve
from releval.metrics.spec import Measure

PATHS: dict[str, str] = {
    "ordinary": "none of the paths below",
    "cutoff_beyond_list": "a cutoff k beyond the ranked list (0 < list length < k)",
    "score_ties": "equal scores within a ranked list (trec_eval's order: doc_id descending)",
    "empty_ranking": "a judged query the run does not rank",
    "negative_grades": "a judgment with a negative grade (beside one ≥ 0: trec_eval cannot "
                       "read a query whose every grade is negative)",
    "unjudged_documents": "a ranked document without a judgment",
    "no_relevant": "a judged query without a relevant document (undefined: NaN)",
    "no_judged_nonrelevant": "a judged query without a non-relevant judgment (0 ≤ grade < 1)",
    "graded": "grades above 1 (0..3)",
}
MEASURES = ("nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@10", "P@10", "R@100", "RR", "RR@10", "AP",
            "AP@10", "Judged@10", "Rprec", "Bpref", "Hit@10", "IPrec@0.5", "NumRet", "NumRel",
            "NumRelRet")
# the families with a value on a query without a relevant document; the others are NaN there,
# where every oracle scores them 0
DEFINED_WITHOUT_RELEVANT = frozenset({"Judged", "NumRet", "NumRel", "NumRelRet"})
TOLERANCE = 1e-9
COLUMNS = ("oracle", "version", "measure", "oracle_measure", "path", "cases", "agreed",
           "max_abs_delta", "status", "note")


# ---- cases ----

@dataclass(frozen=True)
class Shape:
    """How a generator draws a query: its ranked list length (an inclusive range, or "short":
    from 1 to below the smallest cutoff, "long": from the largest cutoff up), the share of
    ranked documents judged, the grades a judgment draws from (uniformly), the number of
    distinct score values (None: every score distinct) and how many judged documents the run
    does not rank (an inclusive range)."""

    lengths: tuple[int, int] | str
    judged: float = 1.0
    grades: tuple[int, ...] = (0, 1)
    levels: int | None = None
    unranked: tuple[int, int] = (1, 3)


GENERATORS: dict[str, Shape] = {
    "ordinary": Shape("long"),
    "cutoff_beyond_list": Shape("short"),
    "score_ties": Shape((4, 30), judged=0.8, grades=(0, 1, 2), levels=3),
    "empty_ranking": Shape((0, 0), grades=(0, 1, 2), unranked=(1, 8)),
    "negative_grades": Shape((5, 30), judged=0.9, grades=(-1, 0, 1, 2)),
    "unjudged_documents": Shape((5, 30), judged=0.5),
    "no_relevant": Shape((3, 30), judged=0.7, grades=(0,)),
    "no_judged_nonrelevant": Shape((3, 30), judged=0.6, grades=(1, 2, 3)),
    "graded": Shape((5, 30), grades=(0, 1, 2, 3)),
}


@dataclass(frozen=True)
class _Docs:
    """Generated documents as flat arrays, grouped by query: query index, ranked?, judged?,
    grade, score (ranked ones), document number within the query; ``nq`` queries."""

    q: np.ndarray
    ranked: np.ndarray
    judged: np.ndarray
    grade: np.ndarray
    score: np.ndarray
    doc: np.ndarray
    nq: int

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.q[mask], minlength=self.nq)

    def take(self, keep: np.ndarray) -> _Docs:
        """The queries ``keep`` (ascending indices), renumbered 0.., in order."""
        code = np.full(self.nq, -1)
        code[keep] = np.arange(len(keep))
        rows = code[self.q] >= 0
        return _Docs(code[self.q[rows]], self.ranked[rows], self.judged[rows], self.grade[rows],
                     self.score[rows], self.doc[rows], len(keep))


_ARRAYS = ("ranked", "judged", "grade", "score", "doc")


def _concat(parts: list[_Docs]) -> _Docs:
    offsets = np.cumsum([0, *(p.nq for p in parts)])
    q = np.concatenate([p.q + o for p, o in zip(parts, offsets[:-1], strict=True)])
    return _Docs(q, *(np.concatenate([getattr(p, a) for p in parts]) for a in _ARRAYS),
                 nq=int(offsets[-1]))


def _draw(rng: np.random.Generator, shape: Shape, n: int, span: tuple[int, int]) -> _Docs:
    low, high = {"short": (1, max(span[0] - 1, 1)), "long": (span[1], span[1] + 10)}.get(
        shape.lengths, shape.lengths)
    length = rng.integers(low, high + 1, n)
    size = length + rng.integers(shape.unranked[0], shape.unranked[1] + 1, n)
    q = np.repeat(np.arange(n), size)
    slot = np.arange(len(q)) - np.repeat(np.cumsum(size) - size, size)
    ranked = slot < length[q]
    judged = ~ranked | (rng.random(len(q)) < shape.judged)
    grade = rng.choice(np.asarray(shape.grades), len(q))
    score = ((length[q] - slot).astype(float) if shape.levels is None
             else rng.integers(0, shape.levels, len(q)).astype(float))
    doc = np.empty(len(q), np.int64)
    doc[np.lexsort((rng.random(len(q)), q))] = slot  # a random numbering within each query
    return _Docs(q, ranked, judged, grade, score, doc, n)


def _tags(d: _Docs) -> pd.DataFrame:
    """Per query: the paths that do not depend on the measure, and ``ranked`` (list length)."""
    j, g = d.judged, d.grade
    rows = np.flatnonzero(d.ranked)
    rows = rows[np.lexsort((d.score[rows], d.q[rows]))]
    tied = (d.q[rows][1:] == d.q[rows][:-1]) & (d.score[rows][1:] == d.score[rows][:-1])
    return pd.DataFrame({
        "score_ties": np.bincount(d.q[rows][1:][tied], minlength=d.nq) > 0,
        "empty_ranking": d.count(d.ranked) == 0,
        "negative_grades": d.count(j & (g < 0)) > 0,
        "unjudged_documents": d.count(d.ranked & ~j) > 0,
        "no_relevant": d.count(j & (g >= 1)) == 0,
        "no_judged_nonrelevant": d.count(j & (g >= 0) & (g < 1)) == 0,
        "graded": d.count(j & (g >= 2)) > 0,
        "ranked": d.count(d.ranked),
    })


def _exercises(path: str, d: _Docs, span: tuple[int, int]) -> np.ndarray:
    """Per query: judged (with a grade ≥ 0: trec_eval cannot read a query whose every grade is
    negative) and on ``path`` (cutoff_beyond_list: beyond the largest cutoff; ordinary: on no
    other path, for any cutoff)."""
    tags = _tags(d)
    n = tags.pop("ranked").to_numpy()
    usable = d.count(d.judged & (d.grade >= 0)) > 0
    if path == "ordinary":
        return usable & ~tags.any(axis=1).to_numpy() & (n >= span[1])
    if path == "cutoff_beyond_list":
        return usable & (n > 0) & (n < span[1])
    return usable & tags[path].to_numpy()


def _generate(rng: np.random.Generator, path: str, n: int, span: tuple[int, int]) -> _Docs:
    """``n`` queries drawn from the path's shape that exercise it."""
    parts, have = [], 0
    for _ in range(50):
        d = _draw(rng, GENERATORS[path], 2 * n + 8, span)
        keep = np.flatnonzero(_exercises(path, d, span))[: n - have]
        parts.append(d.take(keep))
        have += len(keep)
        if have == n:
            return _concat(parts)
    raise InputError(f"no generated query exercises {path} with cutoffs {span}", "differential")


@dataclass(frozen=True)
class Cases:
    """Generated queries: ``qrels`` (query_id, doc_id, grade), ``run`` (query_id, doc_id,
    score; a query with an empty ranking has no rows) and ``tags``, per query_id (sorted): one
    bool column per path that does not depend on the measure, and ``ranked``, the list
    length."""

    qrels: pd.DataFrame
    run: pd.DataFrame
    tags: pd.DataFrame

    def paths(self, m: Measure) -> pd.DataFrame:
        """Per query, whether it is on each path of ``PATHS`` for ``m``, in that order
        (cutoff_beyond_list: 0 < length < m's cutoff, a path only of a measure with one;
        ordinary: on no other)."""
        n = self.tags["ranked"]
        out = self.tags.drop(columns="ranked")
        if m.cutoff:
            out = out.assign(cutoff_beyond_list=(n > 0) & (n < m.cutoff))
        out = out.assign(ordinary=~out.any(axis=1))
        return out[[p for p in PATHS if p in out.columns]]

    def only(self, keep: np.ndarray) -> Cases:
        """The queries where ``keep`` (a bool per query of ``tags``)."""
        queries = self.tags.index[keep]
        return Cases(self.qrels[self.qrels.query_id.isin(queries)],
                     self.run[self.run.query_id.isin(queries)], self.tags[keep])

    def trec_order(self) -> pd.DataFrame:
        """The run in trec_eval's order (by query; score descending, ties doc_id descending)
        with ``position``, 0.. within each query."""
        run = self.run.sort_values(["query_id", "score", "doc_id"],
                                   ascending=[True, False, False], kind="stable")
        return run.assign(position=run.groupby("query_id").cumcount().to_numpy())


def _span(measures: list[Measure]) -> tuple[int, int]:
    """(smallest, largest) cutoff of ``measures``; (10, 10) when none has one."""
    cuts = [m.cutoff for m in measures if m.cutoff]
    return (min(cuts), max(cuts)) if cuts else (10, 10)


def cases(seed: int = 0, n_cases: int = 450, measures: Iterable[str] = MEASURES) -> Cases:
    """``n_cases`` queries, shared out evenly over ``GENERATORS`` (at least one each), their
    list lengths sized to the cutoffs of ``measures``."""
    if n_cases < len(GENERATORS):
        raise InputError(f"n_cases must be ≥ {len(GENERATORS)} (one query per path), got "
                         f"{n_cases}", "differential")
    span = _span(resolve(measures))
    rng = np.random.default_rng(seed)
    share = np.full(len(GENERATORS), n_cases // len(GENERATORS))
    share[: n_cases % len(GENERATORS)] += 1
    d = _concat([_generate(rng, path, int(n), span)
                 for path, n in zip(GENERATORS, share, strict=True)])
    width = len(str(d.nq - 1))
    queries = np.array([f"c{i:0{width}d}" for i in range(d.nq)], dtype=object)
    docs = np.char.add("d", np.char.zfill(d.doc.astype(str), len(str(d.doc.max()))))
    docs = docs.astype(object)
    qrels = pd.DataFrame({"query_id": queries[d.q[d.judged]], "doc_id": docs[d.judged],
                          "grade": d.grade[d.judged].astype(np.int64)})
    run = pd.DataFrame({"query_id": queries[d.q[d.ranked]], "doc_id": docs[d.ranked],
                        "score": d.score[d.ranked]})
    return Cases(qrels, run, _tags(d).set_axis(pd.Index(queries, name="query_id")))


# ---- oracles ----

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


def _row(name: str, version, m: Measure, path: str, status: str, *, oracle_measure="",
         cases=0, agreed=0, delta=np.nan, note="") -> dict:
    return dict(zip(COLUMNS, (name, version, m.name, oracle_measure, path, cases, agreed, delta,
                              status, note), strict=True))


def _oracle_values(oracle: Oracle, c: Cases, entries: dict[str, Entry],
                   comparable: dict[str, np.ndarray]) -> pd.DataFrame:
    """The oracle's values, query_id × releval name: each measure computed on its comparable
    queries only (a query on an excluded path never reaches the oracle), NaN elsewhere."""
    groups: dict[bytes, list[str]] = {}
    for name in entries:
        groups.setdefault(comparable[name].tobytes(), []).append(name)
    parts = [oracle.compute(c.only(comparable[names[0]]), {n: entries[n] for n in names})
             for names in groups.values() if comparable[names[0]].any()]
    return pd.concat([pd.DataFrame(index=c.tags.index), *parts], axis=1).reindex(c.tags.index)


def _compared(name: str, version, m: Measure, entry: Entry, paths: pd.DataFrame,
              comparable: np.ndarray, ours: np.ndarray, theirs: np.ndarray,
              c: Cases) -> list[dict]:
    """One row per path of ``m``: releval's values against the oracle's on the ``comparable``
    queries of the path (those on no excluded path)."""
    n = c.tags["ranked"].to_numpy()
    if entry.rescale:
        theirs = entry.rescale[1](theirs, n)
    if m.family not in DEFINED_WITHOUT_RELEVANT:
        theirs = np.where(c.tags["no_relevant"].to_numpy() & (theirs == 0), np.nan, theirs)
    both_nan = np.isnan(ours) & np.isnan(theirs)
    with np.errstate(invalid="ignore"):
        delta = np.where(both_nan, 0.0, np.abs(ours - theirs))
    delta = np.where(np.isnan(delta), np.inf, delta)  # one side undefined: a disagreement
    rows = []
    for path in paths.columns:
        if path in entry.excluded:
            rows.append(_row(name, version, m, path, f"not comparable: {entry.excluded[path]}",
                             oracle_measure=entry.name, note=entry.note(m)))
            continue
        on = comparable & paths[path].to_numpy()
        count, agreed = int(on.sum()), int((on & (delta <= TOLERANCE)).sum())
        status = ("not comparable: each of its cases is also on an excluded path" if not count
                  else "agree" if agreed == count else "differ")
        rows.append(_row(name, version, m, path, status, oracle_measure=entry.name, cases=count,
                         agreed=agreed, delta=float(delta[on].max()) if count else np.nan,
                         note=entry.note(m)))
    return rows


def differential(seed: int = 0, n_cases: int = 450, measures: Iterable[str] = MEASURES,
                 oracles: Iterable[str] | None = None) -> pd.DataFrame:
    """The engine against each oracle (default: all of ``ORACLES``) on ``cases(seed,
    n_cases, measures)``: one row per (oracle, measure, path), ``COLUMNS``: the oracle's
    version, its name for the measure, cases compared, agreed (|Δ| ≤ ``TOLERANCE``, or both
    undefined), max |Δ| (inf where one side is undefined), status (``agree``, ``differ``,
    ``not installed``, ``not comparable: <why>``) and a note on how the values were
    matched. cutoff_beyond_list is a path only of measures with a cutoff."""
    wanted = resolve(measures)
    chosen = list(ORACLES) if oracles is None else list(oracles)
    unknown = sorted(set(chosen) - set(ORACLES))
    if unknown:
        raise InputError(f"unknown oracle {', '.join(unknown)}; known: {', '.join(ORACLES)}",
                         "differential")
    c = cases(seed, n_cases, measures)
    ours = evaluate(c.run, c.qrels, wanted).per_query.pivot(
        index="query_id", columns="measure", values="value").reindex(c.tags.index)
    paths = {m.name: c.paths(m) for m in wanted}
    rows: list[dict] = []
    for name in chosen:
        oracle = ORACLES[name]
        version = oracle.version() if oracle.installed() else None
        entries = {resolve([key])[0].name: entry for key, entry in oracle.entries.items()}
        usable = [m for m in wanted if isinstance(entries.get(m.name), Entry)]
        comparable = {m.name: ~paths[m.name][[p for p in entries[m.name].excluded
                                               if p in paths[m.name]]].any(axis=1).to_numpy()
                      for m in usable}
        theirs = _oracle_values(oracle, c, {m.name: entries[m.name] for m in usable},
                                comparable) if version is not None else None
        for m in wanted:
            entry = entries.get(m.name, f"{name} has no counterpart of {m.name} here")
            if version is None:
                rows += [_row(name, None, m, p, "not installed") for p in paths[m.name]]
            elif isinstance(entry, str):
                rows += [_row(name, version, m, p, f"not comparable: {entry}")
                         for p in paths[m.name]]
            else:
                rows += _compared(name, version, m, entry, paths[m.name],
                                  comparable[m.name], ours[m.name].to_numpy(),
                                  theirs[m.name].to_numpy(dtype=float), c)
    return pd.DataFrame(rows, columns=list(COLUMNS))
