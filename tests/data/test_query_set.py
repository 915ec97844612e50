"""The evaluated query set described: sampling sources and weights, risk categories from tags
and (untagged queries only) from text, minimums, and the optional source column read by
every reader."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.adapters import read_tables
from releval.data.query_set import NO_SOURCE_NOTE, RISK_CATEGORIES, describe, memberships
from releval.demo import generator as demo_data
from releval.errors import InputError
from tests.frames import queries, query


def q(query_id, text="q", tags=(), weight=1.0, source="logged"):
    return {**query(query_id, text=text), S.TAGS: list(tags), S.WEIGHT: weight,
            S.QUERY_SOURCE: source}


def log(*rows) -> pd.DataFrame:
    frame = queries(*({k: v for k, v in r.items() if k != S.QUERY_SOURCE} for r in rows))
    return frame.assign(**{S.QUERY_SOURCE: [r[S.QUERY_SOURCE] for r in rows]})


def split_of(frame: pd.DataFrame, split="test") -> pd.DataFrame:
    return pd.DataFrame({S.QUERY_ID: frame[S.QUERY_ID], S.SPLIT: split})


TAGGED = log(q("q1", tags=["head", "no_answer"], weight=3.0, source="template"),
             q("q2", tags=["tail", "high_risk", "finance"], weight=0.5),
             q("q3", tags=["tail", "authz_boundary"], weight=0.5, source="template"),
             q("q4", text="error E-4012 and also how to reset it", tags=["tail", "typo"]))


def test_categories_come_from_tags_with_counts_shares_and_weight_shares():
    d = describe(TAGGED, split_of(TAGGED), ["test"], {"no_answer": 1, "high_risk": 2})
    assert (d["queries"], d["weight"], d["untagged"], d["splits"]) == (4, 5.0, 0, ["test"])
    c = d["categories"]
    assert {k: v["count"] for k, v in c.items() if v["count"]} == {
        "head": 1, "long_tail": 3, "high_risk": 1, "high_risk_finance": 1, "no_answer": 1,
        "authorization_boundary": 1, "typo": 1}
    assert c["no_answer"] | {"underwrites": None} == {
        "label": "no-answer", "count": 1, "from_text": 0, "share": 0.25, "weight_share": 0.6,
        "minimum": 1, "covered": True, "underwrites": None}
    assert c["no_answer"]["underwrites"] == ["no_answer"]
    assert c["high_risk"]["covered"] is False and c["high_risk"]["underwrites"] == ["safety"]
    assert c["authorization_boundary"]["underwrites"] == ["safety"]
    assert c["typo"]["minimum"] is None and c["typo"]["covered"] is None
    assert d["undercovered"] == ["high_risk"]
    # tags win: q4's text reads as an error code and a multi-intent query, its tags do not
    assert c["error_code"]["count"] == c["multi_intent"]["count"] == 0


def test_sampling_sources_with_count_share_and_weight():
    d = describe(TAGGED, split_of(TAGGED), ["test"], {})
    assert d["source_given"] is True and d["note"] is None
    assert d["sources"] == {
        "logged": {"count": 2, "share": 0.5, "weight": 1.5, "weight_share": 0.3},
        "template": {"count": 2, "share": 0.5, "weight": 3.5, "weight_share": 0.7}}


def test_without_a_source_column_every_query_is_logged_and_the_description_says_so():
    d = describe(TAGGED.drop(columns=[S.QUERY_SOURCE]), split_of(TAGGED), ["test"], {})
    assert d["source_given"] is False and d["note"] == NO_SOURCE_NOTE
    assert "no source column" in NO_SOURCE_NOTE
    assert d["sources"]["logged"]["count"] == 4 and d["sources"]["template"]["count"] == 0


@pytest.mark.parametrize("text,expected", [
    ("error E-4012 on XR-220", {"error_code"}),
    ("printer shows code 0x80070005", {"error_code"}),
    ("is the XR-220 weight 350 g?", {"numeric"}),
    ("how many ports does the dock have", {"numeric"}),
    ("reset the router without erasing data", {"negation"}),
    ("laptop won't boot", {"negation"}),
    ("vpn is slow and also how do I renew my badge", {"multi_intent"}),
    ("reset my password; book a meeting room", {"multi_intent"}),
    ("XR-220 connection failure", set()),
])
def test_untagged_queries_are_recognised_from_their_text(text, expected):
    frame = log(q("q1", text=text), q("q2", text=text, tags=["tail"]))
    member, by_text = memberships(frame, RISK_CATEGORIES)
    found = {name for name in RISK_CATEGORIES if member.loc[0, name]}
    assert found == expected and set(by_text.columns[by_text.loc[0]]) == expected
    assert not by_text.loc[1].any() and set(member.columns[member.loc[1]]) == {"long_tail"}


def test_text_counts_are_reported_apart():
    frame = log(q("q1", text="error 42 on startup"), q("q2", text="E-1234", tags=["error_code"]))
    d = describe(frame, split_of(frame), ["test"], {"error_code": 2})
    assert d["untagged"] == 1
    assert d["categories"]["error_code"] | {"underwrites": []} == {
        "label": "error-code", "count": 2, "from_text": 1, "share": 1.0, "weight_share": 1.0,
        "minimum": 2, "covered": True, "underwrites": []}


def test_only_the_evaluated_splits_are_described():
    split = split_of(TAGGED).assign(**{S.SPLIT: ["train", "test", "test", "validation"]})
    d = describe(TAGGED, split, ["test"], {})
    assert d["queries"] == 2 and d["categories"]["no_answer"]["count"] == 0
    assert describe(TAGGED, split, ["test", "train"], {})["categories"]["no_answer"]["count"] == 1


def test_the_no_answer_category_follows_the_no_answer_tag():
    frame = TAGGED.assign(**{S.TAGS: [["head", "unanswerable"], *TAGGED[S.TAGS][1:]]})
    assert describe(frame, split_of(frame), ["test"], {})["categories"]["no_answer"][
        "count"] == 0
    d = describe(frame, split_of(frame), ["test"], {}, no_answer_tag="unanswerable")
    assert d["categories"]["no_answer"]["count"] == 1


def test_an_empty_query_set_has_undefined_shares_and_fails_its_minimums():
    d = describe(TAGGED, split_of(TAGGED), ["validation"], {"no_answer": 1})
    assert d["queries"] == 0 and d["sources"]["logged"]["share"] is None
    assert d["categories"]["no_answer"] | {"underwrites": []} == {
        "label": "no-answer", "count": 0, "from_text": 0, "share": None, "weight_share": None,
        "minimum": 1, "covered": False, "underwrites": []}


def test_an_unknown_category_names_params_and_the_key():
    with pytest.raises(InputError) as error:
        describe(TAGGED, split_of(TAGGED), ["test"], {"no_answer": 1, "no_answers": 30})
    assert str(error.value).startswith("params.yaml:query_set.min_per_category.no_answers: "
                                       "unknown query-set category 'no_answers' (known: head, ")


def test_a_bad_source_value_names_the_file_and_row():
    frame = TAGGED.assign(**{S.QUERY_SOURCE: ["logged", "scraped", "logged", "template"]})
    frame.attrs.update(source="raw/queries.parquet", unit="row")
    with pytest.raises(InputError, match=r"^raw/queries\.parquet:row 1: source must be one of "
                                         r"logged, template, got 'scraped'$"):
        describe(frame, split_of(frame), ["test"], {})


def test_every_category_is_recognised_by_tags_and_the_risk_ones_underwrite_their_rules():
    assert list(RISK_CATEGORIES)[:3] == ["head", "long_tail", "high_risk"]
    assert {f"high_risk_{d}" for d in S.RISK_DOMAINS} <= set(RISK_CATEGORIES)
    assert all(set(c.tags) <= set(S.TAG_VALUES) for c in RISK_CATEGORIES.values())
    rules = {name: c.underwrites for name, c in RISK_CATEGORIES.items() if c.underwrites}
    assert rules.pop("no_answer") == ("no_answer",)
    assert rules.pop("authorization_boundary") == ("safety",)
    assert set(rules) == {"high_risk", *(f"high_risk_{d}" for d in S.RISK_DOMAINS)}
    assert set(rules.values()) == {("safety",)}


def test_the_demo_describes_itself_with_both_sources_and_every_category():
    data = demo_data.generate(n_docs=800, n_queries=400, seed=3)
    split = split_of(data.queries)
    d = describe(data.queries, split, ["test"], {})
    assert d["untagged"] == 0 and 0 < d["sources"]["template"]["count"] < 400
    assert all(c["count"] > 0 for c in d["categories"].values())
    counts = {k: c["count"] for k, c in d["categories"].items()}
    assert counts["head"] + counts["long_tail"] == 400
    assert counts["high_risk"] == sum(counts[f"high_risk_{x}"] for x in S.RISK_DOMAINS)


# --- the optional source column, read like every other query column ---------------------------


def test_contracts_read_the_source_column_and_default_to_logged():
    assert S.query_source_ok(TAGGED).all()
    bare = TAGGED.drop(columns=[S.QUERY_SOURCE])
    assert S.query_source_ok(bare).all()
    assert S.query_sources(bare, "queries").tolist() == ["logged"] * 4
    bad = TAGGED.assign(**{S.QUERY_SOURCE: [None, "logged", "Logged", "template"]})
    assert S.query_source_ok(bad).tolist() == [False, True, False, True]
    with pytest.raises(InputError, match="queries:index 0: source must be one of"):
        S.query_sources(bad, "queries")


def test_tables_keep_a_valid_source_column_and_name_the_row_of_a_bad_one(tmp_path):
    data = demo_data.generate(n_docs=300, n_queries=60, seed=2)
    data.documents.to_parquet(tmp_path / "documents.parquet")
    data.queries.to_parquet(tmp_path / "queries.parquet")
    read = read_tables(tmp_path).queries
    assert read[S.QUERY_SOURCE].tolist() == data.queries[S.QUERY_SOURCE].tolist()
    assert pd.api.types.is_string_dtype(read[S.QUERY_SOURCE])
    data.queries.drop(columns=[S.QUERY_SOURCE]).to_parquet(tmp_path / "queries.parquet")
    assert S.QUERY_SOURCE not in read_tables(tmp_path).queries.columns
    bad = data.queries.assign(**{S.QUERY_SOURCE: np.where(np.arange(60) == 4, "web",
                                                          data.queries[S.QUERY_SOURCE])})
    bad.to_parquet(tmp_path / "queries.parquet")
    with pytest.raises(InputError, match=r"queries\.parquet:row 5: source must be one of "
                                         r"logged, template, got 'web'"):
        read_tables(tmp_path)
