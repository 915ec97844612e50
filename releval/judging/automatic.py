"""Automatic judges as a source of judgments beside the human judges: a labels file from any
judge, and the built-in judge (the dense encoder's similarity mapped to grades). Automatic
labels are never human qrels: every row names its ``judge`` and ``model``.

**Labels file** (``read_labels``): a table (CSV, TSV or parquet) with query_id, doc_id,
grade, judge, model and an optional confidence (a number; its meaning is the judge's), or
TREC qrels (``query_id 0 doc_id grade``), whose judge and model the caller names. A judge
or model given by the caller fills a table's missing column or blank cells and must agree
with the values it has. One grade per (query_id, doc_id, judge, model): an identical repeat
is dropped, a repeat with another grade is refused. Every rule broken is one InputError
naming the file, the line/row and the rule.

**The built-in judge** ``dense-similarity`` (model: the encoder's name). A pair's similarity
is the cosine of its query's and document's embeddings (``pair_similarity``: the dense
route's encoder and its content-keyed cache). Ordered thresholds t_1 ≤ … ≤ t_G
(G = max_grade) map it to a grade, grade(s) = #{k : t_k ≤ s}. ``fit_thresholds`` fits them
on a human-judged sample to maximise the quadratic-weighted Cohen's κ between the human and
the mapped grades: coordinate ascent over the candidate thresholds (every midpoint between
adjacent distinct similarities, plus one at the lowest and one above the highest), starting
from the thresholds that reproduce the human grades' shares; each step moves one threshold
to its best candidate between its neighbours (every candidate's confusion table at once,
from cumulative counts of the human grades over the sorted similarities; the lowest of
equally good ones), and sweeps repeat until one changes nothing (a local optimum;
deterministic). A pair's ``confidence`` is the distance of its similarity to the nearest
threshold used for it (in cosine units: 0 on a boundary). It is a weak judge: one number
per pair, topicality only, no reading of the document.

**Roles** (``similarity_judge``): every pair to label gets one:
``validation`` (in the human sample the judge is fitted and checked on: both judged),
``heldout`` (a human label exists but is held out from the judge and from PPI) and
``hole`` (no human label: the judge fills it, counted apart). ``split_human`` draws the
validation sample as a seeded uniform random sample of the judged queries (all their
judgments), the rest held out, so PPI's labelled set is a random sample of queries.
Cross-fitting: the validation queries are split at random (seeded) into ``folds`` folds,
and a validation pair's grade comes from thresholds fitted on the other folds only, so the
labels that agreement and PPI compare with people were not fitted on those same people's
grades; heldout and hole pairs get the thresholds fitted on the whole validation sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data import readers
from releval.errors import InputError
from releval.judging.agreement_auto import kappa

if TYPE_CHECKING:
    from releval.retrieval.dense import DenseRetriever

JUDGE, MODEL, CONFIDENCE = "judge", "model", "confidence"
ROLE, SIMILARITY, HUMAN_GRADE, FOLD = "role", "similarity", "human_grade", "fold"
LABEL_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.GRADE, JUDGE, MODEL, CONFIDENCE)
ROLES = ("validation", "heldout", "hole")
JUDGED_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.GRADE, ROLE, CONFIDENCE, JUDGE, MODEL, SIMILARITY,
                  HUMAN_GRADE, FOLD)
SIMILARITY_JUDGE = "dense-similarity"
MAX_SWEEPS = 50
PAIR = [S.QUERY_ID, S.DOC_ID]


# --- a labels file ---------------------------------------------------------------------------


def _named(frame: pd.DataFrame, column: str, given: str | None, source: str) -> pd.Series:
    """The judge or model of every row: the column's value, the caller's where it is blank."""
    if column not in frame.columns:
        if given is None:
            raise InputError(f"no {column} named: the file has no {column} column and none "
                             "was given", source)
        return pd.Series(str(given), index=frame.index)
    values = frame[column].astype("string").str.strip().replace("", pd.NA)
    if given is not None:
        S.fail_first(frame, source, (values.notna() & (values != str(given))).to_numpy(bool),
                     lambda i: f"{column} {values.iloc[i]!r} differs from the {column} given, "
                               f"{given!r}")
        values = values.fillna(str(given))
    S.fail_first(frame, source, values.isna().to_numpy(), f"{column} is missing")
    return values.astype(str)


def read_labels(path: str | Path, *, judge: str | None = None, model: str | None = None,
                max_grade: int) -> pd.DataFrame:
    """An automatic judge's labels as ``LABEL_COLUMNS`` (ids and judge/model str, grade
    int64, confidence float64, NaN where not stated), one row per (query_id, doc_id, judge,
    model); the rules are the module docstring's."""
    path = readers.existing(path)
    source = str(path)
    max_grade = S.integer("max_grade", max_grade, low=0)
    if readers.is_table(path):
        frame = readers.read_table(path)
        S.require_columns(frame, (S.QUERY_ID, S.DOC_ID, S.GRADE), source)
    else:
        frame = readers.read_qrels(path)
    for column in PAIR:
        S.ids(frame, column, source)
    raw = frame[S.GRADE]
    grade = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    S.fail_first(frame, source, ~((grade >= 0) & (grade <= max_grade) & (grade == np.floor(grade))),
                 lambda i: f"grade must be an integer in 0..{max_grade}, got {raw.tolist()[i]!r}")
    if CONFIDENCE in frame.columns:
        confidence = pd.to_numeric(frame[CONFIDENCE], errors="coerce").to_numpy(float)
        S.fail_first(frame, source,
                     (np.isnan(confidence) & frame[CONFIDENCE].notna()).to_numpy(bool)
                     | np.isinf(confidence),
                     lambda i: f"confidence must be a number, got {frame[CONFIDENCE].iloc[i]!r}")
    else:
        confidence = np.full(len(frame), np.nan)
    labels = pd.DataFrame({
        S.QUERY_ID: frame[S.QUERY_ID].astype(str).to_numpy(),
        S.DOC_ID: frame[S.DOC_ID].astype(str).to_numpy(),
        S.GRADE: grade.astype(np.int64),
        JUDGE: _named(frame, JUDGE, judge, source).to_numpy(),
        MODEL: _named(frame, MODEL, model, source).to_numpy(),
        CONFIDENCE: confidence}, index=frame.index)
    key = [*PAIR, JUDGE, MODEL]
    first = labels.groupby(key, sort=False)[S.GRADE].transform("first")
    first_at = labels.index.to_series().groupby([labels[c] for c in key],
                                                sort=False).transform("first")
    S.fail_first(frame, source, (labels[S.GRADE] != first).to_numpy(),
                 lambda i: f"pair ({labels[S.QUERY_ID].iloc[i]!r}, {labels[S.DOC_ID].iloc[i]!r})"
                           f" graded {labels[S.GRADE].iloc[i]} here and {first.iloc[i]} at "
                           f"{S.where(frame, first_at.iloc[i])} by the same judge and model")
    out = labels[~labels.duplicated(key)].reset_index(drop=True)
    out.attrs["source"] = source
    return out


