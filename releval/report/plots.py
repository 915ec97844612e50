"""The report's plots: one registry entry each, a Vega-Lite chart (Altair) rendered to inline SVG
(vl-convert), so the page shows them with no script and no network.

``PLOTS`` maps a name to its ``Plot``: a title, a caption, what the page says when there is
nothing to draw, ``build(inputs) -> chart | None`` (None: its data is absent or empty) and
the evaluation modes it belongs to (``releval.report.inputs.MODES``: retrieval,
recommendation). The page shows the entries of its mode in registry order; a new plot is
one ``@plot(...)`` function here (reading a ``ReportInputs`` field, a new optional one if it
needs new data). ``history_chart`` draws one measure of the history section (one chart per
measure, not in the registry). ``svg`` renders a chart; the same chart always gives the same
SVG. Numbers written into titles and labels use ``releval.report.formats``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import vl_convert as vlc

from releval import machine_cache
from releval.data import contracts as S
from releval.decision import planning
from releval.metrics.curves import FAMILY, K
from releval.report import drawer, history
from releval.report.automatic import figure
from releval.report.formats import interval, number
from releval.report.inputs import MODES, RECOMMENDATION, RETRIEVAL, ReportInputs

Chart = alt.TopLevelMixin
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b",
           "#9d755d", "#bab0ac", "#ff9da6")
VERDICT_COLORS = {"improved": "#2f8f46", "regressed": "#c62828",
                  "no consequential change": "#4c78a8", "inconclusive": "#555555",
                  "too small": "#bbbbbb"}
GREY, LIGHT = "#888888", "#bbbbbb"
WIDTH = 620
ROW = 18  # pixels per bar or slice row


@dataclass(frozen=True)
class Plot:
    """One figure of the page: ``build`` draws it from the inputs, or returns None when its
    data is absent; ``absent`` is what the page says then; ``modes``: the evaluations whose
    page shows it."""

    title: str
    caption: str
    absent: str
    build: Callable[[ReportInputs], Chart | None]
    modes: tuple[str, ...] = MODES
    section: str = "plots"  # the page's section that draws it


PLOTS: dict[str, Plot] = {}


def plot(name: str, title: str, caption: str, absent: str = "No data for this plot.", *,
         modes: tuple[str, ...] = MODES, section: str = "plots"):
    """Register a chart builder under ``name``, shown on the pages of ``modes`` in the
    page's ``section``."""

    def register(fn: Callable[[ReportInputs], Chart | None]):
        PLOTS[name] = Plot(title, caption, absent, fn, modes, section)
        return fn

    return register


_ID = re.compile(r'\bid="([^"]+)"')


def svg(chart: Chart, scope: str) -> str:
    """The chart as an SVG element; its ids (clip paths, gradients) prefixed with ``scope``
    so that several SVGs in one page cannot collide. The spec is not validated here
    (tests/report/test_plots.py holds every plot's spec to Vega-Lite's schema); a spec drawn
    before on this machine is read from the machine cache (``releval.machine_cache``), keyed
    by its content and the renderer's versions, else drawn (``releval.report.drawer``)."""
    spec = chart.to_dict(validate=False)
    key = hashlib.sha256(f"{vlc.__version__} {drawer.VL_VERSION} {json.dumps(spec)}".encode())
    out = machine_cache.text(f"svg/{key.hexdigest()}.svg", lambda: drawer.draw(spec))
    for ident in sorted(set(_ID.findall(out)), key=len, reverse=True):
        out = (out.replace(f'id="{ident}"', f'id="{scope}-{ident}"')
               .replace(f"url(#{ident})", f"url(#{scope}-{ident})")
               .replace(f'href="#{ident}"', f'href="#{scope}-{ident}"'))
    return out


_CONFIG = alt.Config(background="white", font="sans-serif", view=alt.ViewConfig(stroke=None),
                     axis=alt.AxisConfig(labelFontSize=11, titleFontSize=11,
                                         gridColor="#eeeeee", labelLimit=260),
                     legend=alt.LegendConfig(labelFontSize=11, titleFontSize=11,
                                             labelLimit=260),
                     title=alt.TitleConfig(anchor="start", fontSize=13, subtitleFontSize=11,
                                           subtitleColor="#555555"))


def _finish(chart: Chart) -> Chart:
    """The page's look (white, sans-serif, light grid, titles at the start) on ``chart``,
    a chart the caller just built: set in place, one shared config."""
    chart.config = _CONFIG
    return chart


def _system_scale(inputs: ReportInputs, shown: list[str]) -> alt.Scale:
    """The same colour for a system on every plot."""
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(
        dict.fromkeys([*inputs.systems, *shown]))}
    return alt.Scale(domain=shown, range=[colors[s] for s in shown])


def _title(text: str, subtitle: str | None = None) -> alt.TitleParams:
    return alt.TitleParams(text, subtitle=subtitle) if subtitle else alt.TitleParams(text)


def _one(value: float, name: str = "x") -> pd.DataFrame:
    return pd.DataFrame({name: [float(value)]})


