"""The tables behind dvc.yaml's plots (``dvc plots show`` / ``dvc plots diff REV``): CSV files
with fixed column names, so one plot definition compares any two revisions.

- ``per_query_delta``: rank (1 = the candidate's largest loss), query_id, delta
  (candidate − baseline of the gate's measure), sorted by delta;
- ``recall_at_k`` and ``ndcg_at_k``: k, baseline, candidate (the mean over the evaluated
  queries);
- ``slices``: slice ("dimension=value"), delta, ci_low, ci_high, verdict, for the gate's
  measure, the overall row first;
- ``history`` (where the ledger was read): run (its place in the ledger, 1 the oldest),
  finished_at, receipt (sha256[:12]), decision, baseline, candidate, fixture_baseline,
  fixture_candidate: the mean of the newest run's headline measure per readable run, live
  and on the pinned fixture (``releval.report.history.figure``), empty where absent.

``page_template()`` is the page ``dvc plots show`` fills (``TEMPLATE`` in the plots folder,
named by ``plots.html_template`` in .dvc/config): Vega, Vega-Lite and Vega-Embed inline, so
the page draws offline (DVC's own page loads them from a CDN).
"""

from __future__ import annotations

import pandas as pd
import vl_convert as vlc

from releval import machine_cache
from releval.data import contracts as S
from releval.documents.ledger import Entry, Row
from releval.report import history
from releval.report.inputs import ReportInputs

TEMPLATE = "dvc_plots_template.html"  # in the plots folder; .dvc/config names it
CURVES = {"recall_at_k": "R", "ndcg_at_k": "nDCG"}
HISTORY = ["run", "finished_at", "receipt", "decision", "baseline", "candidate",
           "fixture_baseline", "fixture_candidate"]


def _per_query_delta(inputs: ReportInputs) -> pd.DataFrame:
    diff = inputs.per_query_diff
    rows = diff.loc[(diff[S.MEASURE] == inputs.measure) & diff["diff"].notna(),
                    [S.QUERY_ID, "diff"]]
    rows = rows.sort_values(["diff", S.QUERY_ID], kind="stable").reset_index(drop=True)
    return pd.DataFrame({"rank": range(1, len(rows) + 1), S.QUERY_ID: rows[S.QUERY_ID],
                         "delta": rows["diff"].round(6)})


def _curve(inputs: ReportInputs, family: str) -> pd.DataFrame:
    c = inputs.curves
    compared = c["system"].isin([inputs.baseline, inputs.candidate])  # column
    mine = c[(c["family"] == family) & compared]  # column
    wide = mine.pivot_table(index="k", columns="system", values=S.VALUE).reset_index()
    return pd.DataFrame({"k": wide["k"],  # column
                         "baseline": wide.get(inputs.baseline, pd.Series(dtype=float)).round(6),
                         "candidate": wide.get(inputs.candidate,
                                               pd.Series(dtype=float)).round(6)})


def _slices(inputs: ReportInputs) -> pd.DataFrame:
    s = inputs.slices[inputs.slices[S.MEASURE] == inputs.measure]
    overall = s[S.DIMENSION] == S.ALL
    s = pd.concat([s[overall], s[~overall]])
    name = s[S.DIMENSION].where(~overall.loc[s.index], "") + "=" + s[S.SLICE]
    return pd.DataFrame({"slice": name.str.lstrip("=").to_numpy(),
                         "delta": pd.to_numeric(s["mean_diff"]).round(6).to_numpy(),  # column
                         "ci_low": pd.to_numeric(s["ci_low"]).round(6).to_numpy(),  # column
                         "ci_high": pd.to_numeric(s["ci_high"]).round(6).to_numpy(),  # column
                         "verdict": s["verdict"].to_numpy()})  # column


def _mean(row: Entry, instrument: str, system: str | None, measure: str | None) -> float | None:
    found = history.figure(row, instrument, system, measure) if measure else None
    return None if found is None else round(float(found.mean), 6)


def _history(rows: list[Row]) -> pd.DataFrame:
    measure = history.headline(rows)
    return pd.DataFrame([[i, r.finished_at, r.sha256, r.decision,
                          _mean(r, history.LIVE, r.baseline, measure),
                          _mean(r, history.LIVE, r.candidate, measure),
                          _mean(r, history.FIXTURE, r.baseline, measure),
                          _mean(r, history.FIXTURE, r.candidate, measure)]
                         for i, r in history.kept(rows)], columns=HISTORY)


def plot_tables(inputs: ReportInputs) -> dict[str, pd.DataFrame]:
    """File stem -> table, for the data the inputs hold."""
    out = {}
    if inputs.per_query_diff is not None:
        out["per_query_delta"] = _per_query_delta(inputs)
    if inputs.curves is not None:
        out |= {stem: _curve(inputs, family) for stem, family in CURVES.items()}
    out |= {"slices": _slices(inputs)}
    if inputs.history is not None:
        out["history"] = _history(inputs.history)
    return out


def page_template() -> str:
    """The HTML template for ``dvc plots show`` / ``dvc plots diff``: DVC's placeholders
    ``{refresh_tag}`` and ``{plot_divs}``, and in place of its CDN ``{scripts}`` the
    JavaScript of Vega, Vega-Lite and Vega-Embed (``vl_convert.javascript_bundle``: they
    define ``vegaEmbed``, which DVC's plot divs call) inline; the bundle (about a second to
    build) is kept in the machine cache per vl-convert version."""
    bundle = machine_cache.text(f"vl-convert-{vlc.__version__}-bundle.js",
                                vlc.javascript_bundle)
    bundle = bundle.replace("</script", "<\\/script")  # stays in its element
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n{refresh_tag}\n"
            "<title>releval: dvc plots</title>\n<style>table { border-spacing: 15px; }</style>\n"
            f"<script>\n{bundle}\n</script>\n</head>\n<body>\n{{plot_divs}}\n</body>\n</html>\n")
