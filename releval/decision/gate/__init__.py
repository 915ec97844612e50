"""Release gates: each configured rule checked against the pipeline's evidence.

``RULES`` is the one registry of gate rules: a rule is one module of this package holding its
check, registered here as a ``GateRule`` with its params model (an entry of ``gate.rules``,
tagged ``rule: <name>``), which lives in the leaf ``releval.params.rules`` (``RULE_MODELS``)
so that reading params never imports a check. Adding a rule = its module, its model in
``RULE_MODELS`` and one entry here.

A check yields one or more ``Outcome``s. ``decide`` runs every rule and returns the decision
as a JSON-ready dict: the candidate ships only when every outcome passed. An uncontrolled
comparison does not stop the decision; it labels it (``controlled: false``, the
differences, and every reason prefixed ``UNCONTROLLED: ``).

Missing evidence never passes: a missing measure, slice, system or latency, or a measure not
applicable to a system, fails its rule with a reason that says what is missing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from releval.decision.gate import (
    coverage,
    guarded,
    health,
    holdout,
    judged,
    latency,
    no_answer,
    no_regression,
    not_worse,
    off_policy,
    safety,
    seeds,
)
from releval.decision.gate.evidence import Evidence, Outcome
from releval.decision.gate.rollback import thresholds
from releval.errors import InputError
from releval.params.rules import RULE_MODELS
from releval.section import Section

UNCONTROLLED = "UNCONTROLLED: "
NO_RULES = "no rules configured"


@dataclass(frozen=True)
class GateRule:
    """One rule: ``params``, its model; ``check``, its outcomes for a rule of that model and
    the evidence; ``default``: it is in the default ``gate.rules``; ``measures``: the measure
    names a rule of that model compares in their direction (``Evidence.better``);
    ``paired``: it reads the paired comparison's rows, so its reasons state the comparison's
    query set where a run misses judged queries (``Evidence.missing_note``); ``needs``: what
    else it reads, None when a comparison is all it reads (``releval gate --comparison``
    applies it to files; ``on_files``)."""

    params: type[Section]
    check: Callable[[Any, Evidence], list[Outcome]]
    default: bool
    measures: Callable[[Any], list[str]] = lambda rule: []
    paired: bool = False
    needs: str | None = None


def _rule(name: str, check: Callable[[Any, Evidence], list[Outcome]],
          measures: Callable[[Any], list[str]] = lambda rule: [], paired: bool = False,
          needs: str | None = None) -> GateRule:
    model, default = RULE_MODELS[name]
    return GateRule(model, check, default, measures, paired, needs)


RULES: dict[str, GateRule] = {
    "no_regression": _rule("no_regression", no_regression.check, paired=True),
    "safety": _rule("safety", safety.check, needs="the safety stage's violations"),
    "no_answer": _rule("no_answer", no_answer.check,
                       needs="the no-answer queries and their refusals"),
    "judged": _rule("judged", judged.check, needs="the evaluation's Judged@k"),
    "coverage": _rule("coverage", coverage.check,
                      needs="the evaluated query set's risk categories"),
    "holdout": _rule("holdout", holdout.check, needs="the ledger's looks at the query set"),
    "latency": _rule("latency", latency.check, needs="the runs' measured latency"),
    "not_worse": _rule("not_worse", not_worse.check, measures=lambda rule: [rule.measure],
                       paired=True),
    "guarded": _rule("guarded", guarded.check, measures=guarded.measures, paired=True),
    "health": _rule("health", health.check, needs="the health report"),
    "seeds": _rule("seeds", seeds.check, measures=seeds.measures, paired=True),
    "off_policy": _rule("off_policy", off_policy.check,
                        needs="the off-policy evaluation of logged feedback"),
}


def outcomes(rules: Iterable, evidence: Evidence, on_files: bool = False) -> list[Outcome]:
    """Every rule's outcomes, in rule order, each with the measures its rule names (primary
    first), labelled when the comparison is uncontrolled,
    and those of a rule reading the paired rows with the query set where a run misses judged
    queries. ``on_files``: the evidence is a comparison alone, and a rule that ``needs`` more
    is n/a, saying what it needs."""
    result, note = [], evidence.missing_note
    for rule in rules:
        if rule.rule not in RULES:
            raise InputError(f"unknown gate rule {rule.rule!r} (known: {', '.join(RULES)})",
                             "params.yaml", "gate.rules")
        needs = RULES[rule.rule].needs
        found = ([Outcome.not_applicable(rule.rule, rule.rule, f"needs a pipeline run: it "
                                         f"reads {needs}, which a comparison does not hold")]
                 if on_files and needs else RULES[rule.rule].check(rule, evidence))
        if note and RULES[rule.rule].paired:
            found = [dataclasses.replace(o, reason=f"{o.reason} [{note}]") for o in found]
        named = tuple(dict.fromkeys(name for kind, _, name in getattr(rule, "references", tuple)()
                                    if kind == "measure"))
        found = [dataclasses.replace(o, measures=named) for o in found]
        result.extend(found)
    if not evidence.controlled:
        result = [dataclasses.replace(o, reason=UNCONTROLLED + o.reason) for o in result]
    return result


def decide(rules: Iterable, evidence: Evidence, rollback: Iterable = (),
           on_files: bool = False) -> dict:
    """The decision: ``passed`` iff every outcome passed (true, with a note, for no rules);
    ``not_applicable``: the outcomes the data has nothing to check for (listed apart);
    ``rollback``: the ``gate.rollback`` thresholds with the candidate's offline values
    (``rollback.thresholds``: a monitoring contract, not a rule); ``looks``: the evaluated
    set's look count (``Evidence.looks``; None: not counted); ``on_files``: ``outcomes``'."""
    checked = outcomes(rules, evidence, on_files)
    return {
        "passed": all(o.passed for o in checked),
        "baseline": evidence.baseline,
        "candidate": evidence.candidate,
        "controlled": evidence.controlled,
        "differences": evidence.differences,
        "rules": [o.as_dict() for o in checked],
        "failed": [o.name for o in checked if not o.passed],
        "not_applicable": [o.name for o in checked if not o.applicable],
        "note": None if checked else NO_RULES,
        "rollback": thresholds(rollback, evidence),
        "looks": evidence.looks or None,
        "query_set": evidence.query_set_block,
    }
