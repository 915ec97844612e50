"""Failure classification: each layer rule on tiny hand-built frames, then seeded cases on
demo data with the real routes (bm25, dense exact and HNSW, fusion)."""

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.demo.answers import answer_map
from releval.demo.generator import GUEST_RUNBOOK_QUERY_ID, generate
from releval.diagnosis import layers as layers_module
from releval.diagnosis.layers import (
    ANN_MISS,
    CHUNK,
    CORPUS_REASON,
    DEEP_CHECKED,
    DETECTED,
    FAILURE_COLUMNS,
    FOUND_DEEP,
    FUSED_AWAY,
    LAYERS,
    NOTE_DOWNSTREAM,
    NOTE_DOWNSTREAM_EXTERNAL,
    NOTE_EXTERNAL,
    NOTE_NO_ANSWERS,
    NOTE_NO_DEEP,
    REGISTRY,
    UNJUDGED,
    VISIBILITY_REASON,
    SystemInfo,
    assign,
    claims,
    classify,
    facts,
)
from releval.diagnosis.summary import changes
from releval.errors import InputError
from releval.params.systems import BM25System, DenseSystem
from releval.retrieval.deep import exact_ranks
from releval.retrieval.fusion import fuse
from releval.retrieval.routes import make_retriever
from stages import failures as failures_stage
from tests.frames import AFTER, doc, documents, queries, query

K = 3


def run(*doc_ids, query_id="q1") -> pd.DataFrame:
    """A window: doc_ids at ranks 1..n, scores descending."""
    n = len(doc_ids)
    return pd.DataFrame({S.QUERY_ID: query_id, S.DOC_ID: list(doc_ids),
                         S.RANK: np.arange(1, n + 1), S.SCORE: np.arange(n, 0, -1, dtype=float)})


def qrels(grades: dict[str, int], query_id="q1") -> pd.DataFrame:
    return pd.DataFrame({S.QUERY_ID: query_id, S.DOC_ID: list(grades),
                         S.GRADE: list(grades.values())})


def deep(rows: dict[str, list[str]], query_id="q1") -> pd.DataFrame:
    """route_system -> its exact deep window (doc_ids in rank order)."""
    return pd.DataFrame([(route, query_id, d, i + 1) for route, docs in rows.items()
                         for i, d in enumerate(docs)], columns=list(S.DEEP_COLUMNS))


def layers(failures: pd.DataFrame, system: str) -> dict[str, str]:
    rows = failures[failures[S.SYSTEM] == system]
    return dict(zip(rows[S.DOC_ID], rows["layer"], strict=True))


def evidence(failures: pd.DataFrame, system: str, doc_id: str, query_id: str = "q1") -> dict:
    row = failures[(failures[S.SYSTEM] == system) & (failures[S.DOC_ID] == doc_id)
                   & (failures[S.QUERY_ID] == query_id)]
    assert len(row) == 1, (system, doc_id, row)
    return json.loads(row["evidence"].iloc[0])


# --- corpus, chunk, filter -------------------------------------------------------------------

FILLERS = [doc(x) for x in "abcdefghij"]
ACCESS_DOCS = documents(
    *FILLERS,
    doc("gone", status="deleted", deleted="2024-03-01"),
    doc("draft", status="draft"),
    doc("future", published=AFTER),
    doc("gone_secret", status="deleted", deleted="2024-03-01", acl=["hr"]),
    doc("secret", acl=["hr"]),
    doc("foreign", tenant="B"),
    doc("late_gone", status="deleted", deleted=AFTER),  # deleted after the query: visible
    {**doc("kb1#1"), S.SOURCE_ID: "kb1"},  # kb1#0 was re-chunked away, kb1#1 remains
)
ACCESS_QUERIES = queries(query("q1", groups=("eng",)))
ACCESS_QRELS = qrels({"a": 2, "b": 0, "c": 0, "gone": 2, "draft": 1, "future": 1, "ghost": 1,
                      "gone_secret": 1, "secret": 3, "foreign": 1, "late_gone": 1, "kb1#0": 3,
                      "kb9#0": 3, "weak": 0})
ANSWERS = pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.SOURCE_ID: ["kb1", "kb9"],
                        S.DOC_ID: ["kb1#0", "kb9#0"]})


