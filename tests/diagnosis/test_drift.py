"""Drift diagnosis: the changes between two corpora, and the changed documents whose reversion
restores a figure, found one by one or by bisection, on real BM25 rebuilds and evaluations."""

import math

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.diagnosis.drift import Change, changes, diagnose, revert
from releval.diagnosis.rebuild import Rebuild, settings
from releval.errors import InputError
from releval.params import parse_params
from tests.frames import doc, documents, queries, query

TOPICS = {"q1": "apple banana", "q2": "cherry grape", "q3": "lemon mango"}
FILLER = ["violin", "trumpet", "cello", "flute", "oboe", "harp", "tuba", "piano"]
PARAMS = {"candidates": {"depth": 10, "systems": {
    "bm25": {"route": "bm25"}, "plain": {"route": "bm25", "stemmer": None, "stopwords": None}}},
    "fusion": {"systems": {"hybrid": {"lexical": "bm25", "dense": "plain"}}}}


def corpus(*extra, drop=()) -> pd.DataFrame:
    """Each query's relevant document (r1..r3, its query's words), a weak match for q2 and
    q3, fillers, then ``extra`` rows; ``drop``: doc_ids left out."""
    rows = [doc(f"r{q[1]}", text=f"{words} report") for q, words in TOPICS.items()]
    rows += [doc("w2", text="cherry notes"), doc("w3", text="lemon notes")]
    rows += [doc(f"f{i}", text=f"{w} concert notes") for i, w in enumerate(FILLER)]
    return documents(*(r for r in [*rows, *extra] if r[S.DOC_ID] not in drop))


def rebuild(system="bm25", measure="nDCG@10") -> Rebuild:
    asked = queries(*(query(q, text) for q, text in TOPICS.items()))
    qrels = pd.DataFrame({S.QUERY_ID: list(TOPICS), S.DOC_ID: ["r1", "r2", "r3"],
                          S.GRADE: [1, 1, 1]})
    split = pd.DataFrame({S.QUERY_ID: list(TOPICS), S.SPLIT: ["test"] * 3})
    return Rebuild.of(parse_params(PARAMS), system, measure, "test", corpus(), asked, qrels,
                      split)


def outranking(doc_id: str, q: str) -> dict:
    words = TOPICS[q]
    return doc(doc_id, text=f"{words} {words} {words}")


def test_changes_are_added_removed_and_modified_by_content():
    a = corpus()
    b = corpus(doc("n1", text="new"), drop=("f0",))
    b.loc[b[S.DOC_ID] == "f1", S.ACL] = pd.Series([["eng"]], index=b.index[b[S.DOC_ID] == "f1"])
    b.loc[b[S.DOC_ID] == "f2", S.TEXT] = "violin concert notes, revised"
    b[S.PUBLISHED_AT] = b[S.PUBLISHED_AT].astype("datetime64[ms, UTC]")  # same instants
    assert changes(a, b) == (Change("added", "n1"), Change("modified", "f1"),
                             Change("modified", "f2"), Change("removed", "f0"))
    assert changes(a, a.iloc[::-1]) == ()  # row order is no change
    back = revert(a, b, changes(a, b))
    assert changes(a, back) == ()
    with pytest.raises(InputError, match="doc_id 'f3' is not unique"):
        changes(a, pd.concat([a, a[a[S.DOC_ID] == "f3"]]))


def test_one_added_document_that_outranks_the_relevant_one_is_named():
    figure = rebuild().figure
    a, b = corpus(), corpus(outranking("spam", "q1"))
    found = diagnose(a, b, figure)
    assert found.figure_a == 1.0  # every relevant document first
    assert found.figure_b == pytest.approx((1 / math.log2(3) + 2) / 3)  # q1's now second
    assert found.method == "one by one" and found.counts() == {"added": 1, "removed": 0,
                                                               "modified": 0}
    [cause] = found.causes
    assert cause.changes == (Change("added", "spam"),) and cause.restores
    assert cause.effect == pytest.approx(found.figure_b - found.figure_a)
    assert found.restored and found.rebuilds == 3


