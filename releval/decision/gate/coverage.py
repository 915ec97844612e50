"""Gate rule ``coverage``: the evaluated query set holds enough queries of each risk category
that ``query_set.min_per_category`` sets a minimum for, as the split stage described it
(``Evidence.query_set``: ``releval.data.query_set.describe``). With ``auto`` every category's
minimum is derived here: the queries the comparison's first measure needs to detect its
``min_effect`` at ``plan.power`` (its paired row's ``needed_queries``, the pilot being this
run's per-query differences), stated as derived in every reason."""

from __future__ import annotations

from releval.data.query_set import AUTO
from releval.decision.gate.evidence import Evidence, Outcome
from releval.params.rules import CoverageRule

# what becomes untrustworthy, per gate rule a category underwrites (Category.underwrites)
UNTRUSTWORTHY = {"no_answer": "the no_answer rule's refusal figures are untrustworthy",
                 "safety": "the safety rule's violation count is untrustworthy"}


def _consequence(label: str, rules: list[str]) -> str:
    """What too few queries of a category leave untrustworthy: the figures of each rule it
    underwrites, else the figures read on its own queries."""
    if not rules:
        return f"figures on {label} queries rest on too few queries"
    return "; ".join(UNTRUSTWORTHY.get(r, f"the {r} rule's figures are untrustworthy")
                     for r in rules)


def _derived(ev: Evidence) -> tuple[int | None, str]:
    """The ``auto`` minimum and how it was derived (None: the comparison has no plan)."""
    c = ev.comparison
    row = c.row(c.measures[0]) if c is not None and c.measures else None
    if row is None or row.needed_queries is None:
        return None, ("query_set.min_per_category is auto, and the comparison has no needed "
                      "queries to derive it from (no paired row of its first measure with a "
                      "power plan: rerun the compare stage)")
    return int(row.needed_queries), (
        f"auto: the queries {row.measure} needs to detect min_effect {row.min_effect:g} at "
        f"power {row.power:g} (σ {row.sd:.3f} over this run's {row.n} queries)")


def check(rule: CoverageRule, ev: Evidence) -> list[Outcome]:
    """One outcome per category with a minimum: pass iff count ≥ minimum; a failure names
    the rules the category underwrites (its ``underwrites``; its queries named by its
    ``label``). No query-set description fails; no minimum set passes as not applicable,
    and says so; ``auto`` without a plan to derive it from fails."""
    categories = ev.query_set.get("categories")
    if categories is None:
        return [Outcome(rule.rule, rule.rule, False, None, None,
                        "no query-set description (split_report.json's query_set): rerun "
                        "the split stage")]
    derived = ""
    if ev.query_set.get("minimums") == AUTO:
        minimum, derived = _derived(ev)
        if minimum is None:
            return [Outcome(rule.rule, rule.rule, False, None, None, derived)]
        categories = {name: c | {"minimum": minimum} for name, c in categories.items()}
    bounded = {name: c for name, c in categories.items() if c.get("minimum") is not None}
    if not bounded:
        return [Outcome.not_applicable(rule.rule, rule.rule, "not applicable: "
                                       "query_set.min_per_category sets no minimum")]
    result = []
    for name, c in bounded.items():
        count, minimum, rules = int(c["count"]), int(c["minimum"]), list(c.get("underwrites", []))
        label, passed = c.get("label") or name, count >= minimum
        reason = (f"{count} {label} queries ≥ {minimum}"
                  + (f" (underwrites the {', '.join(rules)} rule)" if rules else "")
                  if passed else
                  f"only {count} {label} queries < {minimum}: {_consequence(label, rules)}")
        reason += f" ({derived})" if derived else ""
        result.append(Outcome(rule.rule, f"{rule.rule} {name}", passed, count, minimum, reason))
    return result