def access(**kwargs) -> pd.DataFrame:
    return classify({"lex": SystemInfo("lex", "bm25")}, {"lex": run("a", "b", "c", "late_gone")},
                    ACCESS_QRELS, ACCESS_QUERIES, ACCESS_DOCS, ["q1"], k=K, **kwargs)


def test_columns_and_which_rows_are_failures():
    out = access()
    assert list(out.columns) == list(FAILURE_COLUMNS)
    # "a" is in the top k, "b"/"c"/"weak" are graded 0: none is a failure
    assert set(out[S.DOC_ID]) == {"gone", "draft", "future", "ghost", "gone_secret", "secret",
                                  "foreign", "late_gone", "kb1#0", "kb9#0"}
    assert (out["kind"] == "relevance").all() and out[S.GRADE].dtype == float
    assert (out["unjudged_in_top_k"] == 0).all()  # a, b, c all judged
    assert out.set_index(S.DOC_ID)[S.RANK]["late_gone"] == 4
    assert out.set_index(S.DOC_ID)[S.RANK].drop("late_gone").isna().all()
    assert out[S.GRADE].tolist() == sorted(out[S.GRADE], reverse=True)  # grade descending
    assert access(rel=2)[S.GRADE].min() == 2


def test_corpus_layer_with_its_evidence():
    out = access()
    got = layers(out, "lex")
    assert {d: got[d] for d in ("gone", "draft", "future", "ghost", "kb1#0", "kb9#0")} == \
        dict.fromkeys(("gone", "draft", "future", "ghost", "kb1#0", "kb9#0"), "corpus")
    gone = evidence(out, "lex", "gone")
    assert gone["reason"] == "deleted" and gone["status"] == "deleted"
    assert gone["deleted_at"] == "2024-03-01T00:00:00+00:00"
    assert gone["issued_at"] == "2024-06-01T00:00:00+00:00"
    assert gone["published_at"] == "2024-01-01T00:00:00+00:00"
    assert evidence(out, "lex", "draft")["reason"] == "status"
    assert evidence(out, "lex", "future")["reason"] == "not_yet_published"
    ghost = evidence(out, "lex", "ghost")
    assert ghost["reason"] == "unknown_document" and ghost["status"] is None
    assert ghost["notes"]["chunk"] == NOTE_NO_ANSWERS  # never guessed without an answer map


def test_corpus_comes_before_filter_for_a_deleted_restricted_document():
    out = access()
    assert layers(out, "lex")["gone_secret"] == "corpus"
    facts = evidence(out, "lex", "gone_secret")
    assert facts["reason"] == "deleted" and facts["visibility_reason"] == "acl"


def test_chunk_layer_needs_the_answer_map_and_a_remaining_chunk():
    out = access(answers=ANSWERS)
    got = layers(out, "lex")
    assert got["kb1#0"] == "chunk"
    assert got["kb9#0"] == "corpus"  # no other chunk of kb9 in the corpus: just missing
    assert got["ghost"] == "corpus"  # not the query's answer document
    facts = evidence(out, "lex", "kb1#0")
    assert facts["source_id"] == "kb1" and facts["chunks_in_corpus"] == ["kb1#1"]
    assert "chunk" not in facts["notes"]
    assert "chunk" not in access()["layer"].tolist()


def test_answer_map_from_judgments_made_before_rechunking():
    before = documents(*FILLERS, {**doc("kb1#0"), S.SOURCE_ID: "kb1"},
                       {**doc("kb1#1"), S.SOURCE_ID: "kb1"})
    answers = answer_map(ACCESS_QRELS, before)
    assert answers.values.tolist() == [["q1", "kb1", "kb1#0"]]  # kb9#0: not in that corpus
    assert layers(access(answers=answers), "lex")["kb1#0"] == "chunk"


def test_filter_layer_with_its_evidence():
    out = access()
    got = layers(out, "lex")
    assert got["secret"] == "filter" and got["foreign"] == "filter"
    assert got["late_gone"] != "corpus"  # deleted only after the query was issued
    secret = evidence(out, "lex", "secret")
    assert secret == secret | {"reason": "acl", "doc_tenant": "A", "doc_acl": ["hr"],
                               "query_tenant": "A", "query_groups": ["eng"],
                               "query_role": "employee"}
    foreign = evidence(out, "lex", "foreign")
    assert foreign["reason"] == "other_tenant" and foreign["doc_tenant"] == "B"


# --- representation, exact_ann, fusion, qrels, ranking ---------------------------------------

