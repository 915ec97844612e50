"""Whole candidate windows on demo data obey the access and time rule."""

import pandas as pd
import pytest

from releval.demo_data import GUEST_RUNBOOK_QUERY_ID, generate
from releval.params import Params
from stages.candidates import run


@pytest.fixture(scope="module")
def windows():
    data = generate(n_docs=1500, n_queries=300, seed=5)
    params = Params.model_validate({"candidates": {"depth": 200}})
    table, stats = run(params, "bm25", data.documents, data.queries)
    return data, table, stats


def test_no_window_holds_a_forbidden_future_or_other_tenant_document(windows):
    data, table, _ = windows
    pairs = table.merge(data.documents, on="doc_id", suffixes=("", "_doc")).merge(
        data.queries, on="query_id", suffixes=("_doc", "_query"))
    assert len(pairs) == len(table)
    t = pairs["issued_at"]
    assert (pairs["tenant_doc"] == pairs["tenant_query"]).all()
    assert (pairs["published_at"] <= t).all()
    assert (pairs["status"].isin(["published", "deleted"])).all()
    assert (pairs["deleted_at"].isna() | (pairs["deleted_at"] > t)).all()
    acl_ok = [not acl or bool(set(acl) & set(groups)) or role == "admin"
              for acl, groups, role in zip(pairs["acl"], pairs["groups"], pairs["role"],
                                           strict=True)]
    assert all(acl_ok)


def test_windows_follow_the_run_contract_and_stats(windows):
    data, table, stats = windows
    assert list(table.columns) == ["system", "route", "query_id", "doc_id", "rank", "score"]
    assert not table.duplicated(["query_id", "doc_id"]).any()
    ranks = table.groupby("query_id")["rank"].agg(["min", "max", "size"])
    assert (ranks["min"] == 1).all() and (ranks["max"] == ranks["size"]).all()
    assert (table.groupby("query_id")["score"].diff().dropna() <= 0).all()
    assert stats["depth"] == 200 and stats["n_queries"] == len(data.queries)
    assert set(stats["latency_ms"]) == {"p50", "p95", "p99"}


def test_the_guest_never_sees_the_internal_runbook(windows):
    data, table, _ = windows
    runbooks = data.ground_truth.loc[data.ground_truth.query_id == GUEST_RUNBOOK_QUERY_ID,
                                     "doc_id"]
    window = table.loc[table.query_id == GUEST_RUNBOOK_QUERY_ID, "doc_id"]
    assert len(runbooks) and not set(runbooks) & set(window)
    staff_only = data.documents.loc[data.documents.acl.map(lambda a: list(a) == ["staff"]),
                                    "doc_id"]
    assert not set(window) & set(pd.Series(staff_only))
