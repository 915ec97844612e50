"""The typed documents: every catalog entry's model resolves, and a renamed or unknown key
fails at load time naming the file and the key."""

import json

import pytest

from releval import artifacts
from releval.documents.decision import Decision
from releval.errors import InputError

DECISION = {"passed": False, "baseline": "bm25", "candidate": "hybrid", "controlled": True,
            "differences": [],
            "rules": [{"rule": "not_worse", "name": "not_worse nDCG@10", "passed": False,
                       "value": -0.1, "threshold": 0, "reason": "worse", "applicable": True}],
            "failed": ["not_worse nDCG@10"], "not_applicable": [], "note": None,
            "rollback": []}


def test_every_document_model_in_the_catalog_resolves():
    named = {n: artifacts.document(n) for n, a in artifacts.CATALOG.items() if a.document}
    assert named["gate.decision"] is Decision
    assert all(hasattr(m, "check") and hasattr(m, "read") for m in named.values())


def test_a_document_reads_as_a_model(tmp_path):
    path = tmp_path / "decision.json"
    path.write_text(json.dumps(DECISION))
    decision = Decision.read(path)
    assert (decision.verdict, decision.rules[0].name, decision.rules[0].threshold) == \
        ("FAIL", "not_worse nDCG@10", 0)


@pytest.mark.parametrize("change", [
    lambda d: d.update(verdict=d.pop("passed")),  # a renamed key
    lambda d: d["rules"][0].update(score=1.0),  # an unknown key in a fixed part
])
def test_a_renamed_or_unknown_key_fails_at_load_time(tmp_path, change):
    doc = json.loads(json.dumps(DECISION))
    change(doc)
    path = tmp_path / "decision.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="not a Decision document") as raised:
        Decision.read(path)
    assert str(path) in str(raised.value)
    with pytest.raises(InputError, match="not a Decision document"):
        Decision.check(doc, "decision.json")


def test_a_missing_document_is_one_line(tmp_path):
    with pytest.raises(InputError, match="not found"):
        Decision.read(tmp_path / "decision.json")