def test_a_fused_system_is_rebuilt_with_its_tuned_choice_frozen():
    fused = rebuild("hybrid")
    assert fused.fusion is not None and fused.fusion["method"] in {"rrf", "linear"}
    found = diagnose(corpus(), corpus(outranking("spam", "q2")), fused.figure)
    assert [c.changes for c in found.causes] == [(Change("added", "spam"),)]
    assert found.restored and found.figure_b < found.figure_a


@pytest.mark.parametrize("kind", ["modified", "removed"])
def test_a_modified_or_a_removed_document_is_named_with_its_effect(kind):
    figure = rebuild().figure
    a = corpus(outranking("old", "q3")) if kind == "removed" else corpus()
    b = corpus() if kind == "removed" else corpus().assign(**{S.TEXT: lambda f: f[S.TEXT].where(
        f[S.DOC_ID] != "w2", "cherry grape cherry grape cherry grape")})
    found = diagnose(a, b, figure)
    [cause] = found.causes
    doc_id = "old" if kind == "removed" else "w2"
    assert cause.changes == (Change(kind, doc_id),) and cause.restores and found.restored
    moved = (1 - 1 / math.log2(3)) / 3  # one query's relevant document first vs second
    assert cause.effect == pytest.approx(moved if kind == "removed" else -moved)


def test_bisection_names_the_one_change_that_matters_in_fewer_rebuilds_than_changes():
    figure = rebuild().figure
    noise = [doc(f"n{i:02d}", text=f"{FILLER[i % 8]} {FILLER[(i + 3) % 8]} archive")
             for i in range(30)]
    a = corpus(*noise[:20])
    b = corpus(*noise[10:], outranking("spam", "q3"), drop=("f4", "f5"))
    b.loc[b[S.DOC_ID].isin(["f6", "f7"]), S.TEXT] = "harp tuba recital"
    found = diagnose(a, b, figure)
    assert found.counts() == {"added": 11, "removed": 12, "modified": 2}
    assert found.method == "bisection"
    assert [c.changes for c in found.causes] == [(Change("added", "spam"),)]
    assert found.restored and found.rebuilds < len(found.changes)


def test_changes_acting_only_together_are_kept_as_one_group():
    """A figure that drops while either of two documents is there: neither alone restores
    it, the pair does."""
    either = lambda docs: 0.5 if docs[S.DOC_ID].isin(["x1", "x2"]).any() else 0.8  # noqa: E731
    a = corpus()
    b = corpus(*(doc(f"a{i:02d}") for i in range(20)), doc("x1"), doc("x2"))
    found = diagnose(a, b, either)
    [cause] = found.causes
    assert cause.changes == (Change("added", "x1"), Change("added", "x2")) and cause.restores
    few = diagnose(a, corpus(doc("x1"), doc("x2")), either)  # one by one: neither alone
    assert few.method == "one by one" and few.causes == () and not few.restored


def test_nothing_is_named_when_the_figure_did_not_move():
    found = diagnose(corpus(), corpus(doc("n1", text="oboe archive")), rebuild().figure)
    assert not found.moved and found.method == "unmoved"
    assert found.causes == () and not found.restored and found.rebuilds == 2
    assert found.changes == (Change("added", "n1"),)


def test_a_figure_undefined_at_either_side_is_bad_input():
    with pytest.raises(InputError, match="undefined at A"):
        diagnose(corpus(), corpus(), lambda docs: math.nan)


def test_settings_name_what_the_figure_depends_on_and_replayed_runs_are_refused():
    p = parse_params(PARAMS)
    assert set(settings(p, "hybrid")) == {
        "candidates.depth", "evaluate.rel", "prepare.max_grade", "no_answer.tag",
        "fusion.systems.hybrid", "candidates.systems.bm25", "candidates.systems.plain"}
    team = parse_params(PARAMS | {"candidates": {"depth": 10, "systems": {
        **PARAMS["candidates"]["systems"], "team": {"route": "external", "path": "run.trec"}}}})
    asked = queries(query("q1"))
    with pytest.raises(InputError, match="replays a run file"):
        Rebuild.of(team, "team", "nDCG@10", "test", corpus(), asked, pd.DataFrame(),
                   pd.DataFrame({S.QUERY_ID: ["q1"], S.SPLIT: ["test"]}))
