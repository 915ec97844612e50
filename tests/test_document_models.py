"""Every JSON artifact of the catalog has a document model, and a renamed key in a document
fails validation naming the key."""

import json

import pytest

from releval import artifacts
from releval.documents import Document
from releval.documents.failures import Failures
from releval.documents.ingest import Ingest
from releval.documents.safety import Safety
from releval.documents.tasks import Tasks
from releval.errors import InputError

INGEST = {"rows_in": 5, "accepted_new": 3, "already_accepted": 1, "quarantined": 1,
          "by_reason": {"grade missing": 1},
          "hard_negatives": {"marked": 9, "kept": 5, "added": 3, "overruled": 1},
          "source": "files", "qrels": "pooled judgments"}
SAFETY = {"top_k": 10,
          "systems": {"bm25": {"routes": ["bm25"], "violations": 0, "by_reason": {"acl": 0},
                               "queries_affected": 0, "below_top_k": 0, "own": 0}},
          "no_answer": {"bm25": {"no_answer_queries": 3, "correct_refusals": 1,
                                 "correct_refusal_rate": 0.333, "answerable_queries": 9,
                                 "no_result": 0, "no_result_rate": 0.0, "threshold": None}},
          "skipped": []}
FAILURES = {"baseline": "bm25", "candidate": "hybrid", "k": 10, "deep_k": 1000, "queries": 4,
            "layers": ["ranking"], "chunk_map": False,
            "by_layer": [{"layer": "ranking", "baseline": 2, "candidate": 1, "difference": -1}],
            "safety": {"bm25": 0}, "review": None}


def test_every_json_artifact_has_a_model():
    missing = [n for n, a in artifacts.CATALOG.items() if a.format == "json" and not a.document]
    assert missing == []
    for name, a in artifacts.CATALOG.items():
        if a.format == "json":
            model = artifacts.document(name)
            assert hasattr(model, "check") and hasattr(model, "read"), name


@pytest.mark.parametrize("model, doc", [(Ingest, INGEST), (Safety, SAFETY),
                                        (Failures, FAILURES)])
def test_a_document_validates_and_reads_as_its_model(tmp_path, model, doc):
    assert model.check(doc) is doc
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    assert isinstance(model.read(path), Document)


@pytest.mark.parametrize("model, doc, old, new", [
    (Ingest, INGEST, "rows_in", "rows"),
    (Safety, SAFETY, "skipped", "skipped_systems"),
    (Failures, FAILURES, "chunk_map", "chunkmap")])
def test_a_renamed_key_fails_naming_the_key(model, doc, old, new):
    renamed = {new if k == old else k: v for k, v in doc.items()}
    with pytest.raises(InputError, match=old) as caught:
        model.check(renamed, "doc.json")
    assert "doc.json" in str(caught.value)


def test_a_renamed_key_in_a_nested_part_fails_naming_its_path():
    doc = json.loads(json.dumps(SAFETY))
    part = doc["systems"]["bm25"]
    part["affected"] = part.pop("queries_affected")
    with pytest.raises(InputError, match=r"systems\.bm25\.queries_affected"):
        Safety.check(doc)


def test_a_list_document_validates_each_item():
    task = {"data": {"blind_id": "B1", "pool_id": "p", "query": "q", "title": "t", "text": "x",
                     "guideline": "g"}}
    assert Tasks.check([task]) == [task]
    renamed = {("blind" if k == "blind_id" else k): v for k, v in task["data"].items()}
    with pytest.raises(InputError, match=r"0\.data\.blind_id"):
        Tasks.check([{"data": renamed}])
