"""The route registry: each route's params model, retriever and traits, in one entry."""

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.history import History
from releval.errors import InputError
from releval.params import Params
from releval.params.systems import (
    BM25System,
    CooccurrenceSystem,
    DenseSystem,
    ExternalSystem,
    PopularitySystem,
)
from releval.retrieval.routes import ROUTES, approximate, exact, scorer_key, search
from tests.frames import BEFORE, doc, documents, queries, query


def test_params_take_their_system_models_from_the_registry():
    p = Params.model_validate({"candidates": {"systems": {
        "lex": {"route": "bm25", "k1": 1.2}, "ext": {"route": "external", "path": "run.trec"}}},
        "fusion": {"systems": {"hybrid": {"lexical": "lex", "dense": "ext"}}},
        "compare": {"baseline": "lex", "candidate": "hybrid"}})
    assert isinstance(p.candidates.systems["lex"], ROUTES["bm25"].params)
    assert isinstance(p.candidates.systems["ext"], ExternalSystem)
    with pytest.raises(InputError, match="candidates.systems.x"):
        from releval.params import parse_params
        parse_params({"candidates": {"systems": {"x": {"route": "splade"}}}})


def test_traits():
    recommenders = {"popularity", "cooccurrence", "content"}
    assert {n for n, r in ROUTES.items() if r.enforces_visibility} == {"bm25", "dense",
                                                                       *recommenders}
    assert {n for n, r in ROUTES.items() if r.needs_history} == recommenders
    assert all(ROUTES[n].exact == {} for n in recommenders)
    assert exact(CooccurrenceSystem()) == CooccurrenceSystem()
    assert not approximate(PopularitySystem())
    assert exact(ExternalSystem(path="run.trec")) is None
    assert exact(BM25System(k1=1.1)) == BM25System(k1=1.1)
    hnsw = DenseSystem(index="hnsw", ef_search=8)
    assert exact(hnsw).index == "exact" and approximate(hnsw)
    assert not approximate(DenseSystem()) and not approximate(BM25System())
    assert scorer_key(exact(hnsw)) == scorer_key(DenseSystem())  # one exact search for both
    assert scorer_key(DenseSystem(model="other")) != scorer_key(DenseSystem())


def test_search_builds_indexes_and_searches_under_visibility():
    docs = documents(doc("p", "printer paper jam"), doc("s", "printer secret", acl=["hr"]))
    found = search(BM25System(), docs, queries(query("q1", "printer")), depth=5)
    assert found.run[S.DOC_ID].tolist() == ["p"]  # s is hidden from q1


def test_search_passes_the_history_only_to_the_routes_that_need_it():
    docs = documents(doc("p", "printer paper jam"))
    history = History(pd.DataFrame({S.USER_ID: ["u1"], S.ITEM_ID: ["p"],
                                    S.TIMESTAMP: pd.Timestamp(BEFORE, tz="UTC"), S.LABEL: [1]}))
    asked = queries(query("q1", "printer")).assign(**{S.USER_ID: "u2"})
    lexical = search(BM25System(), docs, asked, depth=5, history=history)
    assert lexical.run[S.DOC_ID].tolist() == ["p"]
    popular = search(PopularitySystem(window_days=365), docs, asked, 5, history=history)
    assert popular.run[S.DOC_ID].tolist() == ["p"]
    with pytest.raises(InputError, match="route cooccurrence recommends from an interaction "
                                         "log, and there is none"):
        search(CooccurrenceSystem(), docs, asked, 5)
