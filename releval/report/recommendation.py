"""What the reports and the console show of a recommendation evaluation (evaluate/summary.json
with a "recommendation" block): the measures in three groups, a measure's cell (n/a where
it does not apply: never a number), the protocol in words, and the forward-in-time against
random split table of split_report.json, and the comparison at several horizons
(comparison.json's ``horizons``) in lines.

Groups, by the measure's family (its name before any parameters or cutoff): calibration
(LogLoss, Brier, ECE: whether the emitted probabilities match the observed rates),
beyond-accuracy (Novelty, ILD, LongTail, PSP, PSnDCG, Serendipity, Coverage, Gini, Entropy:
what is recommended besides the bought items, and the hits on the long tail), ranking (every
other measure: how high the bought items are ranked).
"""

from __future__ import annotations

import re

from releval.documents.comparison import Horizons, Novelty
from releval.documents.split_report import SplitReport
from releval.documents.summary import Entry, Recommendation, Summary
from releval.report.formats import NOT_APPLICABLE, interval, number

RANKING, CALIBRATION, BEYOND = "ranking", "calibration", "beyond-accuracy"
GROUPS = {
    RANKING: "how high each user's bought items are ranked (per user, then the mean; "
             "GAUC: one value per system)",
    CALIBRATION: "whether the probabilities a system emits match the observed purchase "
                 "rates (lower is better); n/a: the system emits no probabilities",
    BEYOND: "what is recommended besides the bought items: novelty, diversity (ILD), long "
            "tail (and its hits: PSP, PSnDCG weigh a hit by the item's inverse propensity), "
            "serendipity, catalogue coverage and its concentration (Gini, entropy)",
}
FAMILIES = {CALIBRATION: ("LogLoss", "Brier", "ECE"),
            BEYOND: ("Novelty", "ILD", "LongTail", "PSP", "PSnDCG", "Serendipity", "Coverage",
                     "Gini", "Entropy")}
NOT_APPLICABLE_NOTE = "not applicable"
LEGEND = ("n = users averaged (a system-level measure: users contributing); undefined = users "
          "with no positive visible at the cut: they bought nothing in the horizon, or only "
          "items first seen after the cut (excluded, never scored); n/a = not applicable "
          "(a probability measure of a system that emits none: never computed from scores).")
SYSTEM_LEVEL = "system"
_FAMILY = re.compile(r"[A-Za-z_]+")


def group(measure: str) -> str:
    """The group of a measure name, by its family."""
    found = _FAMILY.match(measure)
    family = found[0] if found else measure
    return next((g for g, families in FAMILIES.items() if family in families), RANKING)


def grouped(systems: dict[str, dict[str, Entry]]) -> dict[str, list[str]]:
    """group -> its measures in the summary's order (every system's), groups in ``GROUPS``
    order; a group with no measure is left out."""
    measures = list(dict.fromkeys(m for by in systems.values() for m in by))
    found = {g: [m for m in measures if group(m) == g] for g in GROUPS}
    return {g: ms for g, ms in found.items() if ms}


def applicable(entry: Entry) -> bool:
    """False only where the summary says so."""
    return entry.applicable


def value_text(entry: Entry | None) -> str:
    """A measure's figure: n/a where not applicable, — where undefined or not evaluated."""
    if entry is not None and not applicable(entry):
        return NOT_APPLICABLE
    return number(None if entry is None else entry.value)


def counts_text(entry: Entry | None) -> str:
    """n and undefined beside a figure ("" for n/a or not evaluated: no number there)."""
    if entry is None or not applicable(entry):
        return ""
    return f"n {entry.n} · undef. {entry.undefined}"


def note_text(entry: Entry | None) -> str:
    """What is written under a figure: its counts, or "not applicable" for n/a."""
    return NOT_APPLICABLE_NOTE if entry is not None and not applicable(entry) else \
        counts_text(entry)


def system_level(systems: dict[str, dict[str, Entry]]) -> list[str]:
    """The measures with one value per system (level "system"), in the summary's order."""
    return list(dict.fromkeys(m for by in systems.values() for m, e in by.items()
                              if e.level == SYSTEM_LEVEL))


