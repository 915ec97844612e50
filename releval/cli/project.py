"""The project runner's commands: ``run`` and ``demo`` (the pipeline), ``reproduce`` (a past
run from its receipt), ``history`` (the ledger), ``serve`` (the pipeline on a schedule) and
``drift`` (the changed documents that moved a
figure between two revisions). The pipeline runs as ``python -m flows.pipeline`` or
``flows.reproduce`` in a child process (``releval.project.runner``): the library never imports
the flows."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from releval import artifacts
from releval.cli import history as history_view
from releval.cli.output import AsJson, console, emit, err, fail
from releval.diagnosis.drift import TOL
from releval.errors import InputError
from releval.report import recommendation as rec
from releval.report.formats import number, verdict
from releval.report.summary import SHOWN

if TYPE_CHECKING:
    from releval.project.drift import Diagnosis

RECSYS_DEMO = Path("examples/recsys-demo.yaml")  # in a source checkout, and shipped
RECOMMENDATION_SOURCES = ("interactions", "recsys_demo", "logged_feedback")


def _is_project(root: Path) -> bool:
    """A source checkout (its own flows/) or a project made by ``releval init``."""
    from releval.project.template import CODE_FILE

    return (root / "dvc.yaml").is_file() and ((root / "flows").is_dir()
                                              or (root / CODE_FILE).is_file())


def _require(extras: list[str], command: str) -> None:
    """One line, exit 2, when an extra ``command`` needs is not installed."""
    from releval.extras import require

    try:
        for extra in extras:
            require(extra, command)
    except InputError as exc:
        fail(str(exc))


def _project_root(command: str) -> Path:
    root = Path.cwd()
    if not _is_project(root):
        fail(f"{root}: not a releval project (no dvc.yaml here); run from the project root, "
             "or make one: releval init DIR --corpus … | --qrels … --run … | --interactions …")
    _require(["pipeline"], command)
    return root


def _read_params(params: Path) -> dict:
    """The params file's sections; InputError when it is missing, a folder, not UTF-8 YAML
    or not a mapping."""
    from releval.data.readers import existing
    from releval.params import read_raw

    raw = read_raw(existing(params))
    if not isinstance(raw, dict):
        raise InputError("not a YAML mapping of sections", str(params))
    return raw


def _team_runs(values: list[str]) -> dict[str, Path]:
    runs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            fail(f"--run {value}: expected NAME=PATH (a TREC run file or a run table)")
        if name in runs:
            fail(f"--run {value}: {name} is given twice")
        runs[name] = Path(path)
    return runs


def init(
    directory: Annotated[Path, typer.Argument(help="the project folder (created)")],
    corpus: Annotated[Path | None, typer.Option(
        "--corpus", help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a folder of "
        "tables (documents, queries, judgments .parquet)")] = None,
    interactions: Annotated[Path | None, typer.Option(
        "--interactions", help="recommendation mode: a folder with interactions.csv|parquet "
        "and items.csv|parquet")] = None,
    logged_feedback: Annotated[Path | None, typer.Option(
        "--logged-feedback", help="recommendation mode on logged bandit feedback (the Open "
        "Bandit layout or a table: context_id, item_id, position, reward, propensity, "
        "timestamp): its impressions the interactions, its policy value estimated "
        "off-policy")] = None,
    reference: Annotated[Path | None, typer.Option(
        "--reference", help="with --logged-feedback: a log of the candidate policy deployed "
        "(its on-policy value is the ground truth beside the estimates)")] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="no corpus: the qrels (TREC qid 0 docid grade, a BEIR qrels .tsv, or "
        "a CSV/parquet table) the --run files are judged by")] = None,
    queries: Annotated[Path | None, typer.Option(
        "--queries", help="with --qrels: the queries (a table or JSON lines: query_id, and "
        "optionally text, tags, timestamp, user_id); default: the qrels' and runs' query "
        "ids")] = None,
    run: Annotated[list[str] | None, typer.Option(
        "--run", help="NAME=PATH: a team's run (TREC or table; seeds tagged "
        "<name>@seed<k>); repeat for each")] = None,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="the system compared against (default: bm25 | popularity | the "
        "first --run with --qrels)")] = None,
    candidate: Annotated[str | None, typer.Option(
        "--candidate", help="the system that may ship (default: hybrid | cooccurrence | the "
        "second --run with --qrels)")] = None,
) -> None:
    """Create a releval project around your data: dvc.yaml, params.yaml written from the
    data (each choice with its reason), DVC with a local remote, git. Then: cd DIRECTORY &&
    releval run --gate."""
    _require(["pipeline"], "releval init")
    from releval.project.profile import NotACollection
    from releval.project.scaffold import DataChoice
    from releval.project.scaffold import init as scaffold

    try:
        lines = scaffold(directory, corpus=corpus, interactions=interactions,
                         runs=_team_runs(run or []), baseline=baseline, candidate=candidate,
                         feedback=logged_feedback, reference=reference, qrels=qrels,
                         queries=queries)
    except DataChoice as exc:  # the library's refusal, worded with this command's flags
        fail(f"{exc.source}: give the data: --corpus (a BEIR folder or a folder of tables), "
             "--qrels with two or more --run (no corpus), --interactions (a folder with "
             "interactions and items) or --logged-feedback (a log of bandit feedback), one "
             "of the four")
    except NotACollection as exc:
        fail(f"{exc.source}: expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a "
             "folder of tables (documents, queries, judgments .parquet); qrels without a "
             "corpus: --qrels QRELS --run NAME=PATH --run NAME=PATH")
    except InputError as exc:
        fail(str(exc))
    for line in lines:
        err.print(line, highlight=False)
    err.print(f"next: cd {directory} && releval run --gate", highlight=False)


def _run_flow(params: Path, overrides: list[str], verbose: bool = False,
              command: str = "releval run", outcome: Path | None = None) -> int:
    """Validate the params file with the -S overrides applied (refused in one line when an
    extra it needs is not installed: ``releval.extras.needed``); make it params.yaml (the file
    DVC's stages read: ``releval.project.params_file``), write the overrides into it (as
    ``dvc exp run -S``), then run the Prefect flow in a child process (the library never
    imports the flows). ``outcome``: the flow writes its stages' statuses and its error there
    (JSON), and its console goes to stderr, leaving stdout to the caller's JSON."""
    from releval.params import apply_overrides, parse_params
    from releval.project.params_file import adopt, complete, parsers

    try:
        raw = apply_overrides(_read_params(params), overrides)
        parsed = parse_params(raw, str(params), parsers())
        _fits_the_dag(parsed, params)
        from releval.extras import needed

        _require(needed(parsed), command)
        params, adopted = adopt(params, Path.cwd())
    except InputError as exc:
        fail(str(exc))
    if adopted:
        err.print(adopted, highlight=False)
    if overrides:
        from releval.params import write_overrides

        try:
            write_overrides(params, overrides)
        except InputError as exc:
            fail(str(exc))
        err.print(f"{params}: set {', '.join(overrides)}", highlight=False)
    _completed(complete, params, parsed)
    return _child([sys.executable, "-m", "flows.pipeline", "--params", str(params),
                   *(["--verbose"] if verbose else []),
                   *(["--outcome", str(outcome)] if outcome else [])],
                  **({"stdout": 2} if outcome else {}))


