"""A project of team runs judged by qrels, without a corpus (``releval init --qrels QRELS
--run NAME=PATH …``, ``prepare.source: runs``): params hold only the runs and the rules the
data can answer, the project's DAG has no fuse stage and reads no fused runs, prepare writes
an empty documents table, and every rule that needs documents or latency is n/a with its
reason. The slow test runs ``releval run --gate`` on it and reproduces the run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.data.adapters import read_query_file, read_runs_only
from releval.data.visibility import Visibility, visible_pairs
from releval.decision.gate.guarded import check as guarded
from releval.decision.gate.latency import check as latency_rule
from releval.errors import InputError
from releval.params import Params, parse_params
from releval.params.rules import Guard, Guarded, LatencyRule
from releval.project import receipt, template
from releval.project.scaffold import init, params_for
from tests import documents
from tests.projects import SELFTEST

CRANFIELD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "cranfield"
N_QUERIES = 30


def cranfield_qrels(n: int = N_QUERIES) -> pd.DataFrame:
    """Cranfield's judgments of its first ``n`` queries (query_id, doc_id, grade)."""
    qrels = pd.read_csv(CRANFIELD / "qrels" / "test.tsv", sep="\t", dtype=str)
    qrels = qrels.rename(columns={"query-id": "qid", "corpus-id": "doc", "score": "grade"})
    qrels = qrels[qrels["qid"].astype(int) <= n]
    return qrels.assign(grade=qrels["grade"].astype(int))


def write_data(folder: Path, n: int = N_QUERIES) -> dict[str, Path]:
    """TREC qrels (``qid 0 docid grade``) of Cranfield's first queries and two TREC runs: a
    ranks each query's judged documents by grade, then ten others; b is a with its first two
    documents swapped and the others in another order."""
    qrels = cranfield_qrels(n)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels.txt").write_text("".join(
        f"{q} 0 {d} {g}\n" for q, d, g in qrels[["qid", "doc", "grade"]].itertuples(index=False)))
    others = [f"x{d}" for d in range(20)]  # documents no query judges
    a, b = [], []
    for qid, group in qrels.sort_values(["grade", "doc"], ascending=[False, True]).groupby(
            "qid", sort=False):
        ranked = list(dict.fromkeys([*group["doc"], *others[:10]]))
        swapped = [ranked[1], ranked[0], *ranked[2:-10], *others[10:]]
        a += [f"{qid} Q0 {d} {r} {100 - r} a\n" for r, d in enumerate(ranked, 1)]
        b += [f"{qid} Q0 {d} {r} {100 - r} b\n" for r, d in enumerate(swapped, 1)]
    (folder / "a.trec").write_text("".join(a))
    (folder / "b.trec").write_text("".join(b))
    return {"qrels": folder / "qrels.txt", "a": folder / "a.trec", "b": folder / "b.trec"}


def write_queries(path: Path, n: int = N_QUERIES) -> Path:
    """A queries file (JSON lines) for the first ``n`` queries: text, tags, times, users."""
    queries = [json.loads(line) for line in (CRANFIELD / "queries.jsonl").read_text()
               .splitlines()][:n]
    path.write_text("".join(json.dumps({
        "query_id": q["_id"], "text": q["text"],
        "tags": ["tail", *(["typo"] if i % 2 else [])],
        "timestamp": f"2024-01-{i + 1:02d}T08:00:00Z", "user_id": f"u{i % 5}"}) + "\n"
        for i, q in enumerate(queries)))
    return path


def written(dest: Path, data: dict[str, Path], **extra) -> tuple[str, Params]:
    text = params_for(dest, corpus=None, interactions=None,
                      runs={"a": data["a"], "b": data["b"]}, baseline=None, candidate=None,
                      qrels=data["qrels"], **extra)
    return text, parse_params(yaml.safe_load(text), "params.yaml")


@pytest.fixture
def data(tmp_path) -> dict[str, Path]:
    return write_data(tmp_path / "data")


