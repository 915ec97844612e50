"""A metamorphic relation and what checking it found.

A relation states how a subject's output must change (or not) when its input is changed in a
known way, so it needs no judgments. Each has a precondition, written beside it: the branch a
trial must reach for the relation to say anything. A check runs its trials in batches and
returns a ``Tally``: trials drawn, reached (the precondition held), passed (reached and the
relation held) and the first failure. A relation that reached no trial fails: zero work is not
a pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S

PASSED, FAILED, UNREACHED, NOT_APPLICABLE = "passed", "failed", "unreached", "not_applicable"
UNREACHED_NOTE = "no trial reached the relation's branch: zero work is not a pass"
WINDOW = [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]


@dataclass(frozen=True)
class Tally:
    """What one check found: ``trials`` drawn, ``reached`` (precondition held), ``passed``
    (reached and the relation held), ``example`` (the first failure, or why the relation does
    not apply when ``applicable`` is False)."""

    trials: int
    reached: int
    passed: int
    example: str = ""
    applicable: bool = True

    @classmethod
    def of(cls, reached, examples, held=None) -> Tally:
        """One trial per entry of ``examples`` (a failure's description, '' when it held):
        ``reached`` per trial (booleans), ``held`` per trial (default: its example is '');
        the first reached trial that did not hold is the example."""
        examples = np.asarray(examples, dtype=object)
        reached = np.asarray(reached, bool)
        held = examples == "" if held is None else np.asarray(held, bool)
        bad = np.flatnonzero(reached & ~held)
        example = (str(examples[bad[0]]) if len(bad) else
                   "" if reached.any() else UNREACHED_NOTE)
        return cls(len(examples), int(reached.sum()), int((reached & held).sum()), example)

    @classmethod
    def not_applicable(cls, reason: str) -> Tally:
        return cls(0, 0, 0, reason, applicable=False)

    @property
    def failed(self) -> int:
        return self.reached - self.passed

    @property
    def status(self) -> str:
        if not self.applicable:
            return NOT_APPLICABLE
        return FAILED if self.failed else PASSED if self.reached else UNREACHED


@dataclass(frozen=True)
class Relation:
    """One registry entry: ``name``; ``subject`` ("route", "fusion" or "evaluator"), the kind
    of case its ``check`` takes; ``routes``, the routes it applies to (None: every route with
    a scorer); ``precondition``, the branch a trial must reach; ``statement``, what must
    hold; ``own_settings``: it searches a system's own settings even when they are
    approximate (the other route relations search the exact ones)."""

    name: str
    subject: str
    precondition: str
    statement: str
    check: Callable[..., Tally]
    routes: tuple[str, ...] | None = None
    own_settings: bool = False

    def fits(self, route: str) -> bool:
        return self.routes is None or route in self.routes


def differences(want: pd.DataFrame, got: pd.DataFrame, scores: bool = True) -> pd.DataFrame:
    """The (query_id, rank) rows where two windows differ in doc_id or (when ``scores``)
    score, or where only one has a row: columns query_id, rank, doc_want, score_want,
    doc_got, score_got (NaN on the side that has no row)."""
    both = want[WINDOW].merge(got[WINDOW], on=[S.QUERY_ID, S.RANK], how="outer",
                              suffixes=("_want", "_got"))
    both = both.rename(columns={"doc_id_want": "doc_want", "doc_id_got": "doc_got"})
    same = (both["doc_want"] == both["doc_got"]) & (
        (both["score_want"] == both["score_got"]) | (not scores))
    return both[~same].sort_values([S.QUERY_ID, S.RANK], kind="stable").reset_index(drop=True)


def per_trial(query_ids, messages: pd.Series) -> np.ndarray:
    """``messages`` (indexed by query id, at most one each) aligned with ``query_ids``: ''
    where a query has none."""
    at = pd.Index(messages.index).get_indexer(pd.Index(query_ids))
    out = np.full(len(at), "", dtype=object)
    out[at >= 0] = messages.to_numpy(dtype=object)[at[at >= 0]]
    return out


def first_difference(diff: pd.DataFrame, query_ids) -> np.ndarray:
    """Per query of ``query_ids``: '' when ``diff`` (``differences``) has no row for it, else
    its first differing rank in one line ("q7: rank 3 holds d2 (1.5), expected d9 (1.5)")."""
    first = diff.drop_duplicates(S.QUERY_ID)
    text = pd.Series([
        f"{q}: rank {int(r)} holds {_entry(dg, sg)}, expected {_entry(dw, sw)}"
        for q, r, dg, sg, dw, sw in zip(first[S.QUERY_ID], first[S.RANK], first["doc_got"],
                                        first["score_got"], first["doc_want"],
                                        first["score_want"], strict=True)],
        index=first[S.QUERY_ID].to_numpy(), dtype=object)
    return per_trial(query_ids, text)


def _entry(doc, score) -> str:
    return "nothing" if pd.isna(doc) else f"{doc} ({score:.9g})"


def same_windows(query_ids, reached: np.ndarray, want: pd.DataFrame,
                 got: pd.DataFrame) -> Tally:
    """Per trial (one query each): the relation holds when ``want`` and ``got`` are the same
    window, doc_id and score at every rank."""
    examples = first_difference(differences(want, got), query_ids)
    return Tally.of(reached, examples)
