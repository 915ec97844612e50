"""``releval init``: params written from the data hold only rules the data can answer, and a
project made from a BEIR folder with two team runs, or from an interaction log, validates."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from releval.errors import InputError
from releval.params import parse_params
from releval.project import template
from releval.project.scaffold import init, params_for
from tests.projects import tiny_beir

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FOREIGN = ("safety", "no_answer", "coverage", "seeds", "latency", "health")


def written(dest: Path, **data):
    text = params_for(dest, corpus=data.get("corpus"), interactions=data.get("interactions"),
                      runs=data.get("runs", {}), baseline=data.get("baseline"),
                      candidate=data.get("candidate"))
    return text, parse_params(yaml.safe_load(text), "params.yaml")


@pytest.mark.parametrize(("name", "grade"), [("cacm", 1), ("cranfield", 4)])
def test_a_beir_collection_gets_only_the_rules_it_can_answer(tmp_path, name, grade):
    text, p = written(tmp_path / "proj", corpus=SHARED / name)
    assert p.prepare.source == "beir"  # the path relative to the project:
    assert (tmp_path / "proj" / p.prepare.path).resolve() == (SHARED / name).resolve()
    assert p.prepare.max_grade == grade and p.split.method == "given"
    assert list(p.candidates.systems) == ["bm25", "dense"] and list(p.fusion.systems) == ["hybrid"]
    # no judged bound: CACM's qrels are positive-only, Cranfield's judge 1,612 of 1,837
    # documents relevant; Judged@10 would be a precision there, far below any coverage bound
    rules = [r.rule for r in p.gate.rules]
    assert rules == ["no_regression", "guarded", "guarded", "guarded"]
    comments = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines())
    assert ("judged (the qrels are positive-only: all 796 judgments give one grade"
            if name == "cacm" else "judged (the qrels judge 1,612 of 1,837 documents "
            "relevant") in comments
    assert not set(rules) & set(FOREIGN)
    assert p.gate.rules[0].slices == []  # no tags: no tag slice
    assert p.query_set.min_per_category == {}
    assert "tag" not in p.slices.dimensions and "freshness" not in p.slices.dimensions
    assert p.health.cost == {} and p.fixture.path is None
    assert "left out: safety (no ACLs" in text and "latency: no bound is written" in text
    assert "recognised from the text only" in text  # described, with no minimum


def test_a_beir_folder_with_two_team_runs(tmp_path):
    folder = tiny_beir(tmp_path / "beir")
    qrels = pd.read_csv(folder / "qrels" / "test.tsv", sep="\t", dtype=str)
    trec = "".join(f"{q} Q0 {d} 1 1.0 team_a\n" for q, d in
                   qrels[["query-id", "corpus-id"]].drop_duplicates("query-id").itertuples(
                       index=False))
    (tmp_path / "a.trec").write_text(trec)
    seeds = "".join(line.replace("team_a", f"team_b@seed{k}") for k in (1, 2)
                    for line in trec.splitlines(keepends=True))
    (tmp_path / "b.trec").write_text(seeds)
    text, p = written(tmp_path / "proj", corpus=folder,
                      runs={"team_a": tmp_path / "a.trec", "team_b": tmp_path / "b.trec"},
                      baseline="team_a", candidate="team_b")
    systems = p.candidates.systems
    assert systems["team_a"].path == "../a.trec" and systems["team_a"].seeds == []
    assert systems["team_b"].seeds == [1, 2] and systems["team_b"].system is None
    assert p.pooled() == ["bm25", "dense", "team_a", "team_b"]
    assert (p.compare.baseline, p.compare.candidate, p.compare.change) == \
        ("team_a", "team_b", None)
    seeds = [r for r in p.gate.rules if r.rule == "seeds"]
    assert [(r.candidate, r.require) for r in seeds] == [("team_b", "mean")]


def test_an_unknown_system_and_a_multi_system_run_are_refused(tmp_path):
    folder = tiny_beir(tmp_path / "beir")
    with pytest.raises(InputError, match="compare.baseline: 'prod' is not a system"):
        written(tmp_path / "proj", corpus=folder, baseline="prod")
    (tmp_path / "two.trec").write_text("1 Q0 d1 1 1.0 x\n1 Q0 d1 1 1.0 y\n")
    with pytest.raises(InputError, match="holds 2 systems"):
        written(tmp_path / "proj", corpus=folder, runs={"two": tmp_path / "two.trec"})
    with pytest.raises(InputError, match="give the data"):
        written(tmp_path / "proj")


def small_log(folder: Path) -> Path:
    """Online Retail's first 40,000 interactions and their items."""
    folder.mkdir()
    log = pd.read_csv(SHARED / "online-retail" / "interactions.csv", nrows=40_000)
    log.to_csv(folder / "interactions.csv", index=False)
    items = pd.read_csv(SHARED / "online-retail" / "items.csv")
    items[items["item_id"].isin(log["item_id"])].to_csv(folder / "items.csv", index=False)
    return folder


