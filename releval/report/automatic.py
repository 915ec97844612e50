"""The report's automatic judgments (autojudge/agreement_auto.json): the section of the page's
judging part, and the one line of summary.md and of decision.md. Every figure names the
labels it used (human, automatic, or both with the share of each). Without an automatic
judge the pages' lines are left out and the section says none is configured."""

from __future__ import annotations

from releval.report.formats import interval, markdown_table, number

NONE = "no automatic judge configured (judgments.automatic)"


def figure(f: dict | None, spec: str = ".3f") -> str:
    """"0.412 [0.351, 0.470]" (value and CI), "undefined" when there is no value."""
    if not f or f.get("value") is None:
        return "undefined"
    undefined = f.get("undefined_resamples") or 0
    return (f"{number(f['value'], spec)} {interval(f.get('ci_low'), f.get('ci_high'), spec)}"
            + (f" ({undefined:,} resamples undefined, left out)" if undefined else ""))


def _judge(doc: dict) -> str:
    j = doc["judge"]
    kind = ", built-in" if j["kind"] == "built-in" else ""
    return f"{j['name']} ({j.get('model') or 'model not named'}{kind})"


def configured(doc: dict | None) -> bool:
    return bool(doc and doc.get("configured"))


def headline(doc: dict) -> str:
    """summary.md's line: the judge, κ and α on the held-out pairs, τ and τ_AP of the first
    measure's rankings."""
    a, ranking = doc["agreement"], doc["ranking"]["measures"]
    first = next((m for m, x in ranking.items() if "tau" in x), None)
    taus = (f"; {first} rankings of {ranking[first]['systems']} systems, human vs automatic "
            f"labels: τ {figure(ranking[first]['tau'])}, τ_AP {figure(ranking[first]['tau_ap'])}"
            if first else "")
    return (f"Automatic judgments: {_judge(doc)} on {a['pairs']:,} held-out pairs: quadratic κ "
            f"{figure(a['kappa']['quadratic'])}, ordinal α {figure(a['alpha']['ordinal'])}"
            f"{taus}; {doc['holes']['filled']:,} holes filled.")


def decision_line(doc: dict, decision: dict) -> str:
    """decision.md's line: which labels the gate read."""
    if decision.get("intervals"):
        return f"Labels: {decision['intervals']}; every other figure reads human labels."
    return (f"Labels: the gate read human labels only (judgments.automatic.gate human); the "
            f"automatic judge {_judge(doc)} is validated in the report's judging section.")


def _agreement(doc: dict) -> list[str]:
    a = doc["agreement"]
    rows = [["Cohen's κ, linear", figure(a["kappa"]["linear"])],
            ["Cohen's κ, quadratic", figure(a["kappa"]["quadratic"])],
            ["Krippendorff's α, ordinal", figure(a["alpha"]["ordinal"])],
            ["Krippendorff's α, interval", figure(a["alpha"]["interval"])],
            ["exact agreement", number(a["exact"], ".3f")],
            ["mean grade difference (automatic − human)", number(a["mean_difference"], "+.3f")]]
    c = a["confusion"]
    confusion = [[f"human {g}", *map(str, row)] for g, row in zip(c["grades"], c["counts"],
                                                                  strict=True)]
    q = a["per_query"]
    quartiles = ", ".join(number(v, ".3f") for v in q["quartiles"]) or "none"
    return ["", f"### Agreement with people ({a['on']}: {a['pairs']:,} pairs, "
                f"{a['queries']:,} queries; {int(100 * (1 - a['ci_alpha']))}% bootstrap CIs "
                "over queries)", "",
            *markdown_table(["figure", "value [CI]"], rows), "",
            "Confusion (rows: human grade, columns: automatic grade):", "",
            *markdown_table(["", *(f"auto {g}" for g in c["grades"])], confusion), "",
            f"Per query, {q['figure']}: quartiles {quartiles} ({q['undefined']} queries "
            "undefined: one grade only)."]


