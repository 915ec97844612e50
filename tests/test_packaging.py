"""The install: the core commands run without any extra, a command that needs a missing extra
says which in one line, and the built wheel carries the pipeline (stages, flows, the shipped
DAG and examples). The slow check installs that wheel in a fresh venv outside the checkout
and runs ``releval init`` + ``releval run`` there."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from releval.extras import EXTRAS
from tests.projects import tiny_beir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "releval" / "examples"
# every module an extra installs, and scipy (the pipeline extra's): none may be imported
# by the core commands, and the check below makes each one unimportable
BLOCKED = sorted({m for modules in EXTRAS.values() for m in modules} | {"scipy"})

CORE = """
import sys, json
BLOCKED = set(json.loads(sys.argv[1]))

for name in BLOCKED:  # the core install: the extras' modules are not there (import fails,
    sys.modules[name] = None  # find_spec says None)
from typer.testing import CliRunner
from releval.cli import app

codes = {}
for name, args in json.loads(sys.argv[2]).items():
    result = CliRunner().invoke(app, args)
    codes[name] = [result.exit_code, result.stdout, result.stderr, repr(result.exception)]
codes["loaded"] = sorted(m for m in BLOCKED if sys.modules.get(m) is not None)
print(json.dumps(codes))
"""


def core(tmp_path: Path, commands: dict, blocked: list[str] = BLOCKED) -> dict:
    done = subprocess.run([sys.executable, "-c", CORE, json.dumps(blocked),
                           json.dumps(commands)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_core_commands_run_without_any_extra(tmp_path):
    qrels, run = str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    other = tmp_path / "other.txt"
    other.write_text("".join(f"{line.rsplit(' ', 1)[0]} other\n"
                             for line in Path(run).read_text().splitlines()[::-1]))
    out = core(tmp_path, {"metrics": ["metrics", qrels, run],
                          "compare": ["compare", run, str(other), "--qrels", qrels],
                          "gate": ["gate", "--decision", "missing.json"]})
    assert out["metrics"][0] == 0 and "nDCG@10" in out["metrics"][1], out["metrics"]
    assert out["compare"][0] == 0, out["compare"]
    assert out["gate"][0] == 2 and "missing.json" in out["gate"][2]
    assert out["loaded"] == []  # no torch, prefect, dvc, great_expectations, … imported


def test_a_command_needing_a_missing_extra_says_which_in_one_line(tmp_path):
    project = tmp_path / "proj"
    (project / ".releval").mkdir(parents=True)
    (project / "dvc.yaml").write_text("stages: {}\n")
    (project / ".releval" / "code.yaml").write_text("")
    out = core(project, {"init": ["init", "new", "--corpus", "x"], "run": ["run"],
                         "demo": ["demo"]})
    for name, command in (("init", "releval init"), ("run", "releval run"),
                          ("demo", "releval demo")):
        code, _, stderr, _ = out[name]
        assert code == 2, out[name]
        assert stderr.strip() == f"error: {command}: needs the 'pipeline' extra: pip install " \
            "'releval[pipeline]'", stderr
    assert not (project / "new").exists()


def test_the_demo_asks_for_the_extras_its_example_uses_before_writing(tmp_path):
    out = core(tmp_path, {"demo": ["demo", "here"]}, blocked=list(EXTRAS["dense"]))
    code, _, stderr, _ = out["demo"]
    assert code == 2 and stderr.strip() == ("error: releval demo: needs the 'dense' extra: "
                                            "pip install 'releval[dense]'"), out["demo"]
    assert not (tmp_path / "here").exists()


def test_a_run_needs_the_extras_of_its_routes():
    from releval.extras import needed
    from releval.params import parse_params

    lexical = parse_params({"candidates": {"systems": {
        "bm25": {"route": "bm25"}, "bm25_tuned": {"route": "bm25", "k1": 1.2}}},
        "fusion": {"systems": {}}, "compare": {"baseline": "bm25", "candidate": "bm25_tuned"}},
        "p")
    assert needed(lexical) == ["pipeline", "report"]
    dense = parse_params({"base": {"executor": "dask"}, "candidates": {"systems": {
        "bm25": {"route": "bm25"}, "dense": {"route": "dense"}}}}, "p")
    assert needed(dense) == ["pipeline", "report", "dense", "dask"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-q", str(ROOT), "-w", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (found,) = out.glob("releval-*.whl")
    return found


def test_the_wheel_carries_the_pipeline(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]:
        assert f"stages/{stage}.py" in names
    assert {"flows/pipeline.py", "flows/validation.py", "releval/project/pipeline/dag.yaml",
            "releval/project/pipeline/examples/demo.yaml",
            "releval/project/pipeline/examples/fixture/qrels/test.tsv"} <= names
    shipped = zipfile.ZipFile(wheel).read("releval/project/pipeline/dag.yaml").decode()
    assert shipped == (ROOT / "dvc.yaml").read_text()
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("METADATA"))).decode()
    core_requires = [line for line in metadata.splitlines()
                     if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert not [line for line in core_requires
                if any(m in line.lower() for m in ("torch", "prefect", "dvc", "great"))]


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv_runs_init_and_run(wheel, tmp_path):
    """Outside the checkout: a venv with the wheel and its pipeline, dense and report extras;
    ``releval init`` on a small BEIR folder, then ``releval run --gate``."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                          f"{wheel}[pipeline,dense,report]"], capture_output=True, text=True,
                         timeout=1800)
    assert pip.returncode == 0, pip.stderr[-2000:]
    data = tiny_beir(tmp_path / "beir")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", "-c", f"releval init proj --corpus {data} && cd proj && "
                           "releval run --gate"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=3000)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    decision = json.loads((tmp_path / "proj/data/gate/decision.json").read_text())
    assert (done.returncode == 0) == decision["passed"]
    code = yaml.safe_load((tmp_path / "proj/.releval/code.yaml").read_text())
    receipt = (tmp_path / "proj/reports/receipt.json").read_text()
    assert code["code"] in receipt and code["version"] in receipt  # the releval that ran
