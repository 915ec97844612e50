"""Pool → blind export → judged export → qrels, as judges and the pipeline use them."""

import json
import math

import pandas as pd
import pytest
import yaml

from releval.errors import InputError
from releval.judging.adjudication import adjudicate
from releval.judging.files import read_judgments
from releval.judging.guidelines import load_guideline
from releval.judging.ingest import ingest
from releval.judging.pooling import blind_export, build_pool, label_studio_tasks, write_label_studio
from releval.params import Params
from releval.project.inputs import pin
from stages.common import main
from stages.judgments import Inputs as JudgmentsInputs
from stages.judgments import run as judgments_run


@pytest.fixture()
def tiny():
    documents = pd.DataFrame({"doc_id": ["d1", "d2", "d3"], "title": ["Reset", "VPN", "Fan"],
                              "text": ["Hold the button.", "Use the client.", "Clean it."]})
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["reset router", "vpn setup"]})
    runs = {"a": pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d2"],
                               "rank": [1, 2, 1]}),
            "b": pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d3", "d2"],
                               "rank": [1, 1]})}
    pool = build_pool(runs, depth=2, seed=3, corpus_digest="c0ffee")
    return documents, queries, pool


TRUTH = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "grade": [3, 2]})
# the dataset marks q1/d3 (pooled) and q2/d9 (not pooled) as hard negatives
MARKED = pd.concat([TRUTH, pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d3", "d9"],
                                         "grade": [0, 0]})], ignore_index=True).assign(
    hard_negative=[False, False, True, True])


