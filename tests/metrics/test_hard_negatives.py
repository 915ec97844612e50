"""HardNeg@k, the share of the top k that the qrels mark as hard negatives: worked examples,
a plain pandas oracle over random runs (whole, through the exact doc-id path, in blocks), the
not-applicable rule, the marks' rules and the readers that keep the column."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ranking import _weak, frames, reference

from releval.data import contracts as S
from releval.data.readers import read_qrels
from releval.errors import InputError
from releval.metrics import blocks, doc_join
from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure
from tests.frames import frames as tables

KS = (1, 2, 5)
NAMES = [f"HardNeg@{k}" for k in KS]


def marked(qrels: pd.DataFrame, hard: dict[str, set[str]]) -> pd.DataFrame:
    """``qrels`` with ``hard_negative`` True on the (query, doc) pairs of ``hard``."""
    return qrels.assign(**{S.HARD_NEGATIVE: [d in hard.get(q, ()) for q, d in zip(
        qrels.query_id, qrels.doc_id, strict=True)]})


def per_query(result, measure: str) -> dict[str, float]:
    rows = result.per_query[result.per_query.measure == measure]
    return dict(zip(rows.query_id, rows.value, strict=True))


def test_worked_example_k_is_fixed_and_a_query_without_judgments_is_undefined():
    run, qrels = tables({"q": ["h1", "a", "x", "h2"], "r": ["a"], "nj": ["a"]},
                        {"q": {"h1": 0, "a": 2, "h2": -1, "n": 0}, "r": {"a": 1},
                         "m": {"h": 0}})
    qrels = marked(qrels, {"q": {"h1", "h2"}, "m": {"h"}})
    result = evaluate(run, qrels, ["HardNeg@1", "HardNeg@3", "HardNeg@10", "P@3"],
                      queries=["q", "r", "m", "nj"])
    assert per_query(result, "HardNeg@1") == {"m": 0.0, "nj": pytest.approx(math.nan,
                                                                          nan_ok=True),
                                              "q": 1.0, "r": 0.0}
    assert per_query(result, "HardNeg@3")["q"] == pytest.approx(1 / 3)  # h2 is 4th
    assert per_query(result, "HardNeg@10")["q"] == pytest.approx(2 / 10)  # 4 returned of 10
    assert per_query(result, "HardNeg@10")["m"] == 0.0  # judged, not ranked: scored 0
    summary = result.summary.set_index(S.MEASURE)
    assert summary.loc["HardNeg@10", ["n", "undefined", "applicable"]].tolist() == [3, 1, True]
    assert summary.loc["HardNeg@10", S.VALUE] == pytest.approx((0.2 + 0 + 0) / 3)
    assert per_query(result, "P@3")["q"] == pytest.approx(1 / 3)  # beside precision


def test_the_family_is_lower_is_better_without_trec_name_or_relevance_threshold():
    family = MEASURES["HardNeg"]
    assert family.better == "lower" and family.level == "query" and family.cutoff == "required"
    assert "HardNeg@k =" in family.definition and family.trec(parse_measure("HardNeg@10")) is None
    run, qrels = tables({"q": ["a"]}, {"q": {"a": 0}})
    with pytest.raises(InputError, match="HardNeg takes no parameter rel"):
        evaluate(run, qrels, ["HardNeg(rel=2)@10"])
    with pytest.raises(InputError, match="HardNeg needs a cutoff"):
        evaluate(run, qrels, ["HardNeg"])


@pytest.mark.parametrize("qrels_of", [
    lambda q: q,  # no column
    lambda q: q.assign(**{S.HARD_NEGATIVE: False}),  # a column that marks none
])
def test_qrels_that_mark_no_hard_negative_make_it_not_applicable(qrels_of):
    run, qrels = tables({"q": ["a", "b"]}, {"q": {"a": 0, "b": 1}})
    result = evaluate(run, qrels_of(qrels), ["HardNeg@10", "P@10"])
    summary = result.summary.set_index(S.MEASURE)
    assert summary.loc["HardNeg@10", ["n", "undefined", "applicable"]].tolist() == [0, 1, False]
    assert math.isnan(summary.loc["HardNeg@10", S.VALUE])
    assert math.isnan(per_query(result, "HardNeg@10")["q"])
    assert summary.loc["P@10", S.VALUE] == 0.1 and summary.loc["P@10", "applicable"]


# --- the oracle: plain pandas over random runs ---------------------------------------------


@st.composite
def hard_frames(draw):
    """A random run and qrels whose judgments below grade 1 may be marked, the marks in one
    of the forms a table may hold them."""
    run, qrels = draw(frames())
    can = (qrels.grade < 1).to_numpy()
    hard = np.array(draw(st.lists(st.booleans(), min_size=len(qrels), max_size=len(qrels))),
                    bool) & can
    form = draw(st.sampled_from(["bool", "int", "float", "object", "boolean", "text"]))
    column = {"bool": hard, "int": hard.astype(int),
              "float": np.where(hard, 1.0, np.where(can, 0.0, np.nan)),
              "object": np.array([True if h else None for h in hard], dtype=object),
              "boolean": pd.array(np.where(hard, True, None), dtype="boolean"),
              "text": np.where(hard, " Yes", np.where(can, "no", ""))}[form]
    return run, qrels.assign(**{S.HARD_NEGATIVE: column}), hard


def oracle(run, qrels, hard, k, **kw) -> dict[str, float]:
    """HardNeg@k per evaluated query by pandas: the reference ranking's top k rows whose
    (query, doc) judgment is marked, over k; NaN for a query without judgments."""
    evaluated, rows = reference(run, qrels, **kw)
    ranked = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])
    ranked["pos"] = ranked.groupby("query_id").cumcount()
    marks = qrels[["query_id", "doc_id"]].assign(hard=hard)
    top = ranked[ranked.pos < k].merge(marks, on=["query_id", "doc_id"], how="left")
    hits = top.groupby("query_id").hard.sum()
    judged = set(qrels.query_id)
    return {q: float(hits.get(q, 0)) / k if q in judged else math.nan for q in evaluated}


def assert_matches_oracle(result, run, qrels, hard, **kw):
    summary = result.summary.set_index(S.MEASURE)
    assert (summary.loc[NAMES, "applicable"] == hard.any()).all()
    for k, name in zip(KS, NAMES, strict=True):
        expected = oracle(run, qrels, hard, k, **kw) if hard.any() else {
            q: math.nan for q in reference(run, qrels, **kw)[0]}
        assert per_query(result, name) == pytest.approx(expected, nan_ok=True)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KWARGS = st.sampled_from([{}, {"common_only": True}, {"queries": ["q1", "é", "zz"]}])


@SETTINGS
@given(hard_frames(), KWARGS, st.sampled_from([None, _weak]))
def test_engine_matches_the_pandas_oracle(data, kw, weak):
    run, qrels, hard = data
    with pytest.MonkeyPatch.context() as mp:
        if weak:  # every hash collides: every row is matched by the exact path
            mp.setattr(doc_join, "hash64", weak)
        result = evaluate(run, qrels, NAMES, **kw)
    assert_matches_oracle(result, run, qrels, hard, **kw)


def _grouped(run: pd.DataFrame) -> pd.DataFrame:
    """The run with each query's rows consecutive (as a TREC file): blocks can cut it."""
    if run.empty:
        return run
    first = run.groupby("query_id", sort=False).ngroup()
    return run.assign(_g=first).sort_values("_g", kind="stable").drop(columns="_g")


