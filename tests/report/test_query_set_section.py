"""The split section shows the evaluated query set (summary.md and the HTML page alike): the
sampling sources with their weights, then one row per risk category with its minimum, whether
it is covered and the gate rules it underwrites."""

from releval.report.html import render_html
from tests.report.sample import SPLIT, SUMMARY, inputs, summary_md


def category(count, minimum, underwrites=(), from_text=0, share=None, weight_share=None):
    return {"label": "x", "count": count, "from_text": from_text, "share": share,
            "weight_share": weight_share, "minimum": minimum,
            "covered": None if minimum is None else count >= minimum,
            "underwrites": list(underwrites)}


QUERY_SET = {
    "splits": ["test"], "queries": 40, "weight": 52.25, "untagged": 3, "source_given": True,
    "note": None,
    "sources": {"logged": {"count": 30, "share": 0.75, "weight": 47.0, "weight_share": 0.9},
                "template": {"count": 10, "share": 0.25, "weight": 5.25,
                             "weight_share": 0.1}},
    "categories": {
        "no_answer": category(6, 30, ["no_answer"], share=0.15, weight_share=0.05),
        "authorization_boundary": category(31, 30, ["safety"], share=0.775,
                                           weight_share=0.8),
        "numeric": category(4, None, from_text=3, share=0.1, weight_share=None)},
    "undercovered": ["no_answer"]}
REPORT = SPLIT | {"query_set": QUERY_SET}


def page(report=REPORT) -> list[str]:
    return summary_md(SUMMARY, report, "demo").splitlines()


def test_the_split_section_shows_sources_and_categories():
    lines = page()
    split = lines[lines.index("## Split"):]
    assert "Query set evaluated (test): 40 queries, weight 52.2; 3 untagged, their categories " \
           "recognised from the text." in split
    start = split.index("| source | queries | share | weight | weight share |")
    assert split[start + 2:start + 4] == ["| logged | 30 | 75.0% | 47.0 | 90.0% |",
                                          "| template | 10 | 25.0% | 5.2 | 10.0% |"]
    start = split.index("| category | count | share | weight share | minimum | covered | "
                        "underwrites |")
    assert split[start + 2:start + 5] == [
        "| no_answer | 6 | 15.0% | 5.0% | 30 | **no** | no_answer |",
        "| authorization_boundary | 31 | 77.5% | 80.0% | 30 | yes | safety |",
        "| numeric | 4 (3 from text) | 10.0% | — | — | — | — |"]
    assert split[-1] == "Under-covered: no_answer."


def test_a_missing_source_column_is_noted_and_an_older_report_shows_no_query_set():
    note = "the queries have no source column: every query is counted as logged"
    lines = page(SPLIT | {"query_set": QUERY_SET | {"note": note, "untagged": 0,
                                                    "undercovered": []}})
    assert f"Note: {note}." in lines and "Query set evaluated (test): 40 queries, weight " \
                                         "52.2." in lines
    assert not any(line.startswith("Under-covered") for line in lines)
    assert not any("Query set evaluated" in line for line in page(SPLIT))


def test_the_html_page_shows_the_same_table_in_its_split_section():
    html = render_html(inputs(split_report=REPORT))
    start = html.index('<section id="split">')
    split = html[start:html.index("</section>", start)]
    assert ("<tr><td>no_answer</td><td>6</td><td>15.0%</td><td>5.0%</td><td>30</td>"
            "<td><strong>no</strong></td><td>no_answer</td></tr>") in split
    assert "<th>underwrites</th>" in split and "<td>template</td>" in split


def test_a_recommendation_page_leaves_the_risk_categories_out_and_says_so():
    from releval.report.summary import RISK_LEFT_OUT
    from tests.report.sample import REC_SUMMARY

    lines = summary_md(REC_SUMMARY, REPORT, "demo").splitlines()
    assert RISK_LEFT_OUT in lines and not any(x.startswith("| category |") for x in lines)
    assert "| category |" in "\n".join(page())  # the retrieval page keeps them
