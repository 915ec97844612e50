"""``judgments.automatic.gate: ppi``: the gate's paired-comparison rules read prediction-powered
intervals of the difference instead of the paired bootstrap on human labels alone.

For each measure the autojudge stage gives a PPI difference of the compared pair
(agreement_auto.json's ``difference``: Y = the per-query difference candidate − baseline
under human labels on the validation queries, Ŷ = the same under automatic labels on every
judged query; ``releval.decision.ppi.difference``), the comparison's overall paired row of
that measure reads mean_diff = the PPI estimate (λ = 1) and ci_low / ci_high = its interval,
and each reason says "PPI interval (n human-judged queries, N automatic)". The slices' rows
and every other measure keep the paired bootstrap.
"""

from __future__ import annotations

from releval.data import contracts as S
from releval.documents.comparison import Comparison


def basis(figures: dict) -> str:
    """How a PPI difference's interval was made, for a reason (or why it is undefined)."""
    if "undefined" in figures:
        return f"PPI interval {figures['undefined']}"
    return (f"PPI interval ({figures['n_labelled']:,} human-judged queries, "
            f"{figures['n_unlabelled']:,} automatic)")


def substituted(comparison: Comparison, difference: dict) -> tuple[Comparison, dict[str, str]]:
    """``comparison`` with the overall paired row of every measure in ``difference`` (measure
    -> ``ppi.difference`` figures of the same baseline and candidate) reading its PPI
    interval, and measure -> its basis (``basis``)."""
    used = {m: f for m, f in difference.items()
            if f.get("baseline") == comparison.baseline
            and f.get("candidate") == comparison.candidate}
    rows = []
    for row in comparison.paired:
        figures = used.get(row.measure) if row.slice == S.ALL else None
        if figures is not None:  # an undefined interval leaves the row undefined: it fails
            ppi = figures.get("ppi", {})
            row = row.model_copy(update={
                "mean_diff": ppi.get("estimate"), "ci_low": ppi.get("ci_low"),
                "ci_high": ppi.get("ci_high"), "n": figures.get("n_labelled", 0)})
        rows.append(row)
    return comparison.model_copy(update={"paired": rows}), {m: basis(f) for m, f in used.items()}