ROUTE_DOCS = documents(*FILLERS, *(doc(x) for x in ("r_none", "r_ann", "r_fus", "r_rank")))
ROUTE_QUERIES = queries(query("q1"))
SYSTEMS = {"lex": SystemInfo("lex", "bm25"),
           "ann": SystemInfo("ann", "dense", approximate=True),
           "hyb": SystemInfo("hyb", "hybrid", sources=("lex", "ann"),
                             fusion={"method": "rrf", "k": 10}),
           "ext": SystemInfo("ext", "external")}
RUNS = {"lex": run("a", "r_fus", "b", "c", "r_rank"),
        "ann": run("d", "e", "f", "g", "h", "r_rank", "r_ann"),
        "hyb": run("a", "d", "b", "r_rank", "r_fus"),
        "ext": run("r_none", "a", "i")}
DEEP = deep({"lex": ["a", "r_fus", "b", "c", "r_rank", "g", "h", "r_ann"],
             "ann": ["d", "r_ann", "e", "f", "g", "r_rank"]})
ROUTE_QRELS = qrels({"r_none": 3, "r_ann": 2, "r_fus": 2, "r_rank": 1,
                     "a": 0, "b": 0, "d": 0, "e": 0, "f": 0})


def routes(grades=ROUTE_QRELS, **kwargs) -> pd.DataFrame:
    kwargs = {"deep": DEEP, "deep_k": 10, "k": K} | kwargs
    return classify(SYSTEMS, RUNS, grades, ROUTE_QUERIES, ROUTE_DOCS, ["q1"], **kwargs)


def test_each_route_layer_on_a_fully_judged_top_k():
    out = routes()
    assert layers(out, "lex") == {"r_none": "representation", "r_ann": "ranking",
                                  "r_rank": "ranking"}
    assert layers(out, "ann") == {"r_none": "representation", "r_ann": "exact_ann",
                                  "r_fus": "representation", "r_rank": "ranking"}
    assert layers(out, "hyb") == {"r_none": "representation", "r_ann": "exact_ann",
                                  "r_fus": "fusion", "r_rank": "ranking"}
    assert layers(out, "ext") == {"r_ann": "qrels", "r_fus": "qrels", "r_rank": "qrels"}
    assert out.groupby(S.SYSTEM)["unjudged_in_top_k"].max().to_dict() == \
        {"lex": 0, "ann": 0, "hyb": 0, "ext": 1}


def test_route_layer_evidence():
    out = routes()
    assert evidence(out, "hyb", "r_none")["deep_ranks"] == {"lex": None, "ann": None}
    assert evidence(out, "hyb", "r_none")["deep_k"] == 10
    ann = evidence(out, "ann", "r_ann")
    assert {key: ann[key] for key in ("route", "exact_rank", "ann_rank", "k")} == \
        {"route": "ann", "exact_rank": 2, "ann_rank": 7, "k": K}
    fusion = evidence(out, "hyb", "r_fus")
    assert fusion["source_ranks"] == {"lex": 2, "ann": None} and fusion["hybrid_rank"] == 5
    assert fusion["fusion"] == {"method": "rrf", "k": 10}
    ranking = evidence(out, "hyb", "r_rank")
    assert ranking["deep_ranks"] == {"lex": 5, "ann": 6} and ranking["system_rank"] == 4
    assert ranking["source_ranks"] == {"lex": 5, "ann": 6}
    assert evidence(out, "lex", "r_ann")["deep_ranks"] == {"lex": 8}
    ext = evidence(out, "ext", "r_rank")
    assert ext["unjudged"] == ["i"] and ext["unjudged_in_top_k"] == 1
    for layer in ("representation", "exact_ann", "fusion"):
        assert ext["notes"][layer] == NOTE_EXTERNAL
    assert ext["notes"]["downstream"] == NOTE_DOWNSTREAM_EXTERNAL
    assert evidence(out, "lex", "r_rank")["notes"]["downstream"] == NOTE_DOWNSTREAM
    assert "downstream" not in set(out["layer"])


def test_external_with_a_fully_judged_top_k_is_ranking_never_representation():
    out = routes(pd.concat([ROUTE_QRELS, qrels({"i": 0})]))
    assert set(layers(out, "ext").values()) == {"ranking"}
    assert evidence(out, "ext", "r_ann")["system_rank"] is None


