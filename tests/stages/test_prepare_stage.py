"""Stage prepare: run() on tiny demo params, a tiny BEIR folder, a tiny interaction log and the
recommendation demo; main() writes every file."""

import json

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.data.interactions import cuts_of, user_queries
from releval.demo.answers import answer_map
from releval.demo.generator import generate
from releval.demo.recsys import TEAM_COLUMNS, generate_recsys
from releval.demo.team_run import simulate_external_run, simulate_retrained_run
from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import pin
from stages.common import main
from stages.prepare import Inputs, run

TINY = {"base": {"seed": 4}, "prepare": {"n_docs": 50, "n_queries": 20, "months": 2},
        "candidates": {"depth": 7}}
CORPUS = ('{"_id": "d1", "title": "A", "text": "x", "published_at": "2020-05-01"}\n'
          '{"_id": "d2", "title": "B", "text": "y"}\n')
QUERIES = '{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n'
QRELS = {"train.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
         "test.tsv": "query-id\tcorpus-id\tscore\nq2\td2\t2\nq9\td1\t1\n"}
LOG = ("user_id,item_id,timestamp,label,country,quantity\n"
       "u1,A,2025-01-02T10:00:00Z,1,UK,2\nu1,a,2025-01-12T10:00:00Z,1,FR,1\n"
       "u2,A,2025-01-22T10:00:00Z,1,DE,4\nu2,A,2025-01-23T10:00:00Z,0,DE,-4\n")
ITEMS = "item_id,title,category\nA,Red mug,kitchen\na,Blue mug,kitchen\n"
REC = {"split": {"method": "dates", "cuts": ["2025-01-10", "2025-01-20"]},
       "recommend": {"horizon_days": 30, "context": ["country"]}}


def empty_of_rec_mode(result) -> None:
    assert result.interactions.empty and result.team_runs.empty
    assert list(result.interactions.columns) == list(S.INTERACTION_COLUMNS)
    assert list(result.team_runs.columns) == list(TEAM_COLUMNS)


def beir(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(CORPUS)
    (folder / "queries.jsonl").write_text(QUERIES)
    for name, text in QRELS.items():
        (folder / "qrels" / name).write_text(text)
    return folder


def test_demo_tables_are_the_generators_with_its_team_run_and_answer_map():
    result = run(Params.model_validate(TINY), Inputs())
    data = generate(n_docs=50, n_queries=20, seed=4, months=2)
    for name in ("documents", "queries", "must_not_return"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(data, name))
    pd.testing.assert_frame_equal(result.judgments, data.ground_truth)  # with its marks
    assert result.judgments[S.HARD_NEGATIVE].any()
    pd.testing.assert_frame_equal(result.external_run, simulate_external_run(data, 4, 7))
    pd.testing.assert_frame_equal(result.retrained_run, simulate_retrained_run(data, 4, 7))
    pd.testing.assert_frame_equal(result.answers, answer_map(data.ground_truth, data.documents))
    assert result.given_split.empty and list(result.given_split.columns) == [S.QUERY_ID, S.SPLIT]
    empty_of_rec_mode(result)
    assert result.source == {
        "source": "demo generator", "seed": 4, "qrels": "generator ground truth",
        "external_run": "simulated team system prod_v2 (demo only)",
        "retrained_run": "simulated team system prod_v3, trained with seeds 1, 2, 3 (demo only)",
        "documents": len(data.documents), "queries": 20, "judgments": len(data.ground_truth),
        "hard_negatives": int(data.ground_truth[S.HARD_NEGATIVE].sum()),
        "must_not_return": len(data.must_not_return)}


def test_a_beir_folder_is_read_from_its_pinned_copy(tmp_path):
    p = Params.model_validate({"prepare": {"source": "beir", "path": str(beir(tmp_path / "b"))}})
    pin(p, tmp_path / "input")
    (tmp_path / "b" / "corpus.jsonl").unlink()  # the pinned copy is what is read
    result = run(p, Inputs(tmp_path / "input"))
    assert result.documents[S.DOC_ID].tolist() == ["d1", "d2"]
    assert result.judgments.sort_values(S.QUERY_ID)[S.GRADE].tolist() == [1, 2, 1]
    assert result.judgments[S.HARD_NEGATIVE].tolist() == [False] * 3  # BEIR marks none
    assert result.given_split.sort_values(S.QUERY_ID).to_dict("list") == {
        S.QUERY_ID: ["q1", "q2", "q9"], S.SPLIT: ["train", "test", "test"]}
    assert result.external_run.empty and result.answers.empty and result.must_not_return.empty
    assert result.retrained_run.empty
    assert list(result.answers.columns) == list(S.ANSWER_COLUMNS)
    empty_of_rec_mode(result)
    assert result.source == {
        "source": f"BEIR {tmp_path / 'b'}", "qrels": "BEIR qrels", "query_times": False,
        "qrels_pointing_nowhere": {"judgments": 3, "unknown_documents": 0,
                                   "unknown_queries": 1, "first_unknown_document": None,
                                   "first_unknown_query": "q9/d1"},
        "documents": 2, "queries": 2, "judgments": 3, "hard_negatives": 0,
        "must_not_return": 0}


def test_an_interaction_log_is_read_from_its_pinned_copy(tmp_path):
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "interactions.csv").write_text(LOG)
    (tmp_path / "log" / "items.csv").write_text(ITEMS)
    p = Params.model_validate(REC | {"prepare": {"source": "interactions",
                                                 "path": str(tmp_path / "log")}})
    pin(p, tmp_path / "input")
    (tmp_path / "log" / "interactions.csv").unlink()  # the pinned copy is what is read
    result = run(p, Inputs(tmp_path / "input"))
    assert result.documents[S.DOC_ID].tolist() == ["A", "a"]
    assert result.documents[S.TEXT].tolist() == ["Red mug kitchen", "Blue mug kitchen"]
    assert result.queries[S.QUERY_ID].tolist() == ["u1@validation", "u1@test", "u2@test"]
    assert result.queries["country"].tolist() == ["UK", "FR", "DE"]
    assert result.judgments.to_dict("list") == {S.QUERY_ID: ["u1@validation", "u2@test"],
                                                S.DOC_ID: ["a", "A"], S.GRADE: [1, 1],
                                                S.HARD_NEGATIVE: [False, False]}
    assert result.given_split[S.SPLIT].tolist() == ["validation", "test", "test"]
    assert list(result.interactions.columns) == [*S.INTERACTION_COLUMNS, "country"]
    assert result.interactions[S.LABEL].tolist() == [1, 1, 1, 0]
    assert result.team_runs.empty and list(result.team_runs.columns) == list(TEAM_COLUMNS)
    assert result.must_not_return.empty and result.answers.empty and result.external_run.empty
    assert result.retrained_run.empty
    assert result.horizons.empty and list(result.horizons.columns) == list(S.HORIZON_COLUMNS)
    source = result.source
    assert source["source"] == f"interactions {tmp_path / 'log'}"
    assert source["qrels"] == "label-1 interactions within 30 days of each cut"
    assert source["recommendation"]["splits"]["test"]["users_scored"] == 1
    assert {k: source[k] for k in ("documents", "queries", "judgments", "must_not_return")} \
        == {"documents": 2, "queries": 3, "judgments": 2, "must_not_return": 0}


