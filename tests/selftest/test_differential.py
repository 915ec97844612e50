"""The differential against pytrec_eval, ranx and ir_measures (test extras): every path each
oracle can be compared on has cases and agrees, every stated difference is real, and the
table goes red when the engine is broken."""

import importlib.util
from dataclasses import replace

import ir_measures
import numpy as np
import pandas as pd
import pytest
from pyarrow import compute as pc

from releval.errors import InputError
from releval.metrics.engine import resolve
from releval.metrics.measures import MEASURES
from releval.metrics.ranking import Ranking
from releval.selftest import differential as D
from releval.selftest import oracles as O
from releval.selftest import paths as P

ORACLES = ("pytrec_eval", "ranx", "ir_measures")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return D.differential(seed=3, n_cases=180)


def entry(oracle: str, measure: str):
    return {resolve([k])[0].name: e for k, e in O.ORACLES[oracle].entries.items()}[measure]


def test_every_oracle_is_installed_and_every_default_measure_named(table):
    assert set(table.oracle) == set(ORACLES)
    assert not (table.status == "not installed").any()
    assert set(table.measure) == {m.name for m in resolve(P.MEASURES)}
    for oracle in ORACLES:  # every measure is an Entry or a reason, none forgotten
        assert {resolve([k])[0].name for k in O.ORACLES[oracle].entries} == set(table.measure)


def test_every_compared_row_agrees_and_the_others_say_why(table):
    compared = table[~table.status.str.startswith("not comparable: ")]
    assert (compared.status == "agree").all(), compared[compared.status != "agree"]
    assert (compared.agreed == compared.cases).all()
    assert (compared.max_abs_delta <= D.TOLERANCE).all()


def test_every_path_an_oracle_supports_has_cases(table):
    """Each (oracle, measure) with a counterpart: every path of the measure not excluded for
    it has cases; each measure is compared by at least one oracle on the ordinary path."""
    for (oracle, measure), rows in table.groupby(["oracle", "measure"]):
        e = entry(oracle, measure)
        if isinstance(e, str):
            assert (rows.status == f"not comparable: {e}").all()
            continue
        paths = set(P.PATHS) if resolve([measure])[0].cutoff else set(P.PATHS) - {
            "cutoff_beyond_list"}
        assert set(rows.path) == paths
        kept = rows[~rows.path.isin(list(e.excluded))]
        assert (kept.cases > 0).all(), kept[kept.cases == 0]
        assert (rows[rows.path.isin(list(e.excluded))].cases == 0).all()
    ordinary = table[(table.path == "ordinary") & (table.status == "agree")]
    assert set(ordinary.measure) == set(table.measure)


