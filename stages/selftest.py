"""Stage ``selftest``: the metamorphic relations of every configured route, of fusion and of
the evaluator, checked before anything is pooled (``releval.selftest``).

Outputs (data/selftest/): selftest.parquet (one row per system × relation: system, route,
relation, statement, precondition, trials, reached, passed, failed, ok, status, example),
differential.parquet (the metrics engine against each installed oracle of
``selftest.oracles``, one row per oracle × measure × code path:
``releval.selftest.differential``) and selftest.json (the totals, overall, per system and
per oracle). Prints two lines; when a relation fails or reached no trial, or an installed
oracle disagrees or compared nothing, prints one more line for each and exits with status 1
after writing its outputs, so the pipeline stops before pooling. An oracle that is not
installed is reported as such (it needs the test extras), never counted as agreeing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from releval.artifacts import reads
from releval.params import Params
from releval.selftest import selftest, totals
from releval.selftest.cases import OWN, Subjects
from releval.selftest.differential import differential
from releval.selftest.relation import FAILED, UNREACHED

AGREE, DIFFER = "agree", "differ"  # differential row statuses that compared cases


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``selftest.<field>`` (``releval.artifacts``)."""

    rows: pd.DataFrame
    differential: pd.DataFrame
    totals: dict


def oracle_totals(rows: pd.DataFrame) -> dict:
    """Per oracle: its version (None: not installed), the measures and code paths compared,
    the cases and the rows that agree or differ; ``ok`` iff every installed oracle compared
    some case and none differs."""
    out = {}
    for name, part in rows.groupby("oracle", sort=False):
        compared = part[part["status"].isin([AGREE, DIFFER])]
        out[name] = {"version": part["version"].dropna().iloc[0] if part["version"].notna().any()
                     else None,
                     "measures": int(compared["measure"].nunique()),
                     "paths": int(compared["path"].nunique()),
                     "cases": int(compared["cases"].sum()),
                     "agree": int((part["status"] == AGREE).sum()),
                     "differ": int((part["status"] == DIFFER).sum())}
    installed = [t for t in out.values() if t["version"] is not None]
    return {"oracles": out, "ok": all(t["cases"] > 0 and t["differ"] == 0 for t in installed)}


@dataclass(frozen=True)
class Inputs:
    """subjects: what the relations are checked on (the project's own systems; a test plants
    others)."""

    documents: pd.DataFrame = reads("raw.documents")
    queries: pd.DataFrame = reads("raw.queries")
    judgments: pd.DataFrame = reads("raw.judgments")
    interactions: pd.DataFrame = reads("raw.interactions")
    subjects: Subjects = OWN


def run(p: Params, inputs: Inputs) -> Outputs:
    """Every relation of every configured system on prepare's tables (``interactions``: the
    log of the recommendation routes, empty for a retrieval source), and the engine against
    the oracles."""
    documents, queries, judgments = inputs.documents, inputs.queries, inputs.judgments
    interactions, subjects = inputs.interactions, inputs.subjects
    rows = selftest(p, documents, queries, judgments, interactions, subjects)
    diff = differential(seed=p.base.seed, n_cases=p.selftest.cases, oracles=p.selftest.oracles)
    both = totals(rows)
    both["differential"] = oracle_totals(diff)
    both["ok"] = bool(both["ok"] and both["differential"]["ok"])
    return Outputs(rows, diff, both)


def summary(result: Outputs) -> list[str]:
    """The stage's line, then one line per relation that failed or reached no trial."""
    t = result.totals
    verdict = ("all passed" if t["ok"] else f"{t['not_passed']} not passed" if t["relations"]
               else "no relation applies: zero work is not a pass")
    na = f" ({t['not_applicable']} not applicable)" if t["not_applicable"] else ""
    lines = [f"selftest: {t['relations']} relations × {t['trials']:,} trials, "
             f"{t['reached']:,} reached, {verdict}{na}"]
    oracles = t["differential"]["oracles"]
    said = [f"{n} {o['version']}: {o['cases']:,} comparisons, {o['measures']} measures × "
            f"{o['paths']} paths, " + ("all agree" if not o["differ"] else
                                      f"{o['differ']} differ")
            for n, o in oracles.items() if o["version"] is not None]
    missing = [n for n, o in oracles.items() if o["version"] is None]
    lines.append("selftest: differential parity: " + ("; ".join(said) or "no oracle ran")
                 + (f"; not installed: {', '.join(missing)} (the test extras: "
                    "pip install 'releval[dev]')" if missing else ""))
    for n, o in oracles.items():
        if o["version"] is not None and (o["differ"] or not o["cases"]):
            told = f"{o['differ']} measure × path rows differ" if o["differ"] else (
                "compared zero cases: zero work is not a pass")
            lines.append(f"  FAILED differential {n}: {told} (differential.parquet)")
    bad = result.rows[result.rows["status"].isin([FAILED, UNREACHED])]
    for row in bad.itertuples(index=False):
        told = (f"{row.passed} of {row.reached} reached passed ({row.trials} trials); e.g. "
                f"{row.example}" if row.status == FAILED else
                f"0 of {row.trials} trials reached its branch ({row.precondition}): "
                "zero work is not a pass")
        lines.append(f"  FAILED {row.system} {row.relation}: {told}")
    return lines


def line(p: Params, result: Outputs) -> str:
    return "\n".join(summary(result))


def exit_status(result: Outputs) -> int:
    """1 when a relation or an oracle failed: the flow stops before the pool."""
    return 0 if result.totals["ok"] else 1