@plot("power", "What the query set could detect",
      "Per gate measure, the smallest true difference the comparison would detect "
      "(minimum detectable effect, at its α and power) against the number of queries, from "
      "the per-query differences' spread (the paired t plan); the dot is this query set, the "
      "dashed line the minimum consequential effect. Where the curve lies above the line at "
      "the dot, an inconclusive verdict says little.",
      "No MDE in the comparison (compare/comparison.json from an older compare stage).")
def power_curve(inputs: ReportInputs) -> Chart | None:
    rows = [r for r in (inputs.paired(m) for m in inputs.gate_measures())
            if r and r.sd and r.mde is not None and r.units >= 2]
    if not rows:
        return None
    top = max(4 * r.n for r in rows) + max(
        (r.needed_queries or 0) * 1.5 for r in rows)
    queries = np.unique(np.geomspace(max(2, min(r.n for r in rows) // 8), top, 60).round())
    curves = pd.concat([pd.DataFrame({
        S.MEASURE: r.measure, "queries": queries,
        "MDE": planning.curve(r.sd, r.n / r.units, r.alpha, r.power, queries)})
        for r in rows])
    here = pd.DataFrame([{S.MEASURE: r.measure, "queries": r.n, "MDE": r.mde}
                         for r in rows])
    effect = pd.DataFrame({"min_effect": sorted({float(r.min_effect) for r in rows})})
    color = alt.Color(f"{S.MEASURE}:N", title="measure")
    x = alt.X("queries:Q", scale=alt.Scale(type="log"), title="queries")
    line = alt.Chart(curves).mark_line().encode(x, alt.Y("MDE:Q", title="detectable Δ"), color)
    dots = alt.Chart(here).mark_point(filled=True, size=70).encode(
        x, alt.Y("MDE:Q"), color,
        tooltip=[S.MEASURE, "queries", alt.Tooltip("MDE:Q", format=".3f")])
    rule = alt.Chart(effect).mark_rule(strokeDash=[4, 3], color=GREY).encode(y="min_effect:Q")
    title = _title("Minimum detectable effect against queries",
                   f"power {number(rows[0].power, 'g')}, α {number(rows[0].alpha, 'g')}")
    return _finish((line + dots + rule).properties(width=WIDTH, height=240, title=title))


@plot("per_query_diff", "Per-query differences",
      "How far the candidate is from the baseline on each query, for the gate's measure; the "
      "line is the mean difference, the band its 95% confidence interval (the comparison's "
      "paired bootstrap), the dashed line no difference.",
      "No per-query differences of the gate's measure (compare/per_query_diff.parquet).")
def diff_distribution(inputs: ReportInputs) -> Chart | None:
    d = inputs.per_query_diff
    if d is None or d.empty:
        return None
    diff = d.loc[d[S.MEASURE] == inputs.measure, "diff"].to_numpy(float)
    diff = diff[~np.isnan(diff)]
    if not len(diff):
        return None
    # bins centred on multiples of the width: ties (difference 0) get a bar of their own
    lo, hi = float(diff.min()), float(diff.max())
    width = max(hi - lo, 1e-3) / 30
    first, last = np.floor(lo / width + 0.5), np.ceil(hi / width - 0.5)
    edges = (np.arange(first, last + 2) - 0.5) * width
    counts, _ = np.histogram(diff, bins=edges)
    bins = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "queries": counts,
                         "zero": np.zeros(len(counts))})
    paired = inputs.paired()
    mean = paired.mean_diff if paired else float(diff.mean())
    low, high = (paired.ci_low, paired.ci_high) if paired else (None, None)
    color = PALETTE[1]
    bars = alt.Chart(bins).mark_bar(color=PALETTE[0], opacity=0.85).encode(
        x=alt.X("start:Q", title=f"{inputs.measure}: {inputs.candidate} − {inputs.baseline}"),
        x2="end:Q", y=alt.Y("queries:Q", title="queries"), y2="zero:Q")
    layers = [bars]
    if low is not None and high is not None and not (np.isnan(low) or np.isnan(high)):
        band = pd.DataFrame({"low": [float(low)], "high": [float(high)]})
        layers.insert(0, alt.Chart(band).mark_rect(color=color, opacity=0.25).encode(
            x="low:Q", x2="high:Q"))
    layers += [alt.Chart(_one(0.0)).mark_rule(color=GREY, strokeDash=[4, 3]).encode(x="x:Q"),
               alt.Chart(_one(mean)).mark_rule(color=color, strokeWidth=2).encode(x="x:Q")]
    subtitle = (f"mean {number(mean, '+.4f')}, 95% CI {interval(low, high)}; "
                f"{number(len(diff), 'd')} queries with a defined difference")
    chart = alt.layer(*layers).properties(
        width=WIDTH, height=220,
        title=_title(f"{inputs.measure} per query, {inputs.candidate} − {inputs.baseline}",
                     subtitle))
    return _finish(chart)


@plot("slices", "Slices (forest plot)",
      "The mean difference with its 95% confidence interval on each slice, for the gate's "
      "measure; the colour is the verdict after Holm's correction over every slice test; "
      "slices too small to test are greyed; dashed lines: ± the minimum effect.",
      "No slices of the gate's measure (slices/slices.parquet).")
def forest(inputs: ReportInputs) -> Chart | None:
    s = inputs.slices
    if s is None or s.empty:
        return None
    s = s[s[S.MEASURE] == inputs.measure]
    if s.empty:
        return None
    name = np.where(s[S.DIMENSION] == S.ALL, S.ALL,
                    s[S.DIMENSION].astype(str) + "=" + s[S.SLICE].astype(str))
    small = s["too_small"].astype(bool).to_numpy()  # column
    rows = pd.DataFrame({
        "label": name + " (n=" + s["n"].astype(int).astype(str) + ")",  # column
        "mean_diff": s["mean_diff"].astype(float).to_numpy(),  # column
        "ci_low": s["ci_low"].astype(float).to_numpy(),  # column
        "ci_high": s["ci_high"].astype(float).to_numpy(),  # column
        "verdict": np.where(small, "too small", s["verdict"].astype(str)),  # column
        "small": small})
    order = rows["label"].tolist()  # column
    tested, untested = rows[~small & rows["mean_diff"].notna()], rows[small]  # column
    verdicts = list(dict.fromkeys([*VERDICT_COLORS, *rows["verdict"]]))  # column
    colors = alt.Scale(domain=verdicts, range=[VERDICT_COLORS.get(v, GREY) for v in verdicts])
    grey_labels = json.dumps(untested["label"].tolist())  # column
    y = alt.Y("label:N", sort=order, title=None,
              axis=alt.Axis(labelColor=alt.ExprRef(
                  f"indexof({grey_labels}, datum.value) >= 0 ? '{LIGHT}' : '#333333'")))
    effects = s["min_effect"].dropna() if "min_effect" in s else []  # column
    effect = float(effects.iloc[0]) if len(effects) else None
    layers = [alt.Chart(_one(0.0)).mark_rule(color=GREY).encode(x="x:Q")]
    if effect:
        layers.append(alt.Chart(pd.DataFrame({"x": [-effect, effect]})).mark_rule(
            color=LIGHT, strokeDash=[4, 3]).encode(x="x:Q"))
    layers += [
        alt.Chart(tested).mark_rule(strokeWidth=2).encode(
            x=alt.X("ci_low:Q", title=f"Δ {inputs.measure} ({inputs.candidate} − "
                                      f"{inputs.baseline}), 95% CI"),
            x2="ci_high:Q", y=y,
            color=alt.Color("verdict:N", scale=colors, title="verdict (Holm)")),
        alt.Chart(tested).mark_point(filled=True, size=70, opacity=1).encode(
            x="mean_diff:Q", y=y,
            color=alt.Color("verdict:N", scale=colors, title="verdict (Holm)"))]
    if len(untested):
        layers.append(alt.Chart(untested.assign(x=0.0)).mark_text(
            align="left", dx=6, color=LIGHT, fontStyle="italic",
            text=f"too small to test (n < {inputs.min_n})").encode(x="x:Q", y=y))
    chart = alt.layer(*layers).properties(
        width=WIDTH - 160, height=ROW * len(rows),
        title=_title(f"{inputs.measure} by slice",
                     f"{number(len(tested), 'd')} tested, {number(len(untested), 'd')} too "
                     f"small (n < {inputs.min_n})"))
    return _finish(chart)


@plot("family", "Many systems, ranked",
      "Each system's mean with its 95% bootstrap interval over the queries every system is "
      "defined on, best first; the letters are the groups: systems sharing a letter cannot "
      "be told apart at α after the family's correction.",
      "No family of systems (compare.systems).", section="family")
def family(inputs: ReportInputs) -> Chart | None:
    block = inputs.comparison.family if inputs.comparison else None
    if not block or not block.measures:
        return None
    f = next((m for m in block.measures if m.measure == inputs.measure),
             block.measures[0])
    rows = pd.DataFrame([{"system": r.system, "mean": r.mean, "ci_low": r.ci_low,
                          "ci_high": r.ci_high, "group": r.group,
                          "label": f"{r.system} ({r.group})"}
                         for r in f.leaderboard])
    order = rows["label"].tolist()  # column
    y = alt.Y("label:N", sort=order, title=None)
    color = alt.Color("group:N", title="group", scale=alt.Scale(range=list(PALETTE)))
    chart = alt.layer(
        alt.Chart(rows).mark_rule(strokeWidth=2).encode(
            x=alt.X("ci_low:Q", title=f"{f.measure} (mean, 95% CI)"), x2="ci_high:Q", y=y,
            color=color),
        alt.Chart(rows).mark_point(filled=True, size=70, opacity=1).encode(
            x="mean:Q", y=y, color=color)).properties(
        width=WIDTH - 160, height=ROW * len(rows),
        title=_title(f"{f.measure}: {len(rows)} systems over {f.n} queries",
                     f"{f.family}, {f.test}, {f.correction}"))
    return _finish(chart)


def _curve_chart(inputs: ReportInputs, families: tuple[str, ...], title: str,
                 subtitle: str) -> Chart | None:
    c = inputs.curves
    if c is None or c.empty:
        return None
    rows = c[c[FAMILY].isin(families) & c[S.VALUE].notna()]
    if rows.empty:
        return None
    rows = rows.assign(curve=rows[FAMILY] + "@k")[[S.SYSTEM, "curve", K, S.VALUE]]
    ks = sorted(rows[K].unique().tolist())
    shown = list(dict.fromkeys(rows[S.SYSTEM]))
    base = alt.Chart(rows).mark_line(point=True).encode(
        x=alt.X(f"{K}:Q", scale=alt.Scale(type="log"), axis=alt.Axis(values=ks, format="d"),
                title="k"),
        y=alt.Y(f"{S.VALUE}:Q", scale=alt.Scale(domain=[0, 1]), title="mean"),
        color=alt.Color(f"{S.SYSTEM}:N", scale=_system_scale(inputs, shown), title="system"))
    if len(families) > 1:
        chart = base.properties(width=(WIDTH - 20) // len(families), height=220).facet(
            column=alt.Column("curve:N", sort=[f + "@k" for f in families],
                              header=alt.Header(title=None, labelFontSize=12)),
            title=_title(title, subtitle))
    else:
        chart = base.properties(width=WIDTH - 100, height=220, title=_title(title, subtitle))
    return _finish(chart)


@plot("curves", "Recall and nDCG by cutoff",
      "R@k and nDCG@k of every system at each cutoff k up to the candidate budget: the mean "
      "over the evaluated queries (queries with no relevant document left out).",
      "No curves (evaluate/curves.parquet).")
def recall_ndcg_curves(inputs: ReportInputs) -> Chart | None:
    return _curve_chart(inputs, ("R", "nDCG"), "R@k and nDCG@k",
                        f"every system; k up to the budget of {inputs.summary.depth}")


@plot("judged", "Judged@k by depth",
      "The share of each system's top k that has a judgment: how far down the figures above "
      "can be trusted (unjudged is not irrelevant).",
      "No Judged@k curves (evaluate/curves.parquet).", modes=(RETRIEVAL,))
def judged_curves(inputs: ReportInputs) -> Chart | None:
    return _curve_chart(inputs, ("Judged",), "Judged@k by depth",
                        "share of the top k with a judgment of any grade")


@plot("automatic", "Systems under human and automatic labels",
      "Each system's mean under people's labels (x) and under the automatic judge's labels "
      "(y) on the held-out queries, one panel per measure: the two rankings. Points on a "
      "rising line keep their order; Kendall's τ and τ_AP with their CIs are in the panel "
      "titles and in the judging section.",
      "No automatic judge configured (judgments.automatic).", modes=(RETRIEVAL,))
def automatic_rankings(inputs: ReportInputs) -> Chart | None:
    doc = inputs.automatic
    if not doc or not doc.configured:
        return None
    panels = []
    for measure, x in doc.ranking.measures.items():
        frame = pd.DataFrame([r.model_dump() for r in x.rankings or []])
        if frame.empty:
            continue
        subtitle = f"τ {figure(x.tau)}, τ_AP {figure(x.tau_ap)}"
        base = alt.Chart(frame).encode(
            x=alt.X("mean_human:Q", title=f"{measure}, human labels",
                    scale=alt.Scale(zero=False)),
            y=alt.Y("mean_automatic:Q", title=f"{measure}, automatic labels",
                    scale=alt.Scale(zero=False)))
        shown = list(frame["system"])  # column
        points = base.mark_point(filled=True, size=70).encode(
            color=alt.Color("system:N", scale=_system_scale(inputs, shown), title="system"),
            tooltip=["system", "mean_human", "mean_automatic", "rank_human", "rank_automatic"])
        labels = base.mark_text(align="left", dx=6, fontSize=10).encode(text="system:N")
        panels.append((points + labels).properties(
            width=280, height=240, title=_title(measure, subtitle)))
    if not panels:
        return None
    return _finish(alt.hconcat(*panels).properties(
        title=_title("Systems under human and automatic labels",
                     f"{doc.systems.queries} held-out queries; labels: human (x) vs "
                     "automatic (y)")))


@plot("failures", "Failures by layer",
      "Each relevant document outside the top k, by the first layer that lost it: baseline "
      "against candidate.",
      "No failure counts (failures/failures.json).")
def failures_by_layer(inputs: ReportInputs) -> Chart | None:
    f = inputs.failures
    by_layer = f.by_layer if f else []
    if not by_layer:
        return None
    base, cand = f.baseline, f.candidate
    layers = [r.layer for r in by_layer]
    rows = pd.DataFrame([(r.layer, system, int(getattr(r, role)))
                         for r in by_layer for system, role in ((base, "baseline"),
                                                                (cand, "candidate"))],
                        columns=["layer", S.SYSTEM, "failures"])
    rows["label"] = rows["failures"].map(lambda n: number(n, "d"))  # column
    y = alt.Y("layer:N", sort=layers, title=None)
    color = alt.Color(f"{S.SYSTEM}:N", scale=_system_scale(inputs, [base, cand]),
                      title="system", sort=[base, cand])
    offset = alt.YOffset(f"{S.SYSTEM}:N", sort=[base, cand])
    bars = alt.Chart(rows).mark_bar().encode(
        x=alt.X("failures:Q", title="missed relevant documents"), y=y, yOffset=offset,
        color=color)
    text = alt.Chart(rows).mark_text(align="left", dx=3, fontSize=10, color="#333333").encode(
        x="failures:Q", y=y, yOffset=offset, text="label:N")
    chart = alt.layer(bars, text).properties(
        width=WIDTH - 140, height=2 * ROW * len(layers),
        title=_title(f"Failures by layer: {base} (baseline) vs {cand} (candidate)",
                     f"relevant documents outside the top {f.k}, "
                     f"{number(f.queries, 'd')} queries"))
    return _finish(chart)


def rank_bands(rank: pd.Series, top_k: int) -> tuple[list[str], np.ndarray]:
    """Rank bands (the top k first, then 20, 50, 100 and beyond) and each rank's band."""
    edges = [top_k, *(e for e in (20, 50, 100) if e > top_k)]
    starts = [1, *(e + 1 for e in edges[:-1])]
    names = [f"{a}–{b}" for a, b in zip(starts, edges, strict=True)] + [f">{edges[-1]}"]
    return names, np.searchsorted(np.asarray(edges), rank.to_numpy(), side="left")


@plot("safety", "Safety violations",
      "Every returned document the user must not see, by rule and by the rank it came at "
      "(every rank of every route's window counts; the first band is what users see).",
      "No safety violations in any system's window.")
def safety_violations(inputs: ReportInputs) -> Chart | None:
    v = inputs.violations
    if v is None or v.empty:
        return None
    top_k = int(inputs.safety.top_k)
    names, band = rank_bands(v[S.RANK], top_k)
    counts = (pd.DataFrame({S.SYSTEM: v[S.SYSTEM].astype(str).to_numpy(),
                            "rule": v[S.REASON].astype(str).to_numpy(),
                            "band": np.asarray(names, dtype=object)[band]})
              .groupby([S.SYSTEM, "rule", "band"], sort=True).size()
              .rename("violations").reset_index())
    rules = counts.groupby("rule")["violations"].sum().sort_values(  # column
        ascending=False, kind="stable").index.tolist()
    systems = [s for s in inputs.systems if s in set(counts[S.SYSTEM])] + sorted(
        set(counts[S.SYSTEM]) - set(inputs.systems))
    reds = dict(zip(names, ["#7f0000", "#c62828", "#ef6c00", "#f9a825", "#fdd835"],
                    strict=False))
    names = [n for n in names if n in set(counts["band"])]
    clean = [s for s in inputs.safety.systems if s not in set(counts[S.SYSTEM])]
    chart = alt.Chart(counts).mark_bar().encode(
        x=alt.X("sum(violations):Q", title="violations"),
        y=alt.Y("rule:N", sort=rules, title=None),
        color=alt.Color("band:N", scale=alt.Scale(domain=names, range=[reds[n] for n in names]),
                        title="rank band", sort=names),
        order=alt.Order("band_order:Q"),
    ).transform_calculate(
        band_order=f"indexof({json.dumps(names)}, datum.band)",
    ).properties(width=WIDTH - 200, height=ROW * len(rules)).facet(
        row=alt.Row(f"{S.SYSTEM}:N", sort=systems,
                    header=alt.Header(title=None, labelAngle=0, labelAlign="left",
                                      labelFontSize=12)),
        title=_title("Safety violations by rule and rank band",
                     f"{number(len(v), 'd')} violation(s); top k = {top_k}"
                     + (f"; none: {', '.join(clean)}" if clean else "")))
    return _finish(chart)


@plot("latency", "Latency per route",
      "Each system's latency percentiles per query (run_stats.json); a fused system's is the "
      "serial bound of its routes and the fusion.",
      "No latency figures in the systems' run stats.")
def latency(inputs: ReportInputs) -> Chart | None:
    rows = [(f"{s} ({stats.route})", pct, float(ms))
            for s, stats in inputs.stats.items()
            for pct, ms in stats.latency_ms.model_dump().items() if ms is not None]
    if not rows:
        return None
    frame = pd.DataFrame(rows, columns=["system", "percentile", "ms"])
    without = [s for s, stats in inputs.stats.items()
               if not any(v is not None for v in stats.latency_ms.model_dump().values())]
    frame["label"] = frame["ms"].map(lambda x: number(x, ".2f"))  # column
    order = list(dict.fromkeys(frame["system"]))  # column
    pcts = [p for p in ("p50", "p95", "p99") if p in set(frame["percentile"])]
    y = alt.Y("system:N", sort=order, title=None)
    offset = alt.YOffset("percentile:N", sort=pcts)
    color = alt.Color("percentile:N", sort=pcts, title="percentile",
                      scale=alt.Scale(domain=pcts,
                                      range=["#9ecae1", "#4292c6", "#08519c"][: len(pcts)]))
    bars = alt.Chart(frame).mark_bar().encode(x=alt.X("ms:Q", title="ms per query"), y=y,
                                              yOffset=offset, color=color)
    text = alt.Chart(frame).mark_text(align="left", dx=3, fontSize=10, color="#333333").encode(
        x="ms:Q", y=y, yOffset=offset, text="label:N")
    chart = alt.layer(bars, text).properties(
        width=WIDTH - 200, height=ROW * len(pcts) * len(order),
        title=_title("Latency percentiles per route", "ms per query" + (
            f"; no figures: {', '.join(without)}" if without else "")))
    return _finish(chart)


@plot("no_answer", "No-answer refusals",
      "On the queries with no answer, the share each system correctly refuses (an empty "
      "window or nothing above its threshold); on the answerable ones, the share it wrongly "
      "returns nothing for.",
      "No no-answer figures (safety/safety.json).", modes=(RETRIEVAL,))
def no_answer(inputs: ReportInputs) -> Chart | None:
    na = inputs.safety.no_answer if inputs.safety else {}
    kinds = ("correct refusals (no-answer queries)", "no result (answerable queries)")
    rows = [(s, kind, float(rate), f"{number(rate, '.1%')} ({number(hit, 'd')}/"
                                   f"{number(total, 'd')})")
            for s, a in na.items()
            for kind, rate, hit, total in (
                (kinds[0], a.correct_refusal_rate, a.correct_refusals,
                 a.no_answer_queries),
                (kinds[1], a.no_result_rate, a.no_result, a.answerable_queries))
            if rate is not None]
    if not rows:
        return None
    frame = pd.DataFrame(rows, columns=[S.SYSTEM, "rate of", "rate", "label"])
    order = list(dict.fromkeys(frame[S.SYSTEM]))
    y = alt.Y(f"{S.SYSTEM}:N", sort=order, title=None)
    offset = alt.YOffset("rate of:N", sort=list(kinds))
    color = alt.Color("rate of:N", sort=list(kinds), title=None,
                      scale=alt.Scale(domain=list(kinds), range=["#2f8f46", "#c62828"]),
                      legend=alt.Legend(orient="bottom", direction="vertical"))
    bars = alt.Chart(frame).mark_bar().encode(
        x=alt.X("rate:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"),
                title=None),
        y=y, yOffset=offset, color=color)
    text = alt.Chart(frame).mark_text(align="left", dx=3, fontSize=10, color="#333333").encode(
        x="rate:Q", y=y, yOffset=offset, text="label:N")
    chart = alt.layer(bars, text).properties(
        width=WIDTH - 200, height=2 * ROW * len(order),
        title=_title("No-answer refusal rates per system",
                     f"{number(next(iter(na.values())).no_answer_queries, 'd')} "
                     "no-answer queries, outside the relevance means"))
    return _finish(chart)