def _ranking(doc: dict) -> list[str]:
    r, systems = doc["ranking"], doc["systems"]
    lines = ["", f"### The systems under human and automatic labels ({r['on']}, "
                 f"{systems['queries']:,} queries)", ""]
    rows = [[m, str(x["systems"]), figure(x.get("tau")), figure(x.get("tau_ap")),
             str(len(x.get("flips", []))),
             _note(x)]
            for m, x in r["measures"].items()]
    lines += markdown_table(["measure", "systems", "Kendall's τ [CI]", "τ_AP [CI]",
                             "flipped pairs", "note"], rows)
    for measure, x in r["measures"].items():
        if "rankings" not in x:
            continue
        table = [[row["system"], number(row["mean_human"], ".4f"), str(row["rank_human"]),
                  number(row["mean_automatic"], ".4f"), str(row["rank_automatic"])]
                 for row in x["rankings"]]
        lines += ["", f"{measure}:", "", *markdown_table(
            ["system", "human labels", "rank", "automatic labels", "rank"], table)]
        lines += [f"- flip ({f['flip']}): {f['system_b']} − {f['system_a']}: human "
                  f"{number(f['diff_human'], '+.4f')} "
                  f"{interval(f['ci_low_human'], f['ci_high_human'])}, automatic "
                  f"{number(f['diff_automatic'], '+.4f')} "
                  f"{interval(f['ci_low_automatic'], f['ci_high_automatic'])}"
                  for f in x["flips"]]
    return lines


def _note(ranking: dict) -> str:
    """Why a ranking is undefined, and the systems left out of it (undefined under a label
    set)."""
    left = ", ".join(ranking.get("left_out", []))
    return "; ".join(filter(None, [ranking.get("undefined"),
                                   left and f"left out (undefined): {left}"]))


def _ppi(doc: dict) -> list[str]:
    p = doc["ppi"]
    rows = []
    for measure, by_system in p["measures"].items():
        for system, f in by_system.items():
            if "undefined" in f:
                rows.append([measure, system, f["undefined"], "—", "—",
                             number(f["heldout_human"], ".4f"), "—"])
                continue
            rows.append([measure, system, _interval(f["human_only"]), _interval(f["ppi"]),
                         _interval(f["automatic_only"]), number(f["heldout_human"], ".4f"),
                         f"{f['n_labelled']} + {f['n_unlabelled']}"])
    return ["", "### Prediction-powered intervals", "",
            f"PPI (λ = 1): {p['labelled']} correct the automatic labels' bias on "
            f"{p['unlabelled']}; human only: the same validation queries alone; automatic "
            "only: every judged query under automatic labels (trusts the judge); held-out "
            "human: the mean under people's labels on the queries PPI did not read.", "",
            *markdown_table(["measure", "system", "human only (validation)", "PPI",
                             "automatic only", "held-out human", "n + N"], rows)]


def _interval(f: dict) -> str:
    """"0.4120 [0.3510, 0.4700]", marked where the interval was clipped to the measure's
    range."""
    return (f"{number(f['estimate'], '.4f')} {interval(f['ci_low'], f['ci_high'], '.4f')}"
            + (" (clipped to [{:g}, {:g}])".format(*f["bounds"]) if f.get("clipped") else ""))


def _labels(doc: dict) -> list[str]:
    j, s, labels = doc["judge"], doc["sample"], doc["labels"]
    rows = [[name, str(x["human"]), str(x["automatic"]), number(x["automatic_share"], ".1%"),
             x["describes"]] for name, x in labels.items()]
    judged = doc["judged"]
    sets = list(labels)
    jrows = [[system, *(number(v.get(name), ".3f") for name in sets)]
             for system, v in judged["systems"].items()]
    thresholds = (f" Grade thresholds on the similarity: "
                  f"{', '.join(number(t, '.3f') for t in j['thresholds'])}."
                  if j.get("thresholds") else "")
    return [f"Judge: {_judge(doc)}.{thresholds} " + (j.get("weak") or ""),
            f"Validation sample: {s['validation']} of {s['judged']} judged queries "
            f"(share {s['validation_share']:g}, seed {s['seed']}); held out: {s['heldout']} "
            f"queries whose human labels are the ground truth only. Pairs: "
            + ", ".join(f"{k} {v:,}" for k, v in s["pairs"].items()) + ".",
            f"Holes filled: {doc['holes']['filled']:,} pooled pairs nobody judged, on "
            f"{doc['holes']['queries']:,} queries ({doc['holes']['relevant']:,} labelled "
            "relevant), counted apart: only the label set both reads them.", "",
            *markdown_table(["labels", "human pairs", "automatic pairs", "automatic share",
                             "what"], rows), "",
            f"{judged['measure']} per system under each label set:", "",
            *markdown_table(["system", *sets], jrows)]


def lines(doc: dict | None) -> list[str]:
    """The judging section's automatic part (markdown)."""
    if not configured(doc):
        return ["## Automatic judgments", "", f"{NONE[0].upper()}{NONE[1:]}."]
    return ["## Automatic judgments", "", *_labels(doc), *_agreement(doc), *_ranking(doc),
            "", "The plot “Systems under human and automatic labels” (Plots) draws the two "
            "rankings.", *_ppi(doc)]
