"""The "System health" section of the reports, from data/health/health.json and the gate's
decision.json: the per-system health table, the freshness table, the health rule's outcomes
and the rollback thresholds, as the markdown lines of decision.md (the page renders the
same lines, ``releval.report.html.markdown``).
"""

from __future__ import annotations

from releval.documents.decision import Decision
from releval.documents.health import Health, SystemHealth
from releval.documents.receipt import Receipt
from releval.report.formats import UNDEFINED, mark, markdown_table, number, significant

TITLE = "System health"
HEALTH_HEADER = ["system", "route", "p50 ms", "p95 ms", "p99 ms", "status recorded", "error",
                 "timeout", "partial", "fallback", "candidates/query", "empty",
                 "near-duplicates", "cache hits", "cost/query"]
FRESHNESS_HEADER = ["system", "published in span", "appeared", "median days", "p95 days",
                    "deleted", "still appearing", "propagation p95 days",
                    "propagation max days"]
RULES_HEADER = ["", "rule", "value", "threshold", "reason"]
ROLLBACK_HEADER = ["metric", "roll back when", "offline", "headroom"]
SIGNS = {"max": ">", "min": "<"}
UNDEFINED_NOTE = f"{UNDEFINED} = undefined (never zero), by system:"


def _cost(e: SystemHealth) -> str:
    value = number(e.cost_per_query, ".3g")
    return value if e.cost_per_query is None else f"{value} {e.cost_unit}"


def _systems(health: Health | None) -> dict[str, SystemHealth]:
    """system -> its health figures; {} without a health.json."""
    return health.systems if health else {}


def _health_rows(health: Health | None) -> list[list[str]]:
    return [[name, str(e.route),
             *(number(v, ".2f") for v in (e.latency_p50_ms, e.latency_p95_ms, e.latency_p99_ms)),
             f"{e.status_recorded} of {e.n_queries}",
             *(number(v, ".2%") for v in (e.error_rate, e.timeout_rate, e.partial_rate,
                                          e.fallback_rate)),
             number(e.candidates_per_query, ".1f"), number(e.empty_share, ".1%"),
             number(e.near_duplicate_ratio, ".1%"), number(e.embedding_cache_hit_rate, ".1%"),
             _cost(e)]
            for name, e in _systems(health).items()]


REVISIONS_HEADER = ["system", "index", "model", "analyzer", "run file", "qrels"]
DIGEST = 12  # hex characters of a digest shown


def _short(digest: str | None) -> str:
    return digest[:DIGEST] if digest else UNDEFINED


def _revision_rows(health: Health | None, receipt: Receipt | None) -> list[list[str]]:
    """Per system what it ran with: its index (the route's index settings, a fusion's
    method), its model with the receipt's model digest (where a receipt describes the run),
    its analyzer (a lexical route's stemmer and stopwords; a dense route's model tokenizer)
    and a team run's file digest; the qrels' digest is the same for all. Systems without
    recorded revisions are left out."""
    routes = (receipt.receipt.routes if receipt else None) or {}
    qrels = _short(health.qrels.sha256 if health else None)
    rows = []
    for name, e in _systems(health).items():
        r = e.revisions
        params, fusion = r.params or {}, r.fusion or {}
        index = (", ".join(f"{k} {v}" for k, v in fusion.items()) if fusion
                 else r.index or ", ".join(f"{k} {params[k]}" for k in ("method", "k1", "b")
                                           if k in params) or UNDEFINED)
        digest = routes[name].model_digest if name in routes else None
        model = (f"{r.model} ({_short(digest)})" if r.model and digest
                 else r.model or UNDEFINED)
        analyzer = (f"stemmer {params.get('stemmer')}, stopwords {params.get('stopwords')}"
                    if "stemmer" in params else
                    f"the model's tokenizer, max {params['max_length']} tokens"
                    if "max_length" in params else UNDEFINED)
        rows.append([name, str(index), model, analyzer, _short(r.run_sha256), qrels])
    return rows


def _freshness_rows(health: Health | None) -> list[list[str]]:
    """One row per system; none (no table) when no document could be observed being
    published or deleted (no dates, or no query times)."""
    systems = _systems(health).items()
    if not any(e.freshness_eligible or e.deleted_eligible for _, e in systems):
        return []
    return [[name, str(e.freshness_eligible), str(e.freshness_appeared),
             number(e.freshness_median_days, ".1f"), number(e.freshness_p95_days, ".1f"),
             str(e.deleted_eligible), str(e.deleted_still_appearing),
             number(e.deletion_propagation_p95_days, ".1f"),
             number(e.deletion_propagation_max_days, ".1f")]
            for name, e in systems]


def _rule_rows(decision: Decision) -> list[list[str]]:
    return [[mark(o.passed), o.name, significant(o.value), significant(o.threshold), o.reason]
            for o in decision.rules if o.rule == "health"]


def _rollback_rows(decision: Decision) -> list[list[str]]:
    return [[r.metric, f"{SIGNS[r.bound]} {significant(r.threshold)}"
             + (f" ({r.of}'s)" if r.of else ""),
             significant(r.offline), number(r.headroom, "+.4g")]
            for r in decision.rollback]


def _undefined(health: Health | None) -> list[str]:
    """One line per system with undefined figures: "<system>: figure (why); …"."""
    return [f"{name}: " + "; ".join(f"{k} ({why})" for k, why in e.undefined.items())
            for name, e in _systems(health).items() if e.undefined]


def _parts(health: Health | None, decision: Decision,
           receipt: Receipt | None) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(heading, note, header, rows) of each table the section shows, in order; a table
    without rows is left out."""
    candidate = decision.candidate
    parts = [
        ("Per system", "Latency percentiles over the measured queries; status rates over the "
         "queries with a recorded status; near-duplicates: window entries whose document "
         "repeats a higher-ranked one's source or text.", HEALTH_HEADER, _health_rows(health)),
        ("Revisions", "What each system ran with (digests: the first 12 hex characters of "
         "sha256; model digests from the run's receipt).", REVISIONS_HEADER,
         _revision_rows(health, receipt)),
        ("Freshness", "Days from publication to the first window holding a new document, and "
         "from deletion to the last window still holding a deleted one.", FRESHNESS_HEADER,
         _freshness_rows(health)),
        ("Health rules", f"The gate's health bounds on {candidate}.", RULES_HEADER,
         _rule_rows(decision)),
        ("Rollback thresholds", f"A deployed {candidate} (shadow, canary) is rolled back when "
         "a figure crosses its threshold; headroom = how far the offline value lies inside it.",
         ROLLBACK_HEADER, _rollback_rows(decision)),
    ]
    return [part for part in parts if part[3]]


def markdown(health: Health | None, decision: Decision,
             receipt: Receipt | None = None) -> list[str]:
    """The "## System health" section's lines: each table with its heading and note (the
    revisions with the model digests of ``receipt``, the run's receipt.json, where given),
    then what is undefined and why; ``health`` None: no health.json."""
    lines = ["", f"## {TITLE}"]
    for heading, note, header, rows in _parts(health, decision, receipt):
        lines += ["", f"### {heading}", "", note, "", *markdown_table(header, rows)]
    undefined = _undefined(health)
    if undefined:
        lines += ["", UNDEFINED_NOTE, "", *(f"- {line}" for line in undefined)]
    return lines
