"""The off-policy section (offpolicy.json, ``releval.decision.counterfactual``) as markdown
lines: in reports/decision.md (so in summary.md) and, rendered, on the HTML page. Each
estimator's estimate over every position with its CI and whether the CI covers the
reference, the logging policy's on-policy value and the reference beside them, the
diagnostics with pass/fail and their reasons, and everything the estimates rest on (the
policy and its rule, the clip, the reward model and its window, the bootstrap). Without a
log: one line saying so."""

from __future__ import annotations

from releval.documents.offpolicy import Diagnostics, Estimate, OffPolicyDoc, Value
from releval.report.formats import interval, markdown_table, number

HEADING = "## Off-policy evaluation"
ALL = "all"
UNITS = {"row": "rows (each impression)", "user_id": "users (user_id)"}


def _value(v: Value | None) -> str:
    if not v or v.value is None:
        return "undefined"
    return f"{number(v.value, '.4f')} {interval(v.ci_low, v.ci_high, '.4f')}"


def _covers(e: Estimate) -> str:
    return {True: "yes", False: "no", None: "–"}[e.covers]


def _stated(doc: OffPolicyDoc) -> str:
    model = doc.reward_model
    fitted = (f"; reward model {model.model} fitted on the log's first "
              f"{model.train_share:.0%} by time ({model.train_rows:,} rows, "
              f"{model.window[0][:10]} … {model.window[1][:10]}), DM and DR made on the "
              f"{doc.log.evaluated_rows:,} rows after it" if model else "")
    clip = f"weights clipped at {doc.clip:g}" if doc.clip else "weights unclipped"
    unit = UNITS.get(doc.cluster, f"the log's {doc.cluster}")
    return (f"Policy: {doc.policy.description}; {clip}{fitted}; "
            f"{doc.resamples:,} bootstrap resamples over {unit}, α {doc.alpha:g}"
            + (" (DM's CI holds the fitted reward model fixed)" if model else "") + ".")


def diagnostics_lines(d: Diagnostics) -> list[str]:
    """The diagnostics in one line, then each reason they fail."""
    state = "PASS" if d.passed else "FAIL"
    line = (f"Diagnostics: **{state}** — ESS {number(d.ess, ',.0f')} "
            f"({number(d.ess_share, '.1%')} of the rows; minimum {d.min_ess:g}), max "
            f"weight {number(d.max_weight, '.3g')}, mean weight "
            f"{number(d.mean_weight, '.3g')}, logged rows the candidate never takes "
            f"{number(d.unsupported_share, '.1%')}, mass off the log's support "
            f"{number(d.mass_off_support, '.2%')}.")
    return [line, *(f"- {reason}" for reason in d.reasons)]


def lines(doc: OffPolicyDoc | None, detail: bool = True) -> list[str]:
    """The section (``detail``: with the per-position estimates)."""
    if not doc or not doc.applicable:
        reason = (doc.reason if doc else None) or "no off-policy evaluation"
        return [HEADING, "", f"Not applicable: {reason}.", ""]
    log, ref = doc.log, doc.reference
    out = [HEADING, "",
           f"From {log.path} ({log.rows:,} impressions, {log.actions:,} items, "
           f"{log.positions} positions, {log.window[0][:10]} … {log.window[1][:10]}).",
           _stated(doc), "",
           f"Logged policy's on-policy value: {_value(doc.on_policy)} over "
           f"{doc.on_policy.n:,} rows."
           + (f" Reference ({ref.path}, the candidate policy deployed): {_value(ref)} "
              f"over {ref.n:,} rows." if ref else ""), ""]
    shown = [e for e in doc.estimates if detail or e.position == ALL]
    header = ["estimator", "position", "estimate", "95% CI" if doc.alpha == 0.05 else "CI",
              "n", "clip", *(["CI covers the reference"] if ref else [])]
    rows = [[e.estimator, e.position, number(e.value, ".4f"),
             interval(e.ci_low, e.ci_high, ".4f"), f"{e.n:,}",
             "–" if e.clip is None else f"{e.clip:g}",
             *([_covers(e)] if ref else [])] for e in shown]
    out += [*markdown_table(header, rows), "", *diagnostics_lines(doc.diagnostics), ""]
    if ref:
        missed = [e.estimator for e in doc.estimates
                  if e.position == ALL and e.covers is False]
        rows = {e.estimator: e.n for e in doc.estimates if e.position == ALL}
        out += [("Every estimator's CI covers the reference." if not missed else
                 f"The CI of {', '.join(f'{e} (n {rows[e]:,})' for e in missed)} does not "
                 f"cover the reference {number(ref.value, '.4f')}"
                 + ("" if doc.diagnostics.passed else
                    "; the diagnostics fail, as above") + "."), ""]
    return out