def test_tags_are_read_off_the_data():
    c = P.cases(seed=5, n_cases=90)
    ranked = c.run.groupby("query_id").size().reindex(c.tags.index, fill_value=0)
    tied = c.run.duplicated(["query_id", "score"], keep=False).groupby(c.run.query_id).any()
    graded = c.qrels.merge(c.run, how="outer", on=["query_id", "doc_id"], indicator=True)
    by_query = c.qrels.groupby("query_id").grade
    expected = pd.DataFrame({
        "score_ties": tied.reindex(c.tags.index, fill_value=False),
        "empty_ranking": ranked == 0,
        "negative_grades": by_query.min() < 0,
        "unjudged_documents": (graded._merge == "right_only").groupby(graded.query_id).any(),
        "no_relevant": by_query.max() < 1,
        "no_judged_nonrelevant": ~c.qrels.grade.isin([0]).groupby(c.qrels.query_id).any(),
        "graded": by_query.max() >= 2,
        "ranked": ranked,
    }).reindex(c.tags.index)
    pd.testing.assert_frame_equal(c.tags, expected, check_dtype=False, check_names=False)
    assert (by_query.max() >= 0).all()  # never every grade negative (trec_eval cannot read it)
    nine = c.paths(resolve(["P@10"])[0])
    assert (nine.sum() >= 90 // len(P.GENERATORS)).all()  # each generator reaches its path
    assert (nine.cutoff_beyond_list == ((ranked > 0) & (ranked < 10))).all()
    assert (nine.ordinary == ~nine.drop(columns="ordinary").any(axis=1)).all()
    assert "cutoff_beyond_list" not in c.paths(resolve(["AP"])[0])


def test_the_same_seed_gives_the_same_cases_and_another_does_not():
    a, b, other = P.cases(seed=1, n_cases=27), P.cases(seed=1, n_cases=27), P.cases(2, 27)
    pd.testing.assert_frame_equal(a.run, b.run)
    assert not a.run.equals(other.run)


def broken(family: str, fn):
    """The family with ``fn(r, m, values)`` applied to its values."""
    original = MEASURES[family]
    return replace(original, compute=lambda r, m: fn(r, m, original.compute(r, m)))


def short_lists_over_their_length(r, m, values):
    """P@k dividing by min(k, n) on a list shorter than k."""
    return values * m.cutoff / np.maximum(np.minimum(r.n_ret, m.cutoff), 1)


def undefined_as_zero(r, m, values):
    return np.nan_to_num(values)


def empty_as_undefined(r, m, values):
    return np.where(r.n_ret == 0, np.nan, values)


@pytest.mark.parametrize(("family", "fn", "measure", "path"), [
    ("P", short_lists_over_their_length, "P@10", "cutoff_beyond_list"),
    ("RR", undefined_as_zero, "RR", "no_relevant"),
    ("AP", empty_as_undefined, "AP", "empty_ranking"),
])
def test_a_broken_measure_turns_its_path_red_for_every_oracle(monkeypatch, family, fn, measure,
                                                             path):
    monkeypatch.setitem(MEASURES, family, broken(family, fn))
    out = D.differential(seed=4, n_cases=90, measures=[measure, "nDCG@10"])
    red = out[out.status == "differ"]
    assert set(red[(red.measure == measure) & (red.path == path)].oracle) == set(ORACLES)
    assert not (red.measure == "nDCG@10").any()
    assert (out[(out.measure == measure) & (out.path == "ordinary")].status == "agree").all()


def test_ties_in_another_order_turn_the_tie_path_red_for_every_oracle(monkeypatch):
    def ascending_ties(run, run_qc, run_ds):
        """Score descending, ties doc_id ascending: not trec_eval's order."""
        doc = pc.rank(run_ds, sort_keys="ascending", tiebreaker="dense").to_numpy()
        return np.lexsort((doc, -run["score"].to_numpy(float), run_qc))

    monkeypatch.setattr(Ranking, "_order", staticmethod(ascending_ties))
    out = D.differential(seed=4, n_cases=90, measures=["nDCG@10", "AP", "Judged@10", "RR@10"])
    red = out[out.status == "differ"]
    assert set(red[red.path == "score_ties"].oracle) == set(ORACLES)
    assert (out[out.path == "ordinary"].status.isin(["agree"])
            | out[out.path == "ordinary"].status.str.startswith("not comparable")).all()


@pytest.mark.parametrize(("oracle", "measure", "path"), [
    (oracle, measure, path) for oracle, spec in O.ORACLES.items()
    for measure, e in spec.entries.items() if isinstance(e, O.Entry) for path in e.excluded])
def test_every_exclusion_hides_a_real_difference(monkeypatch, oracle, measure, path):
    """Comparing on an excluded path after all turns the measure red: the exclusion is needed."""
    e = O.ORACLES[oracle].entries[measure]
    entries = {**O.ORACLES[oracle].entries, measure: replace(e, excluded={
        p: why for p, why in e.excluded.items() if p != path})}
    monkeypatch.setitem(O.ORACLES, oracle, replace(O.ORACLES[oracle], entries=entries))
    out = D.differential(seed=4, n_cases=90, measures=[measure], oracles=[oracle])
    assert (out.status == "differ").any()


@pytest.mark.parametrize("measure", [m for m, e in O.ORACLES["ir_measures"].entries.items()
                                     if isinstance(e, O.Entry) and e.ties])
def test_ir_measures_breaks_ties_its_own_way_where_the_table_says(monkeypatch, measure):
    e = O.ORACLES["ir_measures"].entries[measure]
    entries = {**O.ORACLES["ir_measures"].entries, measure: replace(e, ties=None)}
    monkeypatch.setitem(O.ORACLES, "ir_measures", replace(O.ORACLES["ir_measures"],
                                                          entries=entries))
    out = D.differential(seed=4, n_cases=90, measures=[measure], oracles=["ir_measures"])
    assert set(out[out.status == "differ"].path) >= {"score_ties"}


def test_ir_measures_computes_each_measure_with_the_provider_the_table_names():
    for measure, e in O.ORACLES["ir_measures"].entries.items():
        if isinstance(e, O.Entry):
            m = ir_measures.parse_measure(e.name)
            first = next(p.NAME for p in ir_measures.DefaultPipeline.providers
                         if p.is_available() and p.supports(m))
            assert first == e.via, measure


def test_an_oracle_not_installed_says_so(monkeypatch):
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ranx" else found(name, *a))
    out = D.differential(seed=0, n_cases=9, measures=["nDCG@10", "AP"])
    ranx = out[out.oracle == "ranx"]
    assert len(ranx) == 17 and (ranx.status == "not installed").all()
    assert ranx.version.isna().all() and (ranx.cases == 0).all()
    assert (out[out.oracle == "pytrec_eval"].status == "agree").all()


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError, match="n_cases must be ≥ 9"):
        D.differential(n_cases=8)
    with pytest.raises(InputError, match="unknown oracle trec"):
        D.differential(n_cases=9, oracles=["trec"])
    with pytest.raises(InputError, match="exercises cutoff_beyond_list"):
        P.cases(n_cases=9, measures=["P@1"])
