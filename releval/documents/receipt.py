"""receipt.json and reproduced.json (the flow, ``releval.project.receipt``): what a run was
made of (``receipt``: code, params, seeds, packages, routes, the digests of its inputs and
outputs, the self-test, metrics, figures, looks and the work done), its digest (``sha256``)
and how it ran (``run``: times, executor, headline, over-time comparison, the outputs kept
apart). Receipts of older schemas lack some parts: absent ones are None."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from releval.documents import Document, Fixed

Part = dict[str, Any] | None


class Body(Fixed):
    """The digested part: every key is covered by ``sha256``."""

    schema_: str | None = Field(None, alias="schema")
    code: Part = None
    params: Part = None
    seeds: Part = None
    tie_policy: str | None = None
    packages: Part = None
    routes: Part = None  # system -> route, path, seeds, model digest
    metric_definitions_sha256: str | None = None
    inputs: Part = None
    outputs: Part = None
    selftest: Part = None
    metrics: Part = None
    figures: Part = None
    fixture: Part = None
    results: Part = None
    looks: list[dict[str, Any]] = []
    work: Part = None


class Run(Fixed):
    """How the run went: not digested."""

    started_at: str | None = None
    finished_at: str | None = None
    schedule: Any = None
    executor: Part = None
    headline: Part = None
    inputs_lock: Part = None
    looks_file: Part = None
    over_time: Part = None
    apart: Part = None


class Receipt(Document):
    receipt: Body
    sha256: str
    run: Run = Run()
