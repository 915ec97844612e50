"""The receipt: canonical hashing, what is kept apart, per-query digests, zero work, diffs."""

import json

import pandas as pd
import pytest

from releval.documents.receipt import Taken
from releval.errors import InputError
from releval.params import Params
from releval.project import history, receipt

LOCK = {"schema": "2.0", "stages": {
    "inputs": {"deps": [{"path": "stages/inputs.py", "md5": "c0"}],
               "outs": [{"path": "data/input/prepare", "md5": "p1.dir"},
                        {"path": "data/input/runs", "md5": "r1.dir"}]},
    "candidates@bm25": {"deps": [{"path": "releval/retrieval", "md5": "c1.dir"},
                                 {"path": "data/input/runs/bm25", "md5": "r2.dir"}],
                        "outs": [{"path": "data/candidates/bm25/run.parquet", "md5": "o1"},
                                 {"path": "data/candidates/bm25/latency.parquet", "md5": "t1"},
                                 {"path": "data/candidates/bm25/run_stats.json", "md5": "t2"}]},
    "pool": {"deps": [{"path": "data/candidates", "md5": "x.dir"},
                      {"path": "stages/pool.py", "md5": "c2"}],
             "outs": [{"path": "data/pool/pool.parquet", "md5": "o2"}]}}}


def test_inputs_are_code_and_pinned_copies_outputs_leave_out_measured_latencies():
    inputs, outputs, apart = receipt.lock_digests(LOCK)
    assert inputs == {"data/input/prepare": "p1.dir", "data/input/runs": "r1.dir",
                      "releval/retrieval": "c1.dir", "stages/inputs.py": "c0",
                      "stages/pool.py": "c2"}  # data/candidates (a folder of outputs) is not
    assert outputs == {"data/candidates/bm25/run.parquet": "o1", "data/pool/pool.parquet": "o2"}
    assert set(apart) == {"data/candidates/bm25/latency.parquet",
                          "data/candidates/bm25/run_stats.json"}
    assert all(v["why"] for v in apart.values())


def test_canonical_json_is_key_order_free_and_refuses_nan():
    assert receipt.canonical({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'.encode()
    assert receipt.digest({"b": 1, "a": 2}) == receipt.digest({"a": 2, "b": 1})
    with pytest.raises(ValueError):
        receipt.canonical({"x": float("nan")})


def test_result_digests_follow_rank_order_and_exact_scores_and_cover_empty_queries():
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q9"], "doc_id": ["a", "b", "c", "z"],
                        "rank": [2, 1, 1, 1], "score": [0.5, 0.7, 1 / 3, 1.0]})
    got = receipt.result_digests(run, pd.Series(["q1", "q2", "q3"]))
    assert set(got) == {"q1", "q2", "q3"}  # q9 is not evaluated; q3 returned nothing
    import hashlib

    assert got["q1"] == hashlib.sha256(b"b\t0.7\na\t0.5\n").hexdigest()
    assert got["q3"] == hashlib.sha256(b"").hexdigest()
    nudged = run.assign(score=[0.5, 0.7, 1 / 3 + 1e-16, 1.0])
    assert receipt.result_digests(nudged, pd.Series(["q2"]))["q2"] != got["q2"]


def work(**over):
    summary = {"queries": 10, "systems": ["bm25", "dense"]}
    args = dict(summary=summary, qrels=40, slices={"slices": 3, "tested": 6},
                comparison={"controlled": True, "paired": [{"resamples": 100}]},
                validations=5, checked={"reached": 700}) | over
    return receipt.work(Params(), **args)


def test_work_is_counted_and_zero_work_asked_for_is_an_error():
    assert work() == {"selftest_trials_reached": 700, "queries_evaluated": 10,
                      "systems_evaluated": 2, "judgments_used": 40, "slices": 3,
                      "slices_tested": 6, "comparisons": 1, "resamples": 100,
                      "validations_passed": 5}
    for over, key in ((dict(summary={"queries": 0, "systems": ["bm25"]}), "queries_evaluated"),
                      (dict(qrels=0), "judgments_used"), (dict(validations=0),
                                                          "validations_passed"),
                      (dict(comparison={"controlled": True, "paired": []}), "resamples"),
                      (dict(slices={}), "slices"),
                      (dict(checked={"reached": 0}), "selftest_trials_reached")):
        with pytest.raises(InputError, match=f"{key} = 0"):
            work(**over)
    # a refused-but-allowed uncontrolled comparison resamples nothing, and says so
    assert work(comparison={"controlled": False, "paired": []})["resamples"] == 0


def make(metrics=None, inputs=None, looks=None) -> dict:
    return receipt.build(p=Params(), raw_params={"base": {"seed": 1}}, lock=LOCK | {
        "stages": LOCK["stages"] | ({"inputs": {"outs": [
            {"path": k, "md5": v} for k, v in inputs.items()]}} if inputs else {})},
        code={"commit": "abc", "dirty": False, "diff_sha256": None},
        metrics=metrics or {"bm25": {"nDCG@10": 0.5}}, results={"bm25": {"q1": "h"}},
        models={}, work_done={"queries_evaluated": 1}, ran={"finished_at": "now"},
        looks=looks)


def test_the_hash_covers_the_receipt_and_not_the_run_part(tmp_path):
    a, b = make(), make()
    b["run"]["finished_at"] = "later"
    assert a["sha256"] == b["sha256"] == receipt.digest(a["receipt"])
    path = tmp_path / "receipt.json"
    receipt.write(path, a)
    assert receipt.read(path) == json.loads(path.read_text())
    edited = json.loads(path.read_text())
    edited["receipt"]["metrics"]["bm25"]["nDCG@10"] = 0.9
    path.write_text(json.dumps(edited))
    with pytest.raises(InputError, match="does not match its sha256"):
        receipt.read(path)


def test_differences_name_the_input_first_then_the_metrics_that_moved():
    old = make()
    new = make(metrics={"bm25": {"nDCG@10": 0.4}}, inputs={"data/input/prepare": "p2.dir"})
    lines = receipt.differences(old, new)
    assert lines[0] == "input data/input/prepare: p1.dir → p2.dir"
    assert "metric bm25 nDCG@10: 0.5 → 0.4" in lines
    assert any(line.startswith("input data/input/runs: r1.dir → None") for line in lines)
    assert receipt.differences(old, make()) == []


def test_the_receipt_records_the_looks_and_an_older_receipt_without_them_is_read(tmp_path):
    look = {"split": "test", "set": "s" * 64, "system": "hybrid", "candidate": "c" * 64}
    new = make(looks=[look])
    assert new["receipt"]["schema"] == "releval.project.receipt/2"
    assert new["receipt"]["looks"] == [look]
    assert receipt.differences(make(looks=[look | {"candidate": "d" * 64}]), new)[0].startswith(
        "looks: ")
    older = make()
    older["receipt"].pop("looks")
    older["receipt"]["schema"] = "releval.project.receipt/1"
    older["sha256"] = receipt.digest(older["receipt"])
    receipt.write(tmp_path / "20251201T100000Z-a.json", older)
    receipt.write(tmp_path / "20251202T100000Z-b.json", new)
    assert receipt.read(tmp_path / "20251201T100000Z-a.json")["sha256"] == older["sha256"]
    assert receipt.differences(older, new)[0].startswith("looks: None → ")
    rows = history.entries(tmp_path)
    # None: unknown, not "no looks"
    assert [r.looks for r in rows] == [None, [Taken.model_validate(look)]]
