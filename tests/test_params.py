from pathlib import Path

import pytest
import yaml

from releval.errors import InputError
from releval.params import load_params
from tests.endings import one_line

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params.yaml"


def test_project_params_validate_and_overrides_apply():
    p = load_params(PARAMS, ["prepare.source=beir", "prepare.path=x", "candidates.depth=50"])
    assert (p.prepare.source, p.prepare.path, p.candidates.depth) == ("beir", "x", 50)
    assert set(p.candidates.systems) == {"bm25", "dense", "prod_v2", "prod_v3"}
    assert p.systems() == ["bm25", "dense", "prod_v2", "prod_v3", "hybrid"]


@pytest.mark.parametrize("override,rule", [
    ("prepare.sauce=demo", "prepare.sauce: Extra inputs are not permitted"),
    ("prepare.source=csv", "prepare.source"),
    ("candidates.depth=0", "candidates.depth"),
    ("candidates.systems.x.route=teleport", "candidates.systems.x"),
    ("novalue", "is not key=value"),
    ("judgments.automatic={judge: umbrela}", "judge 'umbrela' needs a labels file"),
    ("judgments.automatic={validation_share: 1}", "judgments.automatic.validation_share"),
])
def test_unknown_keys_and_bad_values_are_errors_naming_the_key(override, rule):
    with pytest.raises(InputError, match=rule):
        load_params(PARAMS, [override])


def test_set_overrides_change_only_the_values_and_keep_every_comment(tmp_path):
    from pathlib import Path

    from releval.params import read_raw, write_overrides

    original = (Path(__file__).resolve().parents[1] / "params.yaml").read_text()
    path = tmp_path / "params.yaml"
    path.write_text(original)
    write_overrides(path, ["prepare.source=beir", "prepare.path=../shared/data/cacm",
                           "gate.rules=[]", "candidates.systems.bm25.k1=0.9",
                           "failures.k=5"])
    lines, before = path.read_text().splitlines(), original.splitlines()
    assert "  source: beir          # demo | beir | tables" in lines
    assert any(line.startswith("  path: ../shared/data/cacm") and line.endswith(
        "# BEIR folder or folder of parquet tables (for beir / tables)") for line in lines)
    changed = [b for b in before if b not in lines]
    block = before[before.index("  rules:"):]  # the gate's rules, up to the next section
    block = [line for line in block[:next(i for i, line in enumerate(block)
                                          if line and not line.startswith(" "))] if line.strip()]
    assert len(changed) == 4 + len(block)  # four value lines, and the rules block now `[]`
    comments = [line.split("# ", 1)[1] for line in before if "# " in line]
    lost = [c for c in comments if c not in path.read_text()]
    assert lost == [line.split("# ", 1)[1] for line in block[1:] if "# " in line]
    raw = read_raw(path)
    assert raw["gate"]["rules"] == [] and raw["candidates"]["systems"]["bm25"]["k1"] == 0.9
    assert raw["failures"]["k"] == 5 and raw["prepare"]["source"] == "beir"


def test_set_overrides_add_missing_keys_and_leave_an_unchanged_file_byte_identical(tmp_path):
    from releval.params import read_raw, write_overrides

    path = tmp_path / "params.yaml"
    text = "# team notes\nbase:\n  seed: 3   # lucky\n\nsplit:\n  method: given\n"
    path.write_text(text)
    write_overrides(path, [])
    assert path.read_text() == text
    write_overrides(path, ["base.seed=3", "split.quantiles=[0.6, 0.8]", "pool.depth=20"])
    assert path.read_text().startswith("# team notes\nbase:\n  seed: 3   # lucky\n\nsplit:\n")
    assert read_raw(path) == {"base": {"seed": 3}, "split": {"method": "given",
                              "quantiles": [0.6, 0.8]}, "pool": {"depth": 20}}