def test_params_hold_the_team_runs_only_and_no_rule_the_data_cannot_answer(tmp_path, data):
    text, p = written(tmp_path / "proj", data)
    assert p.runs_only and p.prepare.source == "runs" and p.prepare.queries is None
    assert (tmp_path / "proj" / p.prepare.qrels).resolve() == data["qrels"].resolve()
    assert {s: c.route for s, c in p.candidates.systems.items()} == {"a": "external",
                                                                     "b": "external"}
    assert p.fusion.systems == {} and p.pooled() == [] and p.judges_source == "dataset"
    assert (p.compare.baseline, p.compare.candidate) == ("a", "b")
    assert p.prepare.max_grade == 4 and p.split.method == "given"
    longest = cranfield_qrels().groupby("qid").size().max() + 10
    assert p.candidates.depth == longest  # the runs' own depth: every list kept whole
    rules = [r.rule for r in p.gate.rules]
    assert rules == ["no_regression", "guarded", "guarded"]  # no judged: relevant-only qrels
    assert not any("latency" in r.primary or any("latency" in g.measure for g in r.guards)
                   for r in p.gate.rules if r.rule == "guarded")
    assert p.slices.dimensions == [] and p.query_set.min_per_category == {}
    for why in ("judged (the qrels judge", "safety (no documents", "team runs carry no latency"):
        assert why in text


def test_a_queries_file_brings_times_tags_and_users(tmp_path, data):
    queries = write_queries(tmp_path / "queries.jsonl")
    text, p = written(tmp_path / "proj", data, queries=queries)
    assert (tmp_path / "proj" / p.prepare.queries).resolve() == queries.resolve()
    assert p.split.method == "quantiles"  # forward in time: the queries carry times
    assert p.slices.dimensions == ["tag", "kind", "length", "user_activity"]
    assert p.compare.cluster == "user_id"
    # the test split (the last 15%: 5 queries) is too small for a tag slice or a minimum
    assert p.gate.rules[0].slices == [] and p.query_set.min_per_category == {}
    assert "tagged but below 15 evaluated queries" in text


def test_the_project_dag_has_no_fuse_stage_and_reads_no_fused_runs(tmp_path, data):
    dest = tmp_path / "proj"
    lines = init(dest, qrels=data["qrels"], runs={"a": data["a"], "b": data["b"]})
    assert "committed" in lines[-1]
    graph = yaml.safe_load((dest / "dvc.yaml").read_text())
    text = yaml.safe_dump(graph)  # the stages, without the header's comments
    assert "fuse" not in graph["stages"] and "data/fused" not in text and "--fused" not in text
    assert not template.fuses(graph) and template.pins_qrels(graph)
    prepare = graph["stages"]["prepare"]
    assert {"data/input/qrels", "data/input/queries", "data/input/runs"} <= set(prepare["deps"])
    assert "candidates.systems" in prepare["params"]
    shipped = template.project_dag()  # without params: the full DAG, as a checkout has it
    assert template.fuses(shipped) and not template.pins_qrels(shipped)


def test_the_run_refuses_params_that_do_not_fit_the_project_dag(tmp_path, data, monkeypatch):
    from releval.cli.project import _fits_the_dag

    dest = tmp_path / "proj"
    init(dest, qrels=data["qrels"], runs={"a": data["a"], "b": data["b"]})
    monkeypatch.chdir(dest)
    p = parse_params(yaml.safe_load((dest / "params.yaml").read_text()), "params.yaml")
    _fits_the_dag(p, Path("params.yaml"))  # as written: it fits
    fused = p.model_copy(update={"fusion": type(p.fusion).model_validate(
        {"systems": {"both": {"lexical": "a", "dense": "b"}}})})
    with pytest.raises(InputError, match="dvc.yaml has no fuse stage"):
        _fits_the_dag(fused, Path("params.yaml"))
    monkeypatch.chdir(template.PACKAGE_ROOT)  # a source checkout: its dvc.yaml fuses
    with pytest.raises(InputError, match="fusion.systems is empty, but dvc.yaml fuses"):
        _fits_the_dag(p, Path("params.yaml"))


def pinned_params(tmp_path: Path, data: dict[str, Path], queries: Path | None = None) -> Params:
    """Runs-only params with every input pinned under tmp_path/input (the inputs stage)."""
    from releval.project.inputs import pin

    p = Params.model_validate({
        "prepare": {"source": "runs", "qrels": str(data["qrels"]),
                    "queries": None if queries is None else str(queries), "max_grade": 4},
        "candidates": {"systems": {n: {"route": "external", "path": str(data[n])}
                                   for n in ("a", "b")}},
        "fusion": {"systems": {}}, "pool": {"systems": []},
        "compare": {"baseline": "a", "candidate": "b"}, "split": {"method": "given"}})
    pin(p, tmp_path / "input")
    return p


