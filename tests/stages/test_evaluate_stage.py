"""Stage ``evaluate``: run() on a hand-made set (two systems, three evaluated queries), and
main() on the files the earlier stages write."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from pydantic import ValidationError

from releval.data import contracts as S
from releval.data.interactions import horizon_rows
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.embeddings import EmbeddingCache, Encoder
from stages import evaluate as stage
from stages.common import main
from tests.frames import AFTER, doc, documents, queries, query

CONFIG = {"evaluate": {"measures": ["RR@10", "R@100", "Judged@2"], "splits": ["test"]}}
INGEST = {"rows_in": 5, "accepted_new": 5, "already_accepted": 0, "quarantined": 0,
          "hard_negatives": {"marked": 0, "kept": 0, "added": 0, "overruled": 0},
          "source": "simulated", "qrels": "pooled judgments from simulated judges"}
DOCS = documents(doc("d1"), doc("d2"), doc("d3"), doc("d4"), doc("d5", tenant="B"))
QUERIES = queries(query("q1"), query("q2"), query("q3"), query("q4"),
                  query("q5") | {S.TAGS: ["no_answer"]}, query("q6"))
SPLIT = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3", "q4", "q5", "q6"],
                      S.SPLIT: ["test", "test", "test", "validation", "test", "train"]})
# visible relevant: q1 {d1}, q2 {d3} (d5 is another tenant's), q3 {d4}; q1-d2 judged 0
QRELS = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2", "q2", "q3", "q4"],
                      S.DOC_ID: ["d1", "d2", "d3", "d5", "d4", "d1"],
                      S.GRADE: [2, 0, 1, 3, 1, 1]})


def window(system, *rows):
    """(query_id, doc_id) rows, ranked in order within each query."""
    frame = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID])
    rank = frame.groupby(S.QUERY_ID).cumcount() + 1
    return frame.assign(**{S.SYSTEM: system, S.ROUTE: system, S.RANK: rank,
                           S.SCORE: 1.0 / rank})[list(S.RUN_COLUMNS)]


RUNS = {"bm25": window("bm25", ("q1", "d1"), ("q1", "d3"), ("q2", "d2"), ("q2", "d3"),
                       ("q4", "d2"), ("q5", "d1"), ("q6", "d1")),  # q3: no candidates
        "dense": window("dense", ("q1", "d2"), ("q1", "d1"), ("q2", "d3"), ("q3", "d5"),
                        ("q3", "d4"), ("q4", "d1")),
        "hybrid": window("hybrid").iloc[:0]}


def test_run_scores_each_system_on_what_the_queries_may_see():
    out = stage.run(Params.model_validate(CONFIG), stage.Inputs(RUNS, QRELS, SPLIT, QUERIES, DOCS,
                                                                INGEST))
    # RR: bm25 1, 1/2, 0; dense 1/2, 1, 1/2. R@100: bm25 1, 1, 0; dense 1, 1, 1.
    # Judged@2: bm25 1/2, 1/2, 0; dense 1, 1/2, 1/2 (q2-d5 is invisible: left out, unjudged)
    assert out.metrics == {
        "bm25": {"RR@10": 0.5, "R@100": 0.666667, "Judged@2": 0.333333},
        "dense": {"RR@10": 0.666667, "R@100": 1.0, "Judged@2": 0.666667}}
    assert list(out.per_query.columns) == [S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE]
    rr = out.per_query[out.per_query[S.MEASURE] == "RR@10"]
    assert rr[[S.SYSTEM, S.QUERY_ID, S.VALUE]].values.tolist() == [
        ["bm25", "q1", 1.0], ["bm25", "q2", 0.5], ["bm25", "q3", 0.0],
        ["dense", "q1", 0.5], ["dense", "q2", 1.0], ["dense", "q3", 0.5]]
    summary = out.summary
    assert (summary["queries"], summary["no_answer_left_out"]) == (3, 1)  # q5 left out
    assert summary["skipped"] == ["hybrid"] and set(summary["systems"]) == {"bm25", "dense"}
    assert summary["systems"]["bm25"]["RR@10"] == {"value": 0.5, "n": 3, "undefined": 0,
                                                   "empty": 1, "applicable": True,
                                                   "level": "query", "ties": 0,
                                                   "tie_range": [0.5, 0.5]}
    assert summary["judgments"] == {"evaluated": 5, "invisible_left_out": 1,
                                    "relevant_invisible_left_out": 1}
    assert summary["qrels"] == INGEST["qrels"]
    assert summary["route_hits"] == {"bm25|dense": {"both": 2, "dense-only": 1}}
    route_hit = out.labels[out.labels[S.DIMENSION] == "route_hit"]
    assert route_hit[[S.QUERY_ID, S.SLICE]].values.tolist() == [
        ["q1", "both"], ["q2", "both"], ["q3", "dense-only"]]
    assert list(out.labels.columns) == list(S.LABEL_COLUMNS)
    # the next round: top-2 candidates with no judgment, on the pooled splits (q6 is train)
    assert out.unjudged.values.tolist() == [
        ["bm25", "q1", "d3", 2], ["bm25", "q2", "d2", 1], ["bm25", "q4", "d2", 1],
        ["bm25", "q5", "d1", 1], ["dense", "q3", "d5", 1]]
    assert summary["unjudged"] == 5
    json.dumps(summary, allow_nan=False)


def test_run_writes_the_curves_up_to_the_candidate_budget_on_what_the_queries_may_see():
    config = CONFIG | {"candidates": {"depth": 3}}
    out = stage.run(Params.model_validate(config), stage.Inputs(RUNS, QRELS, SPLIT, QUERIES, DOCS,
                                                                INGEST))
    curves = out.curves
    assert list(curves.columns) == ["system", "family", "k", S.MEASURE, S.VALUE, "n"]
    assert curves[S.SYSTEM].unique().tolist() == ["bm25", "dense"]  # hybrid: empty, skipped
    assert curves["k"].unique().tolist() == [1, 2, 3]
    value = curves.set_index([S.SYSTEM, S.MEASURE])[S.VALUE]
    # the same figures as the metrics where both have them (q2-d5 is invisible: left out)
    assert value["dense", "Judged@2"] == out.metrics["dense"]["Judged@2"] == 0.666667
    assert value["bm25", "Judged@2"] == out.metrics["bm25"]["Judged@2"]
    # R@1: bm25 q1 1, q2 0, q3 0; dense q1 0, q2 1, q3 0
    assert value["bm25", "R@1"] == value["dense", "R@1"] == 0.333333
    assert value["bm25", "R@3"] == out.metrics["bm25"]["R@100"]  # every window is this short
    assert curves.loc[curves["family"] == "Judged", "n"].eq(3).all()


def test_run_records_the_score_ties_the_ranks_of_a_window_broke():
    # q1: d2 and d1 tie at ranks 2-3 (across Judged@2's cutoff); q2: d2 and d3 tie at 1-2
    tied = window("bm25", ("q1", "d3"), ("q1", "d2"), ("q1", "d1"), ("q2", "d2"),
                  ("q2", "d3")).assign(**{S.SCORE: [1.0, 0.5, 0.5, 1.0, 1.0]})
    out = stage.run(Params.model_validate(CONFIG), stage.Inputs({"bm25": tied}, QRELS, SPLIT,
                                                                QUERIES,
                    DOCS, INGEST))
    bm25 = out.summary["systems"]["bm25"]
    # Judged@2: q1's tie straddles rank 2, but d2 and d1 are both judged: no change
    assert (bm25["Judged@2"]["ties"], bm25["Judged@2"]["tie_range"]) == (1, [0.333333] * 2)
    # RR@10: both ties lie inside the cutoff (no straddle) yet order the relevant document:
    # q1 1/3 or 1/2, q2 1/2 or 1, q3 (no candidates) 0
    assert bm25["RR@10"]["ties"] == 0
    assert bm25["RR@10"]["tie_range"] == [round((1 / 3 + 1 / 2) / 3, 6), 0.5]
    assert bm25["RR@10"]["value"] == round((1 / 3 + 1 / 2) / 3, 6)  # the ranks' order
    assert (bm25["R@100"]["ties"], bm25["R@100"]["tie_range"]) == (0, [0.666667] * 2)
    json.dumps(out.summary, allow_nan=False)


def test_run_leaves_out_judgments_of_documents_not_yet_published():
    late = DOCS.assign(**{S.PUBLISHED_AT: DOCS[S.PUBLISHED_AT].where(
        DOCS[S.DOC_ID] != "d4", pd.Timestamp(AFTER, tz="UTC"))})
    out = stage.run(Params.model_validate(CONFIG), stage.Inputs(RUNS, QRELS, SPLIT, QUERIES, late,
                                                                INGEST))
    assert out.summary["judgments"]["invisible_left_out"] == 2
    q3 = out.per_query[(out.per_query[S.QUERY_ID] == "q3")
                       & (out.per_query[S.MEASURE] == "RR@10")]
    assert q3[S.VALUE].isna().all()  # no visible relevant document: undefined, not 0


def test_run_needs_the_qrels_provenance():
    with pytest.raises(InputError, match="ingest.json: no 'qrels'"):
        stage.run(Params.model_validate(CONFIG), stage.Inputs(RUNS, QRELS, SPLIT, QUERIES, DOCS,
                  {"rows_in": 5}))


def test_main_reads_the_stage_folders_and_writes_every_output(tmp_path, monkeypatch, capsys):
    (tmp_path / "data/raw").mkdir(parents=True)
    QUERIES.to_parquet(tmp_path / "data/raw" / "queries.parquet")
    DOCS.to_parquet(tmp_path / "data/raw" / "documents.parquet")
    (tmp_path / "data/judgments").mkdir(parents=True)
    QRELS.to_parquet(tmp_path / "data/judgments/qrels.parquet")
    (tmp_path / "data/split").mkdir(parents=True)
    SPLIT.to_parquet(tmp_path / "data/split/split.parquet")
    (tmp_path / "data/judgments/ingest.json").write_text(json.dumps(INGEST))
    for name, folder in (("bm25", "candidates"), ("dense", "candidates"), ("hybrid", "fused")):
        (tmp_path / "data" / folder / name).mkdir(parents=True)
        RUNS[name].to_parquet(tmp_path / "data" / folder / name / "run.parquet")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(CONFIG))
    monkeypatch.chdir(tmp_path)
    main("evaluate", [])
    assert capsys.readouterr().out.strip() == "evaluate: 3 system(s) on 3 queries (test)"
    out = tmp_path / "data/evaluate"
    assert json.loads((out / "metrics.json").read_text())["dense"]["R@100"] == 1.0
    assert json.loads((out / "summary.json").read_text())["unjudged"] == 5
    assert len(pd.read_parquet(out / "unjudged.parquet")) == 5
    assert pd.read_parquet(out / "reliability.parquet").empty  # retrieval mode: no diagram
    for name in ("per_query", "route_hits", "labels", "curves"):
        assert len(pd.read_parquet(out / f"{name}.parquet"))


# recommendation mode: users at the test cut, items as documents, a purchase log
REC_MEASURES = ["HR@2", "AUC", "GAUC", "Brier", "ECE", "Novelty@2", "ILD@2",
                "ILD(space='cooccurrence')@2", "LongTail@2", "Serendipity@2", "Coverage@2"]
REC = {"prepare": {"source": "interactions"},
       "recommend": {"expected": "pop", "negatives": "window"},
       "evaluate": {"measures": REC_MEASURES, "splits": ["test"]},
       "candidates": {"systems": {"pop": {"route": "popularity"},
                                  "team": {"route": "cooccurrence"}}},
       "fusion": {"systems": {}}, "compare": {"baseline": "pop", "candidate": "team"}}
ITEMS = documents(*(doc(i, title=f"item {i}", tenant="default") for i in ("a", "b", "c", "d")))
USERS = queries(*(query(f"{u}@{s}", tenant="default") | {S.USER_ID: u}
                  for u, s in (("u1", "test"), ("u2", "test"), ("u3", "test"),
                               ("u1", "validation"))))
USER_SPLIT = pd.DataFrame({S.QUERY_ID: USERS[S.QUERY_ID],
                           S.SPLIT: ["test", "test", "test", "validation"]})
BOUGHT = pd.DataFrame({S.USER_ID: ["u1", "u2", "u2", "u3"], S.ITEM_ID: ["a", "a", "b", "c"],
                       S.TIMESTAMP: pd.to_datetime(["2024-03-01"] * 4, utc=True),
                       S.LABEL: [1, 1, 1, 1]})
LATER = pd.DataFrame({S.QUERY_ID: ["u1@test", "u1@test", "u2@test"],  # u3: no positive
                      S.DOC_ID: ["c", "d", "d"], S.GRADE: [1, 1, 1]})
REC_RUNS = {"pop": window("pop", ("u1@test", "b"), ("u1@test", "c"), ("u2@test", "c"),
                          ("u2@test", "d"), ("u3@test", "a"), ("u3@test", "b")),
            "team": window("team", ("u1@test", "d"), ("u1@test", "c"), ("u2@test", "d"),
                           ("u2@test", "c"), ("u3@test", "b")).assign(
                **{S.PROBABILITY: [0.9, 0.6, 0.7, 0.2, 0.1]})}


def test_run_in_recommendation_mode_scores_users_with_the_catalogue():
    out = stage.run(Params.model_validate(REC), stage.Inputs(REC_RUNS, LATER, USER_SPLIT, USERS,
                                                             ITEMS,
                    INGEST, BOUGHT))
    team, pop = out.summary["systems"]["team"], out.summary["systems"]["pop"]
    assert team["Hit@2"]["value"] == pop["Hit@2"]["value"] == 1.0
    assert team["Hit@2"]["n"] == 2 and team["Hit@2"]["undefined"] == 1  # u3
    # team shows u1 d, c (both positives) and u2 d: nothing unexpected for pop's top 2 of u2
    assert team["Serendipity@2"]["value"] == pytest.approx((1 / 2 + 0) / 2)
    assert pop["Serendipity@2"]["value"] == 0.0
    assert team["Brier"]["applicable"] and not pop["Brier"]["applicable"]
    assert team["Brier"]["value"] == pytest.approx(round(((0.1 ** 2) + 0.4 ** 2 + 0.3 ** 2
                                                          + 0.2 ** 2) / 4, 6))
    assert not team["ILD@2"]["applicable"]  # no content or dense system: no embeddings
    assert team["ILD(space='cooccurrence')@2"]["applicable"]
    assert team["Coverage@2"] == {"value": 0.5, "n": 2, "undefined": 1, "empty": 0,
                                  "applicable": True, "level": "system"}  # no tie record
    # ties: the windows' scores are 1/rank, so nothing ties and every range is the value
    assert (team["Hit@2"]["ties"], team["AUC"]["ties"]) == (0, 0)
    assert team["Novelty@2"]["tie_range"] == [team["Novelty@2"]["value"]] * 2
    assert out.metrics["pop"]["Brier"] is None
    assert set(out.per_query[S.MEASURE]) == {"Hit@2", "AUC", "Novelty@2", "ILD@2",
                                             "ILD(space='cooccurrence')@2", "LongTail@2",
                                             "Serendipity@2"}
    assert out.summary["recommendation"] == {
        "horizon_days": 30, "exclude_seen": True, "negatives": "window", "n_negatives": 100,
        "users": 3, "users_with_positives_in_horizon": 2, "users_scored": 2,
        "users_only_unpublished_positives": 0, "undefined_users": 1, "serendipity_expected": "pop",
        "ild_embeddings": None, "probabilities": ["team"],
        "not_applicable": {"pop": ["Brier", "ECE", "ILD@2"], "team": ["ILD@2"]}}
    assert set(out.reliability[S.SYSTEM]) == {"team"}
    assert set(out.reliability["binning"]) == {"width", "mass"}
    assert out.reliability.groupby("binning")["n"].sum().tolist() == [4, 4]
    json.dumps(out.summary, allow_nan=False)


def test_run_in_recommendation_mode_records_ties_where_a_range_is_exact():
    flat = {"pop": REC_RUNS["pop"].assign(**{S.SCORE: 1.0})}  # each user's two items tie
    out = stage.run(Params.model_validate(REC), stage.Inputs(flat, LATER, USER_SPLIT, USERS, ITEMS,
                    INGEST, BOUGHT))
    pop = out.summary["systems"]["pop"]
    assert pop["Hit@2"]["ties"] == 0  # both tied items are within the cutoff
    # AUC has no cutoff: u1's tie puts its positive c below b (the window's ranks) or above,
    # u2's its positive d below c or above (u3 has no positive)
    low, high = pop["AUC"]["tie_range"]
    assert pop["AUC"]["ties"] == 2 and low == pop["AUC"]["value"] < high
    assert pop["Novelty@2"]["ties"] == 0 and pop["Novelty@2"]["tie_range"] is None
    json.dumps(out.summary, allow_nan=False)


def test_run_in_recommendation_mode_embeds_the_items_with_the_first_dense_system(tmp_path):
    config = REC | {"candidates": {"systems": {
        **REC["candidates"]["systems"], "bm25": {"route": "bm25"},
        "dense": {"route": "dense", "cache_dir": str(tmp_path), "doc_fields": ["title"]}}}}
    p = Params.model_validate(config)
    dense = p.candidates.systems["dense"]
    encoder = Encoder(dense.model, dense.max_length, dense.batch_size, dense.normalize,
                      dense.backend)
    cache = EmbeddingCache(tmp_path, encoder.digest, ("title",), True, dense.max_length,
                           dense.backend)
    vectors = {"item a": [1, 0], "item b": [0, 1], "item c": [1, 1], "item d": [1, 0]}
    cache.encode(list(vectors), lambda texts: np.array([vectors[t] for t in texts], "float32"))
    out = stage.run(p, stage.Inputs(REC_RUNS, LATER, USER_SPLIT, USERS, ITEMS, INGEST, BOUGHT))
    ild = out.per_query[(out.per_query[S.MEASURE] == "ILD@2")
                        & (out.per_query[S.SYSTEM] == "team")].set_index(S.QUERY_ID)[S.VALUE]
    # u1: d·c = 1/√2, u2: d·c = 1/√2 (vectors served by the cache: the model never loads)
    assert ild.dropna().tolist() == pytest.approx([1 - 2 ** -0.5] * 2)
    assert out.summary["recommendation"]["ild_embeddings"] == "dense"


def test_run_in_recommendation_mode_needs_the_log_and_a_known_expected_system():
    with pytest.raises(InputError, match="needs the interaction log"):
        stage.run(Params.model_validate(REC), stage.Inputs(REC_RUNS, LATER, USER_SPLIT, USERS,
                                                           ITEMS,
                  INGEST))
    unknown = REC | {"recommend": {"expected": "nobody"}}
    with pytest.raises(ValidationError, match="recommend.expected: 'nobody' is not a system"):
        Params.model_validate(unknown)  # refused where params are read, before any stage


def test_main_in_recommendation_mode_reads_the_log_and_writes_the_reliability_diagram(
        tmp_path, monkeypatch):
    config = REC | {"candidates": {"systems": {"pop": {"route": "bm25"},
                                               "team": {"route": "bm25"}}},
                    "fusion": {"systems": {}},
                    "compare": {"baseline": "pop", "candidate": "team"}}
    (tmp_path / "data/raw").mkdir(parents=True)
    USERS.to_parquet(tmp_path / "data/raw" / "queries.parquet")
    ITEMS.to_parquet(tmp_path / "data/raw" / "documents.parquet")
    BOUGHT.to_parquet(tmp_path / "data/raw" / "interactions.parquet")
    horizon_rows(0, []).to_parquet(tmp_path / "data/raw" / "horizons.parquet")  # none further
    (tmp_path / "data/judgments").mkdir(parents=True)
    LATER.to_parquet(tmp_path / "data/judgments/qrels.parquet")
    (tmp_path / "data/split").mkdir(parents=True)
    USER_SPLIT.to_parquet(tmp_path / "data/split/split.parquet")
    (tmp_path / "data/judgments/ingest.json").write_text(json.dumps(INGEST))
    for name, frame in REC_RUNS.items():
        (tmp_path / "data/candidates" / name).mkdir(parents=True)
        frame.to_parquet(tmp_path / "data/candidates" / name / "run.parquet")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    main("evaluate", [])
    out = tmp_path / "data/evaluate"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["recommendation"]["probabilities"] == ["team"]
    diagram = pd.read_parquet(out / "reliability.parquet")
    assert set(diagram[S.SYSTEM]) == {"team"} and diagram["n"].sum() == 8  # 4 pairs × 2
    assert pd.read_parquet(out / "horizons.parquet").empty and "horizons" not in summary


def test_every_seed_is_evaluated_like_the_systems():
    from stages.evaluate import SEED_COLUMNS, seed_values

    qrels = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2"], S.DOC_ID: ["a", "b", "c"],
                          S.GRADE: [1, 0, 2]})
    window = pd.DataFrame({S.SYSTEM: "v3", S.ROUTE: "external", S.QUERY_ID: ["q1", "q2", "q1"],
                           S.DOC_ID: ["a", "c", "b"], S.RANK: [1, 1, 1],
                           S.SCORE: [1.0, 1.0, 1.0], S.SEED: [1, 1, 2]})
    got = seed_values({"v3": window}, qrels, ["P@1"], queries=["q1", "q2"])
    assert list(got.columns) == SEED_COLUMNS
    values = got.set_index([S.SEED, S.QUERY_ID])[S.VALUE].to_dict()
    assert values == {(1, "q1"): 1.0, (1, "q2"): 1.0, (2, "q1"): 0.0, (2, "q2"): 0.0}
    assert (got[S.SYSTEM] == "v3").all()
    assert seed_values({}, qrels, ["P@1"]).empty