@pytest.mark.parametrize("path", ["params.yaml", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.yaml"))])
def test_every_shipped_params_file_parses_and_names_every_key_dvc_yaml_lists(path):
    """DVC refuses to run a stage whose listed params are missing from params.yaml, and
    ``releval run --params examples/<x>.yaml`` makes that file params.yaml."""
    load_params(ROOT / path)
    tree = yaml.safe_load((ROOT / path).read_text())
    missing = []
    for stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values():
        for key in stage.get("do", stage).get("params", []):
            node = tree
            for part in str(key).split(".${")[0].split("."):
                if not isinstance(node, dict) or part not in node:
                    missing.append(key)
                    break
                node = node[part]
    assert missing == []


def test_set_overrides_reach_into_a_flow_mapping_and_keep_its_comment(tmp_path):
    from releval.params import read_raw, write_overrides

    path = tmp_path / "params.yaml"
    path.write_text("health:\n  cost:\n    bm25: {per_query: 0.00002, unit: USD}  # a lookup\n")
    write_overrides(path, ["health.cost.bm25.per_query=0.00003"])
    assert path.read_text().endswith("  # a lookup\n")
    assert read_raw(path)["health"]["cost"]["bm25"] == {"per_query": 0.00003, "unit": "USD"}


def test_an_override_that_cannot_be_written_in_place_is_one_line_and_writes_nothing(tmp_path):
    from releval.params import write_overrides

    path = tmp_path / "params.yaml"
    text = "split:\n  quantiles: [0.7,  # a flow sequence over two lines\n    0.85]\n"
    path.write_text(text)
    with pytest.raises(InputError, match="could not set the overrides in place"):
        write_overrides(path, ["split.quantiles=[0.6, 0.8]"])
    assert path.read_text() == text


# --- checked before the first stage: each refusal is one line naming where the value was written


def refused(result, *words: str) -> str:
    """Exit 2, exactly one stderr line holding ``words``, no traceback."""
    assert result.exit_code == 2, result.output
    return one_line(result.stderr, result.output, *words)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (dvc.yaml, the demo's params.yaml) as the working directory."""
    import shutil

    for item in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / item, tmp_path)
    (tmp_path / "flows").mkdir()  # a source checkout: releval run's project check
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    from typer.testing import CliRunner

    from releval.cli import app

    return CliRunner().invoke(app, ["run", *args])


GUARDED = ("gate.rules=[{rule: guarded, primary: nDCG@10, guards: [{measure: latency p95}, "
           "{measure: nDGC@10}]}]")


@pytest.mark.parametrize("override,words", [
    (GUARDED, ["params.yaml:gate.rules.0.guards.1.measure", "did you mean nDCG@10?"]),
    ("compare.measures=[nDCG@10, R@1OO]", ["params.yaml:compare.measures.1", "'R@1OO'"]),
    ("judgments.automatic={judge: dense, measures: [nDCG@10, APP]}",
     ["params.yaml:judgments.automatic.measures.1", "'APP'"]),
    ("gate.rules=[{rule: no_regression, slices: [country=DE]}]",
     ["params.yaml:gate.rules.0.slices.0", "'country' is not a labelled dimension"]),
    ("pool.systems=[bm25, hybrid]",
     ["params.yaml:pool.systems.1", "'hybrid' is not a candidate system"]),
    ("compare.also=[{baseline: bm25, candidate: prod_v9}]",
     ["params.yaml:compare.also.0.candidate", "'prod_v9' is not a system"]),
    ("gate.rules=[{rule: seeds, candidate: nope}]",
     ["params.yaml:gate.rules.0.candidate", "'nope' is not a system"]),
    ("base.dask.address=tcp://10.0.0.5:port",
     ["params.yaml:base.dask.address", "the port 'port' is not a number"]),
])
def test_what_params_name_is_checked_before_any_stage_runs(project, override, words):
    """A name params give that nothing declares, a cron string and a scheduler address are
    refused by ``releval run`` before the flow starts, naming the params key; the file is left
    as it was."""
    before = (project / "params.yaml").read_text()
    refused(run("-S", override), *words)
    assert (project / "params.yaml").read_text() == before
    assert not (project / "data").exists()


def test_a_malformed_override_is_one_line_naming_it(project):
    refused(run("-S", "compare.measures=[nDCG@10"),
            "override 'compare.measures=[nDCG@10'", "not valid YAML")


def test_a_bad_cron_in_params_is_blamed_on_params_not_on_a_flag(project):
    """``releval serve``'s process (flows.schedule) checks schedule.cron with Prefect's parser
    before anything else: the error names the file's key, not the --cron flag."""
    import os
    import subprocess
    import sys

    from releval.params import write_overrides

    write_overrides(project / "params.yaml", ["schedule.cron='61 * * * *'"])
    done = subprocess.run([sys.executable, "-m", "flows.schedule", "--params", "params.yaml"],
                          cwd=project, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: params.yaml:schedule.cron: Invalid cron string"), lines[0]
    assert "--cron" not in lines[0]


def test_a_dask_address_from_the_environment_is_blamed_on_the_environment(monkeypatch):
    from releval import executor
    from releval.params.executor import DaskSettings

    monkeypatch.setenv(executor.ADDRESS_ENV, "10.0.0.5:87x6")
    with pytest.raises(InputError, match=r"^RELEVAL_DASK_ADDRESS: '10\.0\.0\.5:87x6': the port"):
        executor._address(DaskSettings())
    monkeypatch.setenv(executor.ADDRESS_ENV, "tcp://127.0.0.1:9")
    assert executor._address(DaskSettings()) == ("tcp://127.0.0.1:9", ("RELEVAL_DASK_ADDRESS",))
    assert executor._address(DaskSettings(address="h:1"))[1] == ("params", "base.dask.address")


def test_keys_left_to_their_defaults_are_written_where_dvc_reads_them(tmp_path):
    """DVC refuses a params file without a key dvc.yaml pins; ``complete`` writes each
    missing one with its default, keeping the user's text, and nothing when none is missing."""
    from releval.project.params_file import complete, pinned_keys

    path = tmp_path / "params.yaml"
    text = "# the team's notes\nprepare:\n  n_docs: 400   # small\n"
    path.write_text(text)
    p = load_params(path)
    written = complete(path, p, ROOT / "dvc.yaml")
    assert path.read_text().startswith("# the team's notes\nprepare:\n")
    assert "  n_docs: 400   # small\n" in path.read_text()
    assert {"split", "gate", "fusion", "prepare.source"} <= set(written)
    assert load_params(path) == p
    tree = yaml.safe_load(path.read_text())
    for key in pinned_keys(ROOT / "dvc.yaml"):
        node = tree
        for part in key.split("."):
            node = node[part]
    after = path.read_text()
    assert complete(path, p, ROOT / "dvc.yaml") == [] and path.read_text() == after
    dvc = tmp_path / "dvc.yaml"  # a project's: its code digests are another params file's keys
    dvc.write_text("stages:\n  s:\n    cmd: x\n    params:\n    - pool.depth\n"
                   "    - .releval/code.yaml: [s]\n    - params.yaml: [safety.top_k]\n")
    assert pinned_keys(dvc) == ["pool.depth", "safety.top_k"]


def test_an_error_on_a_pinned_input_names_the_users_path_and_its_params_key(tmp_path):
    """The prepare stage reads the pinned copy (data/input/prepare/…); a bad row in it is
    reported on the path params give, under its key."""
    import os
    import subprocess
    import sys

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text"\n')
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "params.yaml").write_text("prepare:\n  source: beir\n  path: ../beir\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for stage in ("inputs", "prepare"):
        done = subprocess.run([sys.executable, "-m", "stages", stage, "--params",
                               "params.yaml"], cwd=project, env=env, capture_output=True,
                              text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: ../beir/corpus.jsonl:line 2: "), lines[0]
    assert lines[0].endswith("(params prepare.path)") and "data/input" not in lines[0]
