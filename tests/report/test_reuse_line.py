"""The evaluated set's reuse (decision.json's looks) in decision.md and on the page."""

from releval.report.decision import reuse
from releval.report.html import decision_section
from tests.report import sample

LOOKS = {"split": "test", "digest": "ab" * 32, "candidate": "cd" * 32, "count": 3,
         "since": "2026-01-01", "unrecorded": 0}
LINE = "Reuse: this test set (abababababab) has informed 3 decisions since 2026-01-01."


def test_the_decision_says_how_many_decisions_the_test_set_has_informed():
    gate = sample.GATE | {"looks": LOOKS}
    text = sample.decision_md(gate=gate)
    assert LINE in text.split("## Release gate")[1]
    assert LINE in str(decision_section(sample.inputs(gate=gate)))
    assert reuse(sample.inputs().gate) is None  # a decision written before looks were counted
    assert "Reuse:" not in str(decision_section(sample.inputs()))
