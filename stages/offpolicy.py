"""Stage ``offpolicy``: the candidate policy's value estimated from the logged feedback.

Reads the pinned ``offpolicy.log`` (``releval.offpolicy.log.read_log``), the policy's table
or the ranking system's run, and the reference log; writes data/offpolicy/estimates.parquet
(estimator × position with CI, n, clip, and whether each CI covers the reference; then the
log's on-policy value and the reference's), weights.parquet (the importance weights'
histogram) and offpolicy.json (``releval.decision.counterfactual``: everything stated, the
diagnostics with pass/fail and reasons). Without a log it writes the document saying so and
empty tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.decision.counterfactual import estimate, no_log
from releval.offpolicy.log import read_log
from releval.offpolicy.policy import read_table
from releval.params import Params
from releval.project.inputs import INPUT_DIR, pinned
from stages.common import read_table as read_parquet


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``offpolicy.<field>`` (``releval.artifacts``)."""

    estimates: pd.DataFrame
    weights: pd.DataFrame
    report: dict


@dataclass(frozen=True)
class Inputs:
    """pinned: the folder of the pinned log, policy table and reference log; runs: each
    system's run file (read for a ranking policy)."""

    pinned: Path = INPUT_DIR
    runs: dict[str, Path] = reads("candidates.run", each="system", reader=Path)


def run(p: Params, inputs: Inputs) -> Outputs:
    """The off-policy evaluation of ``p.offpolicy`` on its pinned inputs under ``inputs``;
    ``runs``: system -> its run.parquet (read for a ranking policy)."""
    c = p.offpolicy
    if c.log is None:
        doc, estimates, weights = no_log()
        return Outputs(estimates, weights, doc)
    folder = inputs.pinned
    log = read_log(pinned(p, "offpolicy.log", folder), slate_size=c.slate_size)
    table = read_table(pinned(p, "offpolicy.policy", folder)) if c.table else None
    run_ = read_parquet((inputs.runs or {})[c.system]) if c.system else None
    reference = (read_log(pinned(p, "offpolicy.reference", folder), slate_size=c.slate_size)
                 if c.reference else None)
    doc, estimates, weights = estimate(c, log, seed=p.base.seed, table=table, run=run_,
                                       reference=reference)
    return Outputs(estimates, weights, doc)


def summary(doc: dict) -> str:
    """The stage's one line."""
    if not doc["applicable"]:
        return f"offpolicy: {doc['reason']}"
    parts = [f"{e['estimator']} {e['value']:.4f} [{e['ci_low']:.4f}, {e['ci_high']:.4f}]"
             for e in doc["estimates"] if e["position"] == "all" and e["value"] is not None]
    ref = doc["reference"]
    d = doc["diagnostics"]
    return (f"offpolicy: {'; '.join(parts)}; on-policy {doc['on_policy']['value']:.4f}"
            + (f"; reference {ref['value']:.4f}" if ref else "")
            + f"; ESS {d['ess']:,.0f} ({'passed' if d['passed'] else 'failed'})")


def line(p: Params, result: Outputs) -> str:
    return summary(result.report)