BINNINGS = {"width": "equal-width bins", "mass": "equal-mass bins"}


@plot("reliability", "Reliability diagram",
      "Each system that emits probabilities: its predictions binned by predicted probability "
      "(equal-width bins, and equal-mass bins of as many predictions each), the mean "
      "predicted probability against the observed share bought in each bin; a calibrated "
      "system lies on the dashed diagonal. A system without probabilities is not drawn (its "
      "calibration measures are n/a).",
      "No system emits probabilities: there is nothing to calibrate "
      "(evaluate/reliability.parquet).", modes=(RECOMMENDATION,))
def reliability(inputs: ReportInputs) -> Chart | None:
    r = inputs.reliability
    if r is None or r.empty:
        return None
    r = r[(r["n"] > 0) & r["mean_predicted"].notna() & r["observed"].notna()]  # column
    if r.empty:
        return None
    rows = r.assign(**{S.SYSTEM: r[S.SYSTEM].astype(str)})[
        [S.SYSTEM, "binning", "bin", "n", "mean_predicted", "observed"]]
    shown = [s for s in inputs.systems if s in set(rows[S.SYSTEM])] + sorted(
        set(rows[S.SYSTEM]) - set(inputs.systems))
    unit = alt.Scale(domain=[0, 1])
    diagonal = pd.DataFrame({"mean_predicted": [0.0, 1.0], "observed": [0.0, 1.0]})
    charts = []
    for binning, title in BINNINGS.items():
        part = rows[rows["binning"] == binning]
        if part.empty:
            continue
        line = alt.Chart(diagonal).mark_line(color=GREY, strokeDash=[4, 3]).encode(
            x=alt.X("mean_predicted:Q", scale=unit, title="mean predicted probability"),
            y=alt.Y("observed:Q", scale=unit, title="observed share bought"))
        curves = alt.Chart(part).mark_line(point=True).encode(
            x="mean_predicted:Q", y="observed:Q", order=alt.Order("bin:Q"),
            color=alt.Color(f"{S.SYSTEM}:N", scale=_system_scale(inputs, shown),
                            title="system"))
        charts.append(alt.layer(line, curves).properties(
            width=(WIDTH - 160) // 2, height=(WIDTH - 160) // 2, title=title))
    if not charts:
        return None
    without = [s for s in inputs.summary.systems if s not in shown]
    chart = alt.hconcat(*charts).properties(title=_title(
        "Reliability: predicted probability against observed share",
        f"{number(len(shown), 'd')} system(s) with probabilities"
        + (f"; none: {', '.join(without)}" if without else "")))
    return _finish(chart)


@plot("horizons", "The gain at each horizon",
      "For each compared measure, the candidate's mean difference from the baseline with its "
      "95% confidence interval (paired bootstrap over users) when the positives are the "
      "purchases within each horizon of recommend.horizons_days; the colour is the verdict; "
      "a gain that shrinks as the horizon grows by more than the minimum effect is flagged "
      "as a novelty effect.",
      "No further horizons (recommend.horizons_days).", modes=(RECOMMENDATION,))
def horizons(inputs: ReportInputs) -> Chart | None:
    block = inputs.comparison.horizons
    if not block or not block.rows:
        return None
    rows = pd.DataFrame([r.model_dump() for r in block.rows]).dropna(subset=["delta"])
    if rows.empty:
        return None
    rows = rows.assign(days=rows["horizon_days"].astype(str) + " days",  # column
                       label=[f"{number(d, '+.4f')} {interval(lo, hi)}" for d, lo, hi in zip(
                           rows["delta"], rows["ci_low"], rows["ci_high"], strict=True)])  # column
    order = [f"{d} days" for d in block.days]
    verdicts = list(dict.fromkeys([*VERDICT_COLORS, *rows["verdict"]]))  # column
    colors = alt.Scale(domain=verdicts, range=[VERDICT_COLORS.get(v, GREY) for v in verdicts])
    x = alt.X("days:N", sort=order, title="horizon", axis=alt.Axis(labelAngle=0))
    color = alt.Color("verdict:N", scale=colors, title="verdict (Holm)")
    base = alt.Chart(rows)
    layer = alt.layer(
        alt.Chart(rows).mark_rule(color=GREY).encode(y=alt.datum(0)),
        base.mark_rule(strokeWidth=2).encode(
            x=x, y=alt.Y("ci_low:Q", title=f"Δ ({inputs.candidate} − {inputs.baseline}), "
                                           "95% CI"), y2="ci_high:Q", color=color),
        base.mark_point(filled=True, size=70, opacity=1).encode(x=x, y="delta:Q", color=color,
                                                                tooltip=["label:N"]))
    flagged = [f.measure for f in block.novelty if f.novelty]
    chart = layer.properties(width=160, height=200).facet(
        column=alt.Column("measure:N", sort=list(dict.fromkeys(rows["measure"])),  # column
                          header=alt.Header(title=None, labelFontSize=12)),
        title=_title("The candidate's gain by horizon",
                     "novelty effect: " + (", ".join(flagged) if flagged else "none"))
    ).resolve_scale(y="independent")  # each measure on its own scale
    return _finish(chart)


OFFPOLICY_ABSENT = "No off-policy evaluation (offpolicy.log is not set)."


@plot("offpolicy_estimates", "Off-policy estimates",
      "The candidate policy's value by each estimator over every position, with its "
      "bootstrap CI; the solid line is the logging policy's own on-policy value, the dashed "
      "line the reference log's (the candidate policy deployed: the ground truth).",
      OFFPOLICY_ABSENT, section="offpolicy")
def offpolicy_estimates(inputs: ReportInputs) -> Chart | None:
    e = inputs.offpolicy_estimates
    if e is None or e.empty:
        return None
    points = e[(e["kind"] == "estimate") & (e["position"] == "all")]  # column
    lines = e[e["kind"] != "estimate"].assign(  # column
        line=lambda f: f["kind"].map({"on_policy": "on-policy (logged)",  # column
                                      "reference": "reference (deployed)"}))
    order = points["estimator"].tolist()  # column
    y = alt.Y("estimator:N", sort=order, title=None)
    x = alt.X("value:Q", title="policy value (mean reward per impression)",
              scale=alt.Scale(zero=False))
    bars = alt.Chart(points).mark_rule(strokeWidth=2).encode(y=y, x="ci_low:Q", x2="ci_high:Q")
    dots = alt.Chart(points).mark_point(filled=True, size=70).encode(
        y=y, x=x, tooltip=["estimator", alt.Tooltip("value:Q", format=".4f"),
                           alt.Tooltip("ci_low:Q", format=".4f"),
                           alt.Tooltip("ci_high:Q", format=".4f"), "n"])
    rules = alt.Chart(lines).mark_rule(strokeWidth=1.5).encode(
        x="value:Q", color=alt.Color("line:N", title=None, legend=alt.Legend(orient="bottom"),
                                     scale=alt.Scale(range=[GREY, PALETTE[3]])),
        strokeDash=alt.StrokeDash("line:N", title=None, legend=alt.Legend(orient="bottom"),
                                  scale=alt.Scale(range=[[1, 0], [5, 3]])))
    chart = alt.layer(bars, dots, rules).properties(
        width=WIDTH - 180, height=ROW * 2 * len(order),
        title=_title("The candidate policy's estimated value",
                     ", ".join(f"{r['line']} {number(r['value'], '.4f')}"  # column
                               for _, r in lines.iterrows())))
    return _finish(chart)


@plot("offpolicy_weights", "Importance weights",
      "How many logged rows carry each importance weight π_candidate / π_logger (log scale; "
      "rows the candidate never takes have weight 0, counted in the subtitle): a long right "
      "tail means a few rows carry the estimate, and the effective sample size is small.",
      OFFPOLICY_ABSENT, section="offpolicy")
def offpolicy_weights(inputs: ReportInputs) -> Chart | None:
    w = inputs.offpolicy_weights
    if w is None or w.empty or not (w["high"] > 0).any():
        return None
    bins = w[w["high"] > 0]
    zero = int(w.loc[w["high"] == 0, "rows"].sum())
    chart = alt.Chart(bins).mark_bar(color=PALETTE[0]).encode(
        x=alt.X("low:Q", scale=alt.Scale(type="log"), title="importance weight"),
        x2="high:Q", y=alt.Y("rows:Q", title="logged rows"), y2=alt.datum(0),
        tooltip=[alt.Tooltip("low:Q", format=".3g"), alt.Tooltip("high:Q", format=".3g"),
                 "rows"]).properties(
        width=WIDTH - 100, height=200,
        title=_title("Importance weights of the logged rows",
                     f"{number(int(w['rows'].sum()), ',d')} rows; weight 0: "  # column
                     f"{number(zero, ',d')}"))
    return _finish(chart)


def history_chart(inputs: ReportInputs, measure: str) -> Chart | None:
    """The history section's chart of ``measure`` over the runs of the page's lineage
    (``releval.report.history.own``) kept in the ledger: the mean of baseline and candidate
    on the live window (solid) and on the pinned fixture (dashed) with their 95% CI bands,
    the gate's decision marked on the candidate's live line; x: the lineage's runs that have
    a mean of ``measure``, by their place in the ledger, labelled with the finish time. None
    with fewer than two readable runs or no mean of ``measure``."""
    rows = history.own(inputs.history or [], inputs.receipt)[0]
    data = history.points(rows, measure)
    if history.too_few(rows) or data.empty:
        return None
    runs = sorted({int(r) for r in data["run"]})  # column
    times = json.dumps({str(i): history.finished(r)[5:] for i, r in history.kept(rows)
                        if i in runs})  # MM-DD HH:MM
    x = alt.X("run:O", scale=alt.Scale(domain=runs), sort=runs,
              title="run (ledger order; finished, UTC)",
              axis=alt.Axis(grid=False, labelOverlap=True, labelAngle=0,
                            labelExpr=f"['#' + datum.value, {times}[datum.value]]"))
    y = alt.Y("mean:Q", scale=alt.Scale(zero=False), title=f"{measure}, mean")
    color = alt.Color("system:N", title="system",
                      scale=_system_scale(inputs, list(dict.fromkeys(data["system"]))),  # column
                      legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2,
                                        symbolOpacity=1))
    dash = alt.StrokeDash("instrument:N", title=None, scale=alt.Scale(
        domain=[history.LIVE, history.FIXTURE], range=[[1, 0], [6, 4]]))
    banded = data.dropna(subset=["ci_low", "ci_high"])
    layers = [alt.Chart(banded).mark_area(opacity=0.12).encode(
        x=x, y=alt.Y("ci_low:Q", title=f"{measure}, mean"), y2="ci_high:Q", color=color,
        detail="series:N")] if len(banded) else []
    layers += [alt.Chart(data).mark_line(strokeWidth=2).encode(
                   x=x, y=y, color=color, strokeDash=dash, detail="series:N"),
               alt.Chart(data).mark_point(filled=True, size=30, opacity=1).encode(
                   x=x, y=y, color=color, detail="series:N")]
    gate = data[(data["role"] == "candidate") & (data["instrument"] == history.LIVE)]
    if len(gate):
        decided = list(dict.fromkeys([*history.DECISION_COLORS, *gate["decision"]]))  # column
        fill = alt.Fill("decision:N", title="gate (candidate, live)", scale=alt.Scale(
            domain=decided, range=[history.DECISION_COLORS.get(d, GREY) for d in decided]))
        layers.append(alt.Chart(gate).mark_point(
            filled=True, size=90, shape="circle", stroke="white", strokeWidth=1, opacity=1)
            .encode(x=x, y=y, fill=fill))
    last = history.newest(rows)
    chart = alt.layer(*layers).properties(
        width=WIDTH - 140, height=220,
        title=_title(f"{measure} over the kept runs",
                     f"{number(len(runs), 'd')} runs; newest: baseline "
                     f"{last.baseline}, candidate {last.candidate}"))
    return _finish(chart)
