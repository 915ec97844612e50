"""dvc.yaml lists what every stage really uses: each repo module its command imports
(transitively) is a dependency. (The params each stage reads are checked against dvc.yaml
by running every stage with recorded params: tests/flows/test_pipeline.py.)"""

import shlex

import pytest
import yaml
from dvc.repo import Repo

from tests.dag import ROOT, code_files, covered


@pytest.fixture(scope="module")
def stages():
    with Repo(str(ROOT)) as repo:
        return [(s.name, s.cmd, [d.def_path for d in s.deps]) for s in repo.index.stages]


def test_every_stage_lists_every_module_its_command_imports(stages):
    assert {name.split("@")[0] for name, _, _ in stages} >= {"inputs", "prepare", "report"}
    missing = {}
    for name, cmd, deps in stages:
        argv = shlex.split(cmd)
        module = argv[argv.index("-m") + 1]
        unlisted = sorted(f for f in code_files(module) if not covered(f, deps))
        if unlisted:
            missing[name] = unlisted
    assert missing == {}, f"dvc.yaml misses dependencies: {missing}"


def test_every_listed_code_dependency_exists(stages):
    gone = {(name, d) for name, _, deps in stages for d in deps
            if d.startswith(("releval/", "stages/", "flows/")) and not (ROOT / d).exists()}
    assert gone == set()


def test_the_import_closure_sees_lazy_and_package_imports():
    files = code_files("stages.common")
    assert {"stages/common.py", "stages/__init__.py", "releval/__init__.py",
            "releval/data/__init__.py", "releval/retrieval/routes.py"} <= files
    assert {"releval/project/runner.py", "releval/decision/compare.py"} <= code_files(
        "releval.cli")  # imported inside the commands that use them
    assert code_files("stages.inputs") >= {"releval/project/inputs.py", "releval/params.py"}


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
