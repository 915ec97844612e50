"""The HTML report in a real, offline Chromium: the hand-made sample (tests/report/sample.py)
with its three-run ledger renders without errors, and its history section shows one laid-out
chart per measure, the gate's PASS and FAIL marks, the runs and the UNCONTROLLED comparison."""

from releval.report.history import DECISION_COLORS
from releval.report.html import render_html
from tests.report import sample


def test_the_history_section_renders_its_charts_and_tables(browser, tmp_path):
    page_file = tmp_path / "index.html"
    rows = sample.history(tmp_path / "runs")
    page_file.write_text(render_html(sample.inputs(history=rows)), encoding="utf-8")
    with browser.open(page_file) as page:
        assert page.eval("document.querySelectorAll('section#history svg').length") == 2
        sizes = page.eval("[...document.querySelectorAll('section#history figure svg')]"
                          ".map(s => s.getBoundingClientRect().width)")
        assert len(sizes) == 2 and all(w > 300 for w in sizes)  # laid out, not collapsed
        titles = page.eval("[...document.querySelectorAll('section#history figure h3')]"
                           ".map(h => h.textContent)")
        assert titles == ["nDCG@10 over the runs", "R@100 over the runs"]
        marks = page.eval(
            "(() => { const svg = document.querySelector('#history-plot-1 svg');"
            " return ['" + "', '".join(DECISION_COLORS.values()) + "'].map(c =>"
            " svg.querySelectorAll(`path[fill=\"${c}\"]`).length); })()")
        assert marks[0] >= 2 and marks[1] >= 1  # PASS on runs 1 and 3, FAIL on run 2
        runs = page.eval("document.querySelectorAll('section#history table.history tbody tr')"
                         ".length")
        assert runs == 3
        text = page.eval("document.querySelector('section#history').innerText")
        assert "UNCONTROLLED" in text and "Δ +0.3600 = rate 0.0000 + mix +0.3600" in text
        assert page.eval("document.querySelector('nav a[href=\"#history\"]').textContent") == \
            "History"
        assert page.errors == [] and page.failed_requests == []