def test_unjudged_top_k_turns_ranking_into_qrels_but_not_earlier_layers():
    out = routes(ROUTE_QRELS[ROUTE_QRELS[S.DOC_ID] != "a"])  # a: rank 1 of lex and hyb
    assert layers(out, "lex") == {"r_none": "representation", "r_ann": "qrels",
                                  "r_rank": "qrels"}
    assert layers(out, "hyb") == {"r_none": "representation", "r_ann": "exact_ann",
                                  "r_fus": "fusion", "r_rank": "qrels"}
    assert evidence(out, "lex", "r_rank")["unjudged"] == ["a"]
    assert (out.loc[out[S.SYSTEM].isin(["lex", "hyb"]), "unjudged_in_top_k"] == 1).all()
    assert (out.loc[out[S.SYSTEM] == "ann", "unjudged_in_top_k"] == 0).all()


def test_deep_k_cuts_the_deep_window():
    out = routes(deep_k=4)  # deep ranks 5 (lex) and 6 (ann) of r_rank no longer count
    assert layers(out, "lex") == dict.fromkeys(("r_none", "r_ann", "r_rank"), "representation")
    assert layers(out, "hyb")["r_rank"] == "representation"
    assert evidence(out, "hyb", "r_rank")["deep_ranks"] == {"lex": None, "ann": None}
    assert layers(out, "hyb")["r_ann"] == "exact_ann"  # ann's exact rank 2 still counts


def test_without_deep_ranks_representation_and_exact_ann_are_not_checked():
    out = routes(deep=None)
    assert layers(out, "lex") == dict.fromkeys(("r_none", "r_ann", "r_rank"), "ranking")
    assert layers(out, "ann")["r_ann"] == "ranking"
    assert layers(out, "hyb")["r_fus"] == "fusion"  # fusion needs only the windows
    notes = evidence(out, "lex", "r_none")["notes"]
    assert notes["representation"] == notes["exact_ann"] == NOTE_NO_DEEP


def test_a_route_missing_from_the_deep_frame_is_not_blamed():
    out = routes(deep=DEEP[DEEP["route_system"] == "lex"])
    assert layers(out, "ann")["r_none"] == "ranking"
    assert "no exact deep window of ann" in evidence(out, "ann", "r_none")["notes"][
        "representation"]
    assert layers(out, "lex")["r_none"] == "representation"


# --- precedence: the registry's order decides between layers that share a failure -------------

def keys(frame: pd.DataFrame) -> list[tuple]:
    return list(frame[[S.SYSTEM, S.DOC_ID]].itertuples(index=False, name=None))


def first_claim(claimed: pd.DataFrame) -> list[str]:
    """Per row, the first layer (registry order) that claims it."""
    return [next(name for name in LAYERS if name in claimed and row[name])
            for _, row in claimed.iterrows()]


def test_the_registry_is_the_written_order():
    assert tuple(layer.name for layer in REGISTRY) == LAYERS
    assert [layer.name for layer in DETECTED] == [n for n in LAYERS if n != "downstream"]
    assert REGISTRY[-1].name == "ranking"
    written = re.findall(r"^\d+\. ``(\w+)``", layers_module.__doc__, re.M)
    assert written == list(LAYERS)
    stage = " ".join(failures_stage.__doc__.split())
    assert f"({', '.join(LAYERS)})" in stage
    assert changes(access(), "lex", "lex")["layer"].tolist() == list(LAYERS)


def test_the_docs_list_the_layers_in_registry_order():
    root = Path(__file__).resolve().parents[2]
    lists = []
    for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        names = [m.group(1) for m in re.finditer(r"^\d+\. (\w+) — ", path.read_text(), re.M)
                 if m.group(1) in LAYERS]
        if names:
            lists.append((path.name, names))
    assert lists and all(names == list(LAYERS) for _, names in lists), lists


BOTH = {"chunk": {CHUNK: {"source_id": "kb1"}}, "corpus": {CORPUS_REASON: "deleted"},
        "filter": {VISIBILITY_REASON: "acl"}, "representation": {DEEP_CHECKED: True},
        "exact_ann": {ANN_MISS: True}, "fusion": {FUSED_AWAY: True}, "qrels": {UNJUDGED: 1},
        "ranking": {}}
NOTHING = {CHUNK: None, CORPUS_REASON: "", VISIBILITY_REASON: "", DEEP_CHECKED: False,
           FOUND_DEEP: False, ANN_MISS: False, FUSED_AWAY: False, UNJUDGED: 0}


