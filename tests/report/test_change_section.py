"""The change section: the kind, what it holds fixed on both sides, the inspections as
tables, and the also-comparisons' paired rows; in markdown and as escaped HTML."""

from releval.report.change import markdown
from releval.report.html import markdown as page_of
from tests.report.sample import COMPARISON, model

PAIRED = {"measure": "nDCG@10", "n": 40, "mean_diff": 0.0312, "ci_low": -0.01, "ci_high": 0.07,
          "p_holm": 0.2, "verdict": "inconclusive"}


def comparison(**changes):
    """The sample's comparison (its model) with a declared change and one ``also``."""
    paired = COMPARISON["paired"][0] | PAIRED
    also = {key: value for key, value in COMPARISON.items() if key != "family"} | {
            "baseline": "prod_v2", "candidate": "prod_v3", "controlled": False,
            "differences": ["independent_eval (prod_v3): 3 of 40 evaluated queries in the "
                            "training split"], "paired": [paired],
            "change": {"kind": "training_signal", "label": "new training signal",
                       "holds_fixed": [], "inspections": {
                           "negative_transfer": {"definition": "slices where it is worse",
                                                 "rows": [], "tested": 3}}}}
    return model("comparison", {
            "baseline": "bm25", "candidate": "hybrid", "controlled": True, "differences": [],
            "paired": [paired], "also": [also],
            "change": {"kind": "route", "label": "new retrieval source / route",
                       "holds_fixed": [{"condition": "labelling", "what": "the protocol",
                                        "baseline": "pool p (depth 10); pooled",
                                        "candidate": "pool p (depth 10); pooled",
                                        "same": True}],
                       "inspections": {"repetition": {
                           "definition": "share of top-10 <entries> repeating",
                           "rows": [{"system": "bm25", "share": 0.5},
                                    {"system": "a|b", "share": None}],
                           "delta": -0.125}}}} | changes)


def test_markdown_shows_the_kind_both_sides_the_inspections_and_the_also_rows():
    lines = markdown(comparison())
    assert "## Change: route (new retrieval source / route), hybrid vs bm25" in lines
    assert ("| labelling | the protocol | pool p (depth 10); pooled | pool p (depth 10); pooled "
            "| ✓ |") in lines
    assert "### repetition" in lines
    assert "| a\\|b | — |" in lines  # a pipe in a cell is escaped, undefined is —
    assert "Δ (hybrid − bm25): -0.125" in lines
    assert "### prod_v3 vs prod_v2 (training_signal; UNCONTROLLED)" in lines
    assert "- independent_eval (prod_v3): 3 of 40 evaluated queries in the training split" in lines
    assert "| nDCG@10 | 40 | +0.0312 | [-0.0100, +0.0700] | 0.2000 | inconclusive |" in lines
    assert "None." in lines  # no slice got worse


def test_markdown_of_an_undeclared_kind_says_so():
    c = comparison(change={"kind": None, "label": "not declared: the general "
                           "conditions only", "holds_fixed": [], "inspections": {}}, also=[])
    assert markdown(c) == ["Kind of change: not declared: the general conditions only.", ""]


def test_the_page_escapes_every_text():
    page = str(page_of(markdown(comparison())))
    assert "<h2>Change: route (new retrieval source / route), hybrid vs bm25</h2>" in page
    assert "share of top-10 &lt;entries&gt; repeating" in page
    assert "<entries>" not in page
    assert "<td>+0.0312</td>" in page
