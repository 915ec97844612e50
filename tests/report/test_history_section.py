"""The report's history section, from a ledger of three receipts (tests/report/sample.py): the
runs table, the charts per measure with the gate's marks, the newest run's uncontrolled
over-time comparison (a composition case), and the one-run message."""

import html

import pytest

from releval.decision.over_time import NOTE
from releval.project.history import SET_ASIDE, entries
from releval.project.receipt import write
from releval.report import history
from releval.report.html import history_section, render_html
from releval.report.plots import history_chart, svg
from tests.report import sample
from tests.report.sample import BASE, CAND

ESCAPED_CAND = html.escape(CAND)


@pytest.fixture
def rows(tmp_path):
    return sample.history(tmp_path)


def section(page: str) -> str:
    start = page.index('<section id="history">')
    return page[start:page.index("</section>", start)]


def test_the_runs_table_has_one_row_per_run_with_the_headline_and_the_decision(rows):
    assert history.headline(rows) == "nDCG@10"
    assert history.measures(rows) == ["nDCG@10", "R@100"]
    table = history.run_rows(rows)
    assert [r[0] for r in table] == ["1", "2", "3"]
    assert table[0][1:] == ["2026-11-01 08:00", "—", rows[0].sha256, f"{BASE} 0.3000",
                            f"{CAND} 0.3100", "—", "PASS"]  # no figures: the headline value
    assert table[1][2] == "prepare.window.start=2026-11-01"
    assert table[1][4:] == [f"{BASE} 0.3000 [0.2500, 0.3500]", f"{CAND} 0.3200 [0.2700, 0.3700]",
                            "0.7000 [0.6500, 0.7500]", f"FAIL: safety {CAND} (UNCONTROLLED)"]
    assert table[2][4:] == [f"{BASE} 0.4500 [0.4000, 0.5000]", f"{CAND} 0.6800 [0.6000, 0.7500]",
                            "0.7000 [0.6500, 0.7500]", "PASS"]


def test_an_unreadable_receipt_keeps_its_place_and_says_so(tmp_path):
    sample.write_ledger(tmp_path)
    name, doc = sample.ledger_docs()[1]
    write(tmp_path / name, doc | {"sha256": "0" * 64})  # edited
    rows = entries(tmp_path)
    assert [i for i, _ in history.kept(rows)] == [1, 3]
    assert history.run_rows(rows)[1] == ["2", "?", "—", name, "—", "—", "—",
                                         f"{SET_ASIDE}: the receipt's content does not "
                                         "match its sha256 (edited?)"]


def test_the_newest_run_against_the_one_before_is_uncontrolled_and_shows_the_mix(rows):
    last = history.newest(rows)
    assert history.over_time_note(last) == (
        f"The newest run ({rows[2].sha256}) against the one before it ({rows[1].sha256}, "
        f"finished 2026-11-08 08:00), UNCONTROLLED: {NOTE}; slices by kind.")
    assert history.over_time_rows(last) == [[
        CAND, "nDCG@10", "0.3200 → 0.6800", "Δ +0.3600 = rate 0.0000 + mix +0.3600",
        "0.5000 → 0.5000",
        "COMPOSITION: the query mix moved the aggregate; no slice moved that way",
        f"drift: {sample.DRIFT_WHY}"]]
    before = rows[1]
    assert history.over_time_note(before).endswith(
        "not comparable: the earlier run kept no per-slice figures.")
    assert history.over_time_rows(before) == []


def test_the_chart_draws_four_series_with_bands_and_marks_each_gate_decision(rows):
    inputs = sample.inputs(history=rows)
    points = history.points(rows, "nDCG@10")
    live = points[(points["instrument"] == history.LIVE) & (points["role"] == "candidate")]
    assert live[["run", "mean", "decision"]].values.tolist() == [
        [1, 0.31, "PASS"], [2, 0.32, "FAIL"], [3, 0.68, "PASS"]]
    assert live["ci_low"].isna().tolist() == [True, False, False]  # run 1: no band
    assert set(points["series"]) == {f"{s} ({role}), {i}" for s, role in (
        (BASE, "baseline"), (CAND, "candidate")) for i in (history.LIVE, history.FIXTURE)}
    assert history.points(rows, "R@100")["run"].min() == 2  # run 1 kept the headline only
    spec = history_chart(inputs, "nDCG@10").to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["area", "line", "point", "point"]
    gate = spec["layer"][-1]["encoding"]["fill"]
    assert gate["scale"] == {"domain": ["PASS", "FAIL"], "range": ["#1a7f37", "#c62828"]}
    dash = spec["layer"][1]["encoding"]["strokeDash"]["scale"]
    assert dash == {"domain": [history.LIVE, history.FIXTURE], "range": [[1, 0], [6, 4]]}
    out = svg(history_chart(inputs, "nDCG@10"), "h")
    assert out == svg(history_chart(inputs, "nDCG@10"), "h")  # deterministic
    assert out.count('fill="#1a7f37"') >= 2 and out.count('fill="#c62828"') >= 1
    assert "11-15 08:00" in out


def test_the_caption_says_what_a_run_without_figures_shows(rows):
    assert history.caption(rows, "nDCG@10").endswith(
        "1 run(s) kept no figures: the live window shows its headline value (no band).")
    assert history.caption(rows, "R@100").endswith(
        "the live window shows nothing (they kept only the headline measure).")


def test_the_html_section_comes_after_the_plots_with_a_chart_per_measure(rows):
    page = render_html(sample.inputs(history=rows))
    assert page.index('<section id="metrics">') < page.index('<section id="plots">') < \
        page.index('<section id="history">') < page.index('<section id="selftest">')
    assert '<a href="#history">History</a>' in page
    s = section(page)
    assert s == '<section id="history"><h2>History</h2>' + history_section(
        sample.inputs(history=rows))  # the same bytes every time
    assert s.count("<svg") == 2
    assert '<figure id="history-plot-1"><h3>nDCG@10 over the runs</h3>' in s
    assert '<figure id="history-plot-2"><h3>R@100 over the runs</h3>' in s
    assert f"<td>{ESCAPED_CAND} 0.6800 [0.6000, 0.7500]</td>" in s
    assert f"<td>FAIL: safety {ESCAPED_CAND} (UNCONTROLLED)</td>" in s
    assert '<span class="badge warn">UNCONTROLLED</span>' in s
    assert "<td>Δ +0.3600 = rate 0.0000 + mix +0.3600</td>" in s
    assert "COMPOSITION: the query mix moved the aggregate; no slice moved that way" in s
    assert CAND not in s  # escaped everywhere
    assert history_section(sample.rec_inputs(history=rows)).count("<svg") == 2


def test_one_run_or_none_gives_the_message_and_no_chart(tmp_path):
    one = sample.history(tmp_path, runs=1)
    s = history_section(sample.inputs(history=one))
    assert history.ONE_RUN in s and "<svg" not in s and "UNCONTROLLED" not in s
    assert f"<td>{one[0].sha256}</td>" in s  # the one run's row is still listed
    assert history_chart(sample.inputs(history=one), "nDCG@10") is None
    lines = history.history_lines(one)
    assert lines[-1] == history.ONE_RUN == "One run kept so far: history starts with the next run."
    assert not any(line.startswith("The newest run") for line in lines)
    assert history.history_lines([]) == [history.NO_RUN]
    assert history.NO_RUN in history_section(sample.inputs(history=[]))
    assert "No ledger read" in history_section(sample.inputs())
