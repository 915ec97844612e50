"""Whole, valid documents between stages (``releval.documents``), shared by the tests: each
builder fills every key the stage writes with a plain default, so a test names only the
figures it is about."""

from releval.decision.gate.evidence import Evidence
from releval.documents.comparison import Comparison
from releval.documents.health import Health, Revisions, SystemHealth
from releval.documents.run_stats import Latency
from releval.documents.summary import Entry, Summary


def paired(measure="nDCG@10", slice_="all", mean_diff=0.01, ci_low=-0.02, ci_high=0.04,
           n=150, **more) -> dict:
    """One paired row of comparison.json (``Paired``)."""
    return {"measure": measure, "n": n, "excluded": 0, "mean_baseline": 0.40,
            "mean_candidate": 0.40 + mean_diff, "mean_diff": mean_diff, "median_diff": 0.0,
            "wins": 0, "ties": n, "losses": 0, "ci_low": ci_low, "ci_high": ci_high,
            "p_value": 0.5, "min_effect": 0.01, "verdict": "inconclusive",
            "resamples": 1000, "alpha": 0.05, "seed": 0, "unit": "query", "units": n,
            "p_holm": 0.5, "slice": slice_, **more}


def comparison(*rows, baseline="bm25", candidate="hybrid", controlled=True, differences=(),
               **more) -> dict:
    """comparison.json (``Comparison``) with ``rows`` as its paired rows (default: one
    ``paired()``)."""
    return {"baseline": baseline, "candidate": candidate, "controlled": controlled,
            "differences": list(differences), "conditions": {}, "measures": ["nDCG@10"],
            "note": "" if controlled else "UNCONTROLLED: conditions differ",
            "unit": "query", "strata": "kind", "paired": list(rows) or [paired()],
            "unpaired": [], "aggregates": {}, "composition": {},
            "change": {"kind": None, "label": "unspecified", "holds_fixed": [],
                       "inspections": {}},
            "training": [], **more}


def entry(value, n=150, undefined=0, empty=0, applicable=True, level="query",
          **more) -> dict:
    """One measure's entry of summary.json's ``systems`` (``Entry``)."""
    return {"value": value, "n": n, "undefined": undefined, "empty": empty,
            "applicable": applicable, "level": level, **more}


def summary(systems: dict[str, dict]) -> dict:
    """evaluate's summary.json (``Summary``): ``systems``: system -> measure -> a value (made
    an ``entry``) or an entry."""
    return {"splits": ["test"], "queries": 150,
            "systems": {system: {m: v if isinstance(v, dict) else entry(v)
                                 for m, v in measures.items()}
                        for system, measures in systems.items()},
            "no_answer_left_out": 0, "skipped": [], "depth": 100, "route_hits": {},
            "judgments": {"evaluated": 0, "invisible_left_out": 0,
                          "relevant_invisible_left_out": 0},
            "qrels": "judged", "unjudged": 0}


def health_record(system: str, **figures) -> dict:
    """One system's record of health.json (``SystemHealth``): ``figures`` over plain
    defaults (counts 0, rates and percentiles undefined, revisions None but those given)."""
    counts = ("n_queries", "status_recorded", "freshness_eligible", "freshness_appeared",
              "deleted_eligible", "deleted_still_appearing")
    record = {name: 0 if name in counts else None for name in SystemHealth.model_fields}
    revisions = dict.fromkeys(Revisions.model_fields) | figures.pop("revisions", {})
    return record | {"system": system, "undefined": {}, "not_applicable": {}, "status": {},
                     "cost_model": {}, "revisions": revisions} | figures


def health(systems: dict[str, dict]) -> dict:
    """health.json (``Health``) with ``systems``: system -> figure -> value (each a
    ``health_record``)."""
    return {"systems": {name: health_record(name, **figures)
                        for name, figures in systems.items()},
            "definitions": {}, "qrels": {"path": "qrels", "sha256": ""}}


def run_stats(system: str, p50=1.0, p95=1.0, p99=1.0, route="bm25") -> dict:
    """A system's run_stats.json (``RunStats``)."""
    return {"n_queries": 150,
            "candidates_per_query": {"mean": 100.0, "min": 100, "max": 100, "empty": 0},
            "latency_ms": {"p50": p50, "p95": p95, "p99": p99},
            "status": {"ok": 150}, "system": system, "route": route, "depth": 100}


def latency(systems: dict[str, dict]) -> dict[str, Latency]:
    """system -> ``Latency`` from system -> {p50, p95, p99} (a percentile left out: None)."""
    return {system: Latency(**{"p50": None, "p95": None, "p99": None, **values})
            for system, values in systems.items()}


def evidence(**values) -> Evidence:
    """The gate's ``Evidence`` with its documents given as the stages write them, validated
    into their models: ``comparison`` (comparison.json), ``summary`` (summary.json's
    ``systems``: system -> measure -> entry), ``latency`` (system -> run_stats.json's
    ``latency_ms``), ``health`` (health.json)."""
    if values.get("comparison") is not None:
        values["comparison"] = Comparison.model_validate(values["comparison"])
    if "summary" in values:
        values["summary"] = {system: {m: Entry.model_validate(e) for m, e in measures.items()}
                             for system, measures in values["summary"].items()}
    if "latency" in values:
        values["latency"] = latency(values["latency"])
    if values.get("health") is not None:
        values["health"] = Health.model_validate(values["health"])
    return Evidence(**values)


def read_summary(doc: dict) -> Summary:
    return Summary.model_validate(doc)


def read_comparison(doc: dict) -> Comparison:
    return Comparison.model_validate(doc)


def read_health(doc: dict) -> Health:
    return Health.model_validate(doc)


def under(defaults: dict, doc: dict) -> dict:
    """``doc`` with ``defaults``' keys it lacks (dicts merged key by key)."""
    out = dict(defaults)
    for key, value in doc.items():
        below = defaults.get(key)
        out[key] = (under(below, value) if isinstance(below, dict) and isinstance(value, dict)
                    else value)
    return out


def whole(kind: str, doc: dict) -> dict:
    """A partial document a test wrote by hand, completed with the builders' defaults so it
    validates as its model (the values the test gave are kept)."""
    if kind == "summary":
        systems = {s: {m: under(entry(None), e) for m, e in ms.items()}
                   for s, ms in doc.get("systems", {}).items()}
        return under(summary({}), doc) | {"systems": systems}
    if kind == "comparison":
        return under(comparison(), doc) | {"paired": [under(paired(), r)
                                                       for r in doc.get("paired", [])]}
    if kind == "decision":
        rules = [under({"rule": r["name"].split()[0], "applicable": True}, r)
                 for r in doc.get("rules", [])]
        return under({"differences": [], "failed": [], "not_applicable": [], "note": None,
                       "rollback": []}, doc) | {"rules": rules}
    if kind == "run_stats":
        return under(run_stats(doc.get("system", "system"), route=doc.get("route", "bm25")),
                      doc)
    if kind == "health":
        return under(health({}), doc)
    raise ValueError(kind)