def test_prepare_writes_no_documents_the_qrels_and_every_query(tmp_path, data):
    from stages.prepare import Inputs, run

    (data["a"]).write_text(data["a"].read_text() + "999 Q0 5 1 1.0 a\n")  # a query unjudged
    out = run(pinned_params(tmp_path, data), Inputs(tmp_path / "input"))
    assert out.documents.empty and tuple(out.documents.columns) == S.DOCUMENT_COLUMNS
    qrels = cranfield_qrels()
    assert len(out.judgments) == len(qrels) and not out.judgments[S.HARD_NEGATIVE].any()
    ids = out.queries[S.QUERY_ID].tolist()
    assert ids == [*dict.fromkeys(qrels["qid"]), "999"]  # the qrels', then the runs' own
    assert tuple(out.queries.columns) == S.QUERY_COLUMNS and out.given_split.empty
    assert out.source["qrels_pointing_nowhere"]["unknown_documents"] == 0
    timed = run(pinned_params(tmp_path, data, write_queries(tmp_path / "q.jsonl")),
                Inputs(tmp_path / "input"))
    assert len(timed.queries) == N_QUERIES and timed.source["query_times"] is True
    assert timed.queries[S.TAGS].iloc[1] == ["tail", "typo"]
    assert str(timed.queries[S.ISSUED_AT].iloc[0]) == "2024-01-01 08:00:00+00:00"


@pytest.mark.parametrize(("name", "text", "where", "words"), [
    ("q.txt", "1 0 d1 2\n1 0 d2 -1\n", "line 2", "grade -1 is negative"),
    ("q.txt", "1 0 d1 2\n1 0 d1 1\n", "line 2", "duplicate judgment of query '1', document 'd1'"),
    ("q.txt", "", None, "no judgments"),
    ("q.csv", "query_id,doc_id,grade\n1,d1,x\n", "line 2", "grade"),
])
def test_bad_qrels_are_refused_in_one_line(tmp_path, name, text, where, words):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        read_runs_only(path)
    assert refused.value.source == str(path) and refused.value.where == where
    assert words in refused.value.rule and "\n" not in str(refused.value)


@pytest.mark.parametrize(("text", "where", "words"), [
    ("query_id,timestamp\n1,2024-01-01\n1,2024-01-02\n", "line 3", "duplicate query_id '1'"),
    ("query_id,timestamp\n1,2024-01-01\n2,yesterday\n", "line 3", "must be a timestamp"),
    ("query_id,timestamp\n1,2024-01-01\n2,\n", "line 3", "give every query its time, or none"),
    ("id,text\n1,a\n", None, "missing column query_id"),
    ("query_id,weight\n1,-2\n", "line 2", "weight must be a number >= 0"),
])
def test_a_bad_queries_file_is_refused_in_one_line(tmp_path, text, where, words):
    path = tmp_path / "queries.csv"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        read_query_file(path)
    assert refused.value.source == str(path) and refused.value.where == where
    assert words in refused.value.rule


def test_a_run_breaking_the_run_contract_is_refused_before_the_project_is_made(tmp_path, data):
    data["b"].write_text("1 Q0 d1 1 2.0 b\n1 Q0 d2 2 1.5 b\n1 Q0 d1 3 1.0 b\n")
    with pytest.raises(InputError) as refused:
        init(tmp_path / "proj", qrels=data["qrels"], runs={"a": data["a"], "b": data["b"]})
    assert refused.value.source == str(data["b"]) and refused.value.where == "line 3"
    assert "duplicate doc_id 'd1'" in refused.value.rule and not (tmp_path / "proj").exists()


def test_a_queries_table_names_tags_in_text_and_is_timed_on_every_row(tmp_path):
    path = tmp_path / "queries.csv"
    path.write_text("query_id,text,tags,user_id\nq1,a b,head|typo,u\nq2,,,u\n")
    queries, timed = read_query_file(path)
    assert not timed and queries[S.TAGS].tolist() == [["head", "typo"], []]
    assert queries[S.TEXT].tolist() == ["a b", ""] and queries[S.USER_ID].tolist() == ["u", "u"]


