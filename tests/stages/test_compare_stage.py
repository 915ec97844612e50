"""Stage compare: conditions held fixed, the refusal, aggregates and the per-query diff."""

import numpy as np
import pandas as pd
import pytest

from releval.decision.compare import Uncontrolled
from releval.params import Params
from stages.compare import Inputs, run

T0 = pd.Timestamp("2025-03-01", tz="UTC")
IDS = ["q1", "q2", "q3", "q4"]


def documents():
    return pd.DataFrame({
        "doc_id": ["d1", "d2", "d3", "d4", "d5"], "title": "t", "text": ["a", "b", "c", "d", "e"],
        "source_id": ["s1", "s2", "s3", "s4", "s5"], "published_at": T0 - pd.Timedelta(days=9),
        "status": "published", "deleted_at": pd.NaT, "tenant": "acme", "acl": [[]] * 5})


def queries():
    return pd.DataFrame({
        "query_id": IDS, "text": ["x"] * 4, "issued_at": [T0 + pd.Timedelta(days=i) for i in
                                                           range(4)],
        "user_id": ["u1", "u1", "u2", "u3"], "tenant": "acme", "groups": [[]] * 4,
        "role": "employee", "tags": [["head", "typo"], ["tail", "typo"], ["tail", "numeric"],
                                     ["tail", "numeric"]],
        "weight": [3.0, 1.0, 1.0, 1.0]})


def judgments():  # |R|: q1 1, q2 4, q3 1, q4 1
    return pd.DataFrame({"query_id": ["q1", "q2", "q2", "q2", "q2", "q3", "q4"],
                         "doc_id": ["d1", "d1", "d2", "d3", "d4", "d5", "d2"],
                         "grade": [3, 1, 2, 1, 1, 2, 3]})


def per_query():
    base = {"nDCG@10": [0.5, 0.25, 0.0, 1.0], "R@100": [1.0, 0.5, 0.0, 1.0]}
    cand = {"nDCG@10": [0.75, 0.25, 0.5, 1.0], "R@100": [1.0, 0.75, 1.0, 1.0]}
    rows = [pd.DataFrame({"system": s, "query_id": IDS, "measure": m, "value": v})
            for s, table in (("bm25", base), ("hybrid", cand)) for m, v in table.items()]
    return pd.concat(rows, ignore_index=True)


def labels():
    return pd.DataFrame({"query_id": IDS, "dimension": "kind",
                         "slice": ["typo", "typo", "numeric", "numeric"]})


def stats(hybrid_depth=100):
    return {"bm25": {"route": "bm25", "depth": 100}, "dense": {"route": "dense", "depth": 100},
            "hybrid": {"route": "hybrid", "depth": hybrid_depth, "sources": ["bm25", "dense"]},
            "prod_v2": {"route": "external", "depth": 100, "visibility": {"forbidden": 7}}}


def window(system, lists):
    return pd.DataFrame([(system, system, q, d, i + 1, float(10 - i))
                         for q, docs in lists.items() for i, d in enumerate(docs)],
                        columns=["system", "route", "query_id", "doc_id", "rank", "score"])


def runs():
    lexical = {"q1": ["d1", "d3"], "q2": ["d1", "d5"], "q3": ["d2"], "q4": ["d2", "d3"]}
    return {"bm25": window("bm25", lexical),
            "hybrid": window("hybrid", {**lexical, "q2": ["d1", "d2", "d3"]}),
            "dense": window("dense", {q: docs[::-1] for q, docs in lexical.items()})}


NO_SEEDS = pd.DataFrame({"system": pd.Series([], dtype=str), "seed": pd.Series([], dtype=int),
                         "query_id": pd.Series([], dtype=str),
                         "measure": pd.Series([], dtype=str), "value": pd.Series([], dtype=float)})


def more(seeds=NO_SEEDS):
    """The runs, the pool's identity, the split, its report and evaluate's seeds.parquet."""
    pool = {"pool_id": "pool-1", "depth": 10, "systems": ["bm25", "dense"], "guideline": "g"}
    split = pd.DataFrame({"query_id": IDS, "split": "test"})
    return runs(), pool, split, {"leakage": {"duplicate_texts": {"count": 2}}}, seeds


def params(**compare):
    return Params.model_validate({
        "candidates": {"systems": {"bm25": {"route": "bm25"}, "dense": {"route": "dense"},
                                   "prod_v2": {"route": "external", "path": "x.trec"}}},
        "compare": {"measures": ["nDCG@10", "R@100"], "resamples": 500, "cluster": None,
                    "strata": "kind", **compare}})


