"""Stage ``judgments``: graded judgments of the pool → checked, agreed, adjudicated qrels.

Grades come from ``judgments.source``: ``simulated`` (the demo: simulated judges reading
the generator's hidden grades with per-judge noise and bias — a simulation, and reports
say so), ``files`` (judges' CSV or Label Studio JSON exports in ``judgments.files``) or
``dataset`` (a real collection's own qrels, passed through with their provenance);
``auto`` is ``simulated`` for demo data and ``dataset`` otherwise. Every row is checked;
bad rows go to quarantine.csv with the reason and the counts reconcile (rows in =
accepted + already accepted + quarantined). Accepted judgments persist, so re-ingesting a
file changes nothing.

Hard negatives (``S.HARD_NEGATIVE``): the pairs the dataset's judgments (data/raw's
judgments.parquet) mark, and for ``simulated`` and ``files`` also those a judge's accepted
judgment marks (a ``hard_negative`` column or Label Studio choice), join the qrels by
``releval.judging.adjudication.with_hard_negatives``: a mark stays while the pair's judged
grade is not relevant and is overruled otherwise; a marked pair the pool did not hold is
added as the dataset judged it, with provenance ``dataset``. ingest.json's ``hard_negatives``
counts them: marked = kept + added + overruled.

Outputs (data/judgments/): qrels.parquet (with provenance and ``hard_negative``),
judgments.parquet (with each judge's mark), quarantine.csv, adjudication.csv,
agreement.json, ingest.json.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.demo.judges import simulate_round
from releval.judging.adjudication import adjudicate, dataset_qrels, with_hard_negatives
from releval.judging.agreement import agreement
from releval.judging.files import read_judges_files, read_judgments
from releval.judging.ingest import carried_over, ingest
from releval.params import Params
from releval.project.inputs import INPUT_DIR, pinned

LABELS = {"simulated": "pooled judgments from simulated judges (demo simulation)",
          "files": "pooled judgments from judges' files",
          "dataset": "the dataset's own qrels"}


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``judgments.<field>`` (``releval.artifacts``); judgments holds
    every accepted judgment so far, ingest the counts, the source and its qrels label."""

    qrels: pd.DataFrame
    judgments: pd.DataFrame
    quarantine: pd.DataFrame
    adjudication: pd.DataFrame
    agreement: dict
    ingest: dict


def _simulated(p: Params, pool: pd.DataFrame, truth: pd.DataFrame,
               accepted: pd.DataFrame | None, inputs: Path) -> pd.DataFrame:
    """Simulated judges grade the pairs not judged yet (the demo)."""
    c = p.judgments
    return simulate_round(pool, truth, accepted, judges=c.judges, seed=p.base.seed,
                          noise=c.noise, max_grade=p.prepare.max_grade, corrupt_share=c.corrupt)


def _files(p: Params, pool: pd.DataFrame, truth: pd.DataFrame,
           accepted: pd.DataFrame | None, inputs: Path) -> pd.DataFrame:
    """Every judges' file in the pinned folder; rows already accepted count as such."""
    return read_judges_files(pinned(p, "judgments.files", inputs))


ROWS: dict[str, Callable[..., pd.DataFrame]] = {"simulated": _simulated, "files": _files}


def _pooled(p: Params, pool: pd.DataFrame, identity: dict, truth: pd.DataFrame,
            accepted: pd.DataFrame | None, inputs: Path) -> Outputs:
    """The ``ROWS`` of the source ingested into the accepted judgments, then adjudicated."""
    c, pool_id, guideline = p.judgments, identity[S.POOL_ID], identity["guideline"]
    rows = ROWS[p.judges_source](p, pool, truth, accepted, inputs)
    ingested = ingest(rows, pool, pool_id=pool_id, max_grade=p.prepare.max_grade,
                      guideline=guideline, accepted=accepted)
    adjudicator = (read_judgments(pinned(p, "judgments.adjudicator", inputs)) if c.adjudicator
                   else None)
    result = adjudicate(ingested.accepted, method=c.method, max_spread=c.max_spread,
                        adjudicator=adjudicator, pool_id=pool_id, guideline=guideline)
    qrels, marks = with_hard_negatives(result.qrels, truth, ingested.accepted)
    return Outputs(qrels, ingested.accepted, ingested.quarantine, result.queue,
                   agreement(ingested.accepted, max_grade=p.prepare.max_grade,
                             low=c.low_agreement),
                   _ingest(p, ingested.counts, marks))


def _dataset(p: Params, pool: pd.DataFrame, identity: dict, truth: pd.DataFrame,
             accepted: pd.DataFrame | None, inputs: Path) -> Outputs:
    """The dataset's own qrels and marks, passed through: no judges, nothing quarantined."""
    empty = pd.DataFrame()
    counts = {"rows_in": len(truth), "accepted_new": len(truth), "already_accepted": 0,
              "quarantined": 0}
    qrels, marks = with_hard_negatives(dataset_qrels(truth), truth)
    return Outputs(qrels, empty, empty, empty,
                   {"note": "the dataset's own qrels: no per-judge grades"},
                   _ingest(p, counts, marks))


def _ingest(p: Params, counts: dict, marks: dict) -> dict:
    return counts | {"hard_negatives": marks, "source": p.judges_source,
                     "qrels": LABELS[p.judges_source]}


SOURCES = {"simulated": _pooled, "files": _pooled, "dataset": _dataset}


@dataclass(frozen=True)
class Inputs:
    """truth: the dataset's own judgments (raw); previous: the judgments the last run
    accepted (None: none); pinned: the folder of the pinned judges' files."""

    pool: pd.DataFrame = reads("pool.pool")
    identity: dict = reads("pool.identity")
    truth: pd.DataFrame = reads("raw.judgments")
    previous: pd.DataFrame | None = reads("judgments.judgments", dep=False)
    pinned: Path = INPUT_DIR


def run(p: Params, inputs: Inputs) -> Outputs:
    """Judgments of ``p.judges_source`` for the pool, over the accepted judgments of earlier
    runs (``previous``) when they are this pool's; judges' files are read from their pinned
    copies under ``inputs``."""
    accepted = carried_over(inputs.previous, inputs.identity[S.POOL_ID])
    return SOURCES[p.judges_source](p, inputs.pool, inputs.identity, inputs.truth, accepted,
                                    inputs.pinned)


def line(p: Params, result: Outputs) -> str:
    c = result.ingest
    h = c["hard_negatives"]
    return (f"judgments ({c['qrels']}): rows in {c['rows_in']:,} = accepted "
            f"{c['accepted_new']:,} + already accepted {c['already_accepted']:,} + "
            f"quarantined {c['quarantined']:,}; qrels {len(result.qrels):,} pairs, "
            f"{h['kept'] + h['added']:,} hard negatives ({h['added']:,} added, "
            f"{h['overruled']:,} overruled)")
