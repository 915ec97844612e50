"""The report's automatic judgments (autojudge/agreement_auto.json): the section of the page's
judging part, and the one line of summary.md and of decision.md. Every figure names the
labels it used (human, automatic, or both with the share of each). Without an automatic
judge the pages' lines are left out and the section says none is configured."""

from __future__ import annotations

from releval.documents.agreement_auto import AgreementAuto, Figure, Interval, MeasureRanking
from releval.documents.decision import Decision
from releval.judging.automatic import unmatched_note
from releval.report.formats import interval, markdown_table, number

NONE = "no automatic judge configured (judgments.automatic)"


def figure(f: Figure | None, spec: str = ".3f") -> str:
    """"0.412 [0.351, 0.470]" (value and CI), "undefined" when there is no value."""
    if f is None or f.value is None:
        return "undefined"
    undefined = f.undefined_resamples or 0
    return (f"{number(f.value, spec)} {interval(f.ci_low, f.ci_high, spec)}"
            + (f" ({undefined:,} resamples undefined, left out)" if undefined else ""))


def _judge(doc: AgreementAuto) -> str:
    j = doc.judge
    kind = ", built-in" if j.kind == "built-in" else ""
    return f"{j.name} ({j.model or 'model not named'}{kind})"


def configured(doc: AgreementAuto | None) -> bool:
    return bool(doc and doc.configured)


def headline(doc: AgreementAuto) -> str:
    """summary.md's line: the judge, κ and α on the held-out pairs, τ and τ_AP of the first
    measure's rankings."""
    a, ranking = doc.agreement, doc.ranking.measures
    first = next((m for m, x in ranking.items() if x.tau is not None), None)
    x = ranking[first] if first else None
    taus = (f"; {first} rankings of {x.systems} systems, human vs automatic "
            f"labels: τ {figure(x.tau)}, τ_AP {figure(x.tau_ap)}"
            if first else "")
    kappa, alpha = a.kappa.quadratic, a.alpha.ordinal
    return (f"Automatic judgments: {_judge(doc)} on {a.pairs:,} held-out pairs: "
            f"quadratic κ {figure(kappa)}, ordinal α {figure(alpha)}"
            f"{taus}; {doc.holes.filled:,} holes filled.")


def decision_line(doc: AgreementAuto, decision: Decision) -> str:
    """decision.md's line: which labels the gate read."""
    if decision.intervals:
        return f"Labels: {decision.intervals}; every other figure reads human labels."
    return (f"Labels: the gate read human labels only (judgments.automatic.gate human); the "
            f"automatic judge {_judge(doc)} is validated in the report's judging section.")


def _agreement(doc: AgreementAuto) -> list[str]:
    a = doc.agreement
    rows = [["Cohen's κ, linear", figure(a.kappa.linear)],
            ["Cohen's κ, quadratic", figure(a.kappa.quadratic)],
            ["Krippendorff's α, ordinal", figure(a.alpha.ordinal)],
            ["Krippendorff's α, interval", figure(a.alpha.interval)],
            ["exact agreement", number(a.exact, ".3f")],
            ["mean grade difference (automatic − human)", number(a.mean_difference, "+.3f")]]
    c = a.confusion
    confusion = [[f"human {g}", *map(str, row)]
                 for g, row in zip(c.grades, c.counts, strict=True)]
    q = a.per_query
    quartiles = ", ".join(number(v, ".3f") for v in q.quartiles) or "none"
    return ["", f"### Agreement with people ({a.on}: {a.pairs:,} pairs, "
                f"{a.queries:,} queries; "
                f"{int(100 * (1 - a.ci_alpha))}% bootstrap CIs "
                "over queries)", "",
            *markdown_table(["figure", "value [CI]"], rows), "",
            "Confusion (rows: human grade, columns: automatic grade):", "",
            *markdown_table(["", *(f"auto {g}" for g in c.grades)], confusion), "",
            f"Per query, {q.figure}: quartiles {quartiles} ({q.undefined} queries "
            "undefined: one grade only)."]