def test_the_recommendation_demo_is_the_generators_with_its_team_runs():
    p = Params.model_validate(REC | {"base": {"seed": 5},
                                     "prepare": {"source": "recsys_demo", "n_docs": 300,
                                                 "n_queries": 500},
                                     "candidates": {"depth": 20}, "split": {}})
    result = run(p, Inputs())
    demo = generate_recsys(5, n_users=500, n_items=300)
    t1, t2 = cuts_of(demo.log, "quantiles", None, (0.7, 0.85))
    data = user_queries(demo.log, demo.items, t1, t2, 30, True, 0.0, ["country"], 5)
    for name in ("documents", "queries", "given_split"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(data, name))
    pd.testing.assert_frame_equal(result.judgments, data.qrels.assign(**{S.HARD_NEGATIVE: False}))
    pd.testing.assert_frame_equal(result.interactions, demo.log)
    runs = result.team_runs
    assert list(runs.columns) == list(TEAM_COLUMNS) and set(runs[S.SPLIT]) == {"validation",
                                                                              "test"}
    assert runs.groupby([S.SYSTEM, S.SPLIT, S.USER_ID]).size().max() == 20  # candidates.depth
    assert result.source["seed"] == 5 and result.source["recommendation"] == data.report
    assert result.external_run.empty and result.must_not_return.empty
    assert result.retrained_run.empty


def tables(folder, judgments: pd.DataFrame):
    """A tables folder: the tiny demo's documents and queries, and ``judgments``."""
    folder.mkdir()
    data = generate(n_docs=50, n_queries=20, seed=4, months=2)
    data.documents.to_parquet(folder / "documents.parquet")
    data.queries.to_parquet(folder / "queries.parquet")
    judgments.to_parquet(folder / "judgments.parquet")
    return data


def run_tables(tmp_path):
    p = Params.model_validate({"prepare": {"source": "tables", "path": str(tmp_path / "t")}})
    pin(p, tmp_path / "input")
    return run(p, Inputs(tmp_path / "input"))


def test_a_tables_judgments_keep_their_hard_negative_marks(tmp_path):
    data = generate(n_docs=50, n_queries=20, seed=4, months=2)
    truth = data.ground_truth
    marks = truth[S.HARD_NEGATIVE].map({True: "yes", False: None})  # text marks, some missing
    tables(tmp_path / "t", truth.assign(**{S.HARD_NEGATIVE: marks}))
    result = run_tables(tmp_path)
    pd.testing.assert_frame_equal(result.judgments, truth)
    assert result.source["hard_negatives"] == truth[S.HARD_NEGATIVE].sum() > 0