def _fits_the_dag(parsed, params: Path) -> None:
    """InputError when the params need a stage the project's dvc.yaml lacks, or leave empty
    what one of its stages reads: fusion.systems empty where dvc.yaml fuses (its later stages
    read data/fused; a project made by ``releval init`` without fusion has no fuse stage),
    or fusion.systems named where it has no fuse stage."""
    import yaml

    from releval.project.template import fuses, pins_qrels

    dag = Path("dvc.yaml")
    try:
        graph = yaml.safe_load(dag.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return  # DVC says what is wrong with it
    fused = fuses(graph)
    if not parsed.fusion.systems and fused:
        raise InputError("fusion.systems is empty, but dvc.yaml fuses (its later stages read "
                         "the fused runs): fuse at least one pair of systems; a project "
                         "made by releval init from runs alone (--qrels) has no fuse stage",
                         str(params))
    if parsed.fusion.systems and not fused:
        raise InputError(f"fusion.systems names {', '.join(parsed.fusion.systems)}, but "
                         "dvc.yaml has no fuse stage (releval init wrote it for params "
                         "without fusion): set fusion.systems to {}, or make a project whose "
                         "params fuse", str(params))
    if parsed.runs_only != pins_qrels(graph):
        raise InputError(
            "prepare.source is runs, but dvc.yaml does not pin the qrels (it was written for "
            "a project with a corpus): make the project with releval init --qrels"
            if parsed.runs_only else
            f"prepare.source is {parsed.prepare.source}, but dvc.yaml was written for team "
            "runs without a corpus (prepare.source runs): make the project with releval "
            "init --corpus", str(params))


def _completed(complete, params: Path, parsed) -> None:
    """Write the defaults of the keys dvc.yaml reads that ``params`` leaves out
    (``releval.project.params_file.complete``), saying which."""
    try:
        written = complete(params, parsed, params.parent / "dvc.yaml")
    except InputError as exc:
        fail(str(exc))
    if written:
        err.print(f"{params.name}: wrote the defaults DVC reads of {', '.join(written)}",
                  highlight=False)


def _child(cmd: list[str], **kwargs) -> int:
    """Run a project process: one at a time per project, stale DVC locks cleared first, and
    a SIGTERM/SIGINT stops it whole (releval.project.runner)."""
    from releval.project.runner import Stopped, exclusive, run_child

    try:
        with exclusive() as cleared:
            if cleared:
                err.print(f"cleared what ended runs left: {', '.join(cleared)}",
                          highlight=False)
            return run_child(cmd, **kwargs)
    except InputError as exc:
        fail(str(exc))
    except Stopped as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(128 + exc.signum) from None


def run_pipeline(
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
    overrides: Annotated[list[str] | None, typer.Option(
        "-S", "--set", help="override a param, e.g. -S prepare.source=beir (written to the "
        "params file, as dvc exp run -S)")] = None,
    verbose: Annotated[bool, typer.Option(
        "-v", "--verbose", help="show DVC's, Prefect's and the stages' own output too (always "
        "in reports/run.log)")] = False,
    gate: Annotated[bool, typer.Option(
        "--gate", help="exit 1 when the release gate fails (CI needs one command: "
        "releval run --gate)")] = False,
    as_json: AsJson = False,
) -> None:
    """Run the pipeline: DVC stages orchestrated and validated by the Prefect flow; then the
    summary, the decision and where the report is.

    Exit 0 when it ran (with --gate: and the gate passed), 1 when the gate failed under
    --gate or the run failed, 2 when a stage refused its input. --json: the stage lines go
    to stderr and stdout is one JSON document (run_document), whatever the outcome."""
    root = _project_root("releval run")
    if as_json:
        with tempfile.TemporaryDirectory(prefix="releval-run-") as tmp:
            outcome = Path(tmp) / "outcome.json"
            code = _run_flow(params, overrides or [], verbose, outcome=outcome)
            ran = json.loads(outcome.read_text()) if outcome.exists() else {}
    else:
        code = _run_flow(params, overrides or [], verbose)
        if code:
            raise typer.Exit(code)
        _show_run(root, "releval run")
    decision = artifacts.path("gate.decision", root)
    passed = not code and json.loads(decision.read_text())["passed"]
    status = code or (1 if gate and not passed else 0)
    if as_json:
        emit(run_document(root, ran, status))
    raise typer.Exit(status)


def run_document(root: Path, ran: dict, status: int) -> dict:
    """``releval run --json``: ``outcome`` (pass, fail, or error when the run did not
    finish), ``exit_status``, ``error`` (its one line, or null), ``stages`` (each stage's
    status and seconds), ``decision`` (verdict, passed, candidate, baseline, failed and
    not_applicable rules; null when the run did not finish) and ``paths`` (decision, report,
    summary, receipt, log, relative to the project) with the receipt's ``sha256``."""
    paths = {key: artifacts.at(name) for key, name in (
        ("decision", "gate.decision"), ("report", "reports.html"),
        ("summary", "reports.summary"), ("receipt", "reports.receipt"),
        ("log", "reports.log"))}
    finished = not ran.get("error") and (root / paths["decision"]).exists()
    doc = json.loads((root / paths["decision"]).read_text()) if finished else None
    receipt = root / paths["receipt"]
    return {
        "outcome": "error" if doc is None else verdict(doc["passed"]).lower(),
        "exit_status": status,
        "error": ran.get("error"),
        "stages": ran.get("stages", {}),
        "decision": None if doc is None else {
            "verdict": verdict(doc["passed"]), "passed": doc["passed"],
            "candidate": doc["candidate"], "baseline": doc["baseline"],
            "failed": doc["failed"], "not_applicable": doc["not_applicable"]},
        "paths": {key: str(path) for key, path in paths.items()},
        "sha256": json.loads(receipt.read_text())["sha256"]
        if finished and receipt.exists() else None,
    }


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
    _project_root("releval reproduce")
    code = _child([sys.executable, "-m", "flows.reproduce", str(receipt),
                   *(["--pinned"] if pinned else []), *(["--keep"] if keep else [])])
    if code:
        raise typer.Exit(code)


LEDGER = artifacts.path("reports.ledger")


def history(
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help=f"folder of kept receipts (default: {LEDGER})")] = None,
    as_json: AsJson = False,
) -> None:
    """The runs kept in the ledger, oldest first: when, window, receipt, headline figures
    (live and pinned fixture), gate decision, and what moved since the run before
    (uncontrolled: traffic-weighted Δ = rate + mix, composition flag, attribution).
    --json: the ledger's entries, one object per kept run."""
    from releval.project.history import entries

    if ledger is not None and ledger.exists() and not ledger.is_dir():
        fail(f"{ledger}: is a file, expected the folder of kept receipts")
    if ledger is not None and not ledger.is_dir():  # a folder named, and not there
        fail(f"{ledger}: no such folder (the ledger releval run keeps is {LEDGER})")
    ledger = ledger or LEDGER
    rows = entries(ledger)
    if as_json:
        emit([row.plain() for row in rows])
        return
    if not rows:
        err.print(f"{ledger}: no runs kept yet (releval run writes one per run)",
                  highlight=False)
        return
    out = console()
    for part in history_view.tables(rows, ledger):
        out.print(part, highlight=False)