@SETTINGS
@given(hard_frames(), st.integers(1, 7), st.integers(1, 3), KWARGS)
def test_blocks_of_any_size_give_the_whole_runs_values(data, block_rows, workers, kw):
    run, qrels, _ = data
    run = _grouped(run)
    measures = [*NAMES, "P@2", "Judged@2"]
    whole = evaluate(run, qrels, measures, workers=1, **kw)
    planned = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK_ROWS", block_rows)
        mp.setattr(blocks, "plan", lambda *a, _plan=blocks.plan: planned.append(_plan(*a))
                   or planned[-1])
        cut = evaluate(run, qrels, measures, workers=workers, **kw)
    assert len(run) <= block_rows or planned[-1] is not None  # HardNeg keeps the block path
    pd.testing.assert_frame_equal(cut.per_query, whole.per_query)
    pd.testing.assert_frame_equal(cut.summary, whole.summary)


# --- the marks' rules, and the readers -----------------------------------------------------

QRELS_CSV = "query_id,doc_id,grade,hard_negative\nq,a,2,false\nq,b,0,{mark}\nq,c,{grade},\n"
RUN = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["b", "a", "c"], "rank": [1, 2, 3]})


@pytest.mark.parametrize("mark", ["true", "True", "1", "yes"])
def test_csv_qrels_keep_their_marks_and_an_empty_mark_is_none(tmp_path, mark):
    path = tmp_path / "qrels.csv"
    path.write_text(QRELS_CSV.format(mark=mark, grade=0))
    result = evaluate(RUN, read_qrels(path), ["HardNeg@2", "HardNeg@3"])
    assert result.summary[S.VALUE].tolist() == [pytest.approx(1 / 2), pytest.approx(1 / 3)]


def test_parquet_qrels_keep_their_marks_and_trec_qrels_have_none(tmp_path):
    qrels = marked(tables({}, {"q": {"a": 2, "b": 0, "c": 0}})[1], {"q": {"b", "c"}})
    qrels.to_parquet(tmp_path / "qrels.parquet")
    assert evaluate(RUN, read_qrels(tmp_path / "qrels.parquet"),
                    ["HardNeg@3"]).summary[S.VALUE].tolist() == [pytest.approx(2 / 3)]
    (tmp_path / "qrels.txt").write_text("q 0 a 2\nq 0 b 0\n")
    trec = evaluate(RUN, read_qrels(tmp_path / "qrels.txt"), ["HardNeg@3"]).summary
    assert not trec["applicable"].iloc[0]


@pytest.mark.parametrize("mark,grade,rule", [
    ("maybe", 0, "line 3: hard_negative must be yes or no, got 'maybe'"),
    ("2", 0, "line 3: hard_negative must be yes or no, got '2'"),
    ("1", 1, "line 4: a hard negative is judged not relevant (grade below 1), got grade 1"),
])
def test_a_bad_mark_names_the_file_the_line_and_the_rule(tmp_path, mark, grade, rule):
    path = tmp_path / "qrels.csv"
    body = QRELS_CSV.format(mark=mark, grade=grade)
    path.write_text(body if grade == 0 else body.replace(",c,1,\n", ",c,1,1\n"))
    with pytest.raises(InputError) as exc:
        evaluate(RUN, read_qrels(path), ["P@1"])  # checked whatever the measures
    assert str(exc.value) == f"{path}:{rule}"