@pytest.mark.parametrize("earlier, later", list(itertools.combinations(
    [layer.name for layer in DETECTED], 2)))
def test_of_two_layers_claiming_a_failure_the_earlier_in_the_registry_wins(earlier, later):
    row = pd.DataFrame([NOTHING | BOTH[earlier] | BOTH[later]])
    claimed = claims(row)
    assert claimed.loc[0, earlier] and claimed.loc[0, later]
    assert assign(row).tolist() == [earlier]
    alone = pd.DataFrame([NOTHING | BOTH[later]])
    assert assign(alone).tolist() == [later]


DEEP_ANN_FUS = deep({"lex": ["a", "r_fus", "b", "c", "r_rank", "g", "h", "r_ann"],
                     "ann": ["d", "r_ann", "r_fus", "e", "f", "g", "r_rank"]})
ACCESS_DEEP = deep({"lex": ["a", "b", "c", "late_gone"]})
UNJUDGED_TOP = run("u", "a", "b", "late_gone")  # u: unjudged, in the top k


def access_facts(classify_or_facts, lex_run=None, **kwargs):
    return classify_or_facts({"lex": SystemInfo("lex", "bm25")},
                             {"lex": run("a", "b", "c", "late_gone") if lex_run is None
                              else lex_run}, ACCESS_QRELS, ACCESS_QUERIES, ACCESS_DOCS,
                             ["q1"], k=K, **kwargs)


# (earlier, later, scenario, system, doc_id): two layers that claim the same real failure
SHARED = [
    ("chunk", "corpus", "access", "lex", "kb1#0"),  # unknown, yet its source is re-chunked
    ("chunk", "representation", "access", "lex", "kb1#0"),
    ("chunk", "qrels", "access", "lex", "kb1#0"),
    ("corpus", "filter", "access", "lex", "gone_secret"),  # deleted and staff-only
    ("corpus", "representation", "access", "lex", "gone"),
    ("corpus", "qrels", "access", "lex", "ghost"),
    ("filter", "representation", "access", "lex", "secret"),
    ("filter", "qrels", "access", "lex", "foreign"),
    ("representation", "fusion", "shallow", "hyb", "r_fus"),  # lex window 2, deep_k 1
    ("representation", "qrels", "unjudged", "lex", "r_none"),
    ("exact_ann", "fusion", "ann_fus", "hyb", "r_fus"),  # ann exact 3, lex window 2
    ("exact_ann", "qrels", "unjudged", "hyb", "r_ann"),
    ("fusion", "qrels", "unjudged", "hyb", "r_fus"),
    ("qrels", "ranking", "unjudged", "lex", "r_rank"),
]


def scenario(name: str, with_facts: bool):
    how = facts if with_facts else classify
    if name == "access":  # answers, a deep window, an unjudged document in the top k
        return access_facts(how, lex_run=UNJUDGED_TOP, answers=ANSWERS,
                            deep=ACCESS_DEEP, deep_k=10)
    kwargs = {"deep": DEEP, "deep_k": 10, "k": K} | {
        "shallow": {"deep_k": 1}, "ann_fus": {"deep": DEEP_ANN_FUS}, "unjudged": {}}[name]
    grades = ROUTE_QRELS[ROUTE_QRELS[S.DOC_ID] != "a"] if name == "unjudged" else ROUTE_QRELS
    return how(SYSTEMS, RUNS, grades, ROUTE_QUERIES, ROUTE_DOCS, ["q1"], **kwargs)


@pytest.mark.parametrize("earlier, later, name, system, doc_id", SHARED)
def test_a_failure_two_layers_claim_goes_to_the_earlier(earlier, later, name, system, doc_id):
    found = scenario(name, with_facts=True)
    claimed = claims(found)
    at = (found[S.SYSTEM] == system) & (found[S.DOC_ID] == doc_id)
    assert at.sum() == 1
    assert claimed.loc[at, earlier].item() and claimed.loc[at, later].item()
    assert layers(scenario(name, with_facts=False), system)[doc_id] == earlier