def serve(
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
    cron: Annotated[str | None, typer.Option(
        "--cron", help='a cron schedule, e.g. "0 3 * * 1" (default: schedule.cron)')] = None,
    interval: Annotated[float | None, typer.Option(
        "--interval", min=1, help="seconds between runs (default: schedule.interval)")] = None,
    window: Annotated[list[str] | None, typer.Option(
        "--window", help="KEY=VALUE of a run's inputs, {date:%Y-%m-%d} = its scheduled time, "
        "a glob = the last match (adds to schedule.window)")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="the deployment's name (default: schedule.name)")] = None,
) -> None:
    """Serve the pipeline as a Prefect deployment on a schedule (flow.serve) until stopped:
    each run takes its window's inputs, writes its receipt, is compared with the baseline
    and with the previous run, and ends Failed when the gate fails. Needs a Prefect server
    (PREFECT_API_URL)."""
    from releval.params import load_params
    from releval.project.params_file import adopt, complete, parsers
    from releval.project.runner import Stopped, run_child

    root = _project_root("releval serve")
    try:
        params, adopted = adopt(params, root)  # the file DVC's stages read
        parsed = load_params(params, parsers=parsers())
    except InputError as exc:
        fail(str(exc))
    if adopted:
        err.print(adopted, highlight=False)
    _completed(complete, params, parsed)
    cmd = [sys.executable, "-m", "flows.schedule", "--params", params.name,
           *(["--cron", cron] if cron else []),
           *(["--interval", str(interval)] if interval else []),
           *[arg for w in window or [] for arg in ("--window", w)],
           *(["--name", name] if name else [])]
    try:
        code = run_child(cmd)
    except Stopped as exc:
        err.print(f"stopped ({exc})", highlight=False)
        raise typer.Exit(0) from None
    if code:
        raise typer.Exit(code)