def unmatched(labels: pd.DataFrame, queries: pd.DataFrame,
              documents: pd.DataFrame) -> dict:
    """The labels that name nothing of the data: of a query the queries table lacks, of a
    document the documents table lacks (None without documents: a project of runs only).
    They label no pair the evaluation holds, so none is read; counted, with the first of
    each (``query/doc``), for the stage's line and its document (``unmatched_note``)."""
    q = ~labels[S.QUERY_ID].astype(str).isin(queries[S.QUERY_ID].astype(str))
    d = (~labels[S.DOC_ID].astype(str).isin(documents[S.DOC_ID].astype(str))
         if len(documents) else pd.Series(False, index=labels.index))
    first = lambda mask: (f"{labels[S.QUERY_ID][mask].iloc[0]}/"  # noqa: E731
                          f"{labels[S.DOC_ID][mask].iloc[0]}" if mask.any() else None)
    return {"labels": int(len(labels)), "unknown_queries": int(q.sum()),
            "unknown_documents": int(d.sum()) if len(documents) else None,
            "first_unknown_query": first(q), "first_unknown_document": first(d)}


def unmatched_note(counts: dict) -> str:
    """``unmatched``'s counts in words ('' when every label names a known query and
    document): 'of 120 labels, 3 name a query not in the data (first: x1/d4) and 2 a
    document not in it (first: q1/zz): not read'."""
    parts = [f"{n:,} {'name ' if not i else ''}a {what} not in the data"
             f" (first: {counts[f'first_unknown_{what}']})"
             for i, (what, n) in enumerate((w, n) for w, n in (
                 ("query", counts.get("unknown_queries")),
                 ("document", counts.get("unknown_documents"))) if n)]
    if not parts:
        return ""
    return f"of {counts['labels']:,} labels, {' and '.join(parts)}: not read"


