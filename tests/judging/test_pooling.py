"""Pooling on tiny inline runs: the union and its columns, blind ids, the blind export,
incremental rounds, Label Studio files, the guideline, and the unjudged holes."""

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging import pooling
from releval.judging.guidelines import load_guideline
from releval.judging.pooling import (
    EXPORT_COLUMNS,
    Pool,
    blind_export,
    build_pool,
    corpus_digest,
    grow_pool,
    label_config,
    label_studio_tasks,
    to_judge,
    unjudged,
    write_csv,
    write_label_studio,
)

DIGEST = "c0ffee"


def run(**queries) -> pd.DataFrame:
    """A run from ``query_id=[doc_id, ...]`` listed best first (rank 1..n, descending score)."""
    rows = [(q, d, i, 1.0 / i) for q, docs in queries.items() for i, d in enumerate(docs, 1)]
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])


RUNS = {
    "bm25": run(q1=["d1", "d2", "d3"], q2=["d4", "d5"]),
    "dense": run(q1=["d2", "d6", "d1"], q2=["d7"]),
}


def rows(pool: Pool) -> dict[tuple[str, str], tuple[list[str], int, int]]:
    """(query_id, doc_id) → (systems, min_rank, round)."""
    t = pool.table
    return {(q, d): (list(s), r, n) for q, d, s, r, n in
            zip(t[S.QUERY_ID], t[S.DOC_ID], t[S.SYSTEMS], t[S.MIN_RANK], t[S.ROUND], strict=True)}


def blind_ids(pool: Pool) -> dict[tuple[str, str], str]:
    t = pool.table
    return dict(zip(zip(t[S.QUERY_ID], t[S.DOC_ID], strict=True), t[S.BLIND_ID], strict=True))


def corpus(n: int = 12) -> pd.DataFrame:
    return pd.DataFrame({S.DOC_ID: [f"d{i}" for i in range(1, n + 1)],
                         S.TITLE: [f"Title {i}" for i in range(1, n + 1)],
                         S.TEXT: [f"How to fix problem {i}: restart, then café ✓" for i in
                                  range(1, n + 1)],
                         S.STATUS: "published"})


QUERIES = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"],
                        S.TEXT: ["vpn drops", "reset password", "printer jam"]})


# --- union ---

def test_union_dedupes_pairs_with_sorted_systems_and_min_rank():
    pool = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    assert list(pool.table.columns) == list(S.POOL_COLUMNS)
    assert rows(pool) == {
        ("q1", "d1"): (["bm25"], 1, 1),  # dense ranks d1 third: outside its top 2
        ("q1", "d2"): (["bm25", "dense"], 1, 1),
        ("q1", "d6"): (["dense"], 2, 1),
        ("q2", "d4"): (["bm25"], 1, 1),
        ("q2", "d5"): (["bm25"], 2, 1),
        ("q2", "d7"): (["dense"], 1, 1),
    }
    assert list(pool.table[S.QUERY_ID] + pool.table[S.DOC_ID]) == sorted(
        pool.table[S.QUERY_ID] + pool.table[S.DOC_ID])
    assert pool.table[S.BLIND_ID].is_unique
    assert pool.identity["rounds"] == [{"round": 1, "systems": ["bm25", "dense"], "pairs": 6}]
    assert pool.identity["systems"] == ["bm25", "dense"] and pool.identity["pairs"] == 6
    assert pool.identity["pool_id"] == pool.table[S.POOL_ID].iloc[0]
    json.dumps(pool.identity)  # JSON-ready


def test_depth_is_by_rank_not_row_order():
    shuffled = {s: r.sample(frac=1, random_state=3) for s, r in RUNS.items()}
    a = build_pool(RUNS, depth=1, seed=7, corpus_digest=DIGEST)
    b = build_pool(shuffled, depth=1, seed=7, corpus_digest=DIGEST)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert set(rows(a)) == {("q1", "d1"), ("q1", "d2"), ("q2", "d4"), ("q2", "d7")}


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                       st.dictionaries(st.sampled_from(["q1", "q2"]),
                                       st.lists(st.sampled_from([f"d{i}" for i in range(8)]),
                                                min_size=1, max_size=6, unique=True),
                                       min_size=1),
                       min_size=1),
       st.integers(1, 4))
def test_pool_is_the_union_of_top_depth(spec, depth):
    runs = {system: run(**queries) for system, queries in spec.items()}
    expected = {}
    for system, queries in spec.items():
        for q, docs in queries.items():
            for rank, d in enumerate(docs[:depth], 1):
                systems, best, _ = expected.get((q, d), ([], rank, 1))
                expected[(q, d)] = (sorted([*systems, system]), min(best, rank), 1)
    assert rows(build_pool(runs, depth, seed=1, corpus_digest=DIGEST)) == expected


