"""The report decides from its first screen, in a real Chromium at 1,280 and 1,400 px: the
verdict's headline and the failed rules lie in the top 900 px however many rules pass, no
table is wider than the page, every plot is drawn; and a ledger of a retrieval and a
recommendation run shows the page's own lineage and says another exists."""

import pytest

from releval.project.history import entries
from releval.project.receipt import write
from releval.report.html import render_html
from releval.report.plots import PLOTS
from tests.report import sample

WIDTHS = (1280, 1400)
FIRST_SCREEN = 900


def busy_inputs():
    """The sample with 30 passing rules before its failed one, and more measures per system."""
    passing = [{"rule": "latency", "name": f"latency p{i}", "passed": True, "value": 1.0,
                "threshold": 50.0, "reason": "within the bound " * 4} for i in range(30)]
    gate = sample.GATE | {"rules": passing + sample.GATE["rules"]}
    extra = {m: sample.entry(0.123456) for m in ("RR@10", "nDCG@100", "R@10", "ERR@20", "RBP")}
    summary = sample.SUMMARY | {"systems": {s: by | extra for s, by in
                                            sample.SUMMARY["systems"].items()}}
    return sample.inputs(gate=gate, summary=summary)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_first_screen_decides_and_nothing_is_wider_than_the_page(browser, tmp_path, width):
    page_file = tmp_path / "index.html"
    page_file.write_text(render_html(busy_inputs()), encoding="utf-8")
    with browser.open(page_file) as page:
        page.set_viewport(width, FIRST_SCREEN)
        tops = page.eval("['table.headline', '#failed-rules', 'table.rules.failed', 'p.held']"
                         ".map(s => document.querySelector(s).getBoundingClientRect().top)")
        assert all(0 < top < FIRST_SCREEN for top in tops), tops
        assert page.eval("document.querySelector('table.rules.failed').getBoundingClientRect()"
                         ".bottom") < FIRST_SCREEN
        assert page.eval("document.querySelector('details table.rules') !== null")  # folded
        wide = page.eval(
            "[...document.querySelectorAll('table')].filter(t => t.scrollWidth >"
            " t.parentElement.clientWidth || t.getBoundingClientRect().right >"
            " document.documentElement.clientWidth).map(t => t.className)")
        assert wide == []
        assert page.eval("document.documentElement.scrollWidth <="
                         " document.documentElement.clientWidth")
        drawn = page.eval("[...document.querySelectorAll('section#plots figure')]"
                          ".filter(f => f.querySelector('svg') &&"
                          " f.querySelector('svg').getBoundingClientRect().width > 200)"
                          ".map(f => f.id)")
        assert drawn == [f"plot-{n}" for n, p in PLOTS.items()
                         if "retrieval" in p.modes and p.section == "plots"]
        order = page.eval("[...document.querySelectorAll('main > section')].map(s => s.id)")
        assert order.index("plots") < order.index("selftest") and order[:3] == [
            "decision", "metrics", "plots"]
        assert page.errors == [] and page.failed_requests == []


def test_a_ledger_of_two_lineages_draws_the_pages_own(browser, tmp_path):
    docs = sample.lineage_docs()
    for name, doc in docs:
        write(tmp_path / name, doc)
    page_file = tmp_path / "index.html"
    page_file.write_text(render_html(sample.inputs(history=entries(tmp_path),
                                                   receipt=docs[2][1])), encoding="utf-8")
    with browser.open(page_file) as page:
        page.set_viewport(WIDTHS[0], FIRST_SCREEN)
        line = page.eval("document.querySelector('section#history p.lineage').innerText")
        assert "retrieval" in line and "1 other lineage(s) (1 run(s)) are not drawn" in line
        runs = page.eval("[...document.querySelectorAll('section#history table.history"
                         " tbody tr')].map(r => r.cells[0].textContent)")
        assert runs == ["1", "3"]
        ticks = page.eval("[...document.querySelectorAll('#history-plot-1 svg text')]"
                          ".map(t => (t.querySelector('tspan') || t).textContent)"
                          ".filter(t => t.startsWith('#'))")
        assert ticks == ["#1", "#3"]
        assert page.errors == []
