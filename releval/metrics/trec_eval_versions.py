"""trec_eval's versions as data: what each version's evaluation and output differ in.

``releval metrics --format trec --trec-eval V`` reproduces version V (``VERSIONS[V]``). The
differences, read from the sources (``usnistgov/trec_eval``, tags ``v9.0.8`` and ``v10.0``)
and checked against both built from them (``tests/metrics/trec_eval10_golden.py``):

- ``score``: the precision the scores are compared at when ranking (score descending, ties
  by doc_id descending: the same ``comp_sim_docno`` in both). 9.0.8 keeps a document's score
  as a C ``float`` (``trec_format.h``, ``form_res_rels.c``: ``sim``), so scores equal in
  float32 tie there and fall to the doc_id order; 10.0 keeps the ``double``. pytrec_eval
  ranks as 9.0.8.
- ``recall_count``: how ``iprec_at_recall_x`` turns recall x into a count of relevant
  documents (``m_iprec_at_recall.c``): 9.0.8 ``(long) (x·|R| + 0.9)``, 10.0
  ``lround(x·|R|)``. The printing (``%6.4f``) is the same in both.
- ``comments``: 10.0 skips comment lines: in a run, a line whose first non-blank character
  is ``#`` (``get_trec_results.c``); in qrels, a line whose first character is ``#``, one at
  a time: the line after a skipped one is read as a judgment whatever it holds
  (``get_qrels.c``). 9.0.8 reads them as data.
- ``missing_printed``: under ``-c -q`` a qrels query missing from the run gets its per-query
  lines (10.0 evaluates it on an empty ranking: 0, num_rel its relevant count).
- ``missing_fatal``: without ``-c``, a qrels query missing from the run ends the evaluation
  (10.0 loops over the qrels queries: ``result qid '…' not found in qrels``, exit 4);
  9.0.8 loops over the run's and skips it.
- ``own``: its measures releval computes for this output only (``trec_eval_own.OWN``), all
  in its ``all_trec`` and after the shared ones in its measure table (10.0: rbp, rbp_resid,
  unj).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _plus_point_nine(v: np.ndarray) -> np.ndarray:
    """``(long) (v + 0.9)`` for v ≥ 0."""
    return np.floor(v + 0.9)


def _lround(v: np.ndarray) -> np.ndarray:
    """``lround(v)`` for v ≥ 0: halves away from zero (``v - ⌊v⌋`` is exact)."""
    return np.where(v - np.floor(v) >= 0.5, np.ceil(v), np.floor(v))


@dataclass(frozen=True)
class Version:
    """One trec_eval version's rules (the module's list); ``tag``: its git tag."""

    name: str
    tag: str
    score: type[np.floating]
    recall_count: Callable[[np.ndarray], np.ndarray]
    comments: bool
    missing_printed: bool
    missing_fatal: bool
    own: tuple[str, ...]

    def needed(self, x: float, n_rel: np.ndarray) -> np.ndarray:
        """The count of relevant documents iprec_at_recall_x asks for, per query (≥ 1: a
        count of 0 asks for the best precision anywhere, as the first relevant one does)."""
        count = self.recall_count(x * np.asarray(n_rel, float))
        return np.maximum(count, 1).astype(np.int64)


VERSIONS = {v.name: v for v in (
    Version("9.0.8", "v9.0.8", np.float32, _plus_point_nine, comments=False,
            missing_printed=False, missing_fatal=False, own=()),
    Version("10.0", "v10.0", np.float64, _lround, comments=True, missing_printed=True,
            missing_fatal=True, own=("rbp", "rbp_resid", "unj")),
)}
DEFAULT_VERSION = "9.0.8"
