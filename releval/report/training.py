"""The training variance of a candidate trained with several seeds, beside the paired
bootstrap CI (``releval.decision.seeds``): a section of decision.md and of the page."""

from __future__ import annotations

from releval.documents.comparison import Comparison
from releval.report.formats import interval, markdown_table, number

NOTE = ("Two uncertainties, neither replacing the other: the bootstrap CI is the "
        "evaluation-sample uncertainty (which queries were drawn), paired by query; the "
        "training interval is the spread over retraining (mean Δ ± t(1 − α/2, n − 1) · sd / "
        "√n over the n seeds). Δ per seed with its own bootstrap CI.")


def _section(c: Comparison) -> list[str]:
    rows = c.training
    if not rows:
        return []
    seeds = [s.seed for s in rows[0].seeds]
    lines = ["", f"## Training variance: {c.candidate} vs {c.baseline} "
             f"({len(seeds)} seeds)", ""]
    body = [[r.measure,
             *(f"{number(s.mean_diff, '+.4f')} {interval(s.ci_low, s.ci_high, '+.3f')}"
               for s in r.seeds),
             number(r.mean_diff, "+.4f"), interval(r.ci_low, r.ci_high),
             number(r.training_sd), interval(r.training_low, r.training_high),
             interval(r.seed_min, r.seed_max)] for r in rows]
    level = f"{1 - rows[0].alpha:.0%}"
    lines += markdown_table(["measure", *(f"seed {k}: Δ [CI]" for k in seeds), "seeds' mean Δ",
                             f"bootstrap {level} CI (evaluation)", "training sd",
                             f"training {level} interval", "range over seeds"], body)
    return lines + ["", NOTE]


def markdown(comparison: Comparison) -> list[str]:
    """One section per compared candidate (the primary comparison, then ``also``) that was
    trained with several seeds; none otherwise."""
    return [line for c in comparison.comparisons for line in _section(c)]