def test_an_interaction_log_gets_forward_cuts_and_its_context(tmp_path):
    folder = small_log(tmp_path / "log")
    text, p = written(tmp_path / "proj", interactions=folder)
    end = pd.read_csv(folder / "interactions.csv")["timestamp"].max()[:10]
    t1, t2 = (pd.Timestamp(c) for c in p.split.cuts)
    assert p.recommendation and p.split.method == "dates"
    assert (pd.Timestamp(end) - t2).days == 30 and (t2 - t1).days == 30
    assert p.recommend.context == ["country"]
    assert [r.rule for r in p.gate.rules] == ["no_regression", "not_worse"]
    assert p.gate.rollback[0].min == "baseline"


def test_logged_feedback_is_a_recommendation_project_evaluated_off_policy(tmp_path):
    bandit = SHARED / "open-bandit"
    text = params_for(tmp_path / "proj", corpus=None, interactions=None, runs={},
                      baseline=None, candidate=None, feedback=bandit / "bts" / "all",
                      reference=bandit / "random" / "all")
    p = parse_params(yaml.safe_load(text), "params.yaml")
    assert p.prepare.source == "logged_feedback" and p.recommendation
    assert p.recommend.horizon_days == 2 and p.split.cuts == ("2019-11-26", "2019-11-28")
    c = p.offpolicy
    assert (tmp_path / "proj" / c.log).resolve() == (bandit / "bts" / "all").resolve()
    assert (tmp_path / "proj" / c.reference).resolve() == (bandit / "random" / "all").resolve()
    assert (c.slate_size, c.policy, c.estimators) == (3, "uniform", ["ips", "snips", "dm", "dr"])
    assert [r.rule for r in p.gate.rules] == ["no_regression", "not_worse", "off_policy"]
    assert "42 clicked, 253 users, 80 items" in text and "content" not in p.candidates.systems
    with pytest.raises(InputError, match="give the data"):
        params_for(tmp_path / "proj", corpus=None, interactions=small_log(tmp_path / "log"),
                   runs={}, baseline=None, candidate=None, feedback=bandit / "bts" / "all")


def test_init_writes_a_project_without_the_code(tmp_path):
    dest = tmp_path / "proj"
    lines = init(dest, corpus=tiny_beir(tmp_path / "beir"))
    assert "committed" in lines[-1]
    dag = yaml.safe_load((dest / "dvc.yaml").read_text())
    for name, stage in dag["stages"].items():
        body = stage.get("do", stage)
        assert not [d for d in body.get("deps", []) if d.split("/")[0] in template.CODE_PACKAGES]
        assert {".releval/code.yaml": [name]} in body["params"]
    code = yaml.safe_load((dest / ".releval" / "code.yaml").read_text())
    assert set(code) == {"version", "code", *dag["stages"]}
    assert not (dest / "stages").exists() and (dest / ".dvc" / "config").is_file()
    with pytest.raises(InputError, match="already holds dvc.yaml"):
        init(dest, corpus=tiny_beir(tmp_path / "beir2"))


def test_a_changed_stage_file_changes_only_the_digests_of_the_stages_running_it(tmp_path):
    deps = template.code_deps()
    users = {stage for stage, paths in deps.items() if "stages/gate.py" in paths}
    assert users == {"gate"}
    before = template.digest(deps["gate"])
    copy = tmp_path / "code"
    for rel in deps["gate"]:
        source = template.PACKAGE_ROOT / rel
        target = copy / rel
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    assert template.digest(deps["gate"], copy) == before
    (copy / "stages" / "gate.py").write_text((copy / "stages/gate.py").read_text() + "# x\n")
    assert template.digest(deps["gate"], copy) != before
    assert json.dumps(template.code_digests())  # plain data, written as YAML


def test_the_demo_project_is_the_shipped_example_with_its_fixture(tmp_path):
    dest = tmp_path / "demo"
    lines = init(dest, example="demo.yaml")
    assert "from demo.yaml" in lines[0]
    shipped = template.root() / "examples"
    assert (dest / "params.yaml").read_text() == (shipped / "demo.yaml").read_text()
    p = parse_params(yaml.safe_load((dest / "params.yaml").read_text()), "params.yaml")
    assert (dest / p.fixture.path / "qrels" / "test.tsv").is_file()  # its pinned fixture
    assert (dest / ".releval" / "code.yaml").is_file() and not (dest / "stages").exists()