@pytest.mark.parametrize("name", ["access", "shallow", "ann_fus", "unjudged"])
def test_every_failure_goes_to_the_first_layer_that_claims_it(name):
    found = scenario(name, with_facts=True)
    claimed = claims(found)
    assert claimed["ranking"].all()  # the residual
    out = scenario(name, with_facts=False)
    by_row = dict(zip(keys(found), first_claim(claimed), strict=True))
    assert dict(zip(keys(out), out["layer"], strict=True)) == by_row


def test_bad_input_is_rejected():
    with pytest.raises(InputError, match="route must be one of"):
        SystemInfo("x", "sparse")
    with pytest.raises(InputError, match="a hybrid names its source systems"):
        SystemInfo("x", "hybrid")
    with pytest.raises(InputError, match="needs the window"):
        classify({"hyb": SYSTEMS["hyb"]}, {"hyb": RUNS["hyb"], "lex": RUNS["lex"]},
                 ROUTE_QRELS, ROUTE_QUERIES, ROUTE_DOCS, ["q1"], k=K)
    with pytest.raises(InputError, match="k must be an integer"):
        routes(k=0)
    with pytest.raises(InputError, match="not in the queries table"):
        classify({"lex": SYSTEMS["lex"]}, RUNS, qrels({"r_none": 1}, query_id="q9"),
                 ROUTE_QUERIES, ROUTE_DOCS, ["q9"], k=K)


def test_no_failures_gives_an_empty_frame_with_the_columns():
    out = routes(qrels({"a": 1}))
    assert out[out[S.SYSTEM] == "lex"].empty and list(out.columns) == list(FAILURE_COLUMNS)
    assert classify(SYSTEMS, RUNS, ROUTE_QRELS, ROUTE_QUERIES, ROUTE_DOCS, [], k=K).empty


# --- seeded cases on demo data with the real routes -------------------------------------------

SEED, DEPTH, KD = 4, 100, 10
LINEAR = {"method": "linear", "weights": {"bm25": 0.99, "dense": 0.01}, "norm": "minmax"}


def search(config, documents, queries, depth):
    params = config.model_dump()
    retriever = make_retriever(params.pop("route"), **params)
    retriever.index(documents)
    return retriever.search(queries, depth, Visibility(documents)).run


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    data = generate(n_docs=600, n_queries=120, seed=SEED)
    cache = str(tmp_path_factory.mktemp("embeddings"))
    configs = {"bm25": BM25System(), "dense": DenseSystem(cache_dir=cache),
               "dense_hnsw": DenseSystem(cache_dir=cache, index="hnsw", ef_search=1, hnsw_m=2,
                                         ef_construction=1)}
    runs = {name: search(c, data.documents, data.queries, DEPTH if name != "dense_hnsw" else KD)
            for name, c in configs.items()}
    runs["hybrid"] = fuse({"bm25": runs["bm25"], "dense": runs["dense"]}, DEPTH, LINEAR)
    qids = data.queries[S.QUERY_ID].tolist()
    deep_frame = exact_ranks(configs, data.documents, data.queries, qids, deep_k=1000)
    systems = {"bm25": SystemInfo("bm25", "bm25"), "dense": SystemInfo("dense", "dense"),
               "dense_hnsw": SystemInfo("dense_hnsw", "dense", approximate=True),
               "hybrid": SystemInfo("hybrid", "hybrid", sources=("bm25", "dense"),
                                    fusion=LINEAR)}
    return {"data": data, "configs": configs, "runs": runs, "deep": deep_frame,
            "systems": systems, "qids": qids}


def demo_classify(demo, names, qrels_frame=None, documents=None, runs=None, **kwargs):
    data = demo["data"]
    kwargs = {"deep": demo["deep"], "deep_k": 1000} | kwargs
    return classify({n: demo["systems"][n] for n in names}, runs or demo["runs"],
                    data.ground_truth if qrels_frame is None else qrels_frame, data.queries,
                    data.documents if documents is None else documents, demo["qids"], k=KD,
                    **kwargs)


def test_exact_ranks_on_demo_match_the_exact_routes(demo):
    deep_frame = demo["deep"]
    dense = deep_frame[deep_frame["route_system"] == "dense"].drop(columns="route_system")
    hnsw = deep_frame[deep_frame["route_system"] == "dense_hnsw"].drop(columns="route_system")
    assert dense.reset_index(drop=True).equals(hnsw.reset_index(drop=True))  # forced exact
    exact = demo["runs"]["dense"][[S.QUERY_ID, S.DOC_ID, S.RANK]]
    top = dense[dense[S.RANK] <= DEPTH].reset_index(drop=True)
    assert top.equals(exact.reset_index(drop=True))
    assert dense.groupby(S.QUERY_ID).size().max() > DEPTH  # deeper than the windows


