"""``Ranking`` against a plain pandas reference: the evaluated queries, each query's ranked
order (trec_eval's: score descending, ties by doc_id descending; or the rank column), every
row's judgment, and the first repeat named by the rules. The doc-id join hashes the ids
(``releval.metrics.doc_join``), so the same checks also run with a hash that collides on
every id (every match then goes through the exact path) and on Arrow input split in chunks."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from releval.errors import InputError
from releval.metrics import doc_join
from releval.metrics.ranking import Ranking

QUERIES = ["q1", "q10", "q2", "Q", "é", "a b"]
DOCS = ["d0", "d1", "d01", "D1", "dé", "ü" * 9, "x" * 17, "", " ", "d1 ", "0", "00", "NA"]


def reference(run: pd.DataFrame, qrels: pd.DataFrame, common_only=False, queries=None):
    """(evaluated queries, ranked rows as (query, doc, grade or NaN), in Ranking's order)."""
    order = list(dict.fromkeys(run.query_id))  # queries in order of first appearance
    judged = set(qrels.query_id)
    if queries is not None:
        evaluated = sorted(set(queries))
    elif common_only:
        evaluated = sorted(judged & set(run.query_id))
    else:
        evaluated = sorted(judged)
    grades = {(q, d): g for q, d, g in zip(qrels.query_id, qrels.doc_id, qrels.grade,
                                           strict=True)}
    rows = []
    for q in order:
        if q not in evaluated:
            continue
        part = run[run.query_id == q]
        if "rank" in run.columns:
            part = part.sort_values("rank", kind="stable")
        else:  # doc_id descending among equal scores: sort twice, stably
            part = part.sort_values("doc_id", ascending=False, kind="stable")
            part = part.sort_values("score", ascending=False, kind="stable")
        rows += [(q, d, grades.get((q, d), np.nan)) for d in part.doc_id]
    return evaluated, rows


def observed(r: Ranking) -> tuple[list, list]:
    docs = []
    for q, g in zip(r.q, r.grade, strict=True):
        docs.append((r.queries[q], g))
    return list(r.queries), docs


@st.composite
def frames(draw):
    n = draw(st.integers(0, 30))
    pairs = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS)),
                          min_size=n, max_size=n, unique=True))
    by_rank = draw(st.booleans())
    grouped = draw(st.booleans())
    if grouped:
        pairs.sort(key=lambda p: QUERIES.index(p[0]))
    run = pd.DataFrame(pairs, columns=["query_id", "doc_id"])
    if by_rank:
        run["rank"] = draw(st.permutations(range(1, len(run) + 1))) if len(run) else []
    else:
        run["score"] = draw(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, 3.0]),
                                     min_size=len(run), max_size=len(run)))
    judged = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS),
                                     st.integers(-1, 3)), max_size=25,
                           unique_by=lambda t: t[:2]))
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "grade"])
    if draw(st.booleans()):
        qrels = qrels.sort_values("query_id", kind="stable")
    return run, qrels


def _check(run, qrels, **kw):
    r = Ranking(run, qrels, **kw)
    evaluated, rows = reference(run, qrels, **kw)
    assert list(r.queries) == evaluated
    assert len(r.q) == len(rows)
    assert [r.queries[q] for q in r.q] == [q for q, _, _ in rows]
    np.testing.assert_array_equal(r.grade, np.array([g for _, _, g in rows], dtype=float))
    np.testing.assert_array_equal(r.judged, ~np.isnan(r.grade))
    for i, q in enumerate(r.q):  # positions restart at 0 on each query
        assert r.pos[i] == (0 if i == 0 or r.q[i - 1] != q else r.pos[i - 1] + 1)
    np.testing.assert_array_equal(r.n_ret, np.bincount(r.q, minlength=r.nq))
    assert sorted(r.qrels_q.tolist()) == sorted(
        evaluated.index(q) for q in qrels.query_id if q in evaluated)
    return r


def _weak(strings):
    """A hash that collides on every string."""
    return np.zeros(len(strings), np.uint64)


_HASH64 = doc_join.hash64


def _two_values(strings):
    """A hash with two values."""
    return _HASH64(strings) & np.uint64(1)


settings_ = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@settings_
@given(frames(), st.sampled_from([{}, {"common_only": True}, {"queries": ["q1", "é", "zz"]}]))
def test_ranking_matches_the_reference(data, kw):
    _check(*data, **kw)


@settings_
@given(frames(), st.sampled_from([_weak, _two_values]))
def test_ranking_is_exact_when_every_hash_collides(data, weak):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(doc_join, "hash64", weak)
        _check(*data)


