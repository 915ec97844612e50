"""reports/index.html from a small hand-made report: self-contained, every section and plot,
the verdict, escaping, the per-query table, and the same bytes for the same inputs."""

import html
import re

import pytest
from pydantic import ValidationError

from releval.documents.ingest import Ingest
from releval.report import html as page_module
from releval.report.html import (
    SECTIONS,
    SUMMARY_SECTIONS,
    markdown,
    query_rows,
    render_html,
)
from releval.report.plots import PLOTS
from tests.report import sample
from tests.report.sample import BASE, CAND, DIGEST, SUMMARY, inputs, rec_inputs

ESCAPED_CAND = "hy&lt;b&gt;&amp;&quot;brid"


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(inputs())


def section(page: str, key: str) -> str:
    start = page.index(f'<section id="{key}">')
    return page[start:page.index("</section>", start)]


def test_the_page_is_one_self_contained_document(page):
    assert page.startswith("<!DOCTYPE html>\n<html lang=\"en\">") and page.endswith("</html>\n")
    assert page.count("<style>") == 1 and page.count("<script>") == 1
    for external in ("<link", " src=", "@import", "url(http", "<iframe", "<img"):
        assert external not in page
    # the only addresses are the SVG namespaces (names, never fetched)
    assert set(re.findall(r"https?://[^\s\"')]+", page)) <= {
        "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert len(page.encode()) < 1_000_000


def test_every_section_and_every_plot_is_there_in_order(page):
    keys = [k for k, _, _ in SECTIONS] + [k for k, _ in SUMMARY_SECTIONS]
    positions = [page.index(f'<section id="{k}">') for k in keys]
    assert positions == sorted(positions)
    plots = section(page, "plots")
    retrieval = [name for name, p in PLOTS.items()
                 if "retrieval" in p.modes and p.section == "plots"]
    assert plots.count("<svg") == len(retrieval) == 10
    for name in retrieval:
        figure = plots[plots.index(f'<figure id="plot-{name}">'):]
        assert figure[:figure.index("</figure>")].count("<svg") == 1
    assert set(retrieval) == {"power", "per_query_diff", "slices", "curves", "judged", "failures",
                              "safety", "latency", "no_answer", "automatic"}
    assert 'id="plot-reliability"' not in page


def test_the_decision_shows_the_verdict_the_headline_and_the_failed_rules_first(page):
    d = section(page, "decision")
    assert '<div class="verdict fail">FAIL</div>' in d
    assert ('<td>nDCG@10</td><td>0.5000 → 0.6123</td><td class="delta">+0.1123</td>'
            '<td>[+0.0100, +0.2000]</td><td class="v-improved">improved</td>') in d
    assert d.index("verdict fail") < d.index('class="headline"') < d.index("Failed rules")
    assert '<span class="badge warn">UNCONTROLLED</span>' in d
    assert "<li>budget: 100 vs &lt;50&gt;</li>" in d
    assert '<h3 id="failed-rules">Failed rules (1 of 2)</h3>' in d
    assert (f'<td class="mark bad">✗</td><td>safety {ESCAPED_CAND}</td><td>3</td><td>0</td>'
            "<td>3 violation(s) &gt; max 0 &lt;acl&gt;</td>") in d
    folded = d[d.index("<details><summary>1 rule(s) passed</summary>"):]
    assert '<td class="mark ok">✓</td><td>latency p95</td><td>0.1235</td><td>50</td>' in \
        folded[:folded.index("</details>")]
    assert ('<p class="held">Held fixed (1 of 2 conditions): qrels; they differ in budget '
            "(100 vs 50).</p>") in d
    assert "<h3>Conditions" not in d and "<h3>Paired comparison</h3>" not in d


def test_the_comparison_in_full_has_the_conditions_the_paired_rows_and_the_receipt(page):
    d = section(page, "comparison")
    assert "<h3>Conditions (they differ: UNCONTROLLED)</h3>" in d
    assert ('<td>budget</td><td>100</td><td>50</td><td class="mark">✗</td>') in d
    assert ("<td>nDCG@10</td><td>40</td><td>0.5000</td><td>0.6123</td><td>+0.1123</td>"
            "<td>[+0.0100, +0.2000]</td><td>20/15/5</td><td>0.0040</td><td>—</td>") in d
    assert f"<code>{DIGEST[:12]}</code>" in d and DIGEST[12:20] not in d
    assert "<code>releval reproduce reports/receipt.json</code>" in d


def test_without_a_receipt_the_page_says_it_is_written_at_the_end_of_the_run():
    d = section(render_html(inputs(receipt=None)), "comparison")
    assert "No receipt describes these outputs yet" in d and DIGEST[:12] not in d


def test_a_controlled_pass_reads_so():
    gate = sample.GATE | {"passed": True, "controlled": True,
                            "rules": [{"rule": "latency", "name": "latency p95",
                                       "passed": True, "value": 1.0,
                                       "threshold": 50.0, "reason": "fast"}]}
    comparison = sample.COMPARISON | {"controlled": True, "differences": []}
    page = render_html(inputs(gate=gate, comparison=comparison))
    d = section(page, "decision")
    assert '<div class="verdict pass">PASS</div>' in d and "Failed rules" not in d
    assert '<p class="ok">Every rule passed (1).</p>' in d
    assert '<span class="badge ok">controlled</span>' in d
    assert "<h3>Held fixed</h3>" in section(page, "comparison")


def test_the_headline_shows_each_gate_rules_primary_measure_and_no_guard():
    paired = [sample.PAIRED | {"measure": m, "verdict": v}
              for m, v in (("nDCG@10", "improved"), ("R@100", "regressed"), ("P@10", "improved"),
                           ("RR@10", "inconclusive"))]
    rules = [{"rule": "guarded", "name": "guarded R@100 ↔ P@10", "passed": False, "value": 1,
              "threshold": 0, "reason": "r", "measures": ["R@100", "P@10"]},
             {"rule": "guarded", "name": "guarded RR@10 ↔ nDCG@10", "passed": True,
              "value": 1, "threshold": 0, "reason": "r", "applicable": False,
              "measures": ["RR@10", "nDCG@10"]},
             {"rule": "judged", "name": "judged Judged@10", "passed": True, "value": 1,
              "threshold": 0, "reason": "r", "measures": ["Judged@10"]}]
    found = inputs(comparison=sample.COMPARISON | {"paired": paired},
                   gate=sample.GATE | {"rules": rules}, measure="P@10")
    assert found.gate_measures() == ["P@10", "R@100"]  # n/a and unpaired rules add none
    d = section(render_html(found), "decision")
    assert '<td class="v-regressed">regressed</td>' in d and "<td>RR@10</td>" not in d
    assert "<details><summary>1 rule(s) not applicable" in d


def test_every_user_string_is_escaped(page):
    assert CAND not in page and "<script>alert" not in page and "<b>" not in page
    assert "hand-made &lt;data&gt;" in page
    assert f"<title>releval report: {ESCAPED_CAND} vs bm25</title>" in page


def test_the_metrics_table_puts_n_undefined_and_judged_beside_every_figure(page):
    m = section(page, "metrics")
    assert ('<td><span class="fig">0.5000</span><span class="meta">n 40 · undef. 2</span>'
            '<span class="meta">Judged@10 0.875</span></td>') in m
    # R@100 and AP (no cutoff: the depth) take Judged@100 from the curves
    assert ('<span class="fig">—</span><span class="meta">n 40 · undef. 2</span>'
            '<span class="meta">Judged@100 0.700</span>') in m
    assert ('<span class="fig">0.9000</span><span class="meta">n 42 · undef. 0</span></td>'
            in m)  # Judged itself has no Judged beside it
    assert "Skipped (empty run): empty_sys" in m


def test_the_per_query_table_rows_sorted_by_difference_with_tags_and_failure_layers(page):
    rows, total = query_rows(inputs())
    assert total == 4
    assert rows["query_id"].tolist() == ["q4", "q2", "q1", "q3"]  # worst first, undefined last
    assert rows.loc[0, "failures_baseline"] == "corpus, ranking×2"  # the layers' order
    assert rows.loc[0, "failures_candidate"] == "fusion"
    assert rows.loc[2, "tags"] == "typo, a&b" and rows.loc[2, "failures_baseline"] == ""
    q = section(page, "queries")
    assert q.count("<tr>") == 5  # the header and four queries
    assert ('<tr><td title="four">q4</td><td>head</td><td data-v="0.9">0.9000</td>'
            '<td data-v="0.4">0.4000</td><td data-v="-0.5" class="neg">-0.5000</td>'
            "<td>corpus, ranking×2</td><td>fusion</td></tr>") in q
    assert ('<td title="&lt;script&gt;alert(1)&lt;/script&gt;">q1</td>'
            "<td>typo, a&amp;b</td>") in q
    assert '<td data-v="">—</td><td data-v="">—</td><td data-v="">—</td>' in q
    assert '<input type="search" id="qfilter"' in q and 'id="qtable" class="sortable"' in q
    assert "all 4 queries" in q


def test_the_per_query_table_keeps_the_largest_differences(monkeypatch):
    monkeypatch.setattr(page_module, "QUERY_ROWS", 2)
    rows, total = query_rows(inputs())
    assert (total, rows["query_id"].tolist()) == (4, ["q4", "q1"])
    assert "the 2 of 4 queries with the largest |Δ|" in render_html(inputs())


def test_the_worksheet_and_the_summary_sections(page):
    w = section(page, "worksheet")
    assert "<p>1 failure(s) to inspect; the first 1 below.</p>" in w
    assert "<td>q1: reset | password</td>" in w
    assert "<h2>Candidates</h2>" in section(page, "candidates")
    j = section(page, "judgments")
    assert "Unjudged top-k candidates kept for the next pooling round: 7." in j
    assert "Rows in 5 = accepted 3 + already accepted 1 + quarantined 1" in j
    assert "<h2>Which route found each relevant document (bm25 vs dense)</h2>" in section(
        page, "route_hits")
    s = section(page, "split")
    assert "<td>typo</td><td>0</td><td>2</td>" in s
    assert "<li>1 source(s) relevant in both train and test, affecting 2 test queries: kb-1" in s


def test_the_automatic_judgments_beside_the_human_ones_name_their_labels(page):
    a = section(page, "automatic")
    assert page.index('<section id="judgments">') < page.index('<section id="automatic">')
    assert "<h2>Automatic judgments</h2>" in a
    assert "<tr><td>Cohen&#x27;s κ, quadratic</td><td>0.430 [0.200, 0.600]</td></tr>" in a
    assert "<tr><td>human 0</td><td>20</td><td>6</td></tr>" in a  # the confusion matrix
    assert ("<tr><td>nDCG@10</td><td>2</td><td>-1.000 [-1.000, 1.000]</td>"
            "<td>-1.000 [-1.000, 1.000]</td><td>1</td><td></td></tr>") in a
    assert "flip (human only)" in a
    assert ("<td>both</td><td>80</td><td>10</td><td>11.1%</td>") in a  # the share of each
    assert "<th>human only (validation)</th><th>PPI</th>" in a
    assert "Holes filled: 10 pooled pairs" in a
    figure = section(page, "plots")
    figure = figure[figure.index('<figure id="plot-automatic">'):]
    assert figure[:figure.index("</figure>")].count("<svg") == 1
    none = section(render_html(inputs(automatic=None)), "automatic")
    assert "No automatic judge configured (judgments.automatic)." in none


def test_absent_data_leaves_its_plots_out_and_says_so():
    bare = render_html(inputs(per_query_diff=None, curves=None, violations=None,
                              failure_rows=None, queries=None, receipt=None))
    plots = section(bare, "plots")
    assert plots.count("<svg") == 6  # power, slices, automatic, failures, latency, no-answer
    for name in ("per_query_diff", "curves", "judged", "safety"):
        figure = plots[plots.index(f'<figure id="plot-{name}">'):]
        absent = html.escape(PLOTS[name].absent)
        assert f'<p class="absent">{absent}</p>' in figure[:figure.index("</figure>")]
    assert "No per-query differences" in section(bare, "queries")
    assert "Judged@100" not in section(bare, "metrics")  # no curves: only Judged@10 is known


def test_the_same_inputs_give_the_same_bytes(page):
    assert render_html(inputs()) == page


def test_markdown_lines_become_html():
    out = markdown(["## A <b>", "", "| x | y \\| z |", "|---|---|", "| 1 | `c` |", "",
                    "- one", "- **two**", "plain & text"])
    assert out == ("<h2>A &lt;b&gt;</h2>\n"
                   '<div class="scroll"><table><thead><tr><th>x</th><th>y | z</th></tr>'
                   "</thead><tbody><tr><td>1</td><td><code>c</code></td></tr></tbody></table>"
                   "</div>\n<ul><li>one</li><li><strong>two</strong></li></ul>\n"
                   "<p>plain &amp; text</p>")
    assert markdown(["##### deep", "#######"]) == "<h5>deep</h5>\n<p>#######</p>"


# --- a recommendation evaluation ---------------------------------------------------------


@pytest.fixture(scope="module")
def rec_page() -> str:
    return render_html(rec_inputs())


def test_a_retrieval_page_has_none_of_the_recommendation_parts(page):
    assert "n/a" not in page and "<h3>Protocol</h3>" not in page and 'id="group-' not in page
    assert "random split" not in page


def test_the_recommendation_metrics_come_in_three_groups_after_the_protocol(rec_page):
    m = section(rec_page, "metrics")
    starts = [m.index(f'<h3 id="group-{g}">') for g in ("ranking", "calibration",
                                                        "beyond-accuracy")]
    assert m.index("<h3>Protocol</h3>") < starts[0] and starts == sorted(starts)
    groups = [m[a:b] for a, b in zip(starts, [*starts[1:], len(m)], strict=True)]
    heads = [re.findall(r"<th>([^<]*)</th>", g) for g in groups]
    assert heads == [["system", "HR@10", "nDCG@10", "AUC", "GAUC"],
                     ["system", "LogLoss", "ECE(bins=10)"],
                     ["system", "Coverage@10", "Novelty@10"]]
    assert ("<p>Users as queries: at each cut t, every user with an interaction before t or "
            "in the 30 days after it is one query issued at t;") in m
    assert "a seeded sample of 100 items the user never bought." in m
    assert ("Users evaluated: 42; 41 bought in the horizon, of whom 40 are scored (a positive "
            "visible at the cut) and 1 bought only items first seen after the cut, which no "
            "route can return; 2 undefined") in m
    assert "Held-out users: 5, kept out of every route&#x27;s fitting data" in m
    assert "(42 user-queries)" in m


def test_not_applicable_is_never_a_number(rec_page):
    calibration = section(rec_page, "metrics").split('<h3 id="group-calibration">')[1]
    calibration = calibration[:calibration.index("<h3")]
    base = calibration[calibration.index(f"<strong>{BASE}</strong>"):]
    base = base[:base.index("</tr>")]
    na = ('<td class="na"><span class="fig">n/a</span><span class="meta">not applicable'
          "</span></td>")
    assert base.count(na) == 2 and not re.search(r"\d", base.replace(BASE, ""))
    assert ('<span class="fig">0.4321</span><span class="meta">n 40 · undef. 0</span>'
            '<span class="meta">one value per system</span>') in calibration


def test_an_undefined_recommendation_measure_keeps_its_counts(rec_page):
    beyond = section(rec_page, "metrics").split('<h3 id="group-beyond-accuracy">')[1]
    assert '<span class="fig">—</span><span class="meta">n 0 · undef. 40</span>' in beyond
    assert '<span class="fig">7.5000</span><span class="meta">n 40 · undef. 2</span>' in beyond


def test_the_recommendation_plots_and_the_random_split(rec_page):
    plots = section(rec_page, "plots")
    shown = re.findall(r'<figure id="plot-([a-z_]+)">', plots)
    assert shown == [name for name, p in PLOTS.items()
                     if "recommendation" in p.modes and p.section == "plots"]
    assert "reliability" in shown and "judged" not in shown and "no_answer" not in shown
    figure = plots[plots.index('<figure id="plot-reliability">'):]
    assert figure[:figure.index("</figure>")].count("<svg") == 1
    split = section(rec_page, "split")
    assert "Forward-in-time against a random split (a seeded random 80/20 split of the same " \
        "log)" in split
    assert ("<tr><td>popularity</td><td>HR@10</td><td>0.2000</td><td>0.3000</td>"
            "<td>+0.1000</td><td>1.50</td></tr>") in split


def test_without_probabilities_the_reliability_diagram_says_so():
    plots = section(render_html(rec_inputs(reliability=None)), "plots")
    figure = plots[plots.index('<figure id="plot-reliability">'):]
    figure = figure[:figure.index("</figure>")]
    assert "<svg" not in figure
    assert f'<p class="absent">{html.escape(PLOTS["reliability"].absent)}</p>' in figure


def test_hardneg_at_k_stands_right_after_p_at_k_and_says_lower_is_better(page):
    m = section(page, "metrics")
    headers = re.findall(r"<th>([^<]*)</th>", m[:m.index("</thead>")])
    assert headers == ["system", "nDCG@10", "R@100", "P@10", "HardNeg@10 (lower is better)",
                       "AP", "Judged@10"]
    assert ('<td><span class="fig">0.1250</span><span class="meta">n 42 · undef. 0</span>'
            '<span class="meta">Judged@10 0.875</span></td>') in m  # bm25's, from summary.json
    assert "HardNeg@k = the share of the top k that the qrels mark as hard negatives" in m
    assert "n/a" not in m


def test_hardneg_where_the_qrels_mark_none_is_not_applicable():
    na = {"value": None, "n": 0, "undefined": 0, "empty": 0, "applicable": False,
          "level": "query"}
    systems = {name: by | {"HardNeg@10": na} for name, by in SUMMARY["systems"].items()}
    m = section(render_html(inputs(summary=SUMMARY | {"systems": systems})), "metrics")
    assert m.count('<td class="na"><span class="fig">n/a</span><span class="meta">not '
                   "applicable</span></td>") == 2
    assert "n/a = not applicable: the data lacks what the measure needs" in m


def test_the_judgments_section_says_how_many_hard_negatives_the_qrels_mark(page):
    j = section(page, "judgments")
    assert "<p>Hard negatives: the qrels mark 8 judgments as hard negatives" in j
    unmarked = {k: v for k, v in sample.INGEST.items() if k != "hard_negatives"}
    with pytest.raises(ValidationError, match="hard_negatives"):  # the stage always writes it
        Ingest.model_validate(unmarked)


def test_a_figure_a_score_tie_could_move_gets_a_short_note(page):
    assert "score ties" not in page.lower()  # nothing recorded: nothing said
    systems = {BASE: SUMMARY["systems"][BASE],
               CAND: SUMMARY["systems"][CAND] | {"nDCG@10": SUMMARY["systems"][CAND][
                   "nDCG@10"] | {"ties": 3, "tie_range": [0.6, 0.62]}}}
    m = section(render_html(inputs(summary=SUMMARY | {"systems": systems})), "metrics")
    assert ('<span class="fig">0.6123</span><span class="meta">n 40 · undef. 2</span>'
            '<span class="meta">Judged@10 0.900</span>'
            '<span class="meta">score ties 3 queries · range [0.6000, 0.6200]</span>') in m
    assert m.count("score ties") == 1 and "Score ties = queries where documents" in m


def test_the_comparison_shows_each_horizon_and_the_novelty_flag(rec_page, page):
    full = section(rec_page, "comparison")
    assert "<h3>By horizon</h3>" in full
    assert "<td>7 days</td><td>300</td>" in full and "<td>28 days</td><td>800</td>" in full
    assert "NOVELTY: the gain shrinks by 0.0400 from 7 to 28 days" in full
    assert "By horizon" not in section(page, "comparison")


def test_the_off_policy_section_shows_the_estimates_reference_diagnostics_and_plots(page):
    part = section(page, "offpolicy")
    assert "<h2>Off-policy evaluation</h2>" in part
    assert "uniform &lt;over&gt; the actions" in part  # escaped
    assert "Reference (logs/random, the candidate policy deployed): 0.0038 [0.0026, 0.0051]" \
        in part
    assert "<td>dr</td><td>all</td><td>0.0013</td><td>[-0.0001, 0.0029]</td>" in part
    assert "Diagnostics: <strong>FAIL</strong>" in part and "never shows" in part
    assert "The CI of dr (n 500) does not cover the reference 0.0038; the diagnostics fail" \
        in part
    assert "1,000 bootstrap resamples over rows (each impression)" in part
    assert part.count("<svg") == 2 and 'id="plot-offpolicy_weights"' in part
    assert 'id="plot-offpolicy_weights"' not in section(page, "plots")
    none = section(render_html(inputs(offpolicy={"applicable": False, "reason": "offpolicy.log "
                                                 "is not set: no off-policy evaluation"})),
                   "offpolicy")
    assert "Not applicable: offpolicy.log is not set: no off-policy evaluation." in none
    assert "<svg" not in none and "<table" not in none
