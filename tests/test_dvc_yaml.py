"""dvc.yaml is generated from the stage table (``stages.table``) and lists what every stage
really uses: each repo module its command imports (transitively) and each artifact its
``Inputs`` reads. (The params each stage reads are checked against dvc.yaml by running every
stage with recorded params: tests/flows/test_pipeline.py.)"""

import dataclasses
import importlib

import pytest
import yaml
from dvc.repo import Repo

from releval import artifacts
from releval.project.closure import code_files, command_module, is_code, stage_files
from stages import table
from tests.dag import ROOT


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


def test_dvc_yaml_is_what_the_stage_table_generates():
    """A hand edit of dvc.yaml fails here: edit the table, a stage's Inputs or the catalog,
    then ``make dag``."""
    assert (ROOT / "dvc.yaml").read_text() == table.render()


def test_a_hand_edit_is_caught():
    text = (ROOT / "dvc.yaml").read_text()
    for line in ("- releval/params/rules.py\n", "- data/slices/slices.parquet\n",
                 "- slices.min_n\n"):
        edited = text.replace(line, "", 1)
        assert edited != text and edited != table.render()


def test_every_stage_has_a_row_and_every_row_a_module():
    writers = {a.stage for a in artifacts.CATALOG.values()} - {None}
    assert writers == set(table.STAGE)
    for stage in table.STAGES:
        module = importlib.import_module(f"stages.{stage.name}")
        assert dataclasses.is_dataclass(module.Inputs) and callable(module.run)


def test_every_input_names_a_catalog_artifact():
    reads = [(name, f.metadata["read"].artifact) for name in table.STAGE
             for f in dataclasses.fields(importlib.import_module(f"stages.{name}").Inputs)
             if "read" in f.metadata]
    assert reads and all(artifact in artifacts.CATALOG for _, artifact in reads)


def test_an_input_naming_an_unknown_artifact_fails_where_it_is_declared():
    with pytest.raises(KeyError, match="no artifact 'compare.nope' in the catalog"):
        @dataclasses.dataclass(frozen=True)
        class Inputs:
            nope: dict = artifacts.reads("compare.nope")


def test_every_output_field_is_a_catalog_artifact_of_its_stage():
    for stage in table.STAGES:
        written = {a.name for a in artifacts.written_by(stage.name)}
        group = next(iter(written)).split(".")[0]
        outputs = importlib.import_module(f"stages.{stage.name}").Outputs
        assert {f"{group}.{f.name}" for f in dataclasses.fields(outputs)} <= written, stage


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


def test_every_input_slot_is_an_output_of_stage_inputs():
    """Each slot ``releval.project.inputs`` pins is tracked by DVC (cached, pushed, restored
    by ``releval reproduce --pinned``), and the params key naming it is a dependency."""
    from releval.project.inputs import FIXED, INPUT_DIR, RUNS

    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["inputs"]
    outs = {next(iter(o)) if isinstance(o, dict) else o for o in stage["outs"]}
    slots = {str(INPUT_DIR / slot) for slot, _ in FIXED.values()} | {str(INPUT_DIR / RUNS)}
    assert slots <= outs, slots - outs
    assert set(FIXED) <= set(stage["params"]), set(FIXED) - set(stage["params"])
