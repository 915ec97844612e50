"""Pool → blind export → judged export → qrels, as judges and the pipeline use them."""

import json

import pandas as pd
import pytest

from releval.guidelines import load_guideline
from releval.judgments import adjudicate, ingest, read_judgments
from releval.params import Params
from releval.pooling import blind_export, build_pool, write_label_studio
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


def test_label_studio_round_trip_gives_qrels_with_provenance(tiny, tmp_path):
    documents, queries, pool = tiny
    guideline = load_guideline()
    export = blind_export(pool.table, documents, queries, seed=3)
    write_label_studio(export, tmp_path / "tasks.json", guideline)
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
    truth = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "grade": [3, 2]})
    params = Params.model_validate({"judgments": {"source": "simulated", "corrupt": 0.3}})
    identity = pool.identity | {"guideline": "relevance-v1"}
    result = judgments_run(params, pool.table, identity, truth, None)
    c = result["counts"]
    assert c["rows_in"] == c["accepted_new"] + c["already_accepted"] + c["quarantined"]
    assert c["quarantined"] == len(result["quarantine"]) > 0
    assert result["quarantine"]["reason"].notna().all()
    assert set(result["qrels"].doc_id + result["qrels"].query_id) == set(
        pool.table.doc_id + pool.table.query_id)


def test_only_this_pools_judgments_are_carried_over(tiny):
    from stages.judgments import carried_over

    _, _, pool = tiny
    mine = pd.DataFrame({"pool_id": [pool.identity["pool_id"]], "grade": [1]})
    assert carried_over(mine, pool.identity) is mine
    assert carried_over(mine.assign(pool_id="pool-other"), pool.identity) is None
    assert carried_over(pd.DataFrame(), pool.identity) is None  # e.g. after dataset qrels
    assert carried_over(None, pool.identity) is None