def protocol(block: Recommendation) -> list[str]:
    """The recommendation protocol of summary.json's ``recommendation`` block, in sentences."""
    days = block.horizon_days
    lines = [f"Users as queries: at each cut t, every user with an interaction before t or in "
             f"the {days} days after it is one query issued at t; its positives are the items "
             f"the user bought in [t, t + {days} days)."]
    lines.append("Items a user bought before t are neither recommended nor counted as "
                 "positives (exclude_seen)." if block.exclude_seen else
                 "Items a user bought before t may be recommended and count as positives "
                 "again (exclude_seen off).")
    lines.append("AUC and GAUC negatives: " + (
        f"a seeded sample of {block.n_negatives} items the user never bought."
        if block.negatives == "sample" else
        "the items of the system's window the user did not buy."))
    lines.append(users_line(block))
    if block.held_out_users:
        lines.append(f"Held-out users: {block.held_out_users}, kept out of every route's "
                     "fitting data (the holdout slice: unseen).")
    return lines


def users_line(block: Recommendation) -> str:
    """The users evaluated, each count with its definition: those with a positive in the
    horizon, those scored (a positive visible at the cut) and why the two differ, and those
    undefined."""
    only = block.users_only_unpublished_positives
    return (f"Users evaluated: {block.users}; {block.users_with_positives_in_horizon} "
            f"bought in the horizon, of whom {block.users_scored} are scored (a positive "
            f"visible at the cut)" + (f" and {only} bought only items first seen after the "
                                      "cut, which no route can return" if only else "")
            + f"; {block.undefined_users} undefined (no positive visible at the cut: counted, "
            "never scored).")


def protocol_line(block: Recommendation) -> str:
    """The protocol in one line (the console's)."""
    parts = [f"horizon {block.horizon_days} days",
             "seen items excluded" if block.exclude_seen else "seen items kept",
             f"AUC negatives: {block.n_negatives} sampled" if block.negatives == "sample"
             else "AUC negatives: the window",
             f"{block.users} users ({block.undefined_users} undefined)"]
    if block.held_out_users:
        parts.append(f"{block.held_out_users} held out")
    return " · ".join(parts)


SPLIT_HEADER = ["system", "measure", "forward", "random", "inflation", "ratio"]


def random_split(split_report: SplitReport) -> tuple[str, list[list[str]]] | None:
    """The forward-in-time against random split comparison of split_report.json: its
    protocol and one row per (system, measure); None when the report has none."""
    r = split_report.random_split
    if not r:
        return None
    rows = [[system, measure, number(v.forward.get(measure)), number(v.random.get(measure)),
             number(v.inflation.get(measure), "+.4f"), number(v.ratio.get(measure), ".2f")]
            for system, v in r.systems.items() for measure in v.forward if measure != "n"]
    return r.protocol, rows


def novelty_text(flag: Novelty) -> str:
    """A measure's novelty flag in words (``releval.decision.horizons.novelty``)."""
    if flag.novelty is None:
        return "novelty undefined (no Δ at one of the horizons)"
    shrink = (f"the gain shrinks by {number(flag.shrink, '.4f')}" if flag.shrink > 0
              else f"the gain grows by {number(-flag.shrink, '.4f')}" if flag.shrink < 0
              else "the gain holds")
    days = f"from {flag.short_days} to {flag.long_days} days"
    if flag.novelty:
        return f"NOVELTY: {shrink} {days}, more than min_effect {flag.min_effect:g}"
    return f"no novelty effect: {shrink} {days} (min_effect {flag.min_effect:g})"


def horizon_lines(block: Horizons | None) -> list[str]:
    """One line per compared measure of comparison.json's ``horizons``: the candidate's Δ
    with its CI and verdict at each horizon, then the novelty flag; none without it."""
    if not block:
        return []
    flags = {f.measure: f for f in block.novelty}
    lines = []
    for measure in dict.fromkeys(r.measure for r in block.rows):
        at = [f"{r.horizon_days} days {number(r.delta, '+.4f')} "
              f"{interval(r.ci_low, r.ci_high)} over {r.n:,} users ({r.verdict})"
              for r in block.rows if r.measure == measure]
        flag = flags.get(measure)
        lines.append(f"{measure} Δ at " + ", at ".join(at)
                     + (f"; {novelty_text(flag)}" if flag else ""))
    return lines


def horizon_summary_lines(summary: Summary) -> list[str]:
    """evaluate/summary.json's ``horizons`` in lines: per further horizon the users scored and
    the first measure's figure per system; none without them."""
    lines = []
    for days, block in (summary.horizons or {}).items():
        systems = block.systems
        measure = next((m for by in systems.values() for m in by), None)
        figures = ", ".join(f"{system} {value_text(by.get(measure))}"
                            for system, by in systems.items())
        lines.append(f"At {days} days: {block.users_scored:,} of {block.users:,} users "
                     f"scored; {measure}: {figures}")
    return lines
