"""No negative zero anywhere a person reads a number: a value that rounds to zero is written
without a sign by every formatter, in the markdown documents, on the page, on the terminal
and in the gate's reasons; the JSON documents keep the exact values."""

import io
import math
import re

import pandas as pd
import pytest
from rich.console import Console

from releval.cli.files import print_changed_slices, print_decision, print_paired
from releval.decision.gate import decide
from releval.numbers import formatted
from releval.params.rules import Guard, Guarded, NoRegression, NotWorse
from releval.report.decision import render_decision
from releval.report.formats import (
    interval,
    measure_value,
    number,
    rule_value,
    significant,
)
from releval.report.html import render_html
from releval.report.summary import query_set_section, render_summary
from tests import documents
from tests.report import sample

TINY = -1e-9  # rounds to zero in every format the reports use
# a minus sign before a number whose digits are all zero ("-0", "-0.0000", "−0.0%")
NEGATIVE_ZERO = re.compile(r"(?<![\w-])[-−][0.,]*0(?![\d.,]*[1-9])(?![\d.,]*e)")


def negative_zeros(text: str) -> list[str]:
    """Every negative zero a reader sees in ``text`` (an HTML page: its text, not its markup)."""
    visible = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    visible = re.sub(r"<[^>]*>", " ", visible)
    return [visible[max(m.start() - 40, 0):m.end() + 10] for m in NEGATIVE_ZERO.finditer(visible)]


def tiny(value):
    """``value`` with every defined float made a tiny negative (NaN stays undefined)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value if math.isnan(value) else TINY
    if isinstance(value, dict):
        return {k: tiny(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(tiny(v) for v in value)
    if isinstance(value, pd.DataFrame):
        floats = value.select_dtypes("float").columns
        return value.assign(**{c: value[c].where(value[c].isna(), TINY) for c in floats})
    return value


@pytest.mark.parametrize("value, spec, shown", [
    (-0.0, ".4f", "0.0000"), (TINY, "+.4f", "0.0000"), (-TINY, "+.4f", "0.0000"),
    (0.0, "+.4f", "0.0000"), (-0.0, ".4g", "0"), (TINY, ".1%", "0.0%"), (-0.4, ".0f", "0"),
    (TINY, ">9.4f", "   0.0000"), (TINY, "<9.4f", "0.0000   "), (-0.0, ".2e", "0.00e+00"),
    (-0.2, "+.3f", "-0.200"), (TINY, ".4g", "-1e-09"), (-1000.0, ",.0f", "-1,000"),
    (-math.inf, ".4f", "-inf"),
])
def test_a_value_that_rounds_to_zero_has_no_sign(value, spec, shown):
    assert formatted(value, spec) == shown
    assert number(value, spec) == shown


def test_every_shared_formatter_writes_zero_without_a_sign():
    shown = [number(TINY), number(TINY, "+.4f"), interval(TINY, -0.0), rule_value(TINY),
             rule_value(-0.0), significant(-0.0), significant(TINY * 1e-300),
             measure_value(TINY, integer=False), measure_value(-0.4, integer=True)]
    assert [s for s in shown if negative_zeros(s)] == []


def test_the_documents_page_and_terminal_show_no_negative_zero():
    values = {"summary": sample.SUMMARY, "stats": sample.STATS, "comparison": sample.COMPARISON,
              "slices": sample.SLICES, "safety": sample.SAFETY, "gate": sample.GATE,
              "split_report": sample.SPLIT, "agreement": sample.AGREEMENT,
              "per_query_diff": sample.PER_QUERY_DIFF, "curves": sample.CURVES}
    inputs = sample.inputs(**{f: tiny(v) for f, v in values.items()})
    assert inputs.comparison.paired[0].mean_diff == TINY  # the inputs are tiny negatives
    summary = render_summary(inputs.summary, inputs.split_report, inputs.source, inputs.stats,
                             inputs.ingest, inputs.agreement)
    decision = render_decision(inputs.comparison, inputs.slices, inputs.safety,
                               inputs.failures, inputs.sheet, inputs.gate, inputs.min_n, {},
                               query_set_section(inputs.split_report))
    out = io.StringIO()
    console = Console(file=out, width=400)
    print_paired(documents.comparison(tiny(documents.paired())), console)
    print_decision(tiny(sample.GATE), controlled=False, out=console)
    print_changed_slices({"tested": 2, "too_small": 1, "family": "measures × slices",
                          "changed": [{"dimension": "kind", "slice": "typo",
                                       "measure": "nDCG@10", "n": 25, "mean_diff": TINY,
                                       "p_holm": TINY, "verdict": "regressed"}]}, console)
    found = {name: negative_zeros(text) for name, text in (
        ("summary.md", summary), ("decision.md", decision), ("index.html", render_html(inputs)),
        ("console", out.getvalue()))}
    assert found == {name: [] for name in found}


def test_the_gate_reasons_write_zero_without_a_sign():
    comparison = documents.comparison(documents.paired(mean_diff=TINY, ci_low=TINY))
    summary = {s: {"nDCG@10": documents.entry(0.0), "P@10": documents.entry(TINY)}
               for s in ("bm25", "hybrid")}
    ev = documents.evidence(comparison=comparison, summary=summary,
                            latency={"bm25": {"p95": TINY}, "hybrid": {"p95": -0.0}},
                            better={"nDCG@10": "higher", "P@10": "higher"},
                            baseline="bm25", candidate="hybrid")
    rules = [NoRegression(max_drop=0.0), NotWorse(measure="nDCG@10", tolerance=0.0),
             Guarded(primary="nDCG@10", guards=[Guard(measure="P@10", tolerance=0.0),
                                                Guard(measure="latency p95", tolerance=0.0)])]
    doc = decide(rules, ev)
    assert [r["reason"] for r in doc["rules"] if negative_zeros(r["reason"])] == []
    assert doc["rules"][0]["value"] == TINY  # the JSON keeps the exact value
