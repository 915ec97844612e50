"""Controls per kind of change: what a comparison holds fixed, and what it also inspects.

``KINDS`` (``compare.change``) maps each kind of change to the conditions it holds fixed at
minimum (names of ``releval.decision.conditions.CONDITIONS``, the general conditions every
comparison holds, or of ``conditions.HELD``) and its inspections (names of
``releval.decision.inspections.INSPECTIONS``):

- route (new retrieval source / route): holds the total candidate budget, the time window
  and the labelling protocol; inspects the unique relevant candidates the new source adds,
  coverage and latency;
- ranker (new ranker / reranker): holds the candidate sets, the feature snapshot and the
  evaluation cohort; inspects the ordering measures, calibration and cost;
- diversity (diversity reranker): holds the candidates and their base scores; inspects the
  relevance cost, topic coverage and repetition;
- training_signal (new training signal): holds an independent evaluation set and explicit
  labels; inspects slices, leakage and negative transfer (slices that get worse).

A condition of the kind that differs between the sides, or that one side breaks on its own
(e.g. evaluated queries in the training split), refuses the comparison with the reasons
(``conditions.controlled_change``), unless ``compare.allow_uncontrolled`` (then it is
labelled uncontrolled); ``inspections.change_block`` writes the kind, what it held and its
inspections into the comparison. This module only names them, so params can read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """One kind of change: its ``label``, the conditions it ``holds_fixed`` at minimum and
    its ``inspections``, in the order shown."""

    label: str
    holds_fixed: tuple[str, ...]
    inspections: tuple[str, ...]


KINDS: dict[str, Kind] = {
    "route": Kind("new retrieval source / route", ("budget", "time_window", "labelling"),
                  ("unique_relevant", "coverage", "latency")),
    "ranker": Kind("new ranker / reranker", ("candidate_set", "feature_snapshot", "queries"),
                   ("ordering", "calibration", "cost")),
    "diversity": Kind("diversity reranker", ("candidate_set", "base_scores"),
                      ("relevance_cost", "topic_coverage", "repetition")),
    "training_signal": Kind("new training signal", ("independent_eval", "explicit_labels"),
                            ("slices", "leakage", "negative_transfer")),
}
GENERAL_ONLY = "not declared: the general conditions only"


def holds_fixed(kind: str | None) -> tuple[str, ...]:
    """The conditions ``kind`` holds fixed besides the general ones; () for no kind."""
    return KINDS[kind].holds_fixed if kind else ()