def drift(
    rev_a: Annotated[str, typer.Argument(help="the revision whose figure is the baseline: a "
                                         "git revision or a run's receipt file")],
    rev_b: Annotated[str, typer.Argument(help="the revision where the figure moved")],
    system: Annotated[str | None, typer.Option(
        "--system", help="the system followed (default: compare.candidate)")] = None,
    measure: Annotated[str, typer.Option("--measure", help="the measure followed")]
    = "nDCG@10",
    split: Annotated[str, typer.Option("--split", help="the evaluated split")] = "test",
    tol: Annotated[float, typer.Option(
        "--tol", min=0.0, help="a figure within this of A's restores it")] = TOL,
) -> None:
    """Name the changed documents that moved a figure between two revisions with the same
    code and params: rebuild at each, revert B's document changes one by one (or in bisected
    groups) and name those whose reversion restores A's figure; exit 0 when reverting them
    restores it, 1 when none does."""
    from releval.metrics.names import parse_measures
    from releval.project.drift import diagnose_revisions

    root = _project_root("releval drift")
    try:  # the flag first, before any revision is read
        several = len(parse_measures(measure)) != 1
    except InputError as exc:
        fail(f"--measure: {exc.rule}")
    if several:
        fail(f"--measure: {measure!r} names several measures; drift follows one")
    try:
        found = diagnose_revisions(root, rev_a, rev_b, system=system, measure=measure,
                                   split=split, tol=tol)
    except InputError as exc:
        fail(str(exc))
    raise typer.Exit(_print_drift(found))


