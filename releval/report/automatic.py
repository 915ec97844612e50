"""The report's automatic judgments (autojudge/agreement_auto.json): the section of the page's
judging part, and the one line of summary.md and of decision.md. Every figure names the
labels it used (human, automatic, or both with the share of each). Without an automatic
judge the pages' lines are left out and the section says none is configured."""

from __future__ import annotations

from releval.documents.agreement_auto import AgreementAuto
from releval.documents.decision import Decision
from releval.judging.automatic import unmatched_note
from releval.report.formats import interval, markdown_table, number

NONE = "no automatic judge configured (judgments.automatic)"


def figure(f: dict | None, spec: str = ".3f") -> str:
    """"0.412 [0.351, 0.470]" (value and CI), "undefined" when there is no value."""
    if not f or f.get("value") is None:  # untyped
        return "undefined"
    undefined = f.get("undefined_resamples") or 0
    low, high = f.get("ci_low"), f.get("ci_high")  # untyped
    return (f"{number(f['value'], spec)} {interval(low, high, spec)}"  # untyped
            + (f" ({undefined:,} resamples undefined, left out)" if undefined else ""))


def _judge(doc: AgreementAuto) -> str:
    j = doc.judge
    kind = ", built-in" if j["kind"] == "built-in" else ""  # untyped
    return f"{j['name']} ({j.get('model') or 'model not named'}{kind})"  # untyped


def configured(doc: AgreementAuto | None) -> bool:
    return bool(doc and doc.configured)


def headline(doc: AgreementAuto) -> str:
    """summary.md's line: the judge, κ and α on the held-out pairs, τ and τ_AP of the first
    measure's rankings."""
    a, ranking = doc.agreement, doc.ranking["measures"]  # untyped
    first = next((m for m, x in ranking.items() if "tau" in x), None)
    x = ranking[first] if first else {}
    taus = (f"; {first} rankings of {x['systems']} systems, human vs automatic "  # untyped
            f"labels: τ {figure(x['tau'])}, τ_AP {figure(x['tau_ap'])}"  # untyped
            if first else "")
    kappa, alpha = a["kappa"]["quadratic"], a["alpha"]["ordinal"]  # untyped
    return (f"Automatic judgments: {_judge(doc)} on {a['pairs']:,} held-out pairs: "  # untyped
            f"quadratic κ {figure(kappa)}, ordinal α {figure(alpha)}"
            f"{taus}; {doc.holes['filled']:,} holes filled.")  # untyped


def decision_line(doc: AgreementAuto, decision: Decision) -> str:
    """decision.md's line: which labels the gate read."""
    if decision.intervals:
        return f"Labels: {decision.intervals}; every other figure reads human labels."
    return (f"Labels: the gate read human labels only (judgments.automatic.gate human); the "
            f"automatic judge {_judge(doc)} is validated in the report's judging section.")


def _agreement(doc: AgreementAuto) -> list[str]:
    a = doc.agreement
    rows = [["Cohen's κ, linear", figure(a["kappa"]["linear"])],  # untyped
            ["Cohen's κ, quadratic", figure(a["kappa"]["quadratic"])],  # untyped
            ["Krippendorff's α, ordinal", figure(a["alpha"]["ordinal"])],  # untyped
            ["Krippendorff's α, interval", figure(a["alpha"]["interval"])],  # untyped
            ["exact agreement", number(a["exact"], ".3f")],
            ["mean grade difference (automatic − human)", number(a["mean_difference"], "+.3f")]]
    c = a["confusion"]  # untyped
    grades, counts = c["grades"], c["counts"]  # untyped
    confusion = [[f"human {g}", *map(str, row)] for g, row in zip(grades, counts, strict=True)]
    q = a["per_query"]
    quartiles = ", ".join(number(v, ".3f") for v in q["quartiles"]) or "none"
    return ["", f"### Agreement with people ({a['on']}: {a['pairs']:,} pairs, "  # untyped
                f"{a['queries']:,} queries; "  # untyped
                f"{int(100 * (1 - a['ci_alpha']))}% bootstrap CIs "  # untyped
                "over queries)", "",
            *markdown_table(["figure", "value [CI]"], rows), "",
            "Confusion (rows: human grade, columns: automatic grade):", "",
            *markdown_table(["", *(f"auto {g}" for g in c["grades"])], confusion), "",  # untyped
            f"Per query, {q['figure']}: quartiles {quartiles} ({q['undefined']} queries "  # untyped
            "undefined: one grade only)."]