def test_a_tables_judgments_without_marks_mark_none(tmp_path):
    truth = generate(n_docs=50, n_queries=20, seed=4, months=2).ground_truth
    tables(tmp_path / "t", truth[list(S.QRELS_COLUMNS)])
    result = run_tables(tmp_path)
    assert not result.judgments[S.HARD_NEGATIVE].any() and result.source["hard_negatives"] == 0


@pytest.mark.parametrize("mark,grade,rule", [
    ("maybe", 0, "row 3: hard_negative must be yes or no, got 'maybe'"),
    ("yes", 2, "row 3: a hard negative is judged not relevant .grade below 1., got grade 2"),
])
def test_a_bad_hard_negative_mark_names_file_row_and_rule(tmp_path, mark, grade, rule):
    judgments = pd.DataFrame({S.QUERY_ID: ["q000001"] * 3, S.DOC_ID: ["a", "b", "c"],
                              S.GRADE: [3, 0, grade], S.HARD_NEGATIVE: ["no", "yes", mark]})
    tables(tmp_path / "t", judgments)
    with pytest.raises(InputError, match=f"judgments.parquet:{rule}"):
        run_tables(tmp_path)


def test_real_data_without_a_path_is_an_input_error():
    with pytest.raises(InputError, match="prepare.source=tables needs prepare.path"):
        run(Params.model_validate({"prepare": {"source": "tables"}}), Inputs())
    with pytest.raises(InputError, match="prepare.source=interactions needs prepare.path"):
        run(Params.model_validate({"prepare": {"source": "interactions"}}), Inputs())


@pytest.mark.parametrize("params,line,team_run", [
    (TINY, "prepare: {d} documents, 20 queries, {n} judgments, {h} of them hard negatives "
     "(demo generator)", True),
    ({"prepare": {"source": "beir", "path": "b"}},
     "prepare: 2 documents, 2 queries, 3 judgments (BEIR b), 1 judgments of queries not in the "
     "queries file (not evaluated)", False),
])
def test_main_writes_every_output_and_one_summary_line(tmp_path, monkeypatch, capsys, params,
                                                       line, team_run):
    beir(tmp_path / "b")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    pin(Params.model_validate(params), tmp_path / "data/input", base=tmp_path)
    main("prepare", [])
    source = json.loads((tmp_path / "data/raw/source.json").read_text())
    assert capsys.readouterr().out.strip() == line.format(
        d=source["documents"], n=source["judgments"], h=source["hard_negatives"])
    tables = {name: pd.read_parquet(tmp_path / f"data/raw/{name}.parquet") for name in (
        "documents", "queries", "judgments", "given_split", "answers", "must_not_return",
        "interactions", "team_runs")}
    assert tables["interactions"].empty and tables["team_runs"].empty
    assert [len(tables[n]) for n in ("documents", "queries", "judgments", "must_not_return")] \
        == [source[n] for n in ("documents", "queries", "judgments", "must_not_return")]
    assert tables["judgments"][S.HARD_NEGATIVE].sum() == source["hard_negatives"]
    trec = (tmp_path / "data/raw/external_run.trec").read_text().splitlines()
    expected = (simulate_external_run(generate(n_docs=50, n_queries=20, seed=4, months=2), 4, 7)
                if team_run else pd.DataFrame())
    assert len(trec) == len(expected) and (len(trec) > 0) == team_run
    assert all(line.split()[1] == "Q0" and line.split()[5] == "prod_v2" for line in trec)


def test_main_writes_the_recommendation_tables_and_one_line(tmp_path, monkeypatch, capsys):
    params = {"prepare": {"source": "recsys_demo", "n_docs": 800, "n_queries": 400},
              "candidates": {"depth": 10}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    main("prepare", [])
    rec = json.loads((tmp_path / "data/raw/source.json").read_text())["recommendation"]
    val, test = rec["splits"]["validation"], rec["splits"]["test"]
    assert capsys.readouterr().out.strip() == (
        f"prepare: {rec['users']:,} users, 800 items, {rec['interactions']:,} interactions; "
        f"validation {val['users']:,} queries ({val['users_scored']:,} scored); test "
        f"{test['users']:,} queries ({test['users_scored']:,} scored) (recommendation demo "
        "generator)")
    log = pd.read_parquet(tmp_path / "data/raw/interactions.parquet")
    runs = pd.read_parquet(tmp_path / "data/raw/team_runs.parquet")
    assert len(log) == rec["interactions"] and list(runs.columns) == list(TEAM_COLUMNS)
    assert runs.groupby([S.SYSTEM, S.SPLIT, S.USER_ID]).size().max() == 10
    queries = pd.read_parquet(tmp_path / "data/raw/queries.parquet")
    assert len(queries) == val["users"] + test["users"]
    assert (tmp_path / "data/raw/external_run.trec").read_text() == ""