def _print_drift(found: Diagnosis) -> int:
    """``releval drift``'s report; its exit status."""
    d, out = found.drift, console()
    out.print(f"drift of {found.system} {found.measure} on the {found.split} split",
              highlight=False)
    for side, rev, value in (("A", found.a, d.figure_a), ("B", found.b, d.figure_b)):
        shift = "" if side == "A" else f" ({number(d.figure_b - d.figure_a, '+.4f')})"
        name = ("" if rev.commit.startswith(rev.ref) else f"{rev.ref}, ") + rev.commit[:10]
        out.print(f"  {side} ({name}): {number(value)}{shift}", highlight=False)
    for note in found.notes:
        out.print(f"note: {note}", highlight=False, soft_wrap=True)
    out.print("changed documents: " + ", ".join(f"{n} {kind}" for kind, n in d.counts().items()),
              highlight=False)
    if not d.moved:
        out.print(f"the figure did not move (within {d.tol:g} of A's): nothing to diagnose",
                  highlight=False)
        return 1
    out.print(f"reverted {'by bisection' if d.method == 'bisection' else 'one by one'}: "
              f"{d.rebuilds} rebuilds for {len(d.changes)} change"
              f"{'' if len(d.changes) == 1 else 's'}", highlight=False)
    if d.causes:
        table = Table(title="the changes whose reversion moves it back")
        for col in ("doc_id", "change", "effect", "reverted", "restores A"):
            table.add_column(col, justify="left" if col in ("doc_id", "change") else "right")
        for c in d.causes:
            table.add_row(", ".join(x.doc_id for x in c.changes),
                          ", ".join(x.kind for x in c.changes), number(c.effect, "+.4f"),
                          number(c.figure), "yes" if c.restores else "no")
        out.print(table)
    if d.restored:
        out.print(f"cause found: reverting {'it' if len(d.causes) == 1 else 'them'} restores "
                  f"A's figure (within {d.tol:g})", highlight=False)
        return 0
    out.print("no held-out change restores A's figure" + (
        f" (reverting every one above gives {number(d.together)})" if d.causes else
        f" ({d.rebuilds} rebuilds: no change moves it back alone)"), highlight=False)
    return 1


