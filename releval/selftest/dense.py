"""Relations of the dense route: its exact search against numpy, its HNSW search against exact.

Reference scores are the inner products, in float64, of the vectors the route's own embedding
caches hold for the documents and the trial queries (the same vectors it indexed), -inf where
the query may not see the document. Two windows agree when, rank by rank, they hold the same
document or two documents whose reference scores differ by at most ``TOLERANCE`` but are not
equal (float32 near-ties may fall either way; exact ties fall to doc_id ascending), a
document one window holds beyond the other's end scores within ``TOLERANCE`` of the cut (the
last reference score of the expected window, or min_score), and every score the route
reports is its document's reference score within ``TOLERANCE``.

- ``brute_force``: the exact search equals a brute-force numpy scorer on the same vectors
  (score descending, then doc_id ascending, visible only, at least min_score, top depth).
- ``hnsw_exact``: the system's HNSW index searched with efSearch ≥ the number of documents
  equals the exact search (ANN recall 1.0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.selftest.cases import RouteCase
from releval.selftest.relation import WINDOW, Relation, Tally, per_trial

TOLERANCE = 1e-5


def reference_scores(case: RouteCase) -> np.ndarray:
    """(trial queries × sample documents) float64 inner products of the cached vectors of the
    case's indexed retriever; -inf where the query may not see the document."""
    retriever = case.indexed
    docs = retriever.document_cache.encode(retriever.document_texts(case.documents),
                                           retriever.encoder)
    asked = case.queries.get(retriever.query_field, case.queries[S.TEXT])
    texts = asked.fillna("").astype(str).tolist()
    queries = retriever.query_cache.encode(texts, retriever.encoder)
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    scores[~Visibility(case.documents).mask(case.queries)] = -np.inf
    return scores


