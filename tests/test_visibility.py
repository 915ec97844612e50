import numpy as np
import pandas as pd

from releval.visibility import Visibility, visible_pairs

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
    from releval.visibility import judgments_of

    judged = pd.DataFrame({"query_id": ["guest", "guest", "employee"],
                           "doc_id": ["open", "staff", "staff"], "grade": [1, 3, 2]})
    chosen, visible = judgments_of(judged, queries(), docs(), ["guest"])
    assert chosen.doc_id.tolist() == ["open", "staff"] and visible.tolist() == [True, False]