def demo(
    directory: Annotated[Path, typer.Argument(
        help="where to make the demo project when not run in one")] = Path("releval-demo"),
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
    recsys: Annotated[bool, typer.Option(
        "--recsys", help="the recommendation demo (users as queries over a generated "
        "purchase log)")] = False,
    verbose: Annotated[bool, typer.Option(
        "-v", "--verbose", help="show DVC's, Prefect's and the stages' own output too (always "
        "in reports/run.log)")] = False,
) -> None:
    """Generate the demo data, run the whole pipeline on it and print the summary
    (--recsys: the recommendation demo of examples/recsys-demo.yaml).

    Outside a project, first make one at DIRECTORY from the example (releval init) and run
    there."""
    if not _is_project(Path.cwd()):
        example = "recsys-demo.yaml" if recsys else "demo.yaml"
        _require(["pipeline"], "releval demo")  # then what the example's params need
        from releval.extras import needed
        from releval.params import load_params
        from releval.project import template
        from releval.project.scaffold import init as scaffold

        _require(needed(load_params(template.root() / "examples" / example)), "releval demo")
        try:
            lines = scaffold(directory, example=example)
        except InputError as exc:
            fail(str(exc))
        for line in lines:
            err.print(line, highlight=False)
        os.chdir(directory)
        root = _project_root("releval demo")
        code = _run_flow(Path("params.yaml"), [], verbose, "releval demo")
        if code:
            raise typer.Exit(code)
        _show_run(root, "releval demo")
        return
    root = _project_root("releval demo")
    if recsys:
        from releval.project import template

        example = root / RECSYS_DEMO
        if not example.is_file():  # a project made by releval init: the shipped example
            example = template.root() / RECSYS_DEMO
        code = _run_flow(example, [], verbose, "releval demo")
    else:
        try:
            source = (_read_params(params).get("prepare") or {}).get("source", "demo")
        except InputError as exc:
            fail(str(exc))
        if source in RECOMMENDATION_SOURCES:
            fail(f"{params} is in recommendation mode (prepare.source: {source}); run "
                 "`releval demo --recsys`, or restore the retrieval params (`git checkout "
                 "params.yaml`)")
        code = _run_flow(params, [] if source == "demo" else ["prepare.source=demo"], verbose,
                         "releval demo")
    if code:
        raise typer.Exit(code)
    _show_run(root, "releval demo")


PAD = 3  # a column's padding and border


def _recommendation_tables(summary: dict, title: str, width: int) -> list[Table]:
    """A recommendation evaluation's measures by group (ranking | calibration |
    beyond-accuracy), one row per system: each figure above its n and undefined, n/a (no
    number) where it does not apply; a group too wide for ``width`` is split over several
    tables."""
    from releval.documents.summary import Summary

    systems = Summary.model_validate(summary).systems
    first = max(len("system"), *(len(s) for s in systems)) + PAD + 1
    tables = []
    for group, measures in rec.grouped(systems).items():
        cells = {m: [(rec.value_text(by.get(m)), rec.note_text(by.get(m)))
                     for by in systems.values()] for m in measures}
        sizes = {m: max(len(m), *(len(t) for pair in cells[m] for t in pair)) + PAD
                 for m in measures}
        chunks: list[list[str]] = [[]]
        for m in measures:
            if chunks[-1] and first + sum(sizes[c] for c in chunks[-1]) + sizes[m] > width:
                chunks.append([])
            chunks[-1].append(m)
        for i, chunk in enumerate(chunks):
            table = Table(title=f"{title} — {group}" + (f" ({i + 1}/{len(chunks)})"
                                                         if len(chunks) > 1 else ""))
            table.add_column("system")
            for m in chunk:
                table.add_column(m, justify="right")
            for row, system in enumerate(systems):
                table.add_row(Text(system), *(Text(cells[m][row][0]) + Text(
                    "\n" + cells[m][row][1], style="dim") for m in chunk))
            tables.append(table)
    return tables