# --- the built-in judge ----------------------------------------------------------------------


def pair_similarity(pairs: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame,
                    retriever: DenseRetriever) -> np.ndarray:
    """The cosine of each pair's query and document embeddings (float64, one per row of
    ``pairs``), through ``retriever``'s encoder and embedding caches (its query field and
    document fields; each distinct query and document embedded once)."""
    S.require_columns(pairs, PAIR, "pairs")
    qids = pd.Index(pairs[S.QUERY_ID].astype(str).unique())
    dids = pd.Index(pairs[S.DOC_ID].astype(str).unique())
    q_rows = queries.assign(**{S.QUERY_ID: queries[S.QUERY_ID].astype(str)}).drop_duplicates(
        S.QUERY_ID).set_index(S.QUERY_ID).reindex(qids)
    d_rows = documents.assign(**{S.DOC_ID: documents[S.DOC_ID].astype(str)}).drop_duplicates(
        S.DOC_ID).set_index(S.DOC_ID).reindex(dids)
    for name, ids, known in (("query", qids, queries[S.QUERY_ID].astype(str)),
                             ("document", dids, documents[S.DOC_ID].astype(str))):
        missing = ids.difference(known)
        if len(missing):
            raise InputError(f"{len(missing)} judged {name} ids are not in the {name} table, "
                             f"e.g. {missing[0]!r}", "pairs")
    q_vectors, _ = retriever.query_vectors(q_rows.reset_index())
    d_vectors, _ = retriever.document_vectors(d_rows.reset_index())
    q = _unit(q_vectors)[qids.get_indexer(pairs[S.QUERY_ID].astype(str))]
    d = _unit(d_vectors)[dids.get_indexer(pairs[S.DOC_ID].astype(str))]
    return np.einsum("ij,ij->i", q, d)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norm = np.linalg.norm(vectors, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return vectors / norm  # a zero vector has no direction: NaN


def grades_of(similarity, thresholds) -> np.ndarray:
    """grade(s) = #{k : t_k ≤ s} (int64); ``thresholds`` (G,) for every similarity or
    (n, G), one row per similarity."""
    s = np.asarray(similarity, float)
    return (s[:, None] >= np.asarray(thresholds, float)).sum(axis=-1).astype(np.int64)


def confidence_of(similarity, thresholds) -> np.ndarray:
    """The distance of each similarity to its nearest threshold (thresholds as in
    ``grades_of``)."""
    s = np.asarray(similarity, float)
    return np.abs(s[:, None] - np.asarray(thresholds, float)).min(axis=-1)


def _candidates(s: np.ndarray) -> np.ndarray:
    """Every midpoint between adjacent distinct values, one at the lowest value (all pass)
    and one just above the highest (none passes)."""
    values = np.unique(s)
    return np.concatenate([[values[0]], (values[1:] + values[:-1]) / 2,
                           [np.nextafter(values[-1], np.inf)]])


def _sample(similarity, grades, max_grade: int) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(similarity, dtype=float)
    g = np.asarray(grades)
    if s.ndim != 1 or s.shape != g.shape:
        raise InputError(f"similarity {s.shape} and grades {g.shape} must be two equally long "
                         "vectors")
    if not np.isfinite(s).all():
        raise InputError("similarity has NaN or infinite values")
    gf = g.astype(float)
    if not ((gf >= 0) & (gf <= max_grade) & (gf == np.floor(gf))).all():
        raise InputError(f"grades must be integers in 0..{max_grade}")
    if len(np.unique(g)) < 2:
        raise InputError("the human sample holds one grade only: no threshold can be fitted "
                         "(κ is undefined)")
    return s, g.astype(np.int64)


def fit_thresholds(similarity, grades, max_grade: int) -> np.ndarray:
    """The max_grade ordered thresholds maximising the quadratic-weighted κ of the human
    ``grades`` against ``grades_of(similarity, thresholds)`` (module docstring: the method).
    """
    max_grade = S.integer("max_grade", max_grade)
    s, g = _sample(similarity, grades, max_grade)
    levels = max_grade + 1
    candidates = _candidates(s)
    order = np.argsort(s, kind="stable")
    s, g = s[order], g[order]
    below = np.searchsorted(s, candidates, side="left")  # samples under each candidate
    shares = np.cumsum(np.bincount(g, minlength=levels))[:-1] / len(g)
    index = np.searchsorted(candidates, np.quantile(s, shares))  # the human shares
    index = np.maximum.accumulate(np.minimum(index, len(candidates) - 1))
    for _ in range(MAX_SWEEPS):
        moved = False
        for k in range(max_grade):  # threshold t_{k+1}: grade k below it, k + 1 from it on
            lo = index[k - 1] if k > 0 else 0
            hi = index[k + 1] if k < max_grade - 1 else len(candidates) - 1
            first, last = below[lo] if k > 0 else 0, below[hi] if k < max_grade - 1 else len(s)
            fixed = np.r_[0:first, last:len(s)]  # samples whose grade t_{k+1} cannot change
            confusion = np.zeros((levels, levels))
            np.add.at(confusion, (g[fixed], grades_of(s[fixed], candidates[index])), 1)
            window = np.zeros((last - first + 1, levels))
            window[1:] = np.cumsum(np.eye(levels)[g[first:last]], axis=0)
            options = np.arange(lo, hi + 1)
            under = window[below[options] - first]  # human grades of the window under t
            tables = np.repeat(confusion[None], len(options), axis=0)
            tables[:, :, k] += under
            tables[:, :, k + 1] += window[-1] - under
            scores = kappa(tables, "quadratic")
            best = options[np.argmax(np.where(np.isnan(scores), -np.inf, scores))]
            moved |= best != index[k]
            index[k] = best
        if not moved:
            break
    return candidates[index]


def split_human(human: pd.DataFrame, *, share: float = 0.5,
                seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(validation, heldout): the human judgments of a uniform random sample of
    round(share × queries) of the judged queries (seeded), and those of the others. The
    sample is of queries, so PPI's labelled set is a random sample of queries."""
    S.require_columns(human, (*PAIR, S.GRADE), "human")
    if not 0 < share < 1:
        raise InputError(f"share must lie in (0, 1), got {share}")
    queries = np.sort(human[S.QUERY_ID].astype(str).unique())
    size = min(max(int(round(share * len(queries))), 1), len(queries))
    chosen = np.random.default_rng(seed).choice(queries, size=size, replace=False)
    inside = human[S.QUERY_ID].astype(str).isin(chosen).to_numpy()
    return human[inside], human[~inside]


def _folds(queries: pd.Series, folds: int, seed: int) -> np.ndarray:
    """Each row's fold: the distinct queries shuffled (seeded) and dealt round-robin."""
    distinct = np.sort(queries.unique())
    if folds > len(distinct):
        raise InputError(f"folds ({folds}) exceeds the validation queries ({len(distinct)})")
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = pd.Series(np.empty(len(distinct), np.int64), index=distinct)
    fold_of.iloc[order] = np.arange(len(distinct)) % folds
    return fold_of.reindex(queries.to_numpy()).to_numpy()


def _keys(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_frame(frame[PAIR].astype(str))


def similarity_judge(pairs: pd.DataFrame, similarity, human: pd.DataFrame, *, max_grade: int,
                     model: str, folds: int = 2, seed: int = 0,
                     heldout: pd.DataFrame | None = None) -> pd.DataFrame:
    """Label every pair of ``pairs`` (query_id, doc_id; unique) from its ``similarity`` (one
    finite number per row), fitted on ``human`` (query_id, doc_id, grade: the validation
    sample, every pair of it among ``pairs``) with cross-fitting over ``folds`` folds of its
    queries (module docstring). ``model``: the encoder's name (the ``model`` column);
    ``heldout``: the pairs whose human label is held out (with their grade, if given; those
    not among ``pairs`` are not labelled).

    Returns ``JUDGED_COLUMNS`` in the order of ``pairs``: grade (the judge's), role,
    confidence, judge (``dense-similarity``), model, similarity, human_grade (Int64: the
    validation or held-out human grade, missing for holes) and fold (a validation pair's
    fold, −1 for the others). ``attrs``: thresholds (fitted on the whole sample; they label
    heldout and hole pairs) and fold_thresholds (fold k's grades come from entry k).
    """
    max_grade = S.integer("max_grade", max_grade)
    folds = S.integer("folds", folds, low=2)
    S.require_columns(pairs, PAIR, "pairs")
    S.require_columns(human, (*PAIR, S.GRADE), "human")
    keys = _keys(pairs)
    if keys.has_duplicates:
        raise InputError(f"pair {keys[keys.duplicated()][0]} is listed twice", "pairs")
    s = np.asarray(similarity, dtype=float)
    if s.shape != (len(pairs),) or not np.isfinite(s).all():
        raise InputError(f"similarity must be {len(pairs)} finite numbers, one per pair")
    human_keys = _keys(human)
    if human_keys.has_duplicates:
        raise InputError(f"human pair {human_keys[human_keys.duplicated()][0]} is graded twice",
                         "human")
    at = keys.get_indexer(human_keys)
    if (at < 0).any():
        raise InputError(f"human pair {human_keys[at < 0][0]} is not among the pairs to label "
                         "(its similarity is unknown)", "human")
    held = keys.get_indexer(_keys(heldout)) if heldout is not None else np.zeros(0, np.int64)
    if np.isin(held[held >= 0], at).any():
        raise InputError("a pair is both in the validation sample and held out", "heldout")
    grade_h = human[S.GRADE].to_numpy()
    _sample(s[at], grade_h, max_grade)  # the rules on the sample, before any fold is cut

    fold = _folds(human[S.QUERY_ID].astype(str), folds, seed)
    overall = fit_thresholds(s[at], grade_h, max_grade)
    per_fold = [fit_thresholds(s[at][fold != k], grade_h[fold != k], max_grade)
                for k in range(folds)]
    used = np.repeat(overall[None, :], len(pairs), axis=0)
    used[at] = np.stack(per_fold)[fold]

    role = np.full(len(pairs), ROLES[2], dtype=object)
    human_grade = pd.array(np.full(len(pairs), pd.NA), dtype="Int64")
    if heldout is not None and len(held):
        role[held[held >= 0]] = ROLES[1]
        if S.GRADE in heldout.columns:
            human_grade[held[held >= 0]] = heldout[S.GRADE].to_numpy()[held >= 0]
    role[at] = ROLES[0]
    human_grade[at] = grade_h
    fold_of = np.full(len(pairs), -1, np.int64)
    fold_of[at] = fold
    out = pd.DataFrame({
        S.QUERY_ID: keys.get_level_values(0), S.DOC_ID: keys.get_level_values(1),
        S.GRADE: grades_of(s, used), ROLE: role, CONFIDENCE: confidence_of(s, used),
        JUDGE: SIMILARITY_JUDGE, MODEL: str(model), SIMILARITY: s,
        HUMAN_GRADE: human_grade, FOLD: fold_of})[list(JUDGED_COLUMNS)]
    out.attrs.update(thresholds=overall.tolist(), fold_thresholds=[t.tolist() for t in per_fold])
    return out