@pytest.mark.parametrize("bad, rule", [
    (run(q1=["d1", "d1"]), "doc_id repeats"),
    (run(q1=["d1", "d2"]).assign(**{S.RANK: [1, 1]}), "rank repeats"),
    (run(q1=["d1"]).assign(**{S.RANK: [0]}), "rank must be an integer"),
    (run(q1=["d1"]).drop(columns=S.RANK), "missing column"),
])
def test_bad_runs_are_refused(bad, rule):
    with pytest.raises(InputError, match=rule):
        build_pool({"bm25": bad}, depth=2, seed=7, corpus_digest=DIGEST)


@pytest.mark.parametrize("depth, seed", [(0, 1), (2.5, 1), (2, "1"), (True, 1)])
def test_bad_settings_are_refused(depth, seed):
    with pytest.raises(InputError):
        build_pool(RUNS, depth=depth, seed=seed, corpus_digest=DIGEST)


# --- identity and blind ids ---

def test_blind_ids_stable_for_a_seed_and_independent_of_systems():
    a = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    again = build_pool(dict(reversed(RUNS.items())), depth=2, seed=7, corpus_digest=DIGEST)
    alone = build_pool({"bm25": RUNS["bm25"]}, depth=2, seed=7, corpus_digest=DIGEST)
    other = build_pool(RUNS, depth=2, seed=8, corpus_digest=DIGEST)
    assert blind_ids(a) == blind_ids(again)
    assert all(blind_ids(a)[pair] == b for pair, b in blind_ids(alone).items())
    assert set(blind_ids(a).values()).isdisjoint(blind_ids(other).values())
    assert all(b.startswith("B") and len(b) == 13 for b in blind_ids(a).values())


def test_pool_id_is_the_settings():
    ids = {build_pool(RUNS, depth, seed, digest).identity["pool_id"]
           for depth, seed, digest in [(2, 7, DIGEST), (3, 7, DIGEST), (2, 8, DIGEST),
                                       (2, 7, "other")]}
    assert len(ids) == 4
    assert build_pool({"x": run(q9=["d9"])}, 2, 7, DIGEST).identity["pool_id"] in ids


def test_blind_id_collision_is_refused(monkeypatch):
    monkeypatch.setattr(pooling, "_blind_ids", lambda *_: "Bsame")
    with pytest.raises(InputError, match="another seed"):
        build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)


def test_corpus_digest_is_content_not_order():
    docs = corpus()
    digest = corpus_digest(docs)
    assert len(digest) == 64
    assert corpus_digest(docs.sample(frac=1, random_state=1).drop(columns=S.STATUS)) == digest
    edited = docs.copy()
    edited.loc[3, S.TEXT] += "."
    assert corpus_digest(edited) != digest
    empty, null = docs.copy(), docs.copy()
    empty.loc[0, S.TITLE], null.loc[0, S.TITLE] = "", None
    assert len({corpus_digest(empty), corpus_digest(null), digest}) == 3
    with pytest.raises(InputError, match="not unique"):
        corpus_digest(pd.concat([docs, docs.head(1)], ignore_index=True))


def test_corpus_digest_does_not_depend_on_chunking(monkeypatch):
    digest = corpus_digest(corpus())
    monkeypatch.setattr(pooling, "_DIGEST_CHUNK", 5)
    assert corpus_digest(corpus()) == digest


# --- blind export ---

def big_pool(seed: int = 7) -> Pool:
    runs = {"bm25": run(q1=[f"d{i}" for i in range(1, 9)], q2=["d9", "d10"], q3=["d11"]),
            "dense": run(q1=["d12", "d1"], q3=["d12"])}
    return build_pool(runs, depth=10, seed=seed, corpus_digest=DIGEST)


def test_export_never_shows_what_identifies_a_document_or_system():
    pool = big_pool()
    export = blind_export(pool, corpus(), QUERIES, seed=7)
    assert list(export.columns) == list(EXPORT_COLUMNS)
    for hidden in (S.DOC_ID, S.QUERY_ID, S.SYSTEMS, S.SYSTEM, S.RANK, S.MIN_RANK, S.SCORE, S.ROUND):
        assert hidden not in export.columns
    values = set(export.astype(str).to_numpy().ravel())
    assert values.isdisjoint(pool.table[S.DOC_ID])
    assert values.isdisjoint({"bm25", "dense"})
    assert len(export) == len(pool.table)
    assert (export[[S.GRADE, S.ANNOTATOR, pooling.NOTES]] == "").all().all()
    by_blind = export.set_index(S.BLIND_ID)
    for _, row in pool.table.iterrows():  # each blind id shows its own query and document
        assert by_blind.at[row[S.BLIND_ID], pooling.QUERY] == QUERIES.set_index(S.QUERY_ID).at[
            row[S.QUERY_ID], S.TEXT]
        assert by_blind.at[row[S.BLIND_ID], S.TITLE] == f"Title {row[S.DOC_ID][1:]}"


