"""The Prefect flow: each DVC stage in order, its outputs validated before the next starts.

Stages run through ``dvc repro --single-item`` (so unchanged stages are skipped and
dvc.lock pins what ran; a stage ``dvc status`` found up to date when the run began is passed
over without asking again while no stage run since changed its outputs, ``Fresh``); then
the stage's outputs are checked with their suites, Great Expectations expectations run as
compiled pandas checks (``flows.validation``; each output's suite is its entry's in
``releval.artifacts``; a check that passed on the same bytes is not run again,
``flows.validated``), and a failed check stops the flow with the suite, expectation, column
and example rows. Validation reports are saved as JSON in the catalog's validation folder.
The stages, their order and their outputs come from dvc.yaml (``dvc_stages``). Each run ends
with its receipt (``releval.project.run_receipt``). Without PREFECT_API_URL, Prefect runs on a
temporary local server.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import yaml
from prefect import flow, get_run_logger, task
from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)
from prefect.states import Failed

from flows import dvc_files, validated
from flows.console import LOG, Board, offline_env, quiet
from releval import artifacts, executor
from releval.documents.decision import Decision
from releval.errors import InputError, one_line
from releval.params import load_params, parse_params, read_raw
from releval.project import params_file, run_receipt, template

VALIDATION_DIR = artifacts.path("validation.reports")
REPORT_STAGE = "report"  # renders the run and its receipt: written just before, re-rendered
# when the receipt's content (its sha256) differs from the one the page shows
GATE_STAGE = "gate"  # reads the looks file (reports.looks): this run's looks added just before
BOARD: list[Board] = []  # the quiet console's stage lines while main() shows one


def checked(out: str) -> artifacts.Artifact | None:
    """The catalog entry of the output path ``out`` when it has a suite, else None."""
    entry = artifacts.matching(out)
    return entry if entry is not None and entry.suite is not None else None


def dvc_stages(root: str | Path = ".") -> dict[str, dict[str, list[str]]]:
    """dvc.yaml's stages in order, each a group (a foreach stage's items, or the stage
    alone) of stage name -> its outputs' paths after expansion: the one source of the DAG."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        stages: dict[str, dict[str, list[str]]] = {}
        for stage in repo.index.stages:
            stages.setdefault(stage.name.split("@")[0], {})[stage.name] = [
                o.def_path for o in stage.outs]
    order = yaml.safe_load((Path(root) / "dvc.yaml").read_text())["stages"]
    return {name: stages[name] for name in order if name in stages}


class Fresh:
    """The stages a run may pass over without asking DVC again: those ``dvc status`` did not
    find out of date when the run began, for as long as no stage run since has changed its
    outputs (their hashes in dvc.lock). After such a change every later stage goes through
    ``repro``, which sees it."""

    def __init__(self):
        from dvc.repo import Repo

        with Repo(".") as repo:
            self.stale = set(repo.status())
        self.changed = False
        self.locked = self._read()

    def skippable(self, items: dict) -> bool:
        return not self.changed and not self.stale & set(items)

    def ran(self, items: dict) -> None:
        """``items`` (a stage's foreach items, or the stage alone) ran: did their outs move?"""
        before, self.locked = self.locked, self._read()
        self.changed |= any(before.get(n, {}).get("outs") != self.locked.get(n, {}).get("outs")
                            for n in items)

    @staticmethod
    def _read() -> dict:
        return dvc_files.lock()


