"""Stage split: run() on a tiny query log, and main() on the files prepare writes; in
recommendation mode, the given split and the random-split leakage report."""

import json

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.errors import InputError
from releval.params import Params
from stages.common import main
from stages.split import Inputs, run
from tests.frames import doc, documents, queries, query
from tests.retrieval.recs import catalogue, days, interactions, user_queries

LOG = queries(*(query(f"q{i}", text=f"text {i}", issued=f"2024-0{m}-01")
                for i, m in enumerate((1, 2, 3, 4, 5, 6))))
DOCS = documents(doc("d1", title="t1"), doc("d2", title="t2"))
JUDGED = pd.DataFrame({S.QUERY_ID: ["q0", "q5", "q4"], S.DOC_ID: ["d1", "d1", "d2"],
                       S.GRADE: [2, 1, 0]})
NOWHERE = {"judgments": 3, "unknown_documents": 0, "unknown_queries": 0}
NONE_GIVEN = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str),
                           S.SPLIT: pd.Series([], dtype=str)})
DATES = {"split": {"method": "dates", "cuts": ["2024-03-01", "2024-05-01"]}}
NO_LOG = pd.DataFrame(columns=list(S.INTERACTION_COLUMNS))


def test_run_splits_forward_at_the_cuts_and_reports_what_prepare_counted():
    result = run(Params.model_validate(DATES), Inputs(LOG, DOCS, JUDGED, NONE_GIVEN,
                 {"qrels_pointing_nowhere": NOWHERE}, NO_LOG))
    assert result.split.to_dict("list") == {
        S.QUERY_ID: ["q0", "q1", "q2", "q3", "q4", "q5"],
        S.SPLIT: ["train", "train", "validation", "validation", "test", "test"]}
    report = result.report
    assert report["counts"] == {"train": 2, "validation": 2, "test": 2}
    assert report["cuts"] == ["2024-03-01T00:00:00+00:00", "2024-05-01T00:00:00+00:00"]
    assert report["leakage"]["shared_sources"]["count"] == 1  # d1: relevant to q0 and q5
    assert report["qrels_pointing_nowhere"] == NOWHERE


def test_run_takes_a_datasets_own_split_and_an_empty_one_as_none():
    given = pd.DataFrame({S.QUERY_ID: [f"q{i}" for i in range(6)],
                          S.SPLIT: ["test", "train", "train", "validation", "train", "test"]})
    p = Params.model_validate({"split": {"method": "given"}})
    result = run(p, Inputs(LOG, DOCS, JUDGED, given, {}, NO_LOG))
    assert result.split[S.SPLIT].tolist() == given[S.SPLIT].tolist()
    assert result.report["temporal"] is False and result.report["qrels_pointing_nowhere"] is None
    assert set(run(p, Inputs(LOG, DOCS, JUDGED, NONE_GIVEN, {}, NO_LOG)).split[S.SPLIT]) == {"test"}
    assert "random_split" not in result.report


@pytest.fixture()
def raw(tmp_path, monkeypatch):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(DATES))
    folder = tmp_path / "data/raw"
    folder.mkdir(parents=True)
    for name, frame in (("queries", LOG), ("documents", DOCS), ("judgments", JUDGED),
                        ("given_split", NONE_GIVEN), ("interactions", NO_LOG)):
        frame.to_parquet(folder / f"{name}.parquet", index=False)
    (folder / "source.json").write_text(json.dumps({
        "source": "tables", "qrels": "the dataset's", "documents": len(DOCS),
        "queries": len(LOG), "judgments": len(JUDGED), "hard_negatives": 0,
        "must_not_return": 0, "qrels_pointing_nowhere": NOWHERE}))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_main_writes_the_split_and_its_report(raw, capsys):
    main("split", [])
    table = pd.read_parquet(raw / "data/split/split.parquet")
    assert table[S.SPLIT].tolist() == ["train", "train", "validation", "validation", "test",
                                       "test"]
    report = json.loads((raw / "data/split/split_report.json").read_text())
    assert report["qrels_pointing_nowhere"] == NOWHERE and report["method"] == "dates"
    assert capsys.readouterr().out.strip() == "split: train 2, validation 2, test 2"