def order(export: pd.DataFrame) -> list[str]:
    return list(export[S.BLIND_ID])


def test_export_is_grouped_by_query_and_shuffled_deterministically():
    pool = big_pool()
    export = blind_export(pool, corpus(), QUERIES, seed=7)
    queries = list(export[pooling.QUERY])
    runs_of_queries = [q for i, q in enumerate(queries) if i == 0 or queries[i - 1] != q]
    assert len(runs_of_queries) == 3  # each query's rows are contiguous
    q1 = pool.table.loc[pool.table[S.QUERY_ID] == "q1"]
    by_rank = list(q1.sort_values(S.MIN_RANK)[S.BLIND_ID])
    shown = [b for b in order(export) if b in set(by_rank)]
    assert shown != by_rank and shown != sorted(by_rank)  # 9 rows: not left in either order
    assert order(blind_export(pool, corpus(), QUERIES, seed=7)) == order(export)
    assert order(blind_export(pool.table, corpus(), QUERIES, seed=7)) == order(export)
    reordered = Pool(pool.table.sample(frac=1, random_state=2), pool.identity)
    assert order(blind_export(reordered, corpus().iloc[::-1], QUERIES.iloc[::-1], seed=7)) \
        == order(export)
    assert order(blind_export(pool, corpus(), QUERIES, seed=8)) != order(export)


def test_export_refuses_a_pooled_document_missing_from_the_corpus():
    with pytest.raises(InputError, match="d12"):
        blind_export(big_pool(), corpus(11), QUERIES, seed=7)


def test_write_csv_round_trips_utf8(tmp_path):
    export = blind_export(big_pool(), corpus(), QUERIES, seed=7)
    path = tmp_path / "export" / "judge.csv"
    write_csv(export, path)
    back = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    assert list(back.columns) == list(EXPORT_COLUMNS)
    assert back[S.TEXT].tolist() == export[S.TEXT].tolist()


# --- incremental rounds ---

NEW = {"hybrid": run(q1=["d6", "d8"], q2=["d9", "d5"])}


def test_a_new_system_adds_only_its_new_pairs_in_round_two(tmp_path):
    first = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    path = tmp_path / "pool.parquet"
    first.table.to_parquet(path)
    previous = pd.read_parquet(path)  # systems come back as arrays
    second = build_pool(NEW, depth=2, seed=7, corpus_digest=DIGEST, previous=previous)
    before, after = rows(first), rows(second)
    assert set(after) - set(before) == {("q1", "d8"), ("q2", "d9")}
    assert after[("q1", "d8")] == (["hybrid"], 2, 2) and after[("q2", "d9")] == (["hybrid"], 1, 2)
    assert after[("q1", "d6")] == (["dense", "hybrid"], 1, 1)  # hybrid ranks it 1st
    assert after[("q2", "d5")] == (["bm25", "hybrid"], 2, 1)
    assert after[("q1", "d1")] == before[("q1", "d1")]
    assert all(blind_ids(second)[pair] == b for pair, b in blind_ids(first).items())
    assert second.identity["rounds"] == [
        {"round": 1, "systems": ["bm25", "dense"], "pairs": 6},
        {"round": 2, "systems": ["hybrid"], "pairs": 2},
    ]
    assert second.identity["systems"] == ["bm25", "dense", "hybrid"]
    export = blind_export(second, corpus(), QUERIES, seed=7, round=2)
    assert set(export[S.BLIND_ID]) == {blind_ids(second)[("q1", "d8")],
                                     blind_ids(second)[("q2", "d9")]}


def test_incremental_from_a_pool_keeps_rounds_that_added_no_pair():
    first = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    echo = build_pool({"echo": run(q1=["d2"])}, depth=2, seed=7, corpus_digest=DIGEST,
                      previous=first)
    assert rows(echo)[("q1", "d2")] == (["bm25", "dense", "echo"], 1, 1)
    assert echo.identity["rounds"][-1] == {"round": 2, "systems": ["echo"], "pairs": 0}
    third = build_pool(NEW, depth=2, seed=7, corpus_digest=DIGEST, previous=echo)
    assert third.identity["rounds"][-1] == {"round": 3, "systems": ["hybrid"], "pairs": 2}
    assert set(third.table[S.ROUND]) == {1, 3}


def test_rerunning_known_systems_opens_no_round():
    first = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    again = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST, previous=first.table)
    pd.testing.assert_frame_equal(again.table, first.table)
    assert again.identity == first.identity