def test_controlled_comparison_pairs_aggregates_and_diffs():
    result = run(params(), Inputs(per_query(), labels(), queries(), documents(), judgments(),
                                  stats(),
                 *more()))
    doc, diff = result.comparison, result.diff
    assert doc["controlled"] and doc["differences"] == []
    assert {r["measure"]: r["mean_diff"] for r in doc["paired"]} == pytest.approx(
        {"nDCG@10": 0.1875, "R@100": 0.3125})
    recall = doc["aggregates"]["bm25"]["R@100"]
    assert recall["macro"] == pytest.approx(0.625)
    assert recall["micro"] == pytest.approx((1 + 2 + 0 + 1) / 7)  # Σ|R∩S| / Σ|R|
    assert recall["traffic_weighted"] == pytest.approx((3 * 1 + 0.5 + 0 + 1) / 6)
    assert recall["equal_slice"] == pytest.approx(((3 + 0.5) / 4 + 0.5) / 2)  # typo, numeric
    assert doc["aggregates"]["bm25"]["nDCG@10"]["micro"] is None  # micro only for recall
    mix = doc["composition"]["R@100"]
    assert mix["mix"] == pytest.approx(0.0) and not mix["mix_shift"]  # same queries: no mix
    assert mix["rate"] == pytest.approx(mix["delta"])
    row = diff[(diff["query_id"] == "q3") & (diff["measure"] == "nDCG@10")].iloc[0]
    assert (row["baseline"], row["candidate"], row["diff"], row["stratum"]) == (0.0, 0.5, 0.5,
                                                                                 "numeric")


def test_different_budget_is_refused_with_the_difference_listed():
    with pytest.raises(Uncontrolled, match=r"refused: budget: baseline 100 ≠ candidate 50"):
        run(params(), Inputs(per_query(), labels(), queries(), documents(), judgments(),
            stats(hybrid_depth=50), *more()))


def test_allow_uncontrolled_labels_every_output():
    doc = run(params(allow_uncontrolled=True), Inputs(per_query(), labels(), queries(),
              documents(), judgments(), stats(hybrid_depth=50), *more())).comparison
    assert doc["controlled"] is False
    assert doc["differences"] == ["budget: baseline 100 ≠ candidate 50"]
    assert doc["note"].startswith("UNCONTROLLED")
    assert doc["paired"]  # still paired by query: the query sets are the same


def test_a_run_that_ignores_visibility_is_not_controlled_against_one_that_enforces_it():
    pq = per_query().replace({"system": {"hybrid": "prod_v2"}})
    with pytest.raises(Uncontrolled, match=r"visibility: baseline 'enforced by the route' ≠ "
                                           r"candidate 'not enforced \(flagged, not dropped\)'"):
        run(params(candidate="prod_v2"), Inputs(pq, labels(), queries(), documents(), judgments(),
            stats(), *more()))


def test_different_query_sets_differ_in_the_queries_condition():
    pq = per_query()
    pq = pq[~((pq["system"] == "hybrid") & (pq["query_id"] == "q4"))]
    with pytest.raises(Uncontrolled, match=r"queries: baseline '4 queries"):
        run(params(), Inputs(pq, labels(), queries(), documents(), judgments(), stats(), *more()))


def test_clusters_resample_users():
    doc = run(params(cluster="user_id"), Inputs(per_query(), labels(), queries(), documents(),
              judgments(), stats(), *more())).comparison
    assert {r["unit"] for r in doc["paired"]} == {"cluster"}
    assert {r["units"] for r in doc["paired"]} == {3}
    assert np.isfinite(doc["paired"][0]["ci_low"])


def test_the_declared_kind_is_checked_and_inspected_for_every_comparison():
    pq = per_query()
    pq = pd.concat([pq, pq[pq["system"] == "bm25"].assign(system="dense")], ignore_index=True)
    st = stats()
    st["dense"]["params"] = {"doc_fields": ["title", "text"]}  # as bm25 reads them
    doc = run(params(change="route", also=[{"baseline": "bm25", "candidate": "dense",
                                            "change": "ranker", "measures": ["nDCG@10"]}]),
              Inputs(pq, labels(), queries(), documents(), judgments(), st, *more())).comparison
    change = doc["change"]
    assert (change["kind"], [f["condition"] for f in change["holds_fixed"]]) == (
        "route", ["budget", "time_window", "labelling"])
    assert doc["conditions"]["hybrid"]["labelling"].endswith("; pooled")  # through bm25, dense
    added = change["inspections"]["unique_relevant"]["rows"][0]
    assert (added["count"], added["queries"]) == (2, 1)  # q2: d2 and d3 added by hybrid
    assert set(doc) >= {"figures", "also", "paired", "aggregates"}
    also = doc["also"][0]
    assert (also["baseline"], also["candidate"], also["measures"]) == ("bm25", "dense",
                                                                       ["nDCG@10"])
    assert also["controlled"] and also["change"]["kind"] == "ranker"  # the same sets, reversed
    assert list(also["change"]["inspections"]) == ["ordering", "calibration", "cost"]
    assert also["change"]["inspections"]["cost"]["rows"][0]["cost per query"] == "not given"
    assert "figures" not in also and "also" not in also