@contextlib.contextmanager
def warm_worker() -> Iterator[None]:
    """The stages' warm worker (``stages.worker``) for this run: started beside the flow,
    named in ``RELEVAL_STAGE_WORKER`` for the stage commands DVC runs, stopped at the end.
    A command that finds it not yet listening runs its stage itself."""
    from stages.worker import ENV

    with tempfile.TemporaryDirectory(prefix="releval-") as folder:
        address = os.path.join(folder, "stages.sock")
        worker = subprocess.Popen([sys.executable, "-m", "stages.worker", address,
                                   str(os.getpid())],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        os.environ[ENV] = address
        try:
            yield
        finally:
            os.environ.pop(ENV, None)
            worker.terminate()
            worker.wait()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """The objects alive now kept out of the collector's passes for the block (``gc.freeze``:
    its pauses, a tenth of a second each over the flow's heap, would fall into the stages);
    released after it, so a process that runs many flows collects them again."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@task(retries=1, retry_delay_seconds=2, task_run_name="dvc repro {stage}")
def repro(stage: str, force: bool = False) -> str:
    """Run one stage through DVC: "ran", "skipped" (unchanged) or "failed: <why>". A stage
    that fails (bad input, a refused comparison) fails the same way again, so it is reported,
    not retried; only unexpected errors (I/O) raise and get the retry."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    bin_dir = str(Path(sys.executable).parent)  # stage commands call this ``python``
    if not os.environ.get("PATH", "").startswith(bin_dir):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    logging.getLogger("dvc").propagate = False  # DVC prints its own lines; no echo
    dvc_files.install()
    try:
        with Repo(".") as repo:
            ran = repo.reproduce(stage, single_item=True, force=force)
    except DvcException as exc:
        cause = f": {exc.__cause__}" if exc.__cause__ else ""
        return f"failed: stage {stage}: {exc}{cause}"
    get_run_logger().info("%s: %s", stage, "ran" if ran else "unchanged, skipped")
    return "ran" if ran else "skipped"


def _lookup(dotted: str, params: dict):
    for key in dotted.split("."):
        params = params[key]
    return params


@task(task_run_name="validate {stage}")
def validate(stage: str, outs: list[str], params: dict) -> tuple[int, str | None]:
    """Check every output of ``stage`` that has a suite: (checks passed, the first failure's
    message or None). A check that passed on the same bytes is not run again
    (``flows.validated``)."""
    passed, done = 0, validated.Ledger(VALIDATION_DIR)
    for out in outs:
        entry = checked(out)
        if entry is None:
            continue
        path = Path(out)
        name = path.parent.name if "*" in entry.pattern else path.stem
        kwargs = {k: _lookup(dotted, params) for k, dotted in entry.suite_params}
        k = validated.key(entry.suite, kwargs, path)
        if k not in done:
            from flows.validation import ValidationFailed, check  # pandas checks, no GX

            try:
                check(entry.suite, pd.read_parquet(path),
                      VALIDATION_DIR / stage / f"{name}.{entry.suite}.json", **kwargs)
            except ValidationFailed as exc:
                return passed, f"validation failed after stage {stage} ({path}): {exc}"
            done.add(k)
        passed += 1
    return passed, None


@task(task_run_name="dvc push inputs")
def push_inputs() -> str:
    """Send the pinned inputs to the default DVC remote, so `releval reproduce` can restore
    them elsewhere; a project without a remote keeps them in its cache only."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    with Repo(".") as repo:
        if not repo.config["core"].get("remote"):
            return "no default DVC remote: pinned inputs kept in the local cache only"
        try:
            pushed = repo.push(targets=["inputs"])
        except DvcException as exc:
            return f"pinned inputs not pushed: {exc}"
    return f"pinned inputs pushed to remote {repo.config['core']['remote']!r} ({pushed} new)"


def _validate_all(stage: str, outs: list[str], params: dict, on_cluster: bool):
    """``validate`` of a stage's outputs: in the flow, or one task per output submitted to
    the flow's DaskTaskRunner (``on_cluster``), gathered in order."""
    if not on_cluster:
        return validate(stage, outs, params)
    futures = [validate.submit(stage, [out], params) for out in outs if checked(out)]
    results = [f.result() for f in futures]
    return (sum(n for n, _ in results),
            next((problem for _, problem in results if problem), None))


@flow(name="releval-pipeline")
def pipeline(params_path: str = "params.yaml", force: bool = False,
             skip: tuple[str, ...] = (), schedule: dict | None = None,
             executed: dict | None = None):
    """Every dvc.yaml stage in order (inputs → prepare → … → report), each stage's outputs
    validated before the next; then the receipt (reports/receipt.json, kept in the ledger).
    Stops at the first stage that fails or whose outputs fail validation; no later stage runs.
    ``force`` re-runs stages that are up to date; ``skip`` leaves stages out (reproduce);
    ``schedule``: a scheduled run's deployment, flow run and window; ``executed``: where the
    heavy work ran (``on_executor``); both kept in the receipt."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    raw = read_raw(params_path)  # read once: parsed here, its own values kept in the receipt
    p = parse_params(raw, params_path)
    params = p.model_dump()
    record: dict = {}
    validations = 0
    receipt = None
    with contextlib.ExitStack() as running:
        running.enter_context(warm_worker())  # the stage commands' imports, done once
        dvc_files.install()  # DVC's files read and written stage by stage, in DVC's bytes
        dag = dvc_stages()
        fresh = Fresh()
        running.enter_context(frozen())  # what the flow holds by now: Prefect's, DVC's
        for stage, items in dag.items():
            outs = [out for paths in items.values() for out in paths]
            if stage == REPORT_STAGE:
                shown = (run_receipt.last_receipt() or {}).get("sha256")
                try:
                    receipt = _receipt(p, raw, validations, started,
                                       {n for s, i in dag.items() if s != stage for n in i},
                                       schedule, executed)
                except InputError as exc:
                    get_run_logger().error(str(exc))
                    return Failed(message=str(exc))
            if stage == GATE_STAGE and stage not in skip and run_receipt.write_looks(p):
                fresh.changed = True  # a new look: the gate must count it
            _show("start", stage)
            if stage in skip:
                record[stage] = "kept"
                _show("finish", stage, "kept")
                continue
            # the report shows the receipt: rendered again when its content changed
            forced = force or (stage == REPORT_STAGE and receipt["sha256"] != shown)
            if not forced and fresh.skippable(items):
                record[stage] = "skipped"
            else:
                record[stage] = repro(stage, forced)
                if record[stage] == "ran":
                    fresh.ran(items)
            if record[stage].startswith("failed"):  # the stage printed its own one-line error
                _show("finish", stage, "failed")
                get_run_logger().error(record[stage])
                return Failed(message=record[stage])
            passed, problem = _validate_all(stage, outs, params,
                                            (executed or {}).get("task_runner") == "dask")
            validations += passed
            _show("finish", stage, "failed" if problem else record[stage])
            if problem:
                get_run_logger().error(problem)
                return Failed(message=problem)
    create_markdown_artifact(artifacts.path("reports.summary").read_text(),
                             key="releval-summary", description="releval summary")
    create_markdown_artifact(artifacts.path("reports.decision").read_text(),
                             key="releval-decision", description="the release decision")
    page = artifacts.path("reports.html")
    if page.exists():
        create_link_artifact(page.resolve().as_uri(), link_text="releval report (HTML)",
                             key="releval-report", description="the run's HTML report")
    metrics = json.loads(artifacts.path("evaluate.metrics").read_text())
    create_table_artifact([{"system": s, **m} for s, m in metrics.items()],
                          key="releval-metrics", description="metrics per system")
    decision = Decision.read(artifacts.path("gate.decision"))
    create_table_artifact([o.model_dump(include={"name", "passed", "value", "threshold",
                                                 "reason"}) for o in decision.rules],
                          key="releval-gate",
                          description=f"release gate: {decision.verdict} "
                                      f"({decision.candidate} vs {decision.baseline})")
    record["decision"] = decision.verdict
    if "inputs" not in skip:
        get_run_logger().info(push_inputs())
    if receipt is None:  # a pipeline without a report stage
        receipt = _receipt(p, raw, validations, started,
                           {n for items in dag.values() for n in items}, schedule, executed)
    record["receipt"] = receipt["sha256"][:12]
    return record


def _receipt(p, raw: dict, validations: int, started: str, stages: set[str],
             schedule: dict | None, executed: dict | None) -> dict:
    """The run's receipt written (``releval.project.run_receipt.write_receipt``) and its
    line printed."""
    doc = run_receipt.write_receipt(p, raw, validations, started, stages, schedule, executed)
    print(f"receipt: {run_receipt.RECEIPT} (sha256 {doc['sha256'][:12]}; "
          f"{json.dumps(doc['receipt']['work'])})")
    return doc


def _cron(text: str) -> None:
    """A cron string as ``releval serve`` schedules it (Prefect's ``Cron``, UTC)."""
    from prefect.schedules import Cron

    Cron(text, timezone="UTC")


def parsers() -> dict:
    """Every parser of the params references a leaf cannot check: the library's
    (``releval.project.params_file.parsers``) and the cron string's, by Prefect."""
    return params_file.parsers() | {"cron": _cron}


@contextlib.contextmanager
def on_executor(params_path: str) -> Iterator[tuple]:
    """(the pipeline flow to call, where its heavy work runs) for ``base.executor``.

    ``local``: the flow as it is. ``dask``: the team's scheduler (``base.dask.address``) is
    reached, or a LocalCluster started, once for the whole run; its address goes to every
    stage in ``RELEVAL_DASK_ADDRESS`` (stages run as DVC's child processes), so their shards
    and blocks run on it. On a LocalCluster the flow's validation tasks run there too,
    through prefect-dask's DaskTaskRunner on the same cluster; on a team's cluster they stay
    in the flow, since its workers need not see this checkout's files. The params are
    checked in full first (``parsers``), before any stage runs."""
    p = load_params(params_path, parsers=parsers())
    if p.base.executor == "local":
        yield pipeline, {"executor": "local", "workers": 1}
        return
    from prefect_dask import DaskTaskRunner

    with executor.of(p) as cluster:
        address = cluster.client.scheduler.address
        local = cluster.cluster == "local"
        executed = cluster.describe() | {"shards": p.base.shards.model_dump(),
                                         "task_runner": "dask" if local else "thread"}
        before = os.environ.get(executor.ADDRESS_ENV)
        os.environ[executor.ADDRESS_ENV] = address
        try:
            yield (pipeline.with_options(task_runner=DaskTaskRunner(address=address))
                   if local else pipeline), executed
        finally:
            if before is None:
                os.environ.pop(executor.ADDRESS_ENV, None)
            else:
                os.environ[executor.ADDRESS_ENV] = before


def unchanged(params_path: str) -> dict | None:
    """The last run's receipt when this run has nothing to do, else None: a local run whose
    inputs are pinned as given (``releval.project.inputs.pinned_as_given``), whose stages
    ``dvc status`` finds up to date (``inputs`` always reports itself), which adds no look,
    and whose receipt, collected afresh, has the last one's sha256. Such a run records no
    flow run (no Prefect server starts) and renders nothing: the outputs, the decision and
    the page are the last run's, and say so."""
    from dvc.repo import Repo

    from releval.project.inputs import pinned_as_given

    last = run_receipt.last_receipt()
    if last is None:  # no run yet (or its receipt is gone): the flow has work
        return None
    raw = read_raw(params_path)
    p = parse_params(raw, params_path, parsers())
    if p.base.executor != "local" or not pinned_as_given(p):
        return None
    with Repo(".") as repo:
        if set(repo.status()) - {"inputs"}:
            return None
        names = {stage.name for stage in repo.index.stages  # the receipt's: before report
                 if stage.name != REPORT_STAGE}
    if run_receipt.looks_changed(p):
        return None
    doc = run_receipt.collect(p, raw, last["receipt"]["work"]["validations_passed"], {},
                              names)  # the run's own part (times) is not in the digest
    return last if doc["sha256"] == last["sha256"] else None


def _show(method: str, *args) -> None:
    for board in BOARD:
        getattr(board, method)(*args)


def _nothing_to_do(board: Board, last: dict) -> None:
    """Every stage's line, skipped, and the line that says whose outputs stand."""
    for stage in yaml.safe_load(Path("dvc.yaml").read_text())["stages"]:
        board.start(stage)
        board.finish(stage, "skipped")
    board.terminal.print(
        f"nothing changed since the run that finished {last['run']['finished_at']} (receipt "
        f"sha256 {last['sha256'][:12]}): no stage ran and no flow run was recorded; the "
        "outputs, the decision and the report are that run's", highlight=False)


class NothingToDo(Exception):
    """This run has nothing to do (``unchanged``): the flow is not started."""


def main() -> None:
    """``python -m flows.pipeline [--params params.yaml] [--force] [--skip STAGE] [-v]
    [--outcome FILE]``: one line per stage on the console, everything else in reports/run.log
    (``-v``: on the console too); exit 0 on success, else one error line per failure
    (``ending``)."""
    import argparse

    ap = argparse.ArgumentParser(description="Run the releval pipeline flow.")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--force", action="store_true", help="re-run up-to-date stages too")
    ap.add_argument("--skip", action="append", default=[], help="leave a stage out")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show DVC's, Prefect's and the stages' own output too")
    ap.add_argument("--outcome", type=Path,
                    help="write each stage's status and seconds and the error here (JSON)")
    args = ap.parse_args()
    offline_env()
    template.refresh()  # an initialised project: the installed code's digest per stage
    start = LOG.stat().st_size if LOG.exists() else 0
    problem, refused = None, False
    with quiet(LOG, verbose=args.verbose) as board:
        BOARD.append(board)
        try:
            last = None if args.force or args.skip else unchanged(args.params)
            if last is not None:
                _nothing_to_do(board, last)
                raise NothingToDo
            with on_executor(args.params) as (run, executed):
                state = run(args.params, force=args.force, skip=tuple(args.skip),
                            executed=executed, return_state=True)
            problem = None if state.is_completed() else f"error: {state.message}"
        except NothingToDo:
            pass
        except Exception as exc:  # bad params (2); a bug (1): its traceback into the log
            problem, status = one_line(exc, f"its traceback is in {LOG}")
            refused = status == 2
            if not refused:
                traceback.print_exception(exc)
        finally:
            BOARD.remove(board)
    logging.getLogger("prefect").setLevel(logging.WARNING)  # its exit notes: in the log only
    lines, status = ending(problem, _errors_since(start), refused) if problem else ([], 0)
    if args.outcome:
        args.outcome.write_text(json.dumps({
            "stages": {stage: {"status": state, "seconds": round(seconds, 1)}
                       for stage, (state, seconds) in board.lines.items()},
            "error": next((line.removeprefix("error: ") for line in lines), None)}))
    for line in lines:
        print(line, file=sys.stderr)
    sys.exit(status)


def ending(problem: str, stage_errors: list[str], refused: bool = False) -> tuple[list[str],
                                                                                  int]:
    """What a failed run prints on stderr, one line per failure (``problem``: the flow's own)
    and where the whole log is, and its exit status. A stage ends with its own line
    (``stages.common.guarded``): ``error:`` when it refused its input (exit 2), ``internal
    error:`` on a bug (its traceback in the log); those lines stand for the failure (DVC's
    "failed to reproduce …" stays in the log). The status is 2 when a stage refused its input
    or the flow refused its own (``refused``), else 1."""
    errors = stage_errors or [problem]
    refused = refused or any(line.startswith("error:") for line in stage_errors)
    return [*errors, f"(the whole log: {LOG})"], 2 if refused else 1


def _errors_since(offset: int) -> list[str]:
    """The ``error:`` and ``internal error:`` lines the stages wrote to the log after
    ``offset``, once each."""
    with LOG.open("rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    return list(dict.fromkeys(line.strip() for line in text.splitlines()
                              if line.strip().startswith(("error:", "internal error:"))))


if __name__ == "__main__":  # the importable module's main, so that its tasks pickle by
    from flows.pipeline import main as imported  # reference on Dask (a task of __main__ is
    imported()  # pickled by value, with every global it names)