def test_an_empty_documents_table_hides_nothing():
    from releval.data.adapters import no_documents, untimed_queries

    queries = untimed_queries(["q1", "q2"])
    pairs = pd.DataFrame({S.QUERY_ID: ["q1", "q2"], S.DOC_ID: ["d1", "d2"]})
    visibility = Visibility(no_documents())
    assert visible_pairs(visibility, queries, pairs).all()
    assert (visibility.reasons(queries, pairs) == "").all()


UNMEASURED = {"a": {}, "b": {}}  # run stats with every percentile null: team runs


@pytest.mark.parametrize("rule", [
    Guarded(primary="latency p95", guards=[Guard(measure="nDCG@10", tolerance=0.01)]),
    Guarded(primary="nDCG@10", guards=[Guard(measure="latency p95", tolerance=5.0)]),
])
def test_a_latency_guard_is_na_when_no_system_measured_latency(rule):
    ev = documents.evidence(baseline="a", candidate="b", latency=UNMEASURED,
                            summary={s: {"nDCG@10": documents.entry(v)} for s, v in
                                     (("a", 0.4), ("b", 0.5))},
                            better={"nDCG@10": "higher"})
    (outcome,) = guarded(rule, ev)
    assert not outcome.applicable and "no system measured latency" in outcome.reason
    assert "team runs carry none" in outcome.reason
    measured = documents.evidence(baseline="a", candidate="b",
                                  latency={"a": {"p95": 40.0}, "b": {}},
                                  summary=ev.summary, better=ev.better)
    (outcome,) = guarded(rule, measured)  # measured for one system, not the other: fails
    assert outcome.applicable and not outcome.passed


def test_a_latency_bound_is_na_when_no_system_measured_latency():
    rule = LatencyRule(percentile="p95", max_ms=50)
    (outcome,) = latency_rule(rule, documents.evidence(baseline="a", candidate="b",
                                                       latency=UNMEASURED))
    assert not outcome.applicable and outcome.passed
    assert "no system measured latency" in outcome.reason and "50 ms" in outcome.reason
    (outcome,) = latency_rule(rule, documents.evidence(
        baseline="a", candidate="b", latency={"a": {"p95": 40.0}, "b": {}}))
    assert outcome.applicable and not outcome.passed


def test_the_stages_say_what_needs_documents_is_not_applicable(tmp_path, data):
    from stages import health, pool, prepare, safety

    p = pinned_params(tmp_path, data)
    raw = prepare.run(p, prepare.Inputs(tmp_path / "input"))
    split = pd.DataFrame({S.QUERY_ID: raw.queries[S.QUERY_ID], S.SPLIT: "test"})
    runs = {s: pd.DataFrame({S.SYSTEM: s, S.ROUTE: "external", S.QUERY_ID: ["1", "1"],
                             S.DOC_ID: ["184", "29"], S.RANK: [1, 2], S.SCORE: [2.0, 1.0]})
            for s in ("a", "b")}
    report = safety.run(p, safety.Inputs(runs, raw.queries, raw.documents,
                                         raw.must_not_return, split)).report
    assert "no documents" in report["not_applicable"]
    stats = {s: {"route": "external"} for s in runs}
    doc = health.run(p, health.Inputs(runs, {s: None for s in runs}, stats, raw.documents,
                                      raw.queries)).report
    for record in doc["systems"].values():
        assert record["near_duplicate_ratio"] is None
        assert "no documents" in record["not_applicable"]["near_duplicate_ratio"]
        assert "carries no latency" in record["not_applicable"]["latency_p95_ms"]
    pooled = pool.run(p, pool.Inputs({}, raw.documents, raw.queries, split, None))
    assert pooled.pool.empty and pooled.identity["systems"] == []


def test_the_selftest_checks_the_evaluator_without_documents(tmp_path, data):
    from stages.selftest import Inputs, run

    p = pinned_params(tmp_path, data).model_copy(update={"selftest": type(
        Params().selftest).model_validate({**SELFTEST, "cases": 9})})
    raw = read_runs_only(data["qrels"])
    out = run(p, Inputs(raw.documents, raw.queries, raw.qrels, pd.DataFrame()))
    rows = out.rows
    team = rows[rows["system"].isin(["a", "b"])]
    assert len(team) and set(team["status"]) == {"not_applicable"}  # a team run: no scorer
    evaluator = rows[rows["system"] == "evaluator"]
    assert len(evaluator) == 4 and set(evaluator["status"]) == {"passed"}
    assert (evaluator["reached"] > 0).all()
    assert out.totals["ok"]


