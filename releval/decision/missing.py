"""Queries missing from a run: counted for every system, and the query set a comparison's
means run over, chosen and stated.

For one system over the evaluated queries Q (e.g. the test split) with qrels J ⊆ Q (the
queries with at least one judgment of any grade) and the run's queries A:

- judged = |J|; answered = |J ∩ A|; missing = |J \\ A| (judged, but the run ranks nothing);
- not_judged = |A \\ J| (in the run, not judged: never scored);
- undefined is per measure (no relevant judgment: excluded from its mean, never 0).

A paired comparison of two systems b and c runs over one query set (``QUERY_SETS``,
``compare.query_set``, ``releval compare --query-set``):

- ``judged``: every judged query; a query missing from a run scores 0 there (trec_eval -c);
  where either side misses one, the comparison is labelled so, not clean;
- ``common``: J ∩ A_b ∩ A_c, the judged queries every run answers; the others are left out
  and counted;
- ``refuse``: no comparison while either run misses a judged query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError


@dataclass(frozen=True)
class Answered:
    """One system's queries over the evaluated set (module docstring)."""

    judged: int
    answered: int
    missing: int
    not_judged: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def answered(run_queries: Iterable, judged: Iterable) -> Answered:
    """``Answered`` of a run's query ids against the judged query ids."""
    ran, j = set(map(str, run_queries)), set(map(str, judged))
    return Answered(len(j), len(j & ran), len(j - ran), len(ran - j))


def run_queries(run: pd.DataFrame) -> set[str]:
    """The query ids a run ranks at least one document for."""
    return set(map(str, run[S.QUERY_ID].unique())) if len(run) else set()


@dataclass(frozen=True)
class Choice:
    """One ``compare.query_set`` value: its rule in words and which judged queries it keeps,
    from the judged set and the queries some run misses."""

    rule: str
    keeps: Callable[[set[str], set[str]], set[str]]
    refuses: bool = False


QUERY_SETS: dict[str, Choice] = {
    "judged": Choice("every judged query; one missing from a run scores 0 there "
                     "(trec_eval -c)", lambda judged, missed: judged),
    "common": Choice("the judged queries every run answers; the others left out and counted",
                     lambda judged, missed: judged - missed),
    "refuse": Choice("every judged query, and no comparison while a run misses one",
                     lambda judged, missed: judged, refuses=True),
}


class MissingQueries(InputError):
    """``compare.query_set: refuse`` and a run misses judged queries."""


def chosen(choice: str, judged: set[str], answers: dict[str, set[str] | None],
           source: str = "compare") -> tuple[set[str], dict]:
    """(the judged queries the comparison keeps, its ``query_set`` block) for the compared
    runs ``answers`` (name → the query ids its run answers; None: not known, e.g. a
    per-query table, whose queries are taken as given). The block states the choice and its
    rule, the judged and compared counts, each side's missing queries, whether the
    comparison is ``complete`` (no side misses a judged query) and a one-line ``label``."""
    if choice not in QUERY_SETS:
        raise InputError(f"query set {choice!r} is not one of {', '.join(QUERY_SETS)}", source)
    rule = QUERY_SETS[choice]
    missing = {name: set() if got is None else judged - got for name, got in answers.items()}
    either = set().union(*missing.values())
    if rule.refuses and either:
        raise MissingQueries(f"{len(either)} of {len(judged)} judged queries are missing from "
                             f"a run ({_counted(missing)}); the query set 'refuse' compares "
                             "only runs that answer every judged query", source)
    kept = rule.keeps(judged, either)
    block = {"choice": choice, "rule": rule.rule, "judged": len(judged), "compared": len(kept),
             "missing": {n: len(m) for n, m in missing.items()}, "missing_either": len(either),
             "left_out": len(judged - kept), "complete": not either,
             "known": {n: got is not None for n, got in answers.items()}}
    block["label"] = label(block)
    return kept, block


def _counted(missing: dict[str, set]) -> str:
    return ", ".join(f"{len(m)} from {name}" for name, m in missing.items())


def label(block: dict) -> str:
    """The query set of a comparison in one line (``chosen``'s block)."""
    miss = ", ".join(f"{name} {n}" for name, n in block["missing"].items())
    if not all(block.get("known", {}).values()):
        return (f"{block['compared']} queries as given (a per-query table: which queries its "
                "run missed is not known)")
    if block["complete"]:
        return f"all {block['judged']} judged queries, answered by every run"
    if block["choice"] == "common":
        return (f"the {block['compared']} judged queries every run answers; "
                f"{block['left_out']} of {block['judged']} left out (missing: {miss})")
    return (f"all {block['judged']} judged queries, {block['missing_either']} missing from a "
            f"run and scored 0 there (missing: {miss}): not like for like; the query set "
            f"'common' compares the {block['judged'] - block['missing_either']} every run answers")