def _ranking(doc: AgreementAuto) -> list[str]:
    r, systems = doc.ranking, doc.systems
    lines = ["", f"### The systems under human and automatic labels ({r.on}, "
                 f"{systems.queries:,} queries)", ""]
    rows = [[m, str(x.systems), figure(x.tau), figure(x.tau_ap), str(len(x.flips or [])),
             _note(x)]
            for m, x in r.measures.items()]
    lines += markdown_table(["measure", "systems", "Kendall's τ [CI]", "τ_AP [CI]",
                             "flipped pairs", "note"], rows)
    for measure, x in r.measures.items():
        if x.rankings is None:
            continue
        table = [[row.system, number(row.mean_human, ".4f"), str(row.rank_human),
                  number(row.mean_automatic, ".4f"), str(row.rank_automatic)]
                 for row in x.rankings]
        lines += ["", f"{measure}:", "", *markdown_table(
            ["system", "human labels", "rank", "automatic labels", "rank"], table)]
        lines += [f"- flip ({f.flip}): {f.system_b} − {f.system_a}: human "
                  f"{number(f.diff_human, '+.4f')} "
                  f"{interval(f.ci_low_human, f.ci_high_human)}, automatic "
                  f"{number(f.diff_automatic, '+.4f')} "
                  f"{interval(f.ci_low_automatic, f.ci_high_automatic)}"
                  for f in x.flips or []]
    return lines


def _note(ranking: MeasureRanking) -> str:
    """Why a ranking is undefined, and the systems left out of it (undefined under a label
    set)."""
    left = ", ".join(ranking.left_out)
    return "; ".join(filter(None, [ranking.undefined,
                                   left and f"left out (undefined): {left}"]))


def _ppi(doc: AgreementAuto) -> list[str]:
    p = doc.ppi
    rows = []
    for measure, by_system in p.measures.items():
        for system, f in by_system.items():
            if f.undefined is not None:
                rows.append([measure, system, f.undefined, "—", "—",
                             number(f.heldout_human, ".4f"), "—"])
                continue
            rows.append([measure, system, _interval(f.human_only), _interval(f.ppi),
                         _interval(f.automatic_only), number(f.heldout_human, ".4f"),
                         f"{f.n_labelled} + {f.n_unlabelled}"])
    return ["", "### Prediction-powered intervals", "",
            f"PPI (λ = 1): {p.labelled} correct the automatic labels' bias on "
            f"{p.unlabelled}; human only: the same validation queries alone; automatic "
            "only: every judged query under automatic labels (trusts the judge); held-out "
            "human: the mean under people's labels on the queries PPI did not read.", "",
            *markdown_table(["measure", "system", "human only (validation)", "PPI",
                             "automatic only", "held-out human", "n + N"], rows)]


def _interval(f: Interval) -> str:
    """"0.4120 [0.3510, 0.4700]", marked where the interval was clipped to the measure's
    range."""
    return (f"{number(f.estimate, '.4f')} {interval(f.ci_low, f.ci_high, '.4f')}"
            + (" (clipped to [{:g}, {:g}])".format(*f.bounds) if f.clipped else ""))


def _labels(doc: AgreementAuto) -> list[str]:
    j, s, labels, holes = doc.judge, doc.sample, doc.labels, doc.holes
    rows = [[name, str(x.human), str(x.automatic), number(x.automatic_share, ".1%"),
             x.describes] for name, x in labels.items()]
    judged = doc.judged
    sets = list(labels)
    jrows = [[system, *(number(v.get(name), ".3f") for name in sets)]
             for system, v in judged.systems.items()]
    thresholds = (f" Grade thresholds on the similarity: "
                  f"{', '.join(number(t, '.3f') for t in j.thresholds)}."
                  if j.thresholds else "")
    unmatched = unmatched_note(j.unmatched.model_dump() if j.unmatched else {})
    return [f"Judge: {_judge(doc)}.{thresholds} " + (j.weak or "")
            + (f" Labels file: {unmatched}." if unmatched else ""),
            f"Validation sample: {s.validation} of {s.judged} judged queries "
            f"(share {s.validation_share:g}, seed {s.seed}); "
            f"held out: {s.heldout} "
            f"queries whose human labels are the ground truth only. Pairs: "
            + ", ".join(f"{k} {v:,}" for k, v in s.pairs.model_dump().items()) + ".",
            f"Holes filled: {holes.filled:,} pooled pairs nobody judged, on "
            f"{holes.queries:,} queries ({holes.relevant:,} labelled "
            "relevant), counted apart: only the label set both reads them.", "",
            *markdown_table(["labels", "human pairs", "automatic pairs", "automatic share",
                             "what"], rows), "",
            f"{judged.measure} per system under each label set:", "",
            *markdown_table(["system", *sets], jrows)]


def lines(doc: AgreementAuto | None) -> list[str]:
    """The judging section's automatic part (markdown)."""
    if not configured(doc):
        return ["## Automatic judgments", "", f"{NONE[0].upper()}{NONE[1:]}."]
    return ["## Automatic judgments", "", *_labels(doc), *_agreement(doc), *_ranking(doc),
            "", "The plot “Systems under human and automatic labels” (Plots) draws the two "
            "rankings.", *_ppi(doc)]
