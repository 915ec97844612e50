import numpy as np
import pandas as pd
import pytest

from releval.data.visibility import REASONS, Visibility, forbidden_reasons, visible_pairs
from releval.demo.generator import generate
from releval.errors import InputError

T = pd.Timestamp


def docs():
    return pd.DataFrame({
        "doc_id": ["open", "later", "draft", "gone", "other_tenant", "staff", "deleted_late",
                   "expired"],
        "published_at": pd.to_datetime(["2024-01-01", "2024-03-01", "2024-01-01", "2024-01-01",
                                        "2024-01-01", "2024-01-01", "2024-01-01", "2024-01-01"],
                                       utc=True),
        "status": ["published", "published", "draft", "deleted", "published", "published",
                   "deleted", "expired"],
        "deleted_at": pd.to_datetime([None, None, None, "2024-01-10", None, None, "2024-06-01",
                                      None], utc=True),
        "tenant": ["a", "a", "a", "a", "b", "a", "a", "a"],
        "acl": [[], [], [], [], [], ["staff"], [], []],
    })


def queries():
    return pd.DataFrame({
        "query_id": ["guest", "employee", "admin"],
        "issued_at": pd.to_datetime(["2024-02-01", "2024-04-01", "2024-04-01"], utc=True),
        "tenant": ["a", "a", "a"],
        "groups": [["public"], ["staff"], []],
        "role": ["guest", "employee", "admin"],
    })


def test_time_status_tenant_and_acl_rules():
    mask = Visibility(docs()).mask(queries())
    ids = np.asarray(docs().doc_id)
    seen = {q: set(ids[row]) for q, row in zip(queries().query_id, mask, strict=True)}
    assert seen["guest"] == {"open", "deleted_late"}  # later: future; staff: ACL
    assert seen["employee"] == {"open", "later", "staff", "deleted_late"}
    assert seen["admin"] == {"open", "later", "staff", "deleted_late"}


def test_visible_pairs_looks_up_rows_and_unknown_ids_are_invisible():
    pairs = pd.DataFrame({"query_id": ["guest", "guest", "employee", "nobody"],
                          "doc_id": ["open", "staff", "staff", "open"]})
    assert visible_pairs(Visibility(docs()), queries(), pairs, batch=2).tolist() == [
        True, False, True, False]


def test_more_than_64_groups_use_several_words():
    many = docs().assign(acl=[[f"g{i}"] for i in range(60, 68)], tenant="a", status="published",
                         deleted_at=pd.NaT)
    q = queries().assign(groups=[["g67"], ["g0"], ["g61"]], role="employee")
    mask = Visibility(many).mask(q)
    assert mask[0, 7] and not mask[0, :7].any() and not mask[1].any() and mask[2, 1]


def test_judgments_of_keeps_the_chosen_queries_and_marks_what_they_may_see():
    from releval.data.visibility import judgments_of

    judged = pd.DataFrame({"query_id": ["guest", "guest", "employee"],
                           "doc_id": ["open", "staff", "staff"], "grade": [1, 3, 2]})
    chosen, visible = judgments_of(judged, queries(), docs(), ["guest"])
    assert chosen.doc_id.tolist() == ["open", "staff"] and visible.tolist() == [True, False]


def test_forbidden_reasons_name_each_rule_a_pair_breaks():
    pairs = pd.DataFrame({
        "query_id": ["guest", "guest", "guest", "guest", "guest", "guest", "guest", "guest",
                     "admin", "employee"],
        "doc_id": ["open", "ghost", "other_tenant", "staff", "draft", "gone", "later",
                   "expired", "staff", "gone"]})
    assert list(REASONS) == ["unknown_document", "other_tenant", "acl", "status", "deleted",
                             "not_yet_published"]
    assert forbidden_reasons(pairs, queries(), docs()).tolist() == [
        "", "unknown_document", "other_tenant", "acl", "status", "deleted",
        "not_yet_published", "status", "", "deleted"]


def test_forbidden_reasons_follow_the_precedence_order():
    # another tenant's restricted draft, published after the query: other_tenant comes first
    many = docs().assign(tenant="b", acl=[["finance"]] * 8, status="draft",
                         published_at=pd.Timestamp("2025-01-01", tz="UTC"))
    pairs = pd.DataFrame({"query_id": ["guest"], "doc_id": ["open"]})
    assert forbidden_reasons(pairs, queries(), many).tolist() == ["other_tenant"]
    assert forbidden_reasons(pairs, queries(), many.assign(tenant="a")).tolist() == ["acl"]
    assert forbidden_reasons(pairs, queries(), many.assign(tenant="a", acl=[[]] * 8)
                             ).tolist() == ["status"]


def test_forbidden_reasons_reject_unknown_queries():
    pairs = pd.DataFrame({"query_id": ["nobody"], "doc_id": ["open"]})
    with pytest.raises(InputError, match="not in the queries table"):
        forbidden_reasons(pairs, queries(), docs())


def test_forbidden_reasons_agree_with_the_mask_on_demo_data():
    data = generate(n_docs=400, n_queries=80, seed=11, tenants=3)
    qs, ds = data.queries, data.documents
    pairs = pd.DataFrame({"query_id": np.repeat(qs.query_id.to_numpy(), len(ds)),
                          "doc_id": np.tile(ds.doc_id.to_numpy(), len(qs))})
    reasons = forbidden_reasons(pairs, qs, ds)
    mask = Visibility(ds).mask(qs).ravel()
    assert ((reasons == "") == mask).all()
    seen = set(reasons)  # every way of being hidden occurs on demo data
    assert seen >= {"", "other_tenant", "acl", "status", "deleted", "not_yet_published"}
