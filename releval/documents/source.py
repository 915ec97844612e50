"""source.json (stage ``prepare``): where the data and the qrels came from, and the prepared
tables' row counts. The provenance keys depend on ``prepare.source`` (the demo's simulated
runs, a real source's query times and judgments pointing nowhere, a runs-only project's
documents, the recommendation report of users as queries); absent ones are None."""

from __future__ import annotations

from typing import Any

from releval.documents import Document


class Source(Document):
    source: str
    qrels: str
    documents: int
    queries: int
    judgments: int
    hard_negatives: int
    must_not_return: int
    seed: int | None = None
    external_run: str | None = None  # the demo
    retrained_run: str | None = None  # the demo
    team_runs: str | None = None  # the recommendation demo
    query_times: bool | None = None  # real data
    qrels_pointing_nowhere: dict[str, Any] | None = None  # real data: releval.data.readers
    documents_from: str | None = None  # prepare.source runs
    interactions_from: str | None = None  # logged feedback
    users_from: str | None = None  # logged feedback
    recommendation: dict[str, Any] | None = None  # users as queries: what was counted


def timed_queries(source: Source | None) -> bool:
    """Whether the queries' ``issued_at`` may be read as issue times: False only where
    source.json says they are a stand-in (``query_times`` false: a BEIR collection's)."""
    return source is None or source.query_times is not False
