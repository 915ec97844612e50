"""trec_eval's measures that only its output needs (``OWN``): rbp, rbp_resid and unj_k of
trec_eval 10.0 (``m_rbp.c``, ``m_rbp_resid.c``, ``m_unjudged.c``), computed as it computes
them on its ranking (``Ranking``: score descending, ties by doc_id descending; ``-J``: its
condensed list).

Per query, rows at positions i = 0, 1, … ; g_i the row's grade, unjudged rows (no judgment,
or a negative grade) u_i = 1; c_i = p^i by repeated multiplication (c_0 = 1, c_i = c_{i-1}·p);
n rows; L the query's top judged grade; p = 0.9; sums added in rank order.

- rbp = (1 − p) Σ_i gain(g_i) c_i, gain(g) = g / L when L > 1, else g (levels 0..L are the
  gains, normalised into [0, 1] only when one exceeds 1), 0 for an unjudged row. m_rbp.c reads
  its min and max before assigning them; as its Makefile builds it (gcc, no optimisation) it
  computes this, which is what it prints on trec_eval's and our test files.
- rbp_resid = c_n + (1 − p) Σ_i u_i c_i when some ranked row is unjudged, else 0.
- unj_k = |{i < k : u_i}| / k (k fixed when fewer than k rows are ranked).

Undefined (releval's ``--undefined-aware`` rule): rbp and rbp_resid where the query has no
relevant judgment (as ``RBP``), unj where it has no judgment (as ``Judged``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from releval.metrics.ranking import Ranking

P = 0.9  # trec_eval's persistence for rbp and rbp_resid
_NAME = re.compile(r"^(?P<base>rbp_resid|rbp|unj)(?:[._](?P<cuts>\d+(?:,\d+)*))?$")


def _powers(r: Ranking) -> np.ndarray:
    """c_0, c_1, …, c_N for N the longest ranking: p^i by repeated multiplication."""
    return np.cumprod(np.r_[1.0, np.full(int(r.n_ret.max(initial=0)), P)])


def _unjudged(r: Ranking) -> np.ndarray:
    return ~(r.grade >= 0)  # NaN (no judgment) compares False


def rbp(r: Ranking, k: int | None) -> np.ndarray:
    """rbp per evaluated query (the module's formula)."""
    top = np.ones(r.nq)  # L where L > 1: the divisor of the gains
    judged = r.qrels_grade >= 0
    np.maximum.at(top, r.qrels_q[judged], r.qrels_grade[judged])
    gain = np.where(r.grade >= 0, r.grade, 0.0) / top[r.q]
    return (1.0 - P) * r.per_query_in_order(gain * _powers(r)[r.pos])


def rbp_resid(r: Ranking, k: int | None) -> np.ndarray:
    """rbp_resid per evaluated query (the module's formula)."""
    unjudged, c = _unjudged(r), _powers(r)
    tail = c[r.n_ret] + (1.0 - P) * r.per_query_in_order(unjudged * c[r.pos])
    return np.where(r.per_query(unjudged) > 0, tail, 0.0)


def unj(r: Ranking, k: int | None) -> np.ndarray:
    """unj_k per evaluated query (the module's formula)."""
    return r.per_query(_unjudged(r) & r.top(k)) / k


@dataclass(frozen=True)
class Own:
    """One measure of ``OWN``: ``compute`` (ranking, cutoff) → value per evaluated query;
    ``cutoffs``: its default cutoffs (None: it takes none); ``needs_relevant``: undefined
    without a relevant judgment (else without any judgment)."""

    compute: Callable[[Ranking, int | None], np.ndarray]
    cutoffs: tuple[int, ...] | None
    needs_relevant: bool

    def defined(self, r: Ranking, level: int) -> np.ndarray:
        """Per evaluated query, whether the measure is defined there."""
        return (r.n_rel(level) if self.needs_relevant else r.n_judged()) > 0


OWN = {"rbp": Own(rbp, None, True), "rbp_resid": Own(rbp_resid, None, True),
       "unj": Own(unj, (5, 10, 20), False)}


def parse(text: str) -> list[str] | None:
    """The printed names (``unj_5``, ``rbp``) that ``text`` asks for — ``rbp``,
    ``rbp_resid``, ``unj`` (its default cutoffs), ``unj.5,10`` or ``unj_5`` — or None: not
    one of ``OWN``'s names (a cutoff on rbp, a cutoff 0)."""
    found = _NAME.match(text.strip())
    if not found:
        return None
    own = OWN[found["base"]]
    if own.cutoffs is None:
        return None if found["cuts"] else [found["base"]]
    cuts = [int(c) for c in found["cuts"].split(",")] if found["cuts"] else own.cutoffs
    return [f"{found['base']}_{c}" for c in dict.fromkeys(cuts) if c > 0] or None


def split(name: str) -> tuple[str, int | None]:
    """A printed name's (``unj_5``, ``rbp``) measure in ``OWN`` and its cutoff."""
    found = _NAME.match(name)
    return found["base"], int(found["cuts"]) if found["cuts"] else None
