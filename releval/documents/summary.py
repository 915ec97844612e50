"""summary.json (stage ``evaluate``): what was evaluated, per system and measure the counts
(n, undefined, empty, ties), and where the qrels came from."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed

Number = int | float | None


class Entry(Fixed):
    """One measure of one system (``releval.metrics.engine.evaluate_systems``): its value (a
    system-level value or a mean; None where undefined), the counts, whether it applies (what
    is ``missing`` where not) and the score ties (``releval.metrics.ties``: None where not
    known)."""

    value: Number
    n: int
    undefined: int
    empty: int
    applicable: bool
    level: str
    missing: str | None = None  # only where not applicable
    ties: int | None = None
    tie_range: list[Number] | None = None


class Judgments(Fixed):
    evaluated: int
    invisible_left_out: int
    relevant_invisible_left_out: int


class Answered(Fixed):
    """One system's queries over the evaluated set (``releval.decision.missing``): judged (at
    least one judgment), answered (judged and ranked), missing (judged, not ranked: scored 0
    where defined), not_judged (ranked, without any judgment: never scored)."""

    judged: int
    answered: int
    missing: int
    not_judged: int


class Horizon(Fixed):
    """A further horizon (``recommend.horizons_days``): the users evaluated, those with a
    positive in the horizon, those scored, and each system's entries at that horizon."""

    users: int
    users_with_positives_in_horizon: int
    users_scored: int
    systems: dict[str, dict[str, Entry]]  # system -> measure -> its entry


class Recommendation(Fixed):
    """The recommendation protocol and its users (``stages.evaluate.recommendation_block``):
    horizon, seen items, AUC negatives; users evaluated, with a positive in the horizon,
    scored, with only unpublished positives, undefined (``releval.data.interactions``); the
    definitions behind serendipity and ILD, the systems with probabilities and the measures
    not applicable per system."""

    horizon_days: int
    exclude_seen: bool
    negatives: str
    n_negatives: int
    users: int
    users_with_positives_in_horizon: int
    users_scored: int
    users_only_unpublished_positives: int
    undefined_users: int
    serendipity_expected: str
    ild_embeddings: str | None
    probabilities: list[str]
    not_applicable: dict[str, list[str]]  # system -> measures
    held_out_users: int | None = None  # users kept out of every route's fitting data


class Summary(Document):
    splits: list[str]
    queries: int
    systems: dict[str, dict[str, Entry]]  # system -> measure -> its entry
    no_answer_left_out: int
    skipped: list[Any]
    depth: int
    route_hits: dict[str, dict[str, Any]]  # "lexical|dense" -> counts
    judgments: Judgments
    qrels: str
    unjudged: int
    answered: dict[str, Answered] = {}  # system -> its queries over the evaluated set
    recommendation: Recommendation | None = None  # recommendation mode only
    # recommend.horizons_days: horizon -> users evaluated, with a positive, scored, systems
    horizons: dict[str, Horizon] | None = None