def test_demo_deleted_relevant_document_is_a_corpus_failure(demo):
    data, runs = demo["data"], demo["runs"]
    truth = data.ground_truth[data.ground_truth[S.GRADE] == 3]
    top = runs["bm25"][runs["bm25"][S.RANK] <= KD]
    found = truth.merge(top, on=[S.QUERY_ID, S.DOC_ID]).merge(
        data.queries[[S.QUERY_ID, S.ISSUED_AT]]).merge(
        data.documents[[S.DOC_ID, S.PUBLISHED_AT]])
    found = found[found[S.ISSUED_AT] - found[S.PUBLISHED_AT] > pd.Timedelta(days=2)]
    pick = found.iloc[0]
    before = demo_classify(demo, ["bm25"])
    assert before[(before[S.QUERY_ID] == pick[S.QUERY_ID])
                  & (before[S.DOC_ID] == pick[S.DOC_ID])].empty  # found: no failure
    deleted_at = pick[S.ISSUED_AT] - pd.Timedelta(days=1)
    docs = data.documents.copy()
    at = docs[S.DOC_ID] == pick[S.DOC_ID]
    docs.loc[at, S.STATUS] = "deleted"
    docs.loc[at, S.DELETED_AT] = deleted_at
    rerun = {"bm25": search(demo["configs"]["bm25"], docs, data.queries, DEPTH)}
    out = demo_classify(demo, ["bm25"], documents=docs, runs=rerun)
    facts = evidence(out, "bm25", pick[S.DOC_ID], pick[S.QUERY_ID])
    row = out[(out[S.QUERY_ID] == pick[S.QUERY_ID]) & (out[S.DOC_ID] == pick[S.DOC_ID])]
    assert row["layer"].item() == "corpus"
    assert facts["reason"] == "deleted" and facts["deleted_at"] == deleted_at.isoformat()


def test_demo_acl_excluded_positive_is_a_filter_failure(demo):
    data = demo["data"]
    out = demo_classify(demo, ["bm25", "hybrid"])
    rows = out[out[S.QUERY_ID] == GUEST_RUNBOOK_QUERY_ID]
    relevant = data.ground_truth[(data.ground_truth[S.QUERY_ID] == GUEST_RUNBOOK_QUERY_ID)
                                 & (data.ground_truth[S.GRADE] >= 1)]
    assert len(rows) == 2 * len(relevant) > 0  # every staff-only positive, for both systems
    assert (rows["layer"] == "filter").all()
    facts = json.loads(rows["evidence"].iloc[0])
    assert facts["reason"] == "acl" and facts["doc_acl"] == ["staff"]
    assert facts["query_role"] == "guest"


def test_demo_fusion_drops_a_dense_find(demo):
    data, runs = demo["data"], demo["runs"]
    out = demo_classify(demo, ["bm25", "dense", "hybrid"])
    fused = out[out["layer"] == "fusion"]
    assert len(fused) > 0 and set(fused[S.SYSTEM]) == {"hybrid"}
    ranks = {name: runs[name].set_index([S.QUERY_ID, S.DOC_ID])[S.RANK]
             for name in ("bm25", "dense", "hybrid")}
    dense_finds = []
    for row in fused.itertuples():
        facts = json.loads(row.evidence)
        assert facts["fusion"] == LINEAR and set(facts["source_ranks"]) == {"bm25", "dense"}
        for source, rank in facts["source_ranks"].items():  # the evidence is the windows'
            assert rank == ranks[source].get((row.query_id, row.doc_id))
        assert min(r for r in facts["source_ranks"].values() if r is not None) <= KD
        assert facts["hybrid_rank"] == ranks["hybrid"].get((row.query_id, row.doc_id))
        assert facts["hybrid_rank"] is None or facts["hybrid_rank"] > KD
        if facts["source_ranks"]["bm25"] is None:
            dense_finds.append((row.query_id, row.doc_id))
    # BM25 misses the answer of a paraphrase query, dense finds it, the bm25-heavy fusion drops it
    paraphrase = set(data.queries.loc[data.queries[S.TAGS].map(lambda t: "paraphrase" in t),
                                      S.QUERY_ID])
    assert {q for q, _ in dense_finds} & paraphrase
    # the dense system itself found those documents (no dense failure), BM25 did not
    failed = {name: set(zip(rows[S.QUERY_ID], rows[S.DOC_ID], strict=True))
              for name, rows in out.groupby(S.SYSTEM)}
    assert not failed["dense"] & set(dense_finds)
    assert set(dense_finds) <= failed["bm25"]


