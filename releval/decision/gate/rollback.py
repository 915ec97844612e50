"""Rollback thresholds (``gate.rollback``): the values at which a deployed candidate (shadow or
canary) must be rolled back, written into the decision beside the candidate's offline value.

Not a release rule: nothing here passes or fails the gate. It is the monitoring contract the
decision hands to the deployment: watch ``metric``, roll back when it crosses ``threshold``.
``headroom`` says how far the offline value lies inside the threshold (< 0: the candidate
already crosses it offline). A bound of ``baseline`` is the baseline's own offline value of
the metric in this run (e.g. ``{metric: nDCG@10, min: baseline}``: roll back when the
deployed candidate answers worse than the system it replaces did offline).
"""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, number
from releval.decision.gate.health import BOUNDS
from releval.errors import InputError
from releval.params.rules import HEALTH_METRICS


def offline(metric: str, ev: Evidence, system: str | None = None) -> tuple[float | None, str]:
    """``system``'s (None: the candidate's) offline value of ``metric`` and where it comes
    from: its health record for a health figure ("health"), else its evaluated mean
    ("metrics"); None where undefined. InputError for a metric that is neither a health
    figure nor evaluated."""
    system = system or ev.candidate
    if metric in HEALTH_METRICS:
        record = ev.health_of(system)
        return number(record.figure(metric) if record else None), "health"
    measures = ev.metrics.get(system) or {}
    if metric not in measures:
        raise InputError(f"rollback metric {metric!r} is neither a health figure "
                         f"({', '.join(HEALTH_METRICS)}) nor a measure evaluated for {system}",
                         "params.yaml", "gate.rollback")
    return number(measures[metric]), "metrics"


def thresholds(rollback, ev: Evidence) -> list[dict]:
    """Per threshold: {metric, bound ("max" | "min"), threshold (a ``baseline`` bound
    resolved; None where the baseline's value is undefined), of (the system a ``baseline``
    bound was read from, else None), offline (the candidate's offline value, None where
    undefined), source ("health" | "metrics"), headroom (max: threshold − offline; min:
    offline − threshold; None where either is)}."""
    rows = []
    for entry in rollback:
        value, source = offline(entry.metric, ev)
        threshold, of = getattr(entry, entry.bound), None
        if threshold == "baseline":
            threshold, of = offline(entry.metric, ev, ev.baseline)[0], ev.baseline
        rows.append({"metric": entry.metric, "bound": entry.bound, "threshold": threshold,
                     "of": of, "offline": value, "source": source,
                     "headroom": None if value is None or threshold is None
                     else BOUNDS[entry.bound].headroom(value, threshold)})
    return rows
