import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import forbidden_reasons
from releval.demo.generator import generate
from releval.demo.team_run import simulate_external_run

DEPTH = 30


@pytest.fixture(scope="module")
def demo():
    return generate(n_docs=800, n_queries=150, seed=3)


@pytest.fixture(scope="module")
def run(demo):
    return simulate_external_run(demo, seed=5, depth=DEPTH)


def test_seeded_ranked_and_at_most_depth_per_query(demo, run):
    pd.testing.assert_frame_equal(run, simulate_external_run(demo, seed=5, depth=DEPTH))
    assert not run.equals(simulate_external_run(demo, seed=6, depth=DEPTH))
    assert list(run.columns) == [S.QUERY_ID, S.DOC_ID, S.SCORE, S.SYSTEM]
    assert (run[S.SYSTEM] == "prod_v2").all()
    assert set(simulate_external_run(demo, depth=5, system="team")[S.SYSTEM]) == {"team"}
    assert set(run[S.QUERY_ID]) == set(demo.queries[S.QUERY_ID])
    assert run.groupby(S.QUERY_ID).size().max() == DEPTH
    assert not run.duplicated([S.QUERY_ID, S.DOC_ID]).any()
    assert run[S.QUERY_ID].is_monotonic_increasing
    assert (run.groupby(S.QUERY_ID)[S.SCORE].diff().dropna() <= 0).all()  # best first
    assert (run[S.SCORE] == run[S.SCORE].round(6)).all()


def test_finds_most_answers_but_not_all(demo, run):
    truth = demo.ground_truth
    found = truth.merge(run, on=[S.QUERY_ID, S.DOC_ID], how="left")[S.SCORE].notna()
    assert 0.5 < found.mean() < 0.8  # 70% of the ground truth is scored, padding adds little
    answers = truth[truth[S.GRADE] == 3].merge(run, on=[S.QUERY_ID, S.DOC_ID])
    assert (answers[S.SCORE] > -1).mean() > 0.8  # answers score high, padding below 0.5


def test_padding_is_the_querys_tenant_published_by_then_ignoring_acls(demo, run):
    judged = demo.ground_truth[[S.QUERY_ID, S.DOC_ID]].assign(judged=True)
    filler = run.merge(judged, on=[S.QUERY_ID, S.DOC_ID], how="left")
    filler = filler[filler["judged"].isna()]
    rows = (filler.merge(demo.documents, on=S.DOC_ID)
            .merge(demo.queries, on=S.QUERY_ID, suffixes=("", "_q")))
    assert len(rows) == len(filler) > 0
    assert (rows[S.TENANT] == rows[f"{S.TENANT}_q"]).all()
    early = rows[S.PUBLISHED_AT] <= rows[S.ISSUED_AT]
    first = demo.documents.groupby(S.TENANT)[S.PUBLISHED_AT].min()
    before_any = rows[S.ISSUED_AT] < rows[f"{S.TENANT}_q"].map(first)
    assert (early | before_any).all()  # published by then, unless nothing was yet
    assert (rows[S.SCORE] <= 0.5).all() and (rows[S.SCORE] >= -3).all()
    hidden = forbidden_reasons(run[[S.QUERY_ID, S.DOC_ID]], demo.queries, demo.documents)
    assert np.count_nonzero(hidden != "") > 0  # status and ACLs deliberately ignored


def test_the_retrained_run_has_a_tag_per_seed_and_a_status_per_query(demo):
    from releval.demo.team_run import SEEDS, simulate_retrained_run

    run = simulate_retrained_run(demo, seed=5, depth=DEPTH)
    assert set(run[S.SYSTEM]) == {f"prod_v3@seed{k}" for k in SEEDS}
    per_query = run.groupby([S.SYSTEM, S.QUERY_ID])["status"].nunique()
    assert (per_query == 1).all()  # one serving status per query and seed
    assert set(run["status"]) <= {"ok", "timeout", "partial", "fallback"}
    assert (run["status"] == "ok").mean() > 0.9
    sizes = run.groupby([S.SYSTEM, S.QUERY_ID]).size()
    statuses = run.groupby([S.SYSTEM, S.QUERY_ID])["status"].first()
    assert (sizes[statuses == "timeout"] <= 10).all()
    seeds = [set(map(tuple, g[[S.QUERY_ID, S.DOC_ID]].values)) for _, g in run.groupby(S.SYSTEM)]
    assert seeds[0] != seeds[1]  # each seed drew its own model
    truth = demo.ground_truth
    found = {s: truth.merge(g, on=[S.QUERY_ID, S.DOC_ID]).shape[0] / len(truth)
             for s, g in run.groupby(S.SYSTEM)}
    v2 = truth.merge(simulate_external_run(demo, seed=5, depth=DEPTH),
                     on=[S.QUERY_ID, S.DOC_ID]).shape[0] / len(truth)
    assert all(f > v2 for f in found.values())  # retrained: it finds more answers