def test_demo_hnsw_miss_with_tiny_ef_search_is_exact_ann(demo):
    out = demo_classify(demo, ["dense", "dense_hnsw"])
    ann = out[out["layer"] == "exact_ann"]
    assert len(ann) > 0 and set(ann[S.SYSTEM]) == {"dense_hnsw"}
    exact = demo["runs"]["dense"].set_index([S.QUERY_ID, S.DOC_ID])[S.RANK]
    for row in ann.itertuples():
        facts = json.loads(row.evidence)
        assert facts["route"] == "dense_hnsw"
        assert facts["exact_rank"] == exact[(row.query_id, row.doc_id)] <= KD
        assert facts["ann_rank"] is None  # the HNSW window is only KD deep
    # the exact dense system found every one of them in its top k
    dense = out[out[S.SYSTEM] == "dense"].set_index([S.QUERY_ID, S.DOC_ID]).index
    assert not dense.isin(ann.set_index([S.QUERY_ID, S.DOC_ID]).index).any()


def test_demo_unjudged_top_ranked_document_is_a_qrels_failure(demo):
    data, bm25 = demo["data"], demo["runs"]["bm25"]
    top = bm25.loc[bm25[S.RANK] <= KD, [S.QUERY_ID, S.DOC_ID]]
    judged = pd.concat([data.ground_truth, top.assign(**{S.GRADE: 0})]).drop_duplicates(
        [S.QUERY_ID, S.DOC_ID])  # every top-k document judged (grade 0 where unjudged)
    full = demo_classify(demo, ["bm25"], judged)
    ranking = full[full["layer"] == "ranking"]
    assert len(ranking) > 0 and (full["unjudged_in_top_k"] == 0).all()
    assert "qrels" not in set(full["layer"])
    query_id, doc_id = ranking[[S.QUERY_ID, S.DOC_ID]].iloc[0]
    first = bm25[(bm25[S.QUERY_ID] == query_id) & (bm25[S.RANK] == 1)][S.DOC_ID].item()
    dropped = judged[~((judged[S.QUERY_ID] == query_id) & (judged[S.DOC_ID] == first))]
    out = demo_classify(demo, ["bm25"], dropped)
    row = out[(out[S.QUERY_ID] == query_id) & (out[S.DOC_ID] == doc_id)]
    assert row["layer"].item() == "qrels" and row["unjudged_in_top_k"].item() == 1
    assert json.loads(row["evidence"].item())["unjudged"] == [first]


def test_demo_document_no_route_retrieves_is_representation(demo):
    deep_frame = demo["deep"]
    out = demo_classify(demo, ["bm25", "hybrid"])
    bm25 = out[(out[S.SYSTEM] == "bm25") & (out["layer"] == "representation")]
    assert len(bm25) > 0  # words the answer never uses: BM25 cannot find it at any depth
    lexical = deep_frame[deep_frame["route_system"] == "bm25"].set_index(
        [S.QUERY_ID, S.DOC_ID]).index
    assert not bm25.set_index([S.QUERY_ID, S.DOC_ID]).index.isin(lexical).any()
    assert all(json.loads(e)["deep_ranks"] == {"bm25": None} for e in bm25["evidence"])
    # dense ranks every visible document at deep_k 1000, so the hybrid has no such failure
    assert "representation" not in set(out.loc[out[S.SYSTEM] == "hybrid", "layer"])
    shallow = demo_classify(demo, ["hybrid"], deep_k=5)
    rep = shallow[shallow["layer"] == "representation"]
    assert len(rep) > 0
    ranks = deep_frame.set_index(["route_system", S.QUERY_ID, S.DOC_ID])[S.RANK]
    for row in rep.itertuples():
        assert json.loads(row.evidence)["deep_ranks"] == {"bm25": None, "dense": None}
        assert ranks.get(("dense", row.query_id, row.doc_id), np.inf) > 5
        assert ranks.get(("bm25", row.query_id, row.doc_id), np.inf) > 5