def brute_window(case: RouteCase, scores: np.ndarray) -> pd.DataFrame:
    """The top ``case.depth`` of ``scores`` per query (finite, ≥ min_score when set), score
    descending then doc_id ascending, as a window."""
    floor = getattr(case.config, "min_score", None)
    keep = np.isfinite(scores) & (scores >= (-np.inf if floor is None else floor))
    rows, cols = np.nonzero(keep)
    doc_ids = case.documents[S.DOC_ID].astype(str).to_numpy()
    tie = pd.factorize(doc_ids, sort=True)[0]
    order = np.lexsort((tie[cols], -scores[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    rank = np.arange(1, len(rows) + 1) - np.searchsorted(rows, rows, side="left")
    within = rank <= case.depth
    rows, cols, rank = rows[within], cols[within], rank[within]
    return pd.DataFrame({S.QUERY_ID: case.queries[S.QUERY_ID].to_numpy()[rows],
                         S.DOC_ID: doc_ids[cols], S.RANK: rank,
                         S.SCORE: scores[rows, cols]})[WINDOW]


def _reference(case: RouteCase, scores: np.ndarray, query_ids: pd.Series,
               doc_ids: pd.Series) -> np.ndarray:
    """``scores`` at (query, document) pairs; NaN where a side is missing."""
    qi = pd.Index(case.queries[S.QUERY_ID]).get_indexer(query_ids)
    di = pd.Index(case.documents[S.DOC_ID].astype(str)).get_indexer(doc_ids.fillna(""))
    ok = (qi >= 0) & (di >= 0)
    out = np.full(len(qi), np.nan)
    out[ok] = scores[qi[ok], di[ok]]
    return out


def agreement(case: RouteCase, want: pd.DataFrame, got: pd.DataFrame,
              scores: np.ndarray) -> np.ndarray:
    """Per trial query: '' when ``got`` agrees with ``want`` (module docstring), else the
    first disagreement in one line."""
    both = want.merge(got, on=[S.QUERY_ID, S.RANK], how="outer", suffixes=("_want", "_got"))
    ref_want = _reference(case, scores, both[S.QUERY_ID], both["doc_id_want"])
    ref_got = _reference(case, scores, both[S.QUERY_ID], both["doc_id_got"])
    last = want.sort_values(S.RANK).groupby(S.QUERY_ID).tail(1)
    cut = pd.Series(_reference(case, scores, last[S.QUERY_ID], last[S.DOC_ID]),
                    index=last[S.QUERY_ID].to_numpy()).reindex(both[S.QUERY_ID]).to_numpy()
    floor = getattr(case.config, "min_score", None)

    def near(ref: np.ndarray) -> np.ndarray:  # at the window's cut
        at_floor = np.abs(ref - floor) <= TOLERANCE if floor is not None else False
        return (np.abs(ref - cut) <= TOLERANCE) | at_floor

    has_want, has_got = both["doc_id_want"].notna(), both["doc_id_got"].notna()
    swapped = has_want & has_got & (both["doc_id_want"] != both["doc_id_got"])
    problems = [
        (has_got & ~np.isfinite(ref_got), "a document the query may not see"),
        (has_got & ~(np.abs(both["score_got"] - ref_got) <= TOLERANCE),
         "a score away from its reference"),
        (swapped & ~(np.abs(ref_want - ref_got) <= TOLERANCE), "another document"),
        (swapped & (ref_want == ref_got), "a tied document out of doc_id order"),
        (has_got & ~has_want & ~near(ref_got), "a document beyond the expected window"),
        (has_want & ~has_got & ~near(ref_want), "nothing"),
    ]
    bad = np.zeros(len(both), bool)
    what = np.full(len(both), "", dtype=object)
    for mask, text in problems:
        mask = np.asarray(mask, bool) & ~bad
        what[mask], bad = text, bad | mask
    rows = both.assign(_what=what, _ref_want=ref_want, _ref_got=ref_got)[bad]
    rows = rows.sort_values([S.QUERY_ID, S.RANK], kind="stable").drop_duplicates(S.QUERY_ID)
    held = [f"{w} ({d}, score {s:.7g}, reference {r:.7g})" if isinstance(d, str) else w
            for w, d, s, r in zip(rows["_what"], rows["doc_id_got"], rows["score_got"],
                                  rows["_ref_got"], strict=True)]
    wanted = [f"{d} (reference {r:.7g})" if isinstance(d, str) else "nothing"
              for d, r in zip(rows["doc_id_want"], rows["_ref_want"], strict=True)]
    text = pd.Series([f"{q}: rank {int(r)} holds {h}, expected {w}" for q, r, h, w in zip(
        rows[S.QUERY_ID], rows[S.RANK], held, wanted, strict=True)],
        index=rows[S.QUERY_ID].to_numpy(), dtype=object)
    return per_trial(case.queries[S.QUERY_ID], text)


def brute_force(case: RouteCase) -> Tally:
    scores = reference_scores(case)
    want = brute_window(case, scores)
    examples = agreement(case, want, case.base, scores)
    reached = case.window_sizes(want) > 0
    return Tally.of(reached, examples)


def hnsw_exact(case: RouteCase) -> Tally:
    settings = case.settings
    graph = settings.model_copy(update={"index": "hnsw",
                                        "ef_search": max(settings.ef_search,
                                                         len(case.documents))})
    got = case.search(retriever=case.retriever(config=graph))
    examples = agreement(case, case.base, got, reference_scores(case))
    reached = case.window_sizes() > 0
    return Tally.of(reached, examples)


ROUTES = ("dense",)
RELATIONS = (
    Relation("brute_force", "route",
             "the brute-force window of the trial is non-empty",
             "the exact search equals a brute-force numpy scorer on the same vectors",
             brute_force, ROUTES),
    Relation("hnsw_exact", "route",
             "efSearch ≥ the number of documents (the graph search visits every node it "
             "reaches) and the trial's exact window is non-empty",
             "the HNSW search equals the exact search (ANN recall 1.0)", hnsw_exact, ROUTES,
             own_settings=True),
)
