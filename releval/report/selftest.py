"""The self-test's section of the report (summary.md and index.html): the metamorphic
relations (relations × trials reached × passed, per system and relation, each with its
precondition) and the differential parity (per oracle: version, cases, the measures and
code paths it covered). Drawn from data/selftest/ (stage selftest)."""

from __future__ import annotations

import pandas as pd

from releval.documents.selftest import SelfTest

STATUS = {"passed": "✓ passed", "failed": "✗ FAILED", "unreached": "✗ unreached",
          "not_applicable": "n/a"}
COMPARED = ("agree", "differ")


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _headline(totals: SelfTest) -> str:
    verdict = "all passed" if totals.ok else f"{totals.not_passed} not passed"
    na = totals.not_applicable
    return (f"{totals.relations} relations × {totals.trials:,} trials: "
            f"{totals.reached:,} reached their branch, {totals.passed:,} "
            f"passed — **{verdict}**" + (f" ({na} not applicable)" if na else "") + ".")


def _relations(rows: pd.DataFrame) -> list[str]:
    lines = ["| system | relation | precondition | trials | reached | passed | status |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in rows.itertuples(index=False):
        told = STATUS.get(r.status, r.status)
        if r.status in ("failed", "not_applicable") and r.example:
            told += f": {r.example}"
        lines.append(f"| {_cell(r.system)} | {_cell(r.relation)} | {_cell(r.precondition)} | "
                     f"{r.trials:,} | {r.reached:,} | {r.passed:,} | {_cell(told)} |")
    return lines


def _differential(totals: SelfTest, diff: pd.DataFrame | None) -> list[str]:
    oracles = totals.differential.oracles
    if not oracles:
        return []
    lines = ["", "Differential parity: the metrics engine against each oracle on generated "
             "cases, by code path (a path's cases exercise it).", "",
             "| oracle | version | comparisons (case × measure) | measures | paths | rows agree | "
             "rows differ |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, o in oracles.items():
        if o.version is None:
            lines.append(f"| {name} | not installed (the test extras) | — | — | — | — | — |")
        else:
            lines.append(f"| {name} | {o.version} | {o.cases:,} | {o.measures} | "
                         f"{o.paths} | {o.agree} | {o.differ} |")
    if diff is not None and len(diff):
        compared = diff[diff["status"].isin(COMPARED)]  # column
        if len(compared):
            cases = compared.pivot_table(index="path", columns="oracle", values="cases",
                                         aggfunc="sum", fill_value=0)
            lines += ["", "Comparisons per code path (cases × measures):", "",
                      "| path | " + " | ".join(cases.columns) + " |",
                      "|---|" + "---:|" * len(cases.columns)]
            lines += [f"| {path} | " + " | ".join(f"{int(v):,}" for v in row) + " |"
                      for path, row in cases.iterrows()]
    return lines


def selftest_lines(totals: SelfTest | None, rows: pd.DataFrame | None,
                   diff: pd.DataFrame | None = None) -> list[str]:
    """The section's markdown lines (without its heading); [] when the run has no
    self-test outputs."""
    if not totals:
        return []
    lines = ["Metamorphic relations of every configured route, of fusion and of the evaluator, "
             "checked before pooling (no judgments needed). " + _headline(totals), ""]
    if rows is not None and len(rows):
        lines += _relations(rows)
    return lines + _differential(totals, diff)