def _show_run(root: Path, title: str) -> None:
    """After a run: the metrics table (recommendation: the measures by group, with n and
    undefined, then the paired comparison over users, at each further horizon, and the
    slices that changed), the gate's
    decision, the report and the receipt."""
    from releval.cli.files import print_changed_slices, print_decision, print_paired
    from releval.documents.summary import Recommendation

    summary = json.loads(artifacts.path("evaluate.summary", root).read_text())
    out = console()
    block = summary.get("recommendation")
    if block:
        out.print(f"{title} — {', '.join(summary['splits'])} split, {summary['queries']} "
                  f"user-queries, qrels: {summary['qrels']}", highlight=False)
        out.print(rec.protocol_line(Recommendation.model_validate(block)), highlight=False)
        for table in _recommendation_tables(summary, title, out.width):
            out.print(table)
        out.print(rec.LEGEND, highlight=False, style="dim")
        for name, show in (("compare.comparison", print_paired),
                           ("slices.summary", print_changed_slices)):
            if (path := artifacts.path(name, root)).exists():
                show(json.loads(path.read_text()), out)
        if (path := artifacts.path("compare.comparison", root)).exists():
            from releval.documents.comparison import Horizons

            block = json.loads(path.read_text()).get("horizons")
            for line in rec.horizon_lines(Horizons.model_validate(block) if block else None):
                out.print(f"by horizon: {line}", highlight=False)
    else:
        table = Table(title=f"{title} — {', '.join(summary['splits'])} split, "
                            f"{summary['queries']} queries, qrels: {summary['qrels']}")
        for col in ("system", *SHOWN, "n", "undefined", "missing"):
            table.add_column(col, justify="left" if col == "system" else "right")
        lacking = {}
        answered = summary.get("answered") or {}
        for system, measures in summary["systems"].items():
            first = measures[SHOWN[0]]
            cells = []
            for m in SHOWN:
                entry = measures.get(m, {})
                if entry.get("applicable", True) is False:
                    lacking[m] = entry.get("missing", "")
                    cells.append("n/a")
                    continue
                cell = number(entry.get("value"))
                if entry.get("n", first["n"]) != first["n"]:  # a mean beside its own n
                    cell = f"{cell} (n {entry['n']})"
                cells.append(cell)
            gone = answered.get(system, {}).get("missing")
            table.add_row(system, *cells, str(first["n"]), str(first["undefined"]),
                          "?" if gone is None else str(gone))
        out.print(table)
        for m, why in lacking.items():
            out.print(f"{m}: n/a = not applicable" + (f": {why}" if why else ""),
                      highlight=False, style="dim")
        out.print(f"n, undefined: {SHOWN[0]}'s (a figure over other queries shows its own n); "
                  "missing: judged queries the run does not answer, scored 0", highlight=False,
                  style="dim")
        if (path := artifacts.path("compare.comparison", root)).exists():
            family = json.loads(path.read_text()).get("family")
            if family:
                from releval.cli.family import print_families

                print_families(family, out)
    decision = artifacts.path("gate.decision", root)
    if decision.exists():
        doc = json.loads(decision.read_text())
        print_decision(doc, doc.get("controlled", True) is not False, out, failed_only=True)
    page, summary_page, receipt = (artifacts.at(n) for n in (
        "reports.html", "reports.summary", "reports.receipt"))
    out.print(f"report: {page if (root / page).exists() else summary_page}"
              f" (also {summary_page}; log: {artifacts.at('reports.log')})", highlight=False)
    if (root / receipt).exists():
        digest = json.loads((root / receipt).read_text())["sha256"]
        out.print(f"receipt: {receipt} (sha256 {digest[:12]}); check it with "
                  f"`releval reproduce {receipt}`, list runs with `releval history`",
                  highlight=False)
