"""How values are written, alike in the markdown reports and on the terminal: numbers (— where
undefined), intervals, win/tie/loss counts, rule marks, verdicts and markdown tables."""

from __future__ import annotations

import math

UNDEFINED = "—"


def number(value, spec: str = ".4f") -> str:
    """``value`` in the format ``spec``; — where undefined (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    return format(value, spec)


def measure_value(value: float, integer: bool) -> str:
    """A defined measure value: rounded to an integer for a count (a summed measure), else four
    decimals."""
    return f"{int(round(value))}" if integer else f"{value:.4f}"


def interval(low, high, spec: str = "+.4f") -> str:
    """A confidence interval: [low, high]."""
    return f"[{number(low, spec)}, {number(high, spec)}]"


def wins_ties_losses(row: dict) -> str:
    """A paired row's W/T/L: queries where the candidate won, tied, lost."""
    return f"{row['wins']}/{row['ties']}/{row['losses']}"


def mark(passed: bool) -> str:
    """A gate rule's mark: ✓ passed, ✗ failed."""
    return "✓" if passed else "✗"


def verdict(passed: bool) -> str:
    """The release decision: PASS or FAIL."""
    return "PASS" if passed else "FAIL"


def rule_value(value) -> str:
    """A gate rule's value or threshold on the terminal: an integer as is, a float to four
    decimals (one from 100 up), — where None, anything else as text."""
    if value is None:
        return UNDEFINED
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.4f}"
    return str(value)


def significant(value) -> str:
    """A gate rule's value or threshold in the report: a float to four significant digits,
    — where undefined, anything else as text."""
    return number(value, ".4g") if isinstance(value, float) or value is None else str(value)


def markdown_table(header: list[str], rows: list[list]) -> list[str]:
    """The lines of a markdown table; each cell written with ``str``."""
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|",
            *("| " + " | ".join(map(str, r)) + " |" for r in rows)]
