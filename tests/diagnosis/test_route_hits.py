import pandas as pd

from releval.diagnosis.route_hits import hit_counts, route_hits


def test_each_relevant_document_is_classed_by_the_windows_holding_it():
    qrels = pd.DataFrame({"query_id": ["q"] * 5, "doc_id": ["a", "b", "c", "d", "n"],
                          "grade": [3, 2, 1, 1, 0]})
    bm25 = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "n"], "rank": [1, 2, 3]})
    dense = pd.DataFrame({"query_id": "q", "doc_id": ["c", "a"], "rank": [1, 2]})
    hits = route_hits("bm25", bm25, "dense", dense, qrels)
    classes = dict(zip(hits.doc_id, hits.route_hit, strict=True))
    assert classes == {"a": "both", "b": "bm25-only", "c": "dense-only", "d": "neither"}
    assert hits.set_index("doc_id").loc["a", ["rank_bm25", "rank_dense"]].tolist() == [1, 2]
    assert hit_counts(hits) == {"bm25-only": 1, "both": 1, "dense-only": 1, "neither": 1}