def test_an_also_comparison_that_breaks_its_kind_is_refused():
    with pytest.raises(Uncontrolled, match=r"hybrid vs bm25 is not a controlled comparison for "
                                           r"a ranker change .*candidate_set: .*\(1 of 4 "
                                           r"queries' candidate sets differ\)"):
        run(params(also=[{"baseline": "bm25", "candidate": "hybrid", "change": "ranker"}]),
            Inputs(per_query(), labels(), queries(), documents(), judgments(), stats(), *more()))


def test_a_candidate_trained_with_seeds_gets_its_training_variance():
    hybrid = per_query().query("system == 'hybrid'")
    seeds = pd.concat([hybrid.assign(seed=k, value=hybrid["value"] + shift)
                       for k, shift in ((1, 0.0), (2, -0.1), (3, 0.1))], ignore_index=True)
    doc = run(params(), Inputs(per_query(), labels(), queries(), documents(), judgments(), stats(),
              *more(seeds))).comparison
    rows = {r["measure"]: r for r in doc["training"]}
    assert set(rows) == {"nDCG@10", "R@100"} and rows["nDCG@10"]["n_seeds"] == 3
    paired = {r["measure"]: r for r in doc["paired"]}
    assert rows["nDCG@10"]["mean_diff"] == pytest.approx(paired["nDCG@10"]["mean_diff"])
    assert [s["mean_diff"] - rows["nDCG@10"]["mean_diff"] for s in rows["nDCG@10"]["seeds"]
            ] == pytest.approx([0.0, -0.1, 0.1])
    assert rows["nDCG@10"]["training_sd"] == pytest.approx(0.1)
    assert run(params(), Inputs(per_query(), labels(), queries(), documents(), judgments(), stats(),
               *more())).comparison["training"] == []


def test_further_horizons_are_compared_and_their_block_is_a_valid_document():
    from releval.documents.comparison import Comparison

    at = per_query()
    horizons = pd.concat([at.assign(horizon_days=7),
                          at[at["query_id"] != "q4"].assign(horizon_days=28)], ignore_index=True)
    doc = run(params(), Inputs(per_query(), labels(), queries(), documents(), judgments(), stats(),
              *more(), horizons)).comparison
    block = doc["horizons"]
    assert block["days"] == [7, 28]
    assert [(r["horizon_days"], r["measure"], r["n"]) for r in block["rows"]] == [
        (7, "nDCG@10", 4), (7, "R@100", 4), (28, "nDCG@10", 3), (28, "R@100", 3)]
    assert block["rows"][0]["delta"] == pytest.approx(0.1875)
    # nDCG@10: +0.1875 over q1..q4 at 7 days, +0.25 over q1..q3 at 28: the gain grows
    assert block["novelty"][0]["shrink"] == pytest.approx(0.1875 - 0.25)
    assert block["novelty"][0]["novelty"] is False
    Comparison.model_validate(doc)
    assert "horizons" not in run(params(), Inputs(per_query(), labels(), queries(), documents(),
                                 judgments(), stats(), *more())).comparison


def test_compare_systems_make_one_family_with_its_query_set_and_groups():
    """compare.systems: every system's mean on one leaderboard with letter groups, each pair
    of the family under the named test, over the judged queries every run answers."""
    dense = pd.DataFrame({"system": "dense", "query_id": IDS * 2,
                          "measure": ["nDCG@10"] * 4 + ["R@100"] * 4,
                          "value": [0.25, 0.0, 0.0, 0.0, 0.5, 0.25, 0.0, 0.0]})
    table = pd.concat([per_query(), dense], ignore_index=True)
    runs_, pool, split, report, seeds = more()
    runs_["dense"] = runs_["dense"][runs_["dense"]["query_id"] != "q4"]  # q4 missing
    doc = run(params(systems=["hybrid", "dense"], family="all_pairs", test="t",
                     query_set="common"), Inputs(table, labels(), queries(), documents(),
              judgments(), stats(), runs_, pool, split, report, seeds)).comparison
    family = doc["family"]
    assert family["systems"] == ["bm25", "hybrid", "dense"] and family["test"] == "t"
    assert family["query_set"]["missing"] == {"bm25": 0, "hybrid": 0, "dense": 1}
    ndcg = family["measures"][0]
    assert ndcg["measure"] == "nDCG@10" and ndcg["n"] == 3  # q4 left out: dense misses it
    assert [r["system"] for r in ndcg["leaderboard"]] == ["hybrid", "bm25", "dense"]
    assert len(ndcg["pairs"]) == 3 and all(len(r["group"]) for r in ndcg["leaderboard"])
    assert doc["paired"][0]["test"] == "t"
