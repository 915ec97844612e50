"""``slices``: how queries are labelled for slicing (``releval.decision.slices``). A leaf."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from releval.section import Section

SINGLE_DIMENSIONS = ("kind", "length", "tenant", "role", "freshness", "route_hit",
                     "user_activity", "history", "returning", "country",
                     "holdout")  # one label per query
DIMENSIONS = ("tag", *SINGLE_DIMENSIONS)  # tag: one label per tag of the query


class Slices(Section):
    """How queries are labelled for slicing (one or more labels per query and dimension):
    tag (each of its tags), kind (its tags other than head/tail, joined by '+'), length
    (word-count bucket), tenant, role, freshness (a relevant document published within
    ``new_days`` before the query: new, else old), route_hit (which route's window holds
    its relevant documents), user_activity (head/tail users); for user-queries (skipped for
    queries without the column): history (fewer than ``long_tail_history`` interactions
    before the cut: long_tail, else active), returning (none before the cut: new, else
    returning), country, holdout (a held-out user: unseen, else seen)."""

    dimensions: list[Literal[DIMENSIONS]] = list(DIMENSIONS)
    min_n: int = Field(20, ge=2)  # below this many queries a slice is "too small"
    length_buckets: tuple[int, int] = (3, 6)  # words: ≤ a short, ≤ b medium, else long
    new_days: int = Field(30, ge=1)
    head_users: float = Field(0.5, gt=0, lt=1)  # most active users issuing this share = head
    long_tail_history: int = Field(5, ge=1)  # fewer interactions before the cut: long_tail