def test_a_receipt_keeps_the_params_in_their_order(tmp_path):
    doc = {"receipt": {"params": {"values": {"candidates": {"systems": {"z": 1, "a": 2}}}},
                       "b": 1, "a": 2}, "sha256": "x", "run": {"y": 1, "x": 2}}
    receipt.write(tmp_path / "r.json", doc)
    back = json.loads((tmp_path / "r.json").read_text())
    assert list(back["receipt"]["params"]["values"]["candidates"]["systems"]) == ["z", "a"]
    assert list(back["receipt"]) == ["a", "b", "params"] and list(back["run"]) == ["x", "y"]


@pytest.mark.slow  # the whole pipeline three times (run, reproduce, rerun): two minutes
def test_a_runs_only_project_runs_gates_and_reproduces(tmp_path):
    data = write_data(tmp_path / "data")
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    made = subprocess.run(["releval", "init", "proj", "--qrels", str(data["qrels"]),
                           "--run", f"a={data['a']}", "--run", f"b={data['b']}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "proj"
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["selftest"] = SELFTEST
    params["gate"]["rules"] += [  # a team's own latency rules: nothing measured them
        {"rule": "latency", "percentile": "p95", "max_ms": 100},
        {"rule": "guarded", "primary": "latency p95",
         "guards": [{"measure": "nDCG@10", "tolerance": 0.01}]}]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    done = subprocess.run(["releval", "run", "--gate"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    stages = [line for line in (done.stdout + done.stderr).splitlines()
              if line.startswith(("✓", "✗", "·"))]
    assert stages and all(line.startswith("✓") for line in stages), stages
    assert not any(line.split()[1] == "fuse" for line in stages)

    decision = json.loads((root / "data/gate/decision.json").read_text())
    failed = [o for o in decision["rules"] if not o["passed"]]
    about = ("latency", "safety", "health", "judged", "route")
    assert not [o["name"] for o in failed if any(w in o["name"] for w in about)], failed
    na = {o["name"]: o["reason"] for o in decision["rules"] if o.get("applicable") is False}
    assert set(na) == {"latency p95", "guarded latency p95 ↔ nDCG@10"}
    assert all("no system measured latency" in why for why in na.values())
    assert (done.returncode == 1) == bool(failed)
    data_dir = root / "data"
    assert "no documents" in json.loads((data_dir / "safety/safety.json").read_text())[
        "not_applicable"]
    assert set(json.loads((data_dir / "failures/failures.json").read_text())[
        "not_applicable"]) >= {"corpus", "filter", "representation"}
    health = json.loads((data_dir / "health/health.json").read_text())["systems"]
    assert all("near_duplicate_ratio" in s["not_applicable"] for s in health.values())
    assert json.loads((data_dir / "selftest/selftest.json").read_text())["ok"] is True

    again = subprocess.run(["releval", "reproduce", "reports/receipt.json"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "reproduced: identical (" in again.stdout

    lines = data["b"].read_text().splitlines(keepends=True)  # b retrained: a new run file
    first, second = lines[0].split(), lines[1].split()
    lines[:2] = [" ".join([*first[:2], second[2], *first[3:]]) + "\n",
                 " ".join([*second[:2], first[2], *second[3:]]) + "\n"]
    data["b"].write_text("".join(lines))
    rerun = subprocess.run(["releval", "run"], cwd=root, env=env, capture_output=True,
                           text=True, timeout=1200)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    status = {line.split()[1]: line.split()[2] for line in rerun.stdout.splitlines()
              if line.startswith(("✓", "·"))}
    assert status["candidates"] == status["evaluate"] == status["gate"] == "ran", status
    assert status["split"] == status["judgments"] == "skipped", status


def test_the_bm25_comment_states_the_defaults_the_route_runs_with(tmp_path):
    """init's comment on bm25 is the value the route runs with, read from its model."""
    from releval.params.systems import BM25System
    from releval.project.scaffold import params_for

    cacm = Path(__file__).resolve().parents[3] / "shared" / "data" / "cacm"
    text = params_for(tmp_path, corpus=cacm, interactions=None, runs={}, baseline=None,
                      candidate=None)
    line = next(line for line in text.splitlines() if line.strip().startswith("bm25:"))
    bm25 = BM25System()
    assert f"k1 {bm25.k1:g}, b {bm25.b:g}" in line, line
