"""The ``releval`` command line."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from releval import schema as S
from releval.errors import InputError
from releval.metrics import DEFAULT_MEASURES, MEASURES, Evaluation, evaluate, resolve
from releval.readers import read_qrels, read_run

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Offline evaluation of retrieval and candidate generation.")
err = Console(stderr=True)


class Format(StrEnum):
    table = "table"
    trec = "trec"
    json = "json"
    csv = "csv"


class TableOrJson(StrEnum):
    table = "table"
    json = "json"


@app.callback()
def main() -> None:
    """releval: metrics with written definitions and trec_eval parity."""


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _select_system(run: pd.DataFrame, system: str | None) -> pd.DataFrame:
    systems = sorted(run[S.SYSTEM].astype(str).unique()) if S.SYSTEM in run.columns else []
    if system is not None:
        if system not in systems:
            raise InputError(f"no system {system!r} in the run; it has {systems}",
                             run.attrs.get("source", "run"))
        picked = run[run[S.SYSTEM].astype(str) == system]
        picked.attrs.update(run.attrs)
        return picked
    if len(systems) > 1:
        raise InputError(f"the run holds {len(systems)} systems ({', '.join(systems[:5])}); "
                         "choose one with --system", run.attrs.get("source", "run"))
    return run


@app.command()
def metrics(
    qrels: Annotated[Path, typer.Argument(help="qrels: TREC (qid 0 docid grade), BEIR .tsv, "
                                          ".csv or .parquet")],
    run: Annotated[Path, typer.Argument(help="run: TREC (qid Q0 docid rank score tag), "
                                        ".csv or .parquet")],
    measure: Annotated[list[str] | None, typer.Option(
        "-m", "--measure", help="measure, ir_measures or trec_eval style; repeatable "
        f"[default: {' '.join(DEFAULT_MEASURES)}]")] = None,
    per_query: Annotated[bool, typer.Option("-q", "--per-query",
                                            help="also print per-query values")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="output format")] = Format.table,
    common_only: Annotated[bool, typer.Option(
        "--common-only", help="average over queries in both qrels and run (trec_eval's "
        "default) instead of every judged query (trec_eval -c)")] = False,
    rel: Annotated[int, typer.Option("--rel", help="minimum grade that counts as relevant "
                                     "for binary measures")] = 1,
    max_grade: Annotated[int, typer.Option("--max-grade",
                                           help="top of the declared grade scale")] = 3,
    system: Annotated[str | None, typer.Option(
        "--system", help="system to evaluate when the run table holds several")] = None,
) -> None:
    """Evaluate RUN against QRELS. Queries without a relevant judgment are undefined:
    excluded from the means and counted (trec_eval scores them 0)."""
    try:
        measures = resolve(measure or DEFAULT_MEASURES, rel=rel)
        run_frame = _select_system(read_run(run), system)
        result = evaluate(run_frame, read_qrels(qrels), measures, rel=rel,
                          max_grade=max_grade, common_only=common_only)
    except InputError as exc:
        _fail(str(exc))
    if result.counts["queries_evaluated"] == 0:
        _fail(f"{qrels}: nothing evaluated: no query of the qrels "
              + ("is in the run" if common_only and len(result.summary) else
                 "has a judgment") + " (zero work is not a pass)")
    tag = str(run_frame[S.SYSTEM].iloc[0]) if S.SYSTEM in run_frame.columns and len(
        run_frame) else run.stem
    trec_names = {m.name: (MEASURES[m.family].trec(m) if m.rel == rel else None) or m.name
                  for m in measures}
    integer = {m.name for m in measures if MEASURES[m.family].aggregate == "sum"}
    PRINTERS[fmt](result, per_query=per_query, tag=tag, trec_names=trec_names,
                  integer=integer)
    if fmt in (Format.trec, Format.csv):
        _note_counts(result)


def _note_counts(result: Evaluation) -> None:
    undefined, empty = (int(result.summary[col].max()) if len(result.summary) else 0
                        for col in ("undefined", "empty"))
    c = result.counts
    err.print(f"queries evaluated: {c['queries_evaluated']}; in run but not in qrels "
              f"(ignored): {c['run_queries_not_in_qrels']}; undefined (no relevant "
              f"judgment): {undefined}; empty (no ranking, scored 0): {empty}",
              highlight=False)


def _print_table(result: Evaluation, *, per_query: bool, integer: set[str], **_) -> None:
    out = Console()
    if per_query:
        wide = result.per_query.pivot(index=S.QUERY_ID, columns=S.MEASURE, values=S.VALUE)
        wide = wide[list(result.summary[S.MEASURE])]
        grid = Table(title="per query (— = undefined)")
        grid.add_column("query_id")
        for name in wide.columns:
            grid.add_column(name, justify="right")
        for qid, row in wide.iterrows():
            grid.add_row(str(qid), *("—" if pd.isna(v) else _fmt(v, k in integer)
                                     for k, v in row.items()))
        out.print(grid)
    table = Table(title="summary (mean over n queries; counts are sums)")
    for col in ("measure", "value", "n", "undefined", "empty"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for row in result.summary.itertuples(index=False):
        table.add_row(row.measure, "—" if pd.isna(row.value) else
                      _fmt(row.value, row.measure in integer), str(row.n), str(row.undefined),
                      str(row.empty))
    out.print(table)
    c = result.counts
    out.print(f"queries evaluated: {c['queries_evaluated']} · in run: {c['queries_in_run']} · "
              f"in run but not in qrels (ignored): {c['run_queries_not_in_qrels']}\n"
              "undefined = no judged relevant document (excluded, never scored); "
              "empty = relevant documents but no ranking (scored 0)", highlight=False)


def _fmt(value: float, integer: bool) -> str:
    return f"{int(round(value))}" if integer else f"{value:.4f}"


def _print_trec(result: Evaluation, *, per_query: bool, tag: str, trec_names: dict,
                integer: set[str], **_) -> None:
    lines = []
    if per_query:
        pq = result.per_query.dropna(subset=[S.VALUE])
        pq = pq.assign(_order=pq[S.MEASURE].map({m: i for i, m in enumerate(trec_names)}))
        for row in pq.sort_values([S.QUERY_ID, "_order"], kind="stable").itertuples():
            lines.append(f"{trec_names[row.measure]:<22}\t{row.query_id}\t"
                         f"{_fmt(row.value, row.measure in integer)}")
    lines.append(f"{'runid':<22}\tall\t{tag}")
    lines.append(f"{'num_q':<22}\tall\t{result.counts['queries_evaluated']}")
    for row in result.summary.itertuples(index=False):
        if not pd.isna(row.value):
            lines.append(f"{trec_names[row.measure]:<22}\tall\t"
                         f"{_fmt(row.value, row.measure in integer)}")
    sys.stdout.write("\n".join(lines) + "\n")


def _print_json(result: Evaluation, *, per_query: bool, **_) -> None:
    doc = {
        "measures": {r.measure: {"value": None if pd.isna(r.value) else float(r.value),
                                 "n": int(r.n), "undefined": int(r.undefined),
                                 "empty": int(r.empty)}
                     for r in result.summary.itertuples(index=False)},
        "counts": result.counts,
        "definitions": {m: MEASURES[resolve([m])[0].family].definition
                        for m in result.summary[S.MEASURE]},
    }
    if per_query:
        pq = result.per_query
        doc["per_query"] = [{"query_id": q, "measure": m, "value": None if pd.isna(v) else v}
                            for q, m, v in zip(pq[S.QUERY_ID], pq[S.MEASURE], pq[S.VALUE],
                                               strict=True)]
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


def _print_csv(result: Evaluation, *, per_query: bool, **_) -> None:
    frame = result.per_query if per_query else result.summary
    frame.to_csv(sys.stdout, index=False)


PRINTERS = {Format.table: _print_table, Format.trec: _print_trec, Format.json: _print_json,
            Format.csv: _print_csv}


def _project_root() -> Path:
    root = Path.cwd()
    if not (root / "dvc.yaml").exists() or not (root / "flows").is_dir():
        _fail(f"{root}: not a releval project (no dvc.yaml and flows/ here); run from the "
              "project root")
    return root


def _run_flow(params: Path, overrides: list[str]) -> int:
    """Apply -S overrides to the params file (as ``dvc exp run -S``), validate it, then run
    the Prefect flow in a child process (the library never imports the flows)."""
    from releval.params import apply_overrides, parse_params, read_raw

    try:
        raw = apply_overrides(read_raw(params), overrides)
        parse_params(raw, str(params))
    except InputError as exc:
        _fail(str(exc))
    if overrides:
        from releval.params import write_overrides

        try:
            write_overrides(params, overrides)
        except InputError as exc:
            _fail(str(exc))
        err.print(f"{params}: set {', '.join(overrides)}", highlight=False)
    return _child([sys.executable, "-m", "flows.pipeline", "--params", str(params)])


def _child(cmd: list[str]) -> int:
    """Run a project process: one at a time per project, stale DVC locks cleared first, and
    a SIGTERM/SIGINT stops it whole (releval.runner)."""
    from releval.runner import Stopped, clear_stale_dvc_locks, one_run, run_child

    try:
        with one_run():
            cleared = clear_stale_dvc_locks()
            if cleared:
                err.print(f"cleared DVC locks left by ended processes {cleared}",
                          highlight=False)
            return run_child(cmd)
    except InputError as exc:
        _fail(str(exc))
    except Stopped as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(128 + exc.signum) from None


@app.command("run")
def run_pipeline(
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
    overrides: Annotated[list[str] | None, typer.Option(
        "-S", "--set", help="override a param, e.g. -S prepare.source=beir (written to the "
        "params file, as dvc exp run -S)")] = None,
) -> None:
    """Run the pipeline: DVC stages orchestrated and validated by the Prefect flow."""
    _project_root()
    code = _run_flow(params, overrides or [])
    if code:
        raise typer.Exit(code)


@app.command()
def reproduce(
    receipt: Annotated[Path, typer.Argument(help="a run's receipt (reports/receipt.json or "
                                            "one of reports/runs/)")],
    pinned: Annotated[bool, typer.Option(
        "--pinned", help="restore every input from the DVC cache/remote by its pinned "
        "digest, even where its source is still there")] = False,
    keep: Annotated[bool, typer.Option("--keep", help="keep the temporary worktree")] = False,
) -> None:
    """Re-run a past run in a clean worktree at its commit, from its pinned inputs, and
    compare every digest and metric: exit 0 when identical, 1 when anything differs."""
    _project_root()
    code = _child([sys.executable, "-m", "flows.reproduce", str(receipt),
                   *(["--pinned"] if pinned else []), *(["--keep"] if keep else [])])
    if code:
        raise typer.Exit(code)


@app.command()
def runs(
    ledger: Annotated[Path, typer.Option("--ledger", help="folder of kept receipts")]
    = Path("reports/runs"),
    fmt: Annotated[TableOrJson, typer.Option("--format", help="table or json")]
    = TableOrJson.table,
) -> None:
    """List the runs kept in the ledger: when, receipt, commit, headline figures, decision."""
    from releval.receipt import ledger as read_ledger

    rows = read_ledger(ledger)
    if fmt == TableOrJson.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    if not rows:
        err.print(f"{ledger}: no runs kept yet (releval run writes one per run)",
                  highlight=False)
        return
    measure = rows[-1].get("measure") or "?"
    table = Table(title=f"runs kept in {ledger} ({measure} per run)")
    for col in ("finished (UTC)", "receipt", "commit", "queries", "baseline", "candidate",
                "decision"):
        table.add_column(col, justify="right" if col == "queries" else "left")
    for r in rows:
        if "problem" in r:
            table.add_row(r["file"], "[red]" + r["problem"] + "[/red]", *[""] * 5)
            continue
        values = r["values"]
        table.add_row(str(r["finished_at"] or "?")[:16].replace("T", " "), r["sha256"],
                      r["commit"] + ("+dirty" if r["dirty"] else ""), str(r["queries"]),
                      f"{r['baseline']} {_num(values.get(r['baseline']))}",
                      f"{r['candidate']} {_num(values.get(r['candidate']))}",
                      (r["decision"] or "?") + ("" if r["controlled"] else " UNCONTROLLED"))
    out = Console()
    (out if out.is_terminal else Console(width=max(out.width, 120))).print(table)


@app.command()
def demo(
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
) -> None:
    """Generate the demo data, run the whole pipeline on it and print the summary."""
    root = _project_root()
    from releval.params import read_raw

    source = (read_raw(params).get("prepare") or {}).get("source", "demo")
    code = _run_flow(params, [] if source == "demo" else ["prepare.source=demo"])
    if code:
        raise typer.Exit(code)
    summary = json.loads((root / "data/evaluate/summary.json").read_text())
    table = Table(title=f"releval demo — {', '.join(summary['splits'])} split, "
                        f"{summary['queries']} queries, qrels: {summary['qrels']}")
    shown = ("nDCG@10", "R@100", "RR@10", "Judged@10")
    for col in ("system", *shown, "n", "undefined"):
        table.add_column(col, justify="left" if col == "system" else "right")
    for system, measures in summary["systems"].items():
        first = measures[shown[0]]
        table.add_row(system, *("—" if measures.get(m, {}).get("value") is None
                                else f"{measures[m]['value']:.4f}" for m in shown),
                      str(first["n"]), str(first["undefined"]))
    out = Console()
    out.print(table)
    decision = root / "reports" / "decision.md"
    if decision.exists():  # wide tables: never squeeze them below 140 columns off a terminal
        wide = out if out.is_terminal else Console(width=max(out.width, 140))
        wide.print(Markdown(decision.read_text()))
    out.print(f"report: {root / 'reports' / 'summary.md'}", highlight=False)
    receipt = root / "reports" / "receipt.json"
    if receipt.exists():
        digest = json.loads(receipt.read_text())["sha256"]
        out.print(f"receipt: {receipt} (sha256 {digest[:12]}); check it with `releval "
                  "reproduce reports/receipt.json`, list past runs with `releval runs`",
                  highlight=False)


@app.command()
def compare(
    baseline: Annotated[Path, typer.Argument(help="per-query table (query_id, measure, value) "
                                             "or a run (with --qrels)")],
    candidate: Annotated[Path, typer.Argument(help="the same, for the candidate")],
    qrels: Annotated[Path | None, typer.Option("--qrels", help="qrels, when the inputs are "
                                               "runs")] = None,
    measure: Annotated[list[str] | None, typer.Option("-m", "--measure",
                                                      help="measure; repeatable")] = None,
    slices: Annotated[Path | None, typer.Option("--slices", help="CSV/TSV: query_id, slice")]
    = None,
    weights: Annotated[Path | None, typer.Option("--weights", help="CSV/TSV: query_id, weight")]
    = None,
    cluster: Annotated[Path | None, typer.Option(
        "--cluster", help="CSV/TSV: query_id, user_id (resample and test over users)")] = None,
    allow_uncontrolled: Annotated[bool, typer.Option(
        "--allow-uncontrolled", help="different query sets: show the unpaired rate/mix view "
        "instead of refusing")] = False,
    min_effect: Annotated[float, typer.Option("--min-effect", help="minimum consequential "
                                              "effect")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", min=0)] = 0,
    common_measures: Annotated[bool, typer.Option(
        "--common-measures", help="compare the measures both tables have, when one has more "
        "(else that is an error)")] = False,
    resamples: Annotated[int, typer.Option("--resamples")] = 10_000,
    max_grade: Annotated[int, typer.Option("--max-grade")] = 3,
    fmt: Annotated[Format, typer.Option("--format", help="table or json")] = Format.table,
) -> None:
    """Compare CANDIDATE with BASELINE: paired per query (bootstrap CI, randomization test,
    Holm), or, for different query sets, refused unless --allow-uncontrolled."""
    from releval.compare import check_coverage, read_map, read_side
    from releval.compare import compare as run_compare

    try:
        truth = read_qrels(qrels) if qrels else None
        sides = [read_side(p, truth, measure, max_grade=max_grade) for p in (baseline, candidate)]
        queries = set(sides[0][S.QUERY_ID]) | set(sides[1][S.QUERY_ID])
        maps = {}
        for kind, path in (("slice", slices), ("weight", weights), ("user_id", cluster)):
            if path:
                maps[kind] = read_map(path, kind)
                check_coverage(maps[kind], queries, kind)
        result = run_compare(
            *sides, measure, slices=maps.get("slice"), weights=maps.get("weight"),
            clusters=maps.get("user_id"), allow_uncontrolled=allow_uncontrolled,
            min_effect=min_effect, seed=seed, resamples=resamples,
            common_measures=common_measures)
    except InputError as exc:
        _fail(str(exc))
    if fmt == Format.json:
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
        return
    out = Console()
    if result["controlled"]:
        table = Table(title=f"paired comparison over {result['unit']}s (candidate − baseline)")
        for col in ("measure", "slice", "n", "baseline", "candidate", "Δ mean", "95% CI",
                    "W/T/L", "p", "p (Holm)", "verdict"):
            table.add_column(col, justify="left" if col in ("measure", "slice", "verdict")
                             else "right")
        for r in result["paired"]:
            table.add_row(r["measure"], r["slice"], str(r["n"]), _num(r["mean_baseline"]),
                          _num(r["mean_candidate"]), _num(r["mean_diff"], "+.4f"),
                          f"[{_num(r['ci_low'], '+.4f')}, {_num(r['ci_high'], '+.4f')}]",
                          f"{r['wins']}/{r['ties']}/{r['losses']}", _num(r["p_value"]),
                          _num(r["p_holm"]), r["verdict"])
        out.print(table)
        return
    table = Table(title="UNCONTROLLED: different query samples, not a paired comparison")
    for col in ("measure", "before", "after", "Δ", "rate", "mix", "equal-slice", "mix shift"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for r in result["uncontrolled"]:
        table.add_row(r["measure"], _num(r["before"]), _num(r["after"]),
                      _num(r["delta"], "+.4f"), _num(r["rate"], "+.4f"), _num(r["mix"], "+.4f"),
                      f"{_num(r['equal_slice_before'])} → {_num(r['equal_slice_after'])}",
                      "yes" if r["mix_shift"] else "no")
    out.print(table)
    for r in result["uncontrolled"]:
        if r["mix_shift"]:
            out.print(f"FLAGGED (composition): {r['measure']} moved {r['delta']:+.4f} while no "
                      "slice moved that way: the query mix changed", highlight=False)
    d = result["differences"]
    out.print(f"queries only in baseline: {d['queries_only_in_baseline']}, only in candidate: "
              f"{d['queries_only_in_candidate']}", highlight=False)


def _num(value, spec: str = ".4f") -> str:
    return "—" if value is None else format(value, spec)



def _read_decision(path: Path) -> dict:
    if not path.is_file():
        _fail(f"{path}: file not found; run the gate stage first (dvc repro gate)")
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        _fail(f"{path}: not valid JSON ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("passed"), bool) \
            or not isinstance(doc.get("rules"), list) \
            or not all(isinstance(r, dict) for r in doc["rules"]):
        _fail(f"{path}: not a gate decision (needs a boolean 'passed' and a 'rules' list of "
              "objects)")
    failed = [str(r.get("name", r.get("rule", "?"))) for r in doc["rules"]
              if r.get("passed") is not True]
    if doc["passed"] == bool(failed):
        _fail(f"{path}: inconsistent decision: 'passed' is {str(doc['passed']).lower()} but "
              + (f"rule(s) failed: {', '.join(failed)}" if failed else "every rule passed"))
    return doc


def _gate_value(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.4f}"
    return str(value)


@app.command()
def gate(
    decision: Annotated[Path, typer.Option("--decision", help="the gate stage's decision")]
    = Path("data/gate/decision.json"),
    fmt: Annotated[TableOrJson, typer.Option("--format", help="table or json")]
    = TableOrJson.table,
) -> None:
    """Show the release decision; exit 0 when every rule passed, 1 when one failed, 2 when the
    decision file is missing or invalid."""
    from rich.markup import escape

    doc = _read_decision(decision)
    controlled = doc.get("controlled", True) is not False
    if fmt == TableOrJson.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        out = Console()
        title = f"release gate: {doc.get('candidate', '?')} against {doc.get('baseline', '?')}"
        table = Table(title=title + ("" if controlled else " (UNCONTROLLED)"))
        for col in ("rule", "passed", "value", "threshold", "reason"):
            table.add_column(col, justify="right" if col in ("value", "threshold") else "left")
        for r in doc["rules"]:
            table.add_row(escape(str(r.get("name", r.get("rule", "?")))),
                          "[green]✓[/green]" if r.get("passed") else "[red]✗[/red]",
                          _gate_value(r.get("value")), _gate_value(r.get("threshold")),
                          escape(str(r.get("reason", ""))))
        out.print(table)
        if doc.get("note"):
            out.print(f"note: {escape(str(doc['note']))}", highlight=False, soft_wrap=True)
        if not controlled:
            diffs = doc.get("differences") or []
            shown = "; ".join(map(str, diffs)) if isinstance(diffs, list) else str(diffs)
            out.print("UNCONTROLLED: the comparison's conditions differ"
                      + (f" ({escape(shown)})" if shown else ""), highlight=False,
                      soft_wrap=True)
        verdict = "PASS" if doc["passed"] else "FAIL"
        failed = doc.get("failed") or []
        out.print(f"[{'green' if doc['passed'] else 'red'}]{verdict}[/]"
                  + ("" if controlled else " UNCONTROLLED")
                  + (f" ({len(failed)} failed: {escape(', '.join(map(str, failed)))})" if failed
                     else ""), highlight=False, soft_wrap=True)
    if not doc["passed"]:
        raise typer.Exit(1)


if __name__ == "__main__":
    app()
