"""A project made by ``releval init`` around a team's own data (a small BEIR folder with two
team runs, one seeded), run as a team runs it: ``releval run --gate`` in the project, the
stages from the installed package. Every stage validates, the team runs are evaluated
beside the built-in routes, and the decision holds only rules about data the folder has."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from releval.params import parse_params
from tests.projects import SELFTEST, tiny_beir


def team_runs(folder: Path, out: Path) -> dict[str, Path]:
    """team_a: each query's judged documents, most relevant first, then ten others; team_b:
    the same with two training seeds, each dropping a different relevant document."""
    qrels = pd.read_csv(folder / "qrels" / "test.tsv", sep="\t", dtype={"query-id": str,
                                                                       "corpus-id": str})
    docs = [json.loads(line)["_id"] for line in
            (folder / "corpus.jsonl").read_text().splitlines()][:10]
    a, b = [], []
    for qid, group in qrels.sort_values("score", ascending=False).groupby("query-id"):
        ranked = list(dict.fromkeys([*group["corpus-id"], *docs]))
        a += [f"{qid} Q0 {d} {r} {100 - r} team_a\n" for r, d in enumerate(ranked, 1)]
        for seed in (1, 2):
            kept = [d for i, d in enumerate(ranked) if i != seed - 1]
            b += [f"{qid} Q0 {d} {r} {100 - r} team_b@seed{seed}\n"
                  for r, d in enumerate(kept, 1)]
    out.mkdir()
    (out / "a.trec").write_text("".join(a))
    (out / "b.trec").write_text("".join(b))
    return {"team_a": out / "a.trec", "team_b": out / "b.trec"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    base = tmp_path_factory.mktemp("init")
    folder = tiny_beir(base / "beir")
    runs = team_runs(folder, base / "runs")
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    init = subprocess.run(["releval", "init", "proj", "--corpus", str(folder),
                           *[f"--run={name}={path}" for name, path in runs.items()]],
                          cwd=base, env=env, capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stderr
    root = base / "proj"
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["selftest"] = SELFTEST  # fewer trials: the project's own choices stay as written
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    done = subprocess.run(["releval", "run", "--gate"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1200)
    return root, done


def test_the_run_validates_every_stage_and_evaluates_the_team_runs(project):
    root, done = project
    assert done.returncode in (0, 1), done.stderr[-3000:]
    stage_lines = [line for line in (done.stdout + done.stderr).splitlines()
                   if line.startswith(("✓", "✗"))]
    assert stage_lines and "failed" not in " ".join(stage_lines)
    metrics = json.loads((root / "data/evaluate/metrics.json").read_text())
    assert {"bm25", "dense", "hybrid", "team_a", "team_b"} <= set(metrics)
    seeds = pd.read_parquet(root / "data/evaluate/seeds.parquet")
    assert set(seeds["system"]) == {"team_b"} and set(seeds["seed"]) == {1, 2}


def test_the_decision_holds_only_rules_about_the_data(project):
    root, done = project
    p = parse_params(yaml.safe_load((root / "params.yaml").read_text()), "params.yaml")
    decision = json.loads((root / "data/gate/decision.json").read_text())
    assert {o["rule"] for o in decision["rules"]} == {r.rule for r in p.gate.rules}
    assert not {r.rule for r in p.gate.rules} & {"safety", "no_answer", "coverage", "latency",
                                                "health"}
    failed = [o for o in decision["rules"] if not o["passed"]]
    # the one rule a small judged folder can fail on its own: its judgments' coverage
    assert {o["rule"] for o in failed} <= {"judged"}, failed
    assert (done.returncode == 1) == bool(failed)