def _ranking(doc: AgreementAuto) -> list[str]:
    r, systems = doc.ranking, doc.systems
    lines = ["", f"### The systems under human and automatic labels ({r['on']}, "
                 f"{systems['queries']:,} queries)", ""]  # untyped
    rows = [[m, str(x["systems"]), figure(x.get("tau")), figure(x.get("tau_ap")),  # untyped
             str(len(x.get("flips", []))),
             _note(x)]
            for m, x in r["measures"].items()]  # untyped
    lines += markdown_table(["measure", "systems", "Kendall's τ [CI]", "τ_AP [CI]",
                             "flipped pairs", "note"], rows)
    for measure, x in r["measures"].items():  # untyped
        if "rankings" not in x:
            continue
        table = [[row["system"], number(row["mean_human"], ".4f"),  # untyped
                  str(row["rank_human"]),  # untyped
                  number(row["mean_automatic"], ".4f"), str(row["rank_automatic"])]  # untyped
                 for row in x["rankings"]]  # untyped
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
    left = ", ".join(ranking.get("left_out", []))  # untyped
    return "; ".join(filter(None, [ranking.get("undefined"),  # untyped
                                   left and f"left out (undefined): {left}"]))


def _ppi(doc: AgreementAuto) -> list[str]:
    p = doc.ppi
    rows = []
    for measure, by_system in p["measures"].items():  # untyped
        for system, f in by_system.items():
            if "undefined" in f:
                rows.append([measure, system, f["undefined"], "—", "—",  # untyped
                             number(f["heldout_human"], ".4f"), "—"])
                continue
            rows.append([measure, system, _interval(f["human_only"]),  # untyped
                         _interval(f["ppi"]), _interval(f["automatic_only"]),  # untyped
                         number(f["heldout_human"], ".4f"),  # untyped
                         f"{f['n_labelled']} + {f['n_unlabelled']}"])  # untyped
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
    low, high = f["ci_low"], f["ci_high"]  # untyped
    return (f"{number(f['estimate'], '.4f')} {interval(low, high, '.4f')}"  # untyped
            + (" (clipped to [{:g}, {:g}])".format(*f["bounds"]) if f.get("clipped") else ""))


def _labels(doc: AgreementAuto) -> list[str]:
    j, s, labels = doc.judge, doc.sample, doc.labels
    rows = [[name, str(x["human"]), str(x["automatic"]), number(x["automatic_share"], ".1%"),
             x["describes"]] for name, x in labels.items()]
    judged = doc.judged
    sets = list(labels)
    jrows = [[system, *(number(v.get(name), ".3f") for name in sets)]
             for system, v in judged["systems"].items()]  # untyped
    thresholds = (f" Grade thresholds on the similarity: "
                  f"{', '.join(number(t, '.3f') for t in j['thresholds'])}."
                  if j.get("thresholds") else "")
    unmatched = unmatched_note(j.get("unmatched") or {})  # untyped
    return [f"Judge: {_judge(doc)}.{thresholds} " + (j.get("weak") or "")
            + (f" Labels file: {unmatched}." if unmatched else ""),
            f"Validation sample: {s['validation']} of {s['judged']} judged queries "  # untyped
            f"(share {s['validation_share']:g}, seed {s['seed']}); "  # untyped
            f"held out: {s['heldout']} "  # untyped
            f"queries whose human labels are the ground truth only. Pairs: "
            + ", ".join(f"{k} {v:,}" for k, v in s["pairs"].items()) + ".",  # untyped
            f"Holes filled: {doc.holes['filled']:,} pooled pairs nobody judged, on "
            f"{doc.holes['queries']:,} queries ({doc.holes['relevant']:,} labelled "  # untyped
            "relevant), counted apart: only the label set both reads them.", "",
            *markdown_table(["labels", "human pairs", "automatic pairs", "automatic share",
                             "what"], rows), "",
            f"{judged['measure']} per system under each label set:", "",  # untyped
            *markdown_table(["system", *sets], jrows)]


def lines(doc: AgreementAuto | None) -> list[str]:
    """The judging section's automatic part (markdown)."""
    if not configured(doc):
        return ["## Automatic judgments", "", f"{NONE[0].upper()}{NONE[1:]}."]
    return ["## Automatic judgments", "", *_labels(doc), *_agreement(doc), *_ranking(doc),
            "", "The plot “Systems under human and automatic labels” (Plots) draws the two "
            "rankings.", *_ppi(doc)]
