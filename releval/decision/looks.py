"""Reuse accounting: how many decisions an evaluation set has informed.

Every decision taken on a set leaks something about it: a test set compared against again
and again is no longer held out. A **look** is one candidate compared on one evaluation set,
``{split, set, system, candidate}``:

- ``set``, the set's content digest (``set_digest``): sha256 over UTF-8 lines, one
  ``q<TAB>query_id`` per query of the set, then one ``r<TAB>query_id<TAB>doc_id<TAB>grade``
  per qrels row of those queries, each part sorted (queries by id; rows by query id, doc id,
  grade). The split's name is not part of it: the same queries and labels are the same set;
  new queries, or a new judging round, are a new one;
- ``candidate``, the identity of what was compared (``candidate_identity``): sha256 of
  ``system<TAB>md5``, the md5 of the system's run file (as dvc.lock records it), so a rerun
  of the same candidate is the same look and a new run or another system a new one.

A run takes (``taken``) the look of ``compare.candidate`` on the evaluated set
(``evaluate.splits``: ``evaluated``), first, and one look per fused system on the split
fusion is tuned on (``TUNING_SPLIT``): tuning spends the validation set, not the test set.

The looks file (``reports.looks``: ``{"looks": [look + first_seen], "unrecorded": n}``) holds
the distinct (set, candidate) looks with the date each was first seen (``record``), built
from the ledger where it is missing (``from_ledger``: a run whose receipt has no looks,
written before they were recorded, or is unreadable is counted in ``unrecorded``, never
guessed). ``count`` gives the decision's ``looks`` entry: the distinct candidates on the
evaluated set among the recorded looks and the current one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.params import Params

TUNING_SPLIT = "validation"  # fusion tunes its weights here (releval.retrieval.fusion)
KEYS = ("split", "set", "system", "candidate")


def set_digest(split: pd.DataFrame, qrels: pd.DataFrame, splits: Iterable[str]) -> str:
    """The content digest of the queries of ``splits`` (split.parquet) and their qrels rows
    (see the module docstring)."""
    queries = sorted(set(split.loc[split[S.SPLIT].isin(list(splits)), S.QUERY_ID].astype(str)))
    rows = qrels.loc[qrels[S.QUERY_ID].astype(str).isin(set(queries)), list(S.QRELS_COLUMNS)]
    rows = sorted(zip(rows[S.QUERY_ID].astype(str), rows[S.DOC_ID].astype(str),
                      rows[S.GRADE].astype(int), strict=True))
    text = "".join(f"q\t{q}\n" for q in queries) + "".join(f"r\t{q}\t{d}\t{g}\n"
                                                          for q, d, g in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_identity(system: str, run: Path) -> str:
    """sha256 of ``system<TAB>md5 of its run file``."""
    md5 = hashlib.md5(Path(run).read_bytes()).hexdigest()
    return hashlib.sha256(f"{system}\t{md5}".encode()).hexdigest()


def evaluated(p: Params, split: pd.DataFrame, qrels: pd.DataFrame,
              runs: Mapping[str, Path]) -> dict:
    """The look of ``compare.candidate`` on ``evaluate.splits``; ``runs``: system -> its run
    file."""
    return {"split": "+".join(p.evaluate.splits),
            "set": set_digest(split, qrels, p.evaluate.splits), "system": p.compare.candidate,
            "candidate": candidate_identity(p.compare.candidate, runs[p.compare.candidate])}


def taken(p: Params, split: pd.DataFrame, qrels: pd.DataFrame,
          runs: Mapping[str, Path]) -> list[dict]:
    """The run's looks: ``evaluated``, then each of ``fusion.systems`` on ``TUNING_SPLIT``."""
    looks = [evaluated(p, split, qrels, runs)]
    if p.fusion.systems:
        tuning = set_digest(split, qrels, [TUNING_SPLIT])
        looks += [{"split": TUNING_SPLIT, "set": tuning, "system": name,
                   "candidate": candidate_identity(name, runs[name])}
                  for name in p.fusion.systems]
    return looks


def record(doc: dict, looks: Iterable[dict], when: str) -> dict:
    """The looks file ``doc`` with each look of ``looks`` not yet in it (same set and
    candidate) added as first seen ``when`` (an ISO date)."""
    known = {(look["set"], look["candidate"]) for look in doc.get("looks", [])}
    added = []
    for look in looks:
        if (look["set"], look["candidate"]) not in known:
            known.add((look["set"], look["candidate"]))
            added.append({k: look[k] for k in KEYS} | {"first_seen": when})
    return {"looks": [*doc.get("looks", []), *added], "unrecorded": doc.get("unrecorded", 0)}


def from_ledger(runs: Iterable[tuple[list[dict] | None, str | None]]) -> dict:
    """The looks file from the ledger's runs, oldest first, each (its receipt's ``looks``,
    its finish time): its looks first seen on that date; a run without looks (None: written
    before they were recorded, or unreadable) is ``unrecorded``."""
    doc: dict = {"looks": [], "unrecorded": 0}
    for looks, finished in runs:
        if looks is None:
            doc["unrecorded"] += 1
            continue
        doc = record(doc, looks, (finished or "")[:10])
    return doc


def count(doc: dict, look: dict, today: str) -> dict:
    """The decision's ``looks`` entry for the run's ``look`` on its evaluated set: ``count``,
    the distinct candidates compared on that set (the recorded looks and this one);
    ``since``, the first of them (``today`` when none is recorded); ``split``, ``digest``,
    ``candidate``; ``unrecorded``, the ledger's runs that recorded no looks (not counted)."""
    on_set = {r["candidate"]: r["first_seen"] for r in doc.get("looks", [])
              if r["set"] == look["set"]}
    seen = {**on_set, look["candidate"]: on_set.get(look["candidate"], today)}
    return {"split": look["split"], "digest": look["set"], "candidate": look["candidate"],
            "count": len(seen), "since": min(seen.values()),
            "unrecorded": int(doc.get("unrecorded", 0))}


def sentence(looks: dict) -> str:
    """"this test set has informed N decisions since D" (with the unrecorded runs)."""
    n = looks["count"]
    text = (f"this {looks['split']} set ({looks['digest'][:12]}) has informed {n} "
            f"decision{'s' if n != 1 else ''} since {looks['since']}")
    if looks.get("unrecorded"):
        text += (f" ({looks['unrecorded']} earlier run(s) in the ledger recorded no looks "
                 "and are not counted)")
    return text
