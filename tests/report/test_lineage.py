"""History per lineage: a ledger holding retrieval and recommendation runs draws only the
page's own lineage, says how many other lineages and runs it holds, sets a run against the
previous run of its own lineage, and a chart's axis spans only the runs it draws."""

import pytest

from releval.project import history as ledger
from releval.project.receipt import write
from releval.report import history
from releval.report.html import history_section
from releval.report.plots import history_chart
from tests.report import sample
from tests.report.sample import model


@pytest.fixture
def folder(tmp_path):
    for name, doc in sample.lineage_docs():
        write(tmp_path / name, doc)
    return tmp_path


def test_retrieval_and_recommendation_runs_are_two_lineages(folder):
    rows = ledger.entries(folder)
    modes = [r.lineage.mode for r in rows]
    assert modes == ["retrieval", "recommendation", "retrieval"]
    keys = [r.lineage.key for r in rows]
    assert keys[0] == keys[2] != keys[1]
    assert all(r.lineage.derived == [] for r in rows)


def test_the_page_shows_its_own_lineage_and_says_another_exists(folder):
    docs = [doc for _, doc in sample.lineage_docs()]
    rows = ledger.entries(folder)
    mine, line = history.own(rows, model("receipt", docs[2]))
    assert [r.run for r in mine] == [1, 3]
    assert line.startswith("Lineage: retrieval · data demo · 3 measure(s): 2 of the ledger's 3")
    assert "1 other lineage(s) (1 run(s)) are not drawn" in line
    rec, line = history.own(rows, model("receipt", docs[1]))
    assert [r.run for r in rec] == [2] and "recommendation" in line
    section = history_section(sample.inputs(history=rows, receipt=docs[1]))
    assert "1 other lineage(s)" in section and history.ONE_RUN in section


def test_a_chart_spans_only_its_lineages_runs(folder):
    rows = ledger.entries(folder)
    docs = [doc for _, doc in sample.lineage_docs()]
    spec = history_chart(sample.inputs(history=rows, receipt=docs[2]), "nDCG@10").to_dict()
    domains = [layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"]]
    assert domains and all(d == [1, 3] for d in domains)  # no place for run 2
    assert {layer["encoding"]["x"]["type"] for layer in spec["layer"]} == {"ordinal"}
    means = {v["mean"] for d in spec["datasets"].values() for v in d}
    assert 0.2 not in means and 0.5 in means


def test_the_previous_run_is_of_the_same_lineage_and_a_window_keeps_it(folder):
    docs = [doc for _, doc in sample.lineage_docs()]
    assert ledger.previous(folder, ledger.lineage(docs[0]))["sha256"] == docs[2]["sha256"]
    assert ledger.previous(folder, ledger.lineage(docs[1]))["sha256"] == docs[1]["sha256"]
    windowed = {"receipt": {"params": {"values": {"prepare": {"source": "tables",
                                                              "path": "in/2026-12-01"}}}},
                "run": {"schedule": {"window": {"prepare.path": "in/{date:%Y-%m-%d}"}}}}
    later = windowed | {"receipt": {"params": {"values": {"prepare": {
        "source": "tables", "path": "in/2026-12-08"}}}}}
    assert ledger.lineage(windowed).key == ledger.lineage(later).key
    assert ledger.lineage(windowed).key != ledger.lineage(
        {"receipt": later["receipt"]}).key  # unscheduled: the path is the data


def test_a_receipt_without_params_is_derived_and_says_so():
    _, doc = sample.ledger_docs()[0]
    found = ledger.lineage(doc)
    assert found.mode == "?" and found.measures == [sample.MEASURE]
    assert found.derived and "no params" in found.derived[0]



def test_the_summary_pages_history_is_its_receipts_lineage(folder):
    docs = [doc for _, doc in sample.lineage_docs()]
    rows = ledger.entries(folder)
    text = "\n".join(history.history_lines(rows, model("receipt", docs[1])))
    assert "Lineage: recommendation" in text and "1 other lineage(s) (2 run(s))" in text
    retrieval = "\n".join(history.history_lines(rows, model("receipt", docs[2])))
    assert "Lineage: retrieval" in retrieval and "| 2 |" not in retrieval.split("Lineage")[0]


def test_decision_md_leaves_the_risk_categories_out_of_a_recommendation_query_set():
    from releval.report.summary import RISK_LEFT_OUT, query_set_section
    from tests.report.sample import model

    q = {"splits": ["test"], "queries": 3, "weight": 3.0, "untagged": 0, "source_given": True,
         "note": None,
         "sources": {"log": {"count": 3, "share": 1.0, "weight": 3.0, "weight_share": 1.0}},
         "categories": {"negation": {"label": "negation", "count": 0, "from_text": 0,
                                     "share": 0.0,
                                     "weight_share": 0.0, "minimum": None, "covered": None,
                                     "underwrites": []}},
         "undercovered": []}
    report = model("split_report", {"query_set": q})
    recommendation = "\n".join(query_set_section(report, recommendation=True))
    assert RISK_LEFT_OUT in recommendation and "negation" not in recommendation
    assert "negation" in "\n".join(query_set_section(report))
