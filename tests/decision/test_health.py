"""System health on tiny hand-made frames: latency percentiles, status rates (NaN when not
recorded), candidates per query, near-duplicates, cost, freshness and deletion propagation,
each against answers computed by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.decision.freshness import first_appearance, freshness, last_appearance
from releval.decision.health import (
    COLUMNS,
    evaluated_queries,
    health,
    latency_figures,
    near_duplicates,
    status_figures,
    system_cost,
    text_key,
    window_figures,
)
from releval.errors import InputError
from releval.params import Cost
from tests.frames import doc, documents, queries, query

T0 = pd.Timestamp("2024-01-01", tz="UTC")


def day(n: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(days=n)


QS = queries(query("q1", issued=day(1)), query("q2", issued=day(3)), query("q3", issued=day(10)))


def source(row: dict, source_id: str) -> dict:
    return row | {S.SOURCE_ID: source_id}


DOCS = documents(
    source(doc("a", "Reset the VPN!", published=T0), "s1"),           # before the span
    source(doc("b", "b text", published=day(2)), "s1"),               # first seen at q2: 1 day
    source(doc("c", "reset   the vpn", published=day(2)), "s2"),      # first seen at q3: 8 days
    source(doc("d", "d text", published=day(5)), "s3"),               # never seen
    source(doc("e", "e text", published=T0, deleted=day(2)), "s4"),   # seen until q3: 8 days
    source(doc("f", "f text", published=T0, deleted=day(4)), "s5"),   # not seen after: 0
    source(doc("g", "g text", published=T0, deleted=day(20)), "s6"),  # after the last query
    source(doc("h", "h text", published=day(12)), "s7"),              # after the span
)


def run(windows: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame([(q, d, r + 1, 1.0 / (r + 1)) for q, docs in windows.items()
                         for r, d in enumerate(docs)],
                        columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])


RUN = run({"q1": ["a", "e", "zz1", "zz2"],  # zz1, zz2: not in the documents table
           "q2": ["b", "a", "e"],           # a: b's source, ranked higher
           "q3": ["c", "e", "a", "b"]})     # a: c's text; b: a's source


def latency(values, statuses) -> pd.DataFrame:
    return pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"], "latency_ms": values,
                         S.RUN_STATUS: pd.Series(statuses, dtype="str")})


def test_latency_percentiles_over_the_measured_queries_only():
    got = latency_figures(latency([1.0, np.nan, 3.0], ["ok"] * 3), QS)
    assert got == {"latency_p50_ms": 2.0, "latency_p95_ms": pytest.approx(2.9),
                   "latency_p99_ms": pytest.approx(2.98)}
    assert all(math.isnan(v) for v in latency_figures(None, QS).values())


def test_status_rates_among_the_recorded_and_nan_when_none_is_recorded():
    got = status_figures(latency([1.0] * 3, ["error", "ok", np.nan]), QS)
    assert got == {"status_recorded": 2, "error_rate": 0.5, "timeout_rate": 0.0,
                   "partial_rate": 0.0, "fallback_rate": 0.0}
    for table in (None, latency([1.0] * 3, [np.nan] * 3),
                  latency([1.0] * 3, ["ok"] * 3).drop(columns=S.RUN_STATUS)):
        none = status_figures(table, QS)
        assert none["status_recorded"] == 0
        assert all(math.isnan(none[k]) for k in none if k.endswith("_rate"))


def test_candidates_per_query_count_a_query_without_any_as_zero():
    got = window_figures(run({"q1": ["a", "b"], "q3": ["c"]}), QS)
    assert got == {"n_queries": 3, "candidates_per_query": 1.0, "empty_share": pytest.approx(1 / 3)}


def test_text_key_casefolds_and_collapses_punctuation_and_whitespace():
    docs = documents(doc("x", "Reset\tthe   VPN!!", title="Help:"), doc("y", "help reset_the vpn"))
    assert text_key(docs).tolist() == ["help reset the vpn", "help reset the vpn"]


def test_near_duplicates_repeat_a_higher_ranked_source_or_text_in_the_same_window():
    got = near_duplicates(RUN, DOCS)
    assert got == {"entries": 11, "duplicates": 3, "same_source": 2, "same_text": 1,
                   "near_duplicate_ratio": pytest.approx(3 / 11)}


def test_documents_without_source_or_text_duplicate_nothing():
    docs = documents(source(doc("x", ""), None), source(doc("y", ""), None),
                     source(doc("z", "same"), ""), source(doc("w", "other"), ""))
    got = near_duplicates(run({"q1": ["x", "y", "z", "w"]}), docs)
    assert (got["duplicates"], got["near_duplicate_ratio"]) == (0, 0.0)
    assert math.isnan(near_duplicates(run({}), docs)["near_duplicate_ratio"])


COSTS = {"bm25": Cost(per_query=1.0), "dense": Cost(per_query=2.0, per_candidate=0.5),
         "hybrid": Cost(per_query=0.25)}
RUNS = {"bm25": run({"q1": ["a"]}), "dense": run({"q1": ["a", "b"], "q2": ["c"]}),
        "hybrid": run({"q1": ["a", "b"]})}


def test_cost_per_query_of_a_system_and_of_a_fused_one():
    assert system_cost("dense", COSTS, (), RUNS, QS) == (2.0 + 0.5 * 1.0, "USD", None)
    # hybrid = bm25 (1) + dense (2.5) + its own fusion (0.25)
    assert system_cost("hybrid", COSTS, ("bm25", "dense"), RUNS, QS) == (3.75, "USD", None)
    no_own = {k: v for k, v in COSTS.items() if k != "hybrid"}
    assert system_cost("hybrid", no_own, ("bm25", "dense"), RUNS, QS)[0] == 3.5


def test_cost_without_a_model_is_undefined_and_says_which_is_missing():
    value, unit, why = system_cost("hybrid", {"bm25": COSTS["bm25"]}, ("bm25", "dense"),
                                   RUNS, QS)
    assert math.isnan(value) and unit is None
    assert why == "no cost model in health.cost for dense"
    assert math.isnan(system_cost("team", COSTS, (), RUNS | {"team": RUN}, QS)[0])


def test_a_fused_cost_in_two_units_is_refused():
    costs = COSTS | {"dense": Cost(per_query=2.0, unit="EUR")}
    with pytest.raises(InputError, match="different units"):
        system_cost("hybrid", costs, ("bm25", "dense"), RUNS, QS)


def test_first_appearance_of_documents_published_inside_the_queries_span():
    got = first_appearance(RUN, DOCS, QS)
    assert got.sort_index().to_dict() == {"b": 1.0, "c": 8.0, "d": pytest.approx(np.nan,
                                                                               nan_ok=True)}


def test_deletion_propagation_until_the_last_window_still_holding_the_document():
    got = last_appearance(RUN, DOCS, QS)
    assert sorted(got.index) == ["e", "f"]  # g is deleted after the last query
    assert got["e"] == 8.0 and math.isnan(got["f"])


def test_freshness_summary():
    assert freshness(RUN, DOCS, QS) == {
        "freshness_eligible": 3, "freshness_appeared": 2, "freshness_median_days": 4.5,
        "freshness_p95_days": pytest.approx(1 + 0.95 * 7), "deleted_eligible": 2,
        "deleted_still_appearing": 1, "deletion_propagation_p95_days": pytest.approx(0.95 * 8),
        "deletion_propagation_max_days": 8.0}


def test_freshness_is_undefined_without_documents_in_the_span():
    late = DOCS[DOCS[S.DOC_ID] == "h"]
    got = freshness(RUN, late, QS)
    assert (got["freshness_eligible"], got["deleted_eligible"]) == (0, 0)
    assert all(math.isnan(got[k]) for k in ("freshness_median_days", "freshness_p95_days",
                                             "deletion_propagation_p95_days",
                                             "deletion_propagation_max_days"))


def test_data_without_times_has_no_freshness():
    """Undated documents, or queries without issue times (the readers' EPOCH), are never
    eligible: no 'published in span: every document, median 0 days'."""
    from releval.data.adapters import EPOCH

    undated = DOCS.assign(**{S.PUBLISHED_AT: EPOCH})
    assert freshness(RUN, undated, QS)["freshness_eligible"] == 0
    untimed = QS.assign(**{S.ISSUED_AT: EPOCH})
    assert freshness(RUN, DOCS.assign(**{S.PUBLISHED_AT: EPOCH}), untimed)[
        "freshness_eligible"] == 0
    assert freshness(RUN, DOCS, untimed)["freshness_eligible"] == 0


def test_health_table_and_record_per_system():
    runs = {"bm25": RUN, "dense": RUN, "team": RUN, "hybrid": RUN}
    latencies = {"bm25": latency([1.0, 2.0, 3.0], ["ok", "ok", "timeout"]),
                 "dense": latency([1.0, 2.0, 3.0], ["ok"] * 3),
                 "team": latency([np.nan] * 3, [np.nan] * 3),
                 "hybrid": latency([2.0, 4.0, 6.0], ["ok", "ok", "partial"])}
    stats = {"bm25": {"route": "bm25", "params": {"k1": 1.2}},
             "dense": {"route": "dense", "model": "m", "index": "exact",
                       "embedding_cache": {"hits": 3, "misses": 1, "hit_rate": 0.75}},
             "team": {"route": "external", "source": {"sha256": "abc"}},
             "hybrid": {"route": "hybrid", "fusion": {"method": "rrf", "k": 60}}}
    table, report = health(runs, latencies, stats, DOCS, QS, COSTS,
                           {"hybrid": ("bm25", "dense")})
    assert list(table.columns) == list(COLUMNS) and table[S.SYSTEM].tolist() == list(runs)
    rows = table.set_index(S.SYSTEM)
    assert rows.loc["bm25", "timeout_rate"] == pytest.approx(1 / 3)
    assert rows.loc["hybrid", "partial_rate"] == pytest.approx(1 / 3)
    assert rows.loc["hybrid", "embedding_cache_hit_rate"] == 0.75  # its dense source's
    assert math.isnan(rows.loc["bm25", "embedding_cache_hit_rate"])
    team = report["systems"]["team"]
    assert team["latency_p99_ms"] is None and team["error_rate"] is None
    assert team["undefined"]["latency_p99_ms"] == "latency not measured for any query"
    assert team["undefined"]["error_rate"] == "no query status recorded"
    assert team["undefined"]["cost_per_query"] == "no cost model in health.cost for team"
    assert team["status"]["not_recorded"] == 3
    assert team["revisions"]["run_sha256"] == "abc"
    assert report["systems"]["dense"]["revisions"]["model"] == "m"
    assert report["systems"]["hybrid"]["cost_model"] == {
        s: COSTS[s].model_dump() for s in ("bm25", "dense", "hybrid")}
    assert set(report["definitions"]) == set(COLUMNS) - {S.SYSTEM, S.ROUTE}


def test_a_team_run_answering_the_test_queries_is_not_counted_empty_on_the_others():
    """A team's run that answers only the test queries: its row is over the evaluated set
    (the test split's queries), not over train + test (empty 2/3 there); freshness still
    reads every query's window."""
    split = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"], S.SPLIT: ["train", "train", "test"]})
    evaluated = evaluated_queries(split, ["test"])
    assert evaluated == {"q3"} and evaluated_queries(None, ["test"]) is None
    team = run({"q3": ["c", "e"]})
    runs = {"bm25": RUN, "team": team}
    latencies = {"bm25": latency([1.0, 2.0, 30.0], ["ok", "ok", "timeout"]), "team": None}
    stats = {"bm25": {"route": "bm25"}, "team": {"route": "external"}}
    everywhere, _ = health(runs, latencies, stats, DOCS, QS, {}, {})
    assert everywhere.set_index(S.SYSTEM).loc["team", "empty_share"] == pytest.approx(2 / 3)
    table, report = health(runs, latencies, stats, DOCS, QS, {}, {}, evaluated)
    rows = table.set_index(S.SYSTEM)
    assert rows.loc["team", "empty_share"] == 0 and rows.loc["team", "n_queries"] == 1
    assert rows.loc["team", "candidates_per_query"] == 2
    assert rows.loc["bm25", "latency_p50_ms"] == 30.0  # q3's latency alone
    assert rows.loc["bm25", "timeout_rate"] == 1.0
    assert report["systems"]["bm25"]["status"]["ok"] == 0
    # freshness over every query's window, as before
    assert rows.loc["bm25", "freshness_eligible"] == \
        everywhere.set_index(S.SYSTEM).loc["bm25", "freshness_eligible"]
