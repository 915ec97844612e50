"""Stage ``judgments``: graded judgments of the pool → checked, agreed, adjudicated qrels.

Grades come from ``judgments.source``: ``simulated`` (the demo: simulated judges reading
the generator's hidden grades with per-judge noise and bias — a simulation, and reports
say so), ``files`` (judges' CSV or Label Studio JSON exports in ``judgments.files``) or
``dataset`` (a real collection's own qrels, passed through with their provenance);
``auto`` is ``simulated`` for demo data and ``dataset`` otherwise. Every row is checked;
bad rows go to quarantine.csv with the reason and the counts reconcile (rows in =
accepted + already accepted + quarantined). Accepted judgments persist, so re-ingesting a
file changes nothing. Outputs (data/judgments/): qrels.parquet (with provenance),
judgments.parquet, quarantine.csv, adjudication.csv, agreement.json, ingest.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.inputs import pinned
from releval.judgments import adjudicate, agreement, ingest, read_judgments
from releval.params import Params
from releval.simulated_judges import corrupt, simulate
from stages.common import guarded, params_of, parser, write_json, write_parquet


def _simulated(p: Params, pool: pd.DataFrame, truth: pd.DataFrame,
               accepted: pd.DataFrame | None) -> pd.DataFrame:
    """Simulated judges grade the pairs not judged yet (a new round), as people would."""
    c = p.judgments
    if accepted is not None and len(accepted):
        pool = pool[~pool["blind_id"].isin(accepted["blind_id"])]
    latest = int(pool["round"].max()) if len(pool) else 1
    rows = simulate(pool, truth, judges=c.judges, seed=p.base.seed + latest, noise=c.noise,
                    max_grade=p.prepare.max_grade)
    return corrupt(rows, share=c.corrupt, seed=p.base.seed) if c.corrupt else rows


def _files(p: Params, pool: pd.DataFrame, truth: pd.DataFrame,
           accepted: pd.DataFrame | None) -> pd.DataFrame:
    """Every judges' file in the folder; rows already accepted count as such, not twice."""
    folder = pinned(p, "judgments.files")
    files = sorted([*folder.glob("*.csv"), *folder.glob("*.json")]) if folder.is_dir() else []
    if not files:
        raise InputError("no judges' files (*.csv, *.json) found", str(folder))
    return pd.concat([read_judgments(f) for f in files], ignore_index=True)


SOURCES = {"simulated": _simulated, "files": _files}
LABELS = {"simulated": "pooled judgments from simulated judges (demo simulation)",
          "files": "pooled judgments from judges' files",
          "dataset": "the dataset's own qrels"}


def _dataset(truth: pd.DataFrame) -> dict:
    qrels = truth[[S.QUERY_ID, S.DOC_ID, S.GRADE]].assign(
        n_judges=1, agreement=float("nan"), adjudicated=False, pool_id="dataset",
        **{S.GUIDELINE: "dataset"})
    empty = pd.DataFrame()
    return {"qrels": qrels, "accepted": empty, "quarantine": empty, "queue": empty,
            "agreement": {"note": "the dataset's own qrels: no per-judge grades"},
            "counts": {"rows_in": len(truth), "accepted_new": len(truth),
                       "already_accepted": 0, "quarantined": 0}}


def carried_over(previous: pd.DataFrame | None, identity: dict) -> pd.DataFrame | None:
    """The accepted judgments kept from earlier runs, if they belong to this pool."""
    if previous is None or previous.empty or "pool_id" not in previous.columns:
        return None
    return previous if previous["pool_id"].iloc[0] == identity["pool_id"] else None


def run(p: Params, pool: pd.DataFrame, identity: dict, truth: pd.DataFrame,
        accepted: pd.DataFrame | None) -> dict:
    source = p.judges_source
    if source == "dataset":
        return _dataset(truth)
    rows = SOURCES[source](p, pool, truth, accepted)
    ingested = ingest(rows, pool, pool_id=identity["pool_id"], max_grade=p.prepare.max_grade,
                      guideline=identity["guideline"], accepted=accepted)
    c = p.judgments
    adjudicator = (read_judgments(pinned(p, "judgments.adjudicator")) if c.adjudicator
                   else None)
    result = adjudicate(ingested.accepted, method=c.method, max_spread=c.max_spread,
                        adjudicator=adjudicator, pool_id=identity["pool_id"],
                        guideline=identity["guideline"])
    return {"qrels": result.qrels, "accepted": ingested.accepted,
            "quarantine": ingested.quarantine, "queue": result.queue,
            "agreement": agreement(ingested.accepted, max_grade=p.prepare.max_grade,
                                   low=c.low_agreement),
            "counts": ingested.counts}


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--pool", default="data/pool")
    ap.add_argument("--out", default="data/judgments")
    args = ap.parse_args()
    p = params_of(args)
    out, pool_dir = Path(args.out), Path(args.pool)
    kept = out / "judgments.parquet"
    previous = pd.read_parquet(kept) if kept.exists() else None
    identity = json.loads((pool_dir / "identity.json").read_text())
    result = run(p, pd.read_parquet(pool_dir / "pool.parquet"), identity,
                 pd.read_parquet(Path(args.raw) / "judgments.parquet"),
                 carried_over(previous, identity))
    write_parquet(out / "qrels.parquet", result["qrels"])
    write_parquet(kept, result["accepted"])
    out.mkdir(parents=True, exist_ok=True)
    result["quarantine"].to_csv(out / "quarantine.csv", index=False)
    result["queue"].to_csv(out / "adjudication.csv", index=False)
    write_json(out / "agreement.json", result["agreement"])
    write_json(out / "ingest.json", result["counts"] | {"source": p.judges_source,
                                                        "qrels": LABELS[p.judges_source]})
    c = result["counts"]
    print(f"judgments ({LABELS[p.judges_source]}): rows in {c['rows_in']:,} = accepted "
          f"{c['accepted_new']:,} + already accepted {c['already_accepted']:,} + quarantined "
          f"{c['quarantined']:,}; qrels {len(result['qrels']):,} pairs")


if __name__ == "__main__":
    guarded(main)
