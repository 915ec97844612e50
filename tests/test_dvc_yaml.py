"""dvc.yaml lists what every stage really uses: each repo module its command imports
(transitively) is a dependency. (The params each stage reads are checked against dvc.yaml
by running every stage with recorded params: tests/flows/test_pipeline.py.)"""

import shlex

import pytest
import yaml
from dvc.repo import Repo

from releval.project.closure import (
    code_files,
    command_module,
    is_code,
    rewrite_deps,
    stage_files,
)
from tests.dag import ROOT, covered


@pytest.fixture(scope="module")
def stages():
    with Repo(str(ROOT)) as repo:
        return [(s.name, s.cmd, [d.def_path for d in s.deps]) for s in repo.index.stages]


def test_every_stage_lists_exactly_the_modules_its_command_runs(stages):
    """A stage's code deps are its command's import closure: a module it runs and does not
    list would leave its outputs stale; one it lists and never runs re-runs it for nothing.
    ``make dag`` rewrites the lists (``releval.project.closure``)."""
    assert {name.split("@")[0] for name, _, _ in stages} >= {"inputs", "prepare", "report"}
    wrong = {}
    for name, cmd, deps in stages:
        runs = stage_files(name.split("@")[0], command_module(cmd))
        listed = {d for d in deps if is_code(d)}
        if runs != listed:
            wrong[name] = {"missing": sorted(runs - listed), "unused": sorted(listed - runs)}
    assert wrong == {}, f"dvc.yaml's code deps are not exact (run make dag): {wrong}"


def test_the_check_fails_on_a_missing_and_on_an_unused_dep():
    """The rewrite puts back a dropped module and removes one the stage does not run."""
    text = (ROOT / "dvc.yaml").read_text()
    exact = rewrite_deps(text)
    assert exact == text
    dropped = text.replace("      - releval/params/rules.py\n", "", 1)
    assert dropped != text and rewrite_deps(dropped) == text
    unused = text.replace("      - stages/gate.py\n",
                          "      - stages/gate.py\n      - releval/report/html.py\n", 1)
    assert unused != text and rewrite_deps(unused) == text


def test_a_gate_rule_and_a_route_are_code_of_their_stages_only(stages):
    """Editing a gate rule's module re-runs only the gate (and what reads its output);
    a route's search re-runs the stages that search, never the gate."""
    deps = {name.split("@")[0]: set(d) for name, _, d in stages}
    assert {n for n, d in deps.items() if "releval/decision/gate/not_worse.py" in d} == {"gate"}
    assert "releval/retrieval/dense.py" not in deps["gate"] | deps["pool"] | deps["judgments"]
    assert {n for n, d in deps.items() if "releval/params/rules.py" in d} == set(deps)


def test_every_listed_code_dependency_exists(stages):
    gone = {(name, d) for name, _, deps in stages for d in deps
            if d.startswith(("releval/", "stages/", "flows/")) and not (ROOT / d).exists()}
    assert gone == set()


def test_the_import_closure_sees_lazy_and_package_imports():
    files = code_files("stages.common")
    assert {"stages/common.py", "stages/__init__.py", "releval/__init__.py",
            "releval/data/__init__.py", "releval/params/systems.py"} <= files
    assert "releval/retrieval/routes.py" not in files  # params are leaves
    assert {"releval/project/runner.py", "releval/decision/compare.py"} <= code_files(
        "releval.cli")  # imported inside the commands that use them
    assert code_files("stages.inputs") >= {"releval/project/inputs.py",
                                           "releval/params/__init__.py"}


def test_every_path_a_command_reads_is_a_dependency(stages):
    """Each ``--name path`` a stage's command passes (but its ``--out``) lies in its deps (a
    folder: the files the stage reads in it are listed): else a changed input would leave the
    stage's outputs silently stale. ``--receipt`` and ``--ledger`` are the exceptions: the
    flow writes the receipt, and keeps it in the ledger, outside the DAG and re-renders the
    report after it; the report shows a receipt only when it describes the very outputs it
    renders (``releval.project.receipt.describes``)."""
    unlisted = {}
    for name, cmd, deps in stages:
        argv = shlex.split(cmd)
        read = [value for flag, value in zip(argv, argv[1:], strict=False)
                if flag.startswith("--")
                and flag not in ("--out", "--params", "--system", "--receipt", "--ledger")
                and "/" in value]
        missing = [path for path in read if not covered(path, deps)
                   and not any(d.startswith(path.rstrip("/") + "/") for d in deps)]
        if missing:
            unlisted[name] = missing
    assert unlisted == {}


def test_every_input_slot_is_an_output_of_stage_inputs():
    """Each slot ``releval.project.inputs`` pins is tracked by DVC (cached, pushed, restored
    by ``releval reproduce --pinned``), and the params key naming it is a dependency."""
    from releval.project.inputs import FIXED, INPUT_DIR, RUNS

    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["inputs"]
    outs = {next(iter(o)) if isinstance(o, dict) else o for o in stage["outs"]}
    slots = {str(INPUT_DIR / slot) for slot, _ in FIXED.values()} | {str(INPUT_DIR / RUNS)}
    assert slots <= outs, slots - outs
    assert set(FIXED) <= set(stage["params"]), set(FIXED) - set(stage["params"])