@pytest.mark.parametrize("depth, seed, digest", [(3, 7, DIGEST), (2, 8, DIGEST), (2, 7, "x")])
def test_a_previous_pool_with_another_identity_is_refused(depth, seed, digest):
    first = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    with pytest.raises(InputError, match="another seed, depth or corpus"):
        build_pool(NEW, depth=depth, seed=seed, corpus_digest=digest, previous=first.table)


def test_grow_pool_extends_its_own_pool_and_starts_afresh_for_another():
    documents, both = corpus(), pd.Series(["q1", "q2"])
    first = grow_pool(RUNS, documents, both, depth=2, seed=7, previous=None)
    assert first.identity["corpus_digest"] == corpus_digest(documents)
    assert set(first.table[S.QUERY_ID]) == {"q1", "q2"} and len(first.table) == 6
    only_q1 = grow_pool(RUNS, documents, pd.Series(["q1"]), depth=2, seed=7, previous=None)
    assert set(only_q1.table[S.QUERY_ID]) == {"q1"}
    grown = grow_pool(NEW, documents, both, depth=2, seed=7, previous=first.table)
    assert grown.identity["rounds"][-1] == {"round": 2, "systems": ["hybrid"], "pairs": 2}
    assert blind_ids(grown)[("q1", "d1")] == blind_ids(first)[("q1", "d1")]
    fresh = [{"round": 1, "systems": ["hybrid"], "pairs": 4}]
    for seed, previous in ((8, first.table), (7, pd.DataFrame())):  # another pool; none yet
        pool = grow_pool(NEW, documents, both, depth=2, seed=seed, previous=previous)
        assert pool.identity["rounds"] == fresh


def test_to_judge_is_the_export_of_the_latest_round():
    first = build_pool(RUNS, depth=2, seed=7, corpus_digest=DIGEST)
    second = build_pool(NEW, depth=2, seed=7, corpus_digest=DIGEST, previous=first)
    latest = to_judge(second, corpus(), QUERIES, seed=7)
    pd.testing.assert_frame_equal(latest, blind_export(second, corpus(), QUERIES, seed=7,
                                                       round=2))
    assert len(latest) == 2 and len(to_judge(first, corpus(), QUERIES, seed=7)) == 6


# --- Label Studio and the guideline ---

def test_label_studio_tasks_and_config(tmp_path):
    guideline = load_guideline()
    export = blind_export(big_pool(), corpus(), QUERIES, seed=7)
    path = tmp_path / "tasks.json"
    write_label_studio(label_studio_tasks(export, guideline), path)
    tasks = json.loads(path.read_text(encoding="utf-8"))
    assert len(tasks) == len(export)
    assert all(set(t) == {"data"} for t in tasks)
    assert tasks[0]["data"] == {**export.iloc[0][list(pooling.TASK_FIELDS)].to_dict(),
                                "guideline": "relevance-v1"}
    config = ET.fromstring(label_config(guideline))
    names = {e.get("name") for e in config.iter() if e.get("name")}
    choices = config.find(".//Choices[@name='grade']")
    assert choices.get("choice") == "single" and choices.get("required") == "true"
    assert choices.get("toName") in names
    assert [c.get("value") for c in choices.iter("Choice")] == ["0", "1", "2", "3"]
    assert [c.get("hint") for c in choices.iter("Choice")] == list(guideline.grades.values())
    fields = {e.get("value") for e in config.iter("Text")}
    assert {"$query", "$title", "$text"} <= fields
    assert guideline.text in {e.get("value") for e in config.iter("Header")}


def test_guideline_loads_with_its_version():
    guideline = load_guideline("relevance-v1")
    assert guideline.version == "relevance-v1"
    assert not guideline.text.startswith("---")
    assert sorted(guideline.grades) == [0, 1, 2, 3]
    assert "exact procedure" in guideline.grades[3]
    assert "lower" in guideline.text
    with pytest.raises(InputError, match="unknown guideline version"):
        load_guideline("relevance-v0")


# --- unjudged ---

def test_unjudged_lists_exactly_the_holes():
    qrels = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2", "q9"],
                          S.DOC_ID: ["d1", "d6", "d4", "d1"], S.GRADE: [2, 0, 1, 3]})
    holes = unjudged(RUNS, qrels, k=2)
    assert list(holes.columns) == [S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK]
    assert list(holes.itertuples(index=False, name=None)) == [
        ("bm25", "q1", "d2", 2), ("bm25", "q2", "d5", 2),
        ("dense", "q1", "d2", 1), ("dense", "q2", "d7", 1),
    ]
    assert unjudged(RUNS, qrels, k=1).shape[0] == 2  # bm25's top 1 is all judged