@settings_
@given(frames())
def test_ranking_reads_arrow_columns_in_chunks(data):
    run, qrels = data
    if len(run) < 2:
        return
    table = pa.Table.from_pandas(run, preserve_index=False)
    half = len(run) // 2
    chunked = pa.concat_tables([table.slice(0, half), table.slice(half)])
    frame = chunked.to_pandas(types_mapper={pa.string(): pd.StringDtype("pyarrow")}.get)
    assert pa.array(frame.doc_id.array).num_chunks == 2
    _check(frame, qrels)


@st.composite
def with_repeat(draw):
    run, qrels = draw(frames())
    if not len(run):
        return run, qrels
    i = draw(st.integers(0, len(run) - 1))
    j = draw(st.integers(0, len(run)))
    row = run.iloc[[i]]
    if "rank" in run.columns:
        row = row.assign(rank=len(run) + 5)
    return pd.concat([run.iloc[:j], row, run.iloc[j:]], ignore_index=True), qrels


def _first_repeat(keys: list) -> tuple[int, int] | None:
    seen = {}
    for i, k in enumerate(keys):
        if k in seen:
            return seen[k], i
        seen[k] = i
    return None


@settings_
@given(with_repeat(), st.sampled_from([None, _weak]))
def test_a_doc_ranked_twice_is_named_at_its_first_repeat(data, weak):
    run, qrels = data
    dup = _first_repeat(list(zip(run.query_id, run.doc_id, strict=True)))
    with pytest.MonkeyPatch.context() as mp:
        if weak:
            mp.setattr(doc_join, "hash64", weak)
        if dup is None:
            Ranking(run, qrels)
            return
        with pytest.raises(InputError) as exc:
            Ranking(run, qrels)
    i, j = dup
    assert str(exc.value) == (f"run:index {j}: duplicate doc_id {run.doc_id[j]!r} in the ranked "
                              f"list of query {run.query_id[j]!r} (first at index {i})")


@settings_
@given(frames(), st.integers(0, 30), st.integers(0, 30), st.sampled_from([None, _weak]))
def test_a_doc_judged_twice_is_named_at_its_first_repeat(data, i, j, weak):
    run, qrels = data
    if not len(qrels):
        return
    i, j = i % len(qrels), j % (len(qrels) + 1)
    qrels = pd.concat([qrels.iloc[:j], qrels.iloc[[i]], qrels.iloc[j:]], ignore_index=True)
    first, repeat = _first_repeat(list(zip(qrels.query_id, qrels.doc_id, strict=True)))
    with pytest.MonkeyPatch.context() as mp:
        if weak:
            mp.setattr(doc_join, "hash64", weak)
        with pytest.raises(InputError) as exc:
            Ranking(run, qrels)
    assert str(exc.value) == (
        f"qrels:index {repeat}: duplicate judgment for query {qrels.query_id[repeat]!r} doc "
        f"{qrels.doc_id[repeat]!r} (first at index {first})")


def test_hash_is_the_same_whatever_the_strings_hashed_with_it():
    ids = pa.array(["d0", "x" * 100, "d0", "é", ""], pa.large_string())
    alone = [doc_join.hash64(ids.slice(i, 1))[0] for i in range(len(ids))]
    assert doc_join.hash64(ids).tolist() == alone
    assert alone[0] == alone[2] and len(set(alone)) == 4
    assert doc_join.hash64(pa.array(["a"], pa.string())).tolist() == \
        doc_join.hash64(pa.array(["a"], pa.large_string())).tolist()


def test_stable_order_is_argsorts():
    codes = np.random.default_rng(0).integers(0, 50, 1000)
    np.testing.assert_array_equal(doc_join.stable_order(codes),
                                  np.argsort(codes, kind="stable"))


def test_building_blocks_are_memoised_per_array_and_read_only():
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 2]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "grade": [2]})
    r = Ranking(run, qrels)
    assert r.relevant(1) is r.relevant(1) and r.relevant(1).tolist() == [False, True]
    with pytest.raises(ValueError):
        r.relevant(1)[0] = True
    import copy
    other = copy.copy(r)
    other.grade = np.array([2.0, np.nan])  # a copy whose rows changed computes afresh
    assert other.relevant(1).tolist() == [True, False]
    assert r.relevant(1).tolist() == [False, True]
    assert not r.has_probability and np.isnan(r.probability).all()
    assert r.per_query(np.array([1.0, 2.0])).tolist() == [3.0]
    assert r.max_grade == 3
