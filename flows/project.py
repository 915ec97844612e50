"""A project's whole pipeline as a flow a team's own Prefect flow calls (``releval.flows
.evaluate_project``): called inside a flow it runs as a subflow, and the pipeline flow's
tasks (each stage's ``dvc repro``, each output's validation) show as that run's tasks.

It runs the pipeline flow (``flows.pipeline.pipeline``) in the project folder: with the
analytics of Prefect and DVC off (``flows.console.offline_env``), the project's per-stage code
digests refreshed (``releval.project.template.refresh``), under the project's run lock
(``releval.project.runner.exclusive``: another run in the folder refuses this one) and on the
executor the params name (``flows.pipeline.on_executor``). The working directory is the
project's for the run and restored after it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.states import Failed

from flows.console import offline_env
from flows.pipeline import on_executor
from releval.errors import InputError
from releval.project import template
from releval.project.runner import exclusive

FLOW_NAME = "releval-project"


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[Path]:
    """The working directory set to ``folder`` (a project: its ``dvc.yaml`` there), restored
    after; InputError when ``folder`` holds no project."""
    if not (folder / "dvc.yaml").is_file():
        raise InputError("not a releval project: no dvc.yaml here (make one with releval init)",
                         str(folder))
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(before)


@flow(name=FLOW_NAME)
def evaluate_project(project_dir: str | Path = ".", params: str = "params.yaml",
                     force: bool = False):
    """The pipeline of the project at ``project_dir`` with its params file ``params``
    (relative to the project): Completed with the pipeline's record (each stage ran, skipped
    or kept; the gate's ``decision``; the receipt's digest), Failed with the first failure's
    message when the folder is no project, the lock is held, or a stage or a validation
    failed. ``force``: re-run the stages that are up to date too. The gate's verdict is in
    the record; a failed gate does not fail the flow (the caller decides)."""
    logger = get_run_logger()
    offline_env()
    try:
        with inside(Path(project_dir).resolve()), exclusive() as cleared:
            for what in cleared:
                logger.warning("cleared what an ended run left: %s", what)
            template.refresh()
            with on_executor(params) as (run, executed):
                state = run(params, force=force, executed=executed, return_state=True)
    except InputError as exc:
        logger.error(str(exc))
        return Failed(message=str(exc))
    if not state.is_completed():
        return Failed(message=state.message)
    return state.result()
