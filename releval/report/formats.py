"""How values are written, alike in the markdown reports and on the terminal: numbers (— where
undefined; a value that rounds to zero without a sign, never "-0.0000"), intervals,
win/tie/loss counts, rule marks, verdicts, score-tie notes, the order of measures (HardNeg@k
beside P@k), the hard-negative counts and markdown tables."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from pydantic import BaseModel

from releval.documents.comparison import Paired
from releval.documents.decision import Rule
from releval.documents.ingest import HardNegatives
from releval.documents.summary import Entry
from releval.numbers import formatted

UNDEFINED = "—"
PRECISION, HARD_NEGATIVES = "P", "HardNeg"  # measure families: HardNeg@k is shown beside P@k
HARD_NEGATIVES_LEGEND = ("HardNeg@k = the share of the top k that the qrels mark as hard "
                         "negatives (judged not relevant, yet deliberately close to a relevant "
                         "document), beside P@k: lower is better")
_NAME = re.compile(r"^(?P<family>[A-Za-z_]+)(?:\(.*\))?(?:@(?P<cutoff>[0-9.]+))?$")
def number(value, spec: str = ".4f") -> str:
    """``value`` in the format ``spec`` (``formatted``: zero without a sign); — where undefined
    (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNDEFINED
    return formatted(value, spec)


PLURALS = {"query": "queries"}  # the irregular ones; others take an s


def plural(word: str, n: int | None = None) -> str:
    """``word`` for ``n`` things (one: as it is; any other count or None: its plural)."""
    return word if n == 1 else PLURALS.get(word, f"{word}s")


def count(value) -> str:
    """A count with thousands separated ("1,381"); — where undefined (None or NaN)."""
    undefined = value is None or (isinstance(value, float) and math.isnan(value))
    return number(None if undefined else int(value), ",d")


def measure_value(value: float, integer: bool) -> str:
    """A defined measure value: rounded to an integer for a count (a summed measure), else four
    decimals (zero without a sign)."""
    return f"{int(round(value))}" if integer else formatted(value, ".4f")


def interval(low, high, spec: str = "+.4f") -> str:
    """A confidence interval: [low, high]."""
    return f"[{number(low, spec)}, {number(high, spec)}]"


def field(part: BaseModel | dict, name: str, default=None):
    """A field of a document part, read alike from its model (the report) and from the JSON's
    dict (the command line and the Python API, which share these formats): ``default`` where
    a dict lacks it."""
    if isinstance(part, BaseModel):
        return getattr(part, name)
    return part.get(name, default)


def wins_ties_losses(row: Paired | dict) -> str:
    """A paired row's W/T/L: queries where the candidate won, tied, lost."""
    return f"{field(row, 'wins')}/{field(row, 'ties')}/{field(row, 'losses')}"


TIES_LEGEND = ("score ties = queries where documents with equal scores straddle the "
               "measure's cutoff (a measure without one: where their order changes the "
               "value); range = the mean over the worst and the best order of the tied "
               "documents")


def tie_counts(entry: Entry | None) -> str:
    """A measure's score ties (summary.json's ``ties`` and ``tie_range``): "3 queries · range
    [0.4100, 0.4500]"; the count only where it is non-zero, the range only where the tie order
    moves the mean; "" where neither (or nothing recorded)."""
    if not entry:
        return ""
    ties, span = entry.ties, entry.tie_range
    parts = [f"{ties} quer{'y' if ties == 1 else 'ies'}"] if ties else []
    if span is not None and span[0] != span[1]:
        parts.append(f"range {interval(span[0], span[1], '.4f')}")
    return " · ".join(parts)


def tie_note(entry: Entry | None) -> str:
    """``tie_counts`` as the note beside a figure: "score ties 3 queries · …" ("" where none)."""
    counts = tie_counts(entry)
    return f"score ties {counts}" if counts else ""


def family_and_cutoff(measure: str) -> tuple[str | None, str | None]:
    """A measure name's family and cutoff as written: ``P(rel=2)@10`` → ("P", "10"), ``AP`` →
    ("AP", None); (None, None) for anything else."""
    m = _NAME.match(measure)
    return m.group("family", "cutoff") if m else (None, None)


def beside_precision(measures: Iterable[str]) -> list[str]:
    """``measures`` in their order, but each HardNeg@k moved right after the last P@k of the
    same k (one without a P@k stays where it is)."""
    measures = list(measures)
    named = {m: family_and_cutoff(m) for m in measures}
    last = {named[m][1]: m for m in measures if named[m][0] == PRECISION}
    moved = [m for m in measures if named[m][0] == HARD_NEGATIVES and named[m][1] in last]
    out = []
    for m in measures:
        if m not in moved:
            out.append(m)
        if named[m][0] == PRECISION and last[named[m][1]] == m:
            out += [h for h in moved if named[h][1] == named[m][1]]
    return out


def hard_negatives(counts: HardNegatives) -> str:
    """ingest.json's ``hard_negatives`` in words: how many the qrels mark, and what became of
    every marked pair."""
    n = counts.kept + counts.added
    return (f"Hard negatives: the qrels mark {n} judgment{'' if n == 1 else 's'} as hard "
            "negatives (judged not relevant, yet deliberately close to a relevant document); "
            f"of {counts.marked} marked pairs, {counts.kept} kept the mark as judged, "
            f"{counts.added} were added as the dataset judged them (not pooled) and "
            f"{counts.overruled} lost it to a relevant grade.")


def mark(passed: bool) -> str:
    """A gate rule's mark: ✓ passed, ✗ failed."""
    return "✓" if passed else "✗"


NOT_APPLICABLE = "n/a"  # a figure or a rule with nothing in the data to measure or check
NOT_APPLICABLE_HEADING = "Not applicable (nothing in this data for them to check)"


def applicable(outcome: Rule | dict) -> bool:
    """Whether a gate outcome checked anything (``applicable`` absent: it did)."""
    return field(outcome, "applicable") is not False


def split_applicable(outcomes: list) -> tuple[list, list]:
    """A decision's outcomes as (the checked ones, the n/a ones), each in rule order."""
    return ([o for o in outcomes if applicable(o)], [o for o in outcomes if not applicable(o)])


def rule_mark(outcome: Rule | dict) -> str:
    """A gate outcome's mark: n/a where the data has nothing for it to check, else ``mark``."""
    return mark(bool(field(outcome, "passed"))) if applicable(outcome) else NOT_APPLICABLE


def verdict(passed: bool) -> str:
    """The release decision: PASS or FAIL."""
    return "PASS" if passed else "FAIL"


def rule_value(value) -> str:
    """A gate rule's value or threshold on the terminal: an integer as is, a float to four
    decimals (one from 100 up; zero without a sign), — where None, anything else as text."""
    if value is None:
        return UNDEFINED
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return formatted(value, ".1f" if abs(value) >= 100 else ".4f")
    return str(value)


def significant(value) -> str:
    """A gate rule's value or threshold in the report: a float to four significant digits,
    — where undefined, anything else as text."""
    return number(value, ".4g") if isinstance(value, float) or value is None else str(value)


def markdown_table(header: list[str], rows: list[list]) -> list[str]:
    """The lines of a markdown table; each cell written with ``str``."""
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|",
            *("| " + " | ".join(map(str, r)) + " |" for r in rows)]