def test_label_studio_round_trip_gives_qrels_with_provenance(tiny, tmp_path):
    documents, queries, pool = tiny
    guideline = load_guideline()
    export = blind_export(pool.table, documents, queries, seed=3)
    write_label_studio(label_studio_tasks(export, guideline), tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert {t["data"]["blind_id"] for t in tasks} == set(pool.table.blind_id)
    truth = dict(zip(pool.table.blind_id, pool.table.doc_id.map({"d1": 3, "d2": 2, "d3": 0}),
                     strict=True))
    for i, task in enumerate(tasks):  # what Label Studio's JSON export looks like once judged
        grade = truth[task["data"]["blind_id"]]
        task["id"] = i
        task["annotations"] = [
            {"completed_by": judge, "was_cancelled": False, "created_at": "2025-03-01T10:00:00Z",
             "result": [{"from_name": "grade", "to_name": "text", "type": "choices",
                         "value": {"choices": [str(grade if judge == 1 else max(grade - 1, 0))]}}]}
            for judge in (1, 2)]
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    rows = read_judgments(tmp_path / "export.json")
    pool_id = pool.identity["pool_id"]
    ingested = ingest(rows, pool.table, pool_id=pool_id, guideline=guideline.version)
    assert ingested.counts["quarantined"] == 0 and len(ingested.accepted) == 2 * len(tasks)
    qrels = adjudicate(ingested.accepted, pool_id=pool_id, guideline=guideline.version).qrels
    got = dict(zip(qrels.doc_id + "@" + qrels.query_id, qrels.grade, strict=True))
    assert got == {"d1@q1": 2, "d2@q1": 1, "d3@q1": 0, "d2@q2": 1}  # lower median of 2 judges
    assert set(qrels.columns) >= {"n_judges", "agreement", "adjudicated", "pool_id", "guideline"}
    assert (qrels.n_judges == 2).all() and (qrels.pool_id == pool_id).all()
    again = ingest(rows, pool.table, pool_id=pool_id, guideline=guideline.version,
                   accepted=ingested.accepted)
    assert again.counts["accepted_new"] == 0 and again.accepted.equals(ingested.accepted)


def test_simulated_judging_with_malformed_rows_reconciles_and_quarantines(tiny):
    documents, queries, pool = tiny
    params = Params.model_validate({"judgments": {"source": "simulated", "corrupt": 0.3}})
    identity = pool.identity | {"guideline": "relevance-v1"}
    result = judgments_run(params, JudgmentsInputs(pool.table, identity, TRUTH, None))
    c = result.ingest
    assert c["rows_in"] == c["accepted_new"] + c["already_accepted"] + c["quarantined"]
    assert c["quarantined"] == len(result.quarantine) > 0
    assert result.quarantine["reason"].notna().all()
    assert set(result.qrels.doc_id + result.qrels.query_id) == set(
        pool.table.doc_id + pool.table.query_id)
    assert c["source"] == "simulated"
    assert c["qrels"] == "pooled judgments from simulated judges (demo simulation)"
    assert len(result.judgments) == c["accepted_new"] and result.agreement["judges"] == 3


def test_a_rerun_over_this_pools_judgments_accepts_nothing_twice(tiny):
    _, _, pool = tiny
    params = Params.model_validate({"judgments": {"source": "simulated"}})
    identity = pool.identity | {"guideline": "relevance-v1"}
    first = judgments_run(params, JudgmentsInputs(pool.table, identity, TRUTH, None))
    again = judgments_run(params, JudgmentsInputs(pool.table, identity, TRUTH, first.judgments))
    assert again.ingest["rows_in"] == again.ingest["accepted_new"] == 0  # all judged already
    pd.testing.assert_frame_equal(again.qrels, first.qrels)
    other = judgments_run(params, JudgmentsInputs(pool.table, identity, TRUTH,
                          first.judgments.assign(pool_id="pool-other")))  # not carried over
    assert other.ingest["accepted_new"] == first.ingest["accepted_new"] == 3 * len(pool.table)


def blind_ids(pool) -> dict[str, str]:
    """"doc@query" -> the pool's blind id of that pair."""
    return dict(zip(pool.table.doc_id + "@" + pool.table.query_id, pool.table.blind_id,
                    strict=True))


def labels_folder(tmp_path):
    labels = tmp_path / "labels"
    labels.mkdir()
    return labels


def test_judges_files_and_an_adjudicator_from_their_pinned_copies(tiny, tmp_path):
    _, _, pool = tiny
    blind, labels = blind_ids(pool), labels_folder(tmp_path)
    (labels / "ann.csv").write_text("blind_id,grade,annotator\n" + "".join(
        f"{blind[pair]},{grade},ann\n" for pair, grade in
        (("d1@q1", 3), ("d2@q1", 1), ("d3@q1", 0), ("d2@q2", 2))) + "unknown,1,ann\n")
    (labels / "bob.csv").write_text(f"blind_id,grade,annotator\n{blind['d2@q1']},3,bob\n")
    (tmp_path / "adjudicator.csv").write_text(f"blind_id,grade\n{blind['d3@q1']},1\n")
    params = Params.model_validate({"judgments": {
        "source": "files", "files": str(labels), "adjudicator": str(tmp_path / "adjudicator.csv"),
        "max_spread": 2}})
    pin(params, tmp_path / "input")
    identity = pool.identity | {"guideline": "relevance-v1"}
    result = judgments_run(params, JudgmentsInputs(pool.table, identity, TRUTH, None,
                                                   tmp_path / "input"))
    got = result.qrels.set_index(["query_id", "doc_id"])
    assert got["grade"].to_dict() == {("q1", "d1"): 3, ("q1", "d2"): 1, ("q1", "d3"): 1,
                                      ("q2", "d2"): 2}
    assert got["adjudicated"].to_dict()[("q1", "d3")] and got["adjudicated"].sum() == 1
    assert got["n_judges"].tolist() == [1, 2, 1, 1]
    assert result.quarantine["reason"].tolist() == ["unknown blind id"]
    assert result.adjudication[["doc_id", "reason"]].values.tolist() == [["d2", "large spread"]]
    assert result.ingest["qrels"] == "pooled judgments from judges' files"
    assert result.ingest["rows_in"] == 6 and result.ingest["accepted_new"] == 5


def test_no_judges_files_is_an_input_error(tiny, tmp_path):
    _, _, pool = tiny
    (tmp_path / "labels").mkdir()
    params = Params.model_validate({"judgments": {"source": "files",
                                                  "files": str(tmp_path / "labels")}})
    pin(params, tmp_path / "input")
    with pytest.raises(InputError, match="no judges' files"):
        judgments_run(params, JudgmentsInputs(pool.table, pool.identity | {"guideline": "g"},
                                              TRUTH, None,
                      tmp_path / "input"))


def test_a_datasets_own_qrels_pass_through(tiny):
    _, _, pool = tiny
    params = Params.model_validate({"prepare": {"source": "beir", "path": "x"}})  # auto
    result = judgments_run(params, JudgmentsInputs(pool.table, pool.identity | {"guideline": "g"},
                                                   TRUTH, None))
    assert result.qrels[["query_id", "doc_id", "grade"]].equals(TRUTH)
    assert (result.qrels.pool_id == "dataset").all() and result.qrels.agreement.map(
        math.isnan).all()
    assert result.judgments.empty and result.quarantine.empty and result.adjudication.empty
    assert result.ingest == {"rows_in": 2, "accepted_new": 2, "already_accepted": 0,
                             "quarantined": 0, "source": "dataset",
                             "qrels": "the dataset's own qrels",
                             "hard_negatives": {"marked": 0, "kept": 0, "added": 0,
                                                "overruled": 0}}
    assert result.agreement == {"note": "the dataset's own qrels: no per-judge grades"}
    assert not result.qrels.hard_negative.any()


def test_a_datasets_own_hard_negatives_pass_through(tiny):
    _, _, pool = tiny
    params = Params.model_validate({"prepare": {"source": "beir", "path": "x"}})
    result = judgments_run(params, JudgmentsInputs(pool.table, pool.identity | {"guideline": "g"},
                                                   MARKED, None))
    pd.testing.assert_frame_equal(result.qrels[list(MARKED.columns)],
                                  MARKED.sort_values(["query_id", "doc_id"], ignore_index=True))
    assert result.ingest["hard_negatives"] == {"marked": 2, "kept": 2, "added": 0,
                                               "overruled": 0}


def test_simulated_judging_keeps_the_datasets_marks_and_adds_the_unpooled(tiny):
    _, _, pool = tiny
    params = Params.model_validate({"judgments": {"source": "simulated", "noise": 0.01}})
    identity = pool.identity | {"guideline": "relevance-v1"}
    result = judgments_run(params, JudgmentsInputs(pool.table, identity, MARKED, None))
    got = result.qrels.set_index(["query_id", "doc_id"])
    assert got["hard_negative"][got["hard_negative"]].index.tolist() == [("q1", "d3"),
                                                                         ("q2", "d9")]
    assert got.loc[("q2", "d9"), ["grade", "pool_id", "guideline"]].tolist() == [
        0, "dataset", "dataset"]  # not pooled: added as the dataset judged it
    assert got.loc[("q1", "d3"), "pool_id"] == pool.identity["pool_id"]
    assert result.ingest["hard_negatives"] == {"marked": 2, "kept": 1, "added": 1,
                                               "overruled": 0}
    again = judgments_run(params, JudgmentsInputs(pool.table, identity, MARKED, result.judgments))
    pd.testing.assert_frame_equal(again.qrels, result.qrels)


def test_judges_marks_and_the_datasets_settled_by_the_judged_grade(tiny, tmp_path):
    _, _, pool = tiny
    blind, labels = blind_ids(pool), labels_folder(tmp_path)
    (labels / "ann.csv").write_text("blind_id,grade,annotator,hard_negative\n" + "".join(
        f"{blind[pair]},{grade},{who},{mark}\n" for pair, grade, who, mark in (
            ("d1@q1", 3, "ann", ""), ("d2@q1", 0, "ann", "yes"), ("d3@q1", 2, "ann", ""),
            ("d2@q2", 1, "ann", "yes"), ("d1@q1", 3, "bob", "maybe"))))
    params = Params.model_validate({"judgments": {"source": "files", "files": str(labels)}})
    pin(params, tmp_path / "input")
    identity = pool.identity | {"guideline": "relevance-v1"}
    result = judgments_run(params, JudgmentsInputs(pool.table, identity, MARKED, None,
                                                   tmp_path / "input"))
    got = result.qrels.set_index(["query_id", "doc_id"])[["grade", "hard_negative"]]
    assert got.to_dict("index") == {
        ("q1", "d1"): {"grade": 3, "hard_negative": False},
        ("q1", "d2"): {"grade": 0, "hard_negative": True},  # a judge's mark, kept
        ("q1", "d3"): {"grade": 2, "hard_negative": False},  # the dataset's, overruled
        ("q2", "d2"): {"grade": 1, "hard_negative": False},  # a judge's, overruled
        ("q2", "d9"): {"grade": 0, "hard_negative": True}}  # the dataset's, added
    assert result.ingest["hard_negatives"] == {"marked": 4, "kept": 1, "added": 1,
                                               "overruled": 2}
    assert result.quarantine["reason"].tolist() == ["hard_negative not yes or no"]
    assert result.judgments["hard_negative"].tolist() == [False, True, False, True]


def test_main_writes_the_qrels_with_their_marks_and_one_line(tiny, tmp_path, monkeypatch, capsys):
    _, _, pool = tiny
    for folder in ("data/raw", "data/pool"):
        (tmp_path / folder).mkdir(parents=True)
    pool.table.to_parquet(tmp_path / "data/pool/pool.parquet")
    (tmp_path / "data/pool/identity.json").write_text(json.dumps(pool.identity
                                                                 | {"guideline": "g"}))
    MARKED.to_parquet(tmp_path / "data/raw/judgments.parquet")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(
        {"judgments": {"source": "simulated", "noise": 0.01, "corrupt": 0}}))
    monkeypatch.chdir(tmp_path)
    main("judgments", [])
    qrels = pd.read_parquet(tmp_path / "data/judgments/qrels.parquet")
    assert qrels["hard_negative"].tolist() == [False, False, True, False, True]
    ingest = json.loads((tmp_path / "data/judgments/ingest.json").read_text())
    assert ingest["hard_negatives"] == {"marked": 2, "kept": 1, "added": 1, "overruled": 0}
    assert capsys.readouterr().out.strip() == (
        "judgments (pooled judgments from simulated judges (demo simulation)): rows in 12 = "
        "accepted 12 + already accepted 0 + quarantined 0; qrels 5 pairs, 2 hard negatives "
        "(1 added, 0 overruled)")
