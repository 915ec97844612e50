"""trec_eval's versions as data: what each version's evaluation and output differ in.

``releval metrics --format trec --trec-eval V`` reproduces version V (``VERSIONS[V]``). The
differences, read from the sources (``usnistgov/trec_eval`` tags ``v9.0.8`` and ``v10.0``):

- ``score``: the precision the scores are compared at when ranking (score descending, ties
  by doc_id descending, in both). 9.0.8 keeps a document's score as a C ``float``
  (``form_res_rels.c``: ``DOCNO_INFO.sim``), so scores equal in float32 tie there;
  10.0 keeps the ``double``. pytrec_eval ranks as 9.0.8.
- ``recall_count``: how ``iprec_at_recall_x`` turns recall x into a count of relevant
  documents: 9.0.8 ``(long) (x·|R| + 0.9)``, 10.0 ``lround(x·|R|)``.
- ``comments``: a run line whose first non-blank character is ``#`` is skipped (10.0);
  9.0.8 reads it as a malformed line.
- ``missing_printed``: under ``-c -q`` a qrels query missing from the run gets its per-query
  lines (10.0 evaluates it on an empty ranking: 0, num_rel its relevant count).
- ``missing_fatal``: without ``-c``, a qrels query missing from the run ends the evaluation
  (10.0: ``result qid '…' not found in qrels``, exit 4); 9.0.8 skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Version:
    """One trec_eval version's rules (the module's list)."""

    name: str
    score: type[np.floating]
    recall_count: str  # "plus_0.9" (truncate x·|R| + 0.9) or "round" (lround(x·|R|))
    comments: bool
    missing_printed: bool
    missing_fatal: bool

    def needed(self, x: float, n_rel: np.ndarray) -> np.ndarray:
        """The count of relevant documents iprec_at_recall_x asks for, per query (≥ 1)."""
        v = x * np.asarray(n_rel, float)
        count = np.floor(v + 0.9) if self.recall_count == "plus_0.9" else \
            np.where(v - np.floor(v) >= 0.5, np.ceil(v), np.floor(v))
        return np.maximum(count, 1).astype(np.int64)


VERSIONS = {v.name: v for v in (
    Version("9.0.8", np.float32, "plus_0.9", comments=False, missing_printed=False,
            missing_fatal=False),
    Version("10.0", np.float64, "round", comments=True, missing_printed=True,
            missing_fatal=True),
)}
DEFAULT_VERSION = "9.0.8"
