"""The condensed list: a ranking with its unjudged documents removed (Sakai 2007).

``judged_only=True`` (ir_measures' option, trec_eval's ``-J``) computes a measure on the
condensed list: every ranked document without a judgment is dropped and the rest move up,
keeping their order, before the measure sees the ranking; the judgments (|R|, the ideal
ranking of nDCG) are unchanged. As in trec_eval, a document judged with a negative grade is
dropped too: trec_eval reads a negative grade as "in the pool but not judged"
(``RELVALUE_UNJUDGED``), and ir_measures' ``judged_only`` is trec_eval's ``-J``.

``condensed(r)`` is a ``Ranking`` with the same attributes and methods (``q``, ``pos``,
``starts``, ``n_ret``, ``grade``, ``running()``, ``top()``, ...), built with array operations:
positions are recomputed over the kept rows, so ``top(k)`` is the first k judged documents.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import MEASURES, Compute, flag, option
from releval.metrics.spec import Measure

OPTION = {"judged_only": flag(False)}  # the option each condensable family declares
DEFINITION = ("With judged_only=True, the same on the condensed list: the ranking without its "
              "unjudged (or negatively graded) documents, positions renumbered (trec_eval -J).")

# per ranking object, its condensed view (a copied Ranking is another object, so a copy whose
# rows were changed never meets a view of the original's rows)
_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Condensed(Ranking):
    """``base`` without its rows that hold no judgment of grade ≥ 0, positions renumbered."""

    def __init__(self, base: Ranking):  # a view: Ranking.__init__ (the join) is not rerun
        keep = np.flatnonzero(base.grade >= 0)  # NaN (unjudged) compares False
        self.base = base
        self.nq, self.query_ids = base.nq, base.query_ids
        self.n_run_queries, self.not_in_qrels = base.n_run_queries, base.not_in_qrels
        self.qrels_q, self.qrels_grade = base.qrels_q, base.qrels_grade
        self.q = base.q[keep]
        n = len(self.q)
        self.starts = np.flatnonzero(np.r_[True, self.q[1:] != self.q[:-1]][:n])
        self.pos = np.arange(n) - np.repeat(self.starts, np.diff(np.r_[self.starts, n]))
        self.n_ret = np.bincount(self.q, minlength=self.nq)
        self.grade, self.judged = base.grade[keep], base.judged[keep]
        self.probability = base.probability[keep]
        if hasattr(base, "max_grade"):
            self.max_grade = base.max_grade
        self.catalog = base.catalog
        if base.catalog is not None:
            self.item, self.qrels_item = base.item[keep], base.qrels_item
            self.query_code = base.query_code


def condensed(r: Ranking) -> Ranking:
    """The condensed list of ``r`` (built once per ranking object)."""
    if isinstance(r, Condensed):
        return r
    view = _VIEWS.get(r)
    if view is None:
        view = _VIEWS[r] = Condensed(r)
    return view


def condensable(fn: Compute) -> Compute:
    """``fn`` computed on the condensed list when the measure sets ``judged_only=True``."""

    @functools.wraps(fn)
    def compute(r: Ranking, m: Measure):
        return fn(condensed(r) if option(m, "judged_only") else r, m)

    compute.__doc__ = f"{fn.__doc__} {DEFINITION}"
    return compute


def as_judged_only(measures: list[Measure]) -> list[Measure]:
    """``measures`` with ``judged_only=True`` for each family that declares it (trec_eval -J
    over a list of measures); the others unchanged."""
    return [replace(m, options=(*m.options, ("judged_only", True)))
            if "judged_only" in MEASURES[m.family].params and not option(m, "judged_only")
            else m for m in measures]


def plain_only(trec: Callable[[Measure], str | None]) -> Callable[[Measure], str | None]:
    """A trec_eval name only without ``judged_only`` (trec_eval names it only under -J)."""
    return lambda m: None if option(m, "judged_only") else trec(m)