REC = {"prepare": {"source": "interactions", "path": "shop"},
       "split": {"method": "quantiles"},  # rec mode: prepare's cut is taken as given
       "recommend": {"horizon_days": 10, "random_split": ["pop", "cooc"]},
       "candidates": {"systems": {"pop": {"route": "popularity"},
                                  "cooc": {"route": "cooccurrence"}}},
       "fusion": {"systems": {}}, "compare": {"baseline": "pop", "candidate": "cooc"}}
USERS = [f"u{i}" for i in range(8)]
SHOP = interactions(*((u, f"o{i % 2}", -30 + i) for i, u in enumerate(USERS)),
                    *((u, "z", 2) for u in USERS))
USER_QUERIES = pd.concat([user_queries(*USERS, at=days(-10), split="validation"),
                          user_queries(*USERS)], ignore_index=True)
GIVEN = USER_QUERIES[[S.QUERY_ID]].assign(**{S.SPLIT: ["validation"] * 8 + ["test"] * 8})
POSITIVES = pd.DataFrame({S.QUERY_ID: [f"{u}@test" for u in USERS], S.DOC_ID: "z",
                          S.GRADE: 1})


def test_recommendation_mode_takes_the_given_split_and_reports_the_random_split():
    result = run(Params.model_validate(REC), Inputs(USER_QUERIES, catalogue("o0", "o1", "z"),
                 POSITIVES, GIVEN, {}, SHOP))
    assert result.split[S.SPLIT].tolist() == GIVEN[S.SPLIT].tolist()
    assert result.report["method"] == "given"
    leak = result.report["random_split"]
    assert (leak["interactions"], leak["held_out"], leak["queries"]) == (16, 8, 8)
    assert set(leak["systems"]) == {"pop", "cooc"}
    pop = leak["systems"]["pop"]
    assert set(pop) == {"route", "forward", "random", "inflation", "ratio"}
    assert set(pop["forward"]) == {"HR@10", "nDCG@10", "n"} and pop["forward"]["n"] == 8
    # no one bought z before t2: forward popularity cannot find it; the random split leaks
    assert pop["forward"]["HR@10"] == 0.0 < pop["random"]["HR@10"] == pop["inflation"]["HR@10"]


def test_the_random_split_names_systems_of_the_candidates():
    p = Params.model_validate(REC | {"recommend": {"random_split": ["pop", "lightgcn"]}})
    with pytest.raises(InputError, match="recommend.random_split names lightgcn, not in "
                                         "candidates.systems \\(pop, cooc\\)"):
        run(p, Inputs(USER_QUERIES, catalogue("o0", "o1", "z"), POSITIVES, GIVEN, {}, SHOP))


def test_the_report_describes_the_evaluated_query_set_against_its_minimums():
    tagged = LOG.assign(**{S.TAGS: [["head"], ["head"], [], ["no_answer"], ["no_answer"],
                                     ["tail"]]})
    p = Params.model_validate(DATES | {"evaluate": {"splits": ["validation", "test"]},
                                       "query_set": {"min_per_category": {"no_answer": 3}}})
    query_set = run(p, Inputs(tagged, DOCS, JUDGED, NONE_GIVEN, {}, NO_LOG)).report["query_set"]
    assert query_set["splits"] == ["validation", "test"] and query_set["queries"] == 4
    assert query_set["sources"]["logged"]["count"] == 4 and query_set["source_given"] is False
    no_answer = query_set["categories"]["no_answer"]
    assert (no_answer["count"], no_answer["minimum"], no_answer["covered"]) == (2, 3, False)
    assert query_set["undercovered"] == ["no_answer"]
    assert query_set["categories"]["head"]["count"] == 0  # q0, q1 are train queries
    bad = Params.model_validate(DATES | {"query_set": {"min_per_category": {"refusal": 3}}})
    with pytest.raises(InputError, match="query_set.min_per_category.refusal: unknown "
                                         "query-set category 'refusal'"):
        run(bad, Inputs(LOG, DOCS, JUDGED, NONE_GIVEN, {}, NO_LOG))
