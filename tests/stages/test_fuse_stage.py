"""Stage fuse: tuned on the validation split only, frozen, applied to every query."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.params import Params
from stages.fuse import Inputs, run
from tests.frames import doc, documents, queries, query

DOCS = documents(*(doc(d) for d in "abcd"))
QUERIES = queries(*(query(q) for q in ("v1", "v2", "t1")))
SPLIT = pd.DataFrame({S.QUERY_ID: ["v1", "v2", "t1"], S.SPLIT: ["validation", "validation",
                                                                "test"]})


def window(system, rows):
    """rows: query_id -> doc_ids in rank order (scores descending)."""
    out = [(q, d, r, 10.0 - r) for q, ds in rows.items() for r, d in enumerate(ds, 1)]
    frame = pd.DataFrame(out, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])
    return frame.assign(**{S.SYSTEM: system, S.ROUTE: system})


# bm25 finds the relevant document first on validation, dense last: tuning must favour bm25
RUNS = {"bm25": window("bm25", {"v1": "abc", "v2": "abc", "t1": "dcb"}),
        "dense": window("dense", {"v1": "cba", "v2": "cba", "t1": "bcd"})}
JUDGED = pd.DataFrame({S.QUERY_ID: ["v1", "v2", "t1"], S.DOC_ID: ["a", "a", "d"],
                       S.GRADE: [3, 3, 3]})
LATENCY = {s: pd.DataFrame({S.QUERY_ID: ["v1", "v2", "t1"], "latency_ms": [1.0, 2.0, 3.0]})
           for s in RUNS}


def params(**fusion):
    hybrid = {"methods": ["linear"], "weights": [0.2, 0.8], "norms": ["minmax"]} | fusion
    return Params.model_validate({"candidates": {"depth": 3},
                                  "fusion": {"systems": {"hybrid": hybrid}}})


def test_tuned_on_validation_and_applied_to_every_query():
    out = run(params(), Inputs("hybrid", RUNS, JUDGED, SPLIT, QUERIES, DOCS, LATENCY))
    assert out.stats["fusion"] == {"method": "linear", "weights": {"bm25": 0.8, "dense": 0.2},
                                   "norm": "minmax"}
    assert out.stats["tuning"] == "tuned on 2 validation queries"
    assert [row["value"] for row in out.stats["grid"]] == pytest.approx([0.5, 1.0])
    assert list(out.run.columns) == list(S.RUN_COLUMNS) and set(out.run[S.ROUTE]) == {"hybrid"}
    assert out.run.groupby(S.QUERY_ID).size().to_dict() == {"t1": 3, "v1": 3, "v2": 3}
    assert out.run[out.run[S.QUERY_ID] == "v1"][S.DOC_ID].iloc[0] == "a"
    # serial bound: both sources' latencies plus a share of the fusion's wall time
    lat = out.latency.set_index(S.QUERY_ID)["latency_ms"]
    assert (lat.to_numpy() > np.array([2.0, 4.0, 6.0])).all()


def test_test_judgments_never_move_the_choice():
    flipped = JUDGED.assign(**{S.DOC_ID: ["a", "a", "b"]})
    assert (run(params(), Inputs("hybrid", RUNS, flipped, SPLIT, QUERIES, DOCS)).stats["fusion"]
            == run(params(), Inputs("hybrid", RUNS, JUDGED, SPLIT, QUERIES, DOCS)).stats["fusion"])


def test_without_judged_validation_queries_the_first_entry_untuned():
    out = run(params(), Inputs("hybrid", RUNS, JUDGED[JUDGED[S.QUERY_ID] == "t1"], SPLIT, QUERIES,
              DOCS))
    assert out.stats["fusion"]["weights"] == {"bm25": 0.2, "dense": 0.8}
    assert out.stats["tuning"].endswith("untuned") and out.stats["grid"] == []
    assert out.latency["latency_ms"].isna().all()  # no source latencies given


def test_missing_source_window_is_named():
    with pytest.raises(InputError, match="needs the windows of dense"):
        run(params(), Inputs("hybrid", {"bm25": RUNS["bm25"]}, JUDGED, SPLIT, QUERIES, DOCS))
