"""Stage ``split``: queries into train / validation / test, forward in time.

Outputs (data/split/): split.parquet (query_id, split) and split_report.json (cut points,
counts per split and tag, leakage findings, the judgments that point nowhere as prepare
counted them, and ``query_set``: the evaluated query set (``evaluate.splits``) described and
checked against ``query_set.min_per_category``, ``releval.data.query_set``). In
recommendation mode prepare already cut the log into user-queries
(given_split), which the split is taken from, and the report adds ``random_split``: how much
a random interaction split would inflate the ``recommend.random_split`` systems' HR@10 and
nDCG@10 over the forward protocol (``releval.retrieval.leakage``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from releval import artifacts
from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.history import History
from releval.data.interactions import no_positives
from releval.data.query_set import describe
from releval.data.split import TEST, queries_in, require_evaluated, split_queries, split_report
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.leakage import random_split


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``split.<field>`` (``releval.artifacts``)."""

    split: pd.DataFrame
    report: dict


@dataclass(frozen=True)
class Inputs:
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    judgments: pd.DataFrame = reads("raw.judgments")
    given: pd.DataFrame = reads("raw.given_split")
    source: dict = reads("raw.source")
    interactions: pd.DataFrame = reads("raw.interactions")


def run(p: Params, inputs: Inputs) -> Outputs:
    """Split the queries by ``split.method`` (the given split in recommendation mode);
    ``given`` is the dataset's own split (empty: none), ``source`` prepare's source.json,
    whose count of judgments pointing nowhere the report repeats, ``interactions`` prepare's
    log (empty for a retrieval source); the report describes the query set of
    ``evaluate.splits`` (``releval.data.query_set.describe``). Evaluated splits without a
    query, or in recommendation mode without a user who has a positive, are an InputError
    (``releval.data.split.require_evaluated``)."""
    queries, documents, judgments = inputs.queries, inputs.documents, inputs.judgments
    given, source, interactions = inputs.given, inputs.source, inputs.interactions
    c = p.split
    split = split_queries(queries, "given" if p.recommendation else c.method, cuts=c.cuts,
                          quantiles=c.quantiles, given=given if len(given) else None)
    if p.recommendation:  # the log's future is the judge: known now
        require_evaluated(split, p.evaluate.splits,
                          p.prepare.path or artifacts.at("raw.interactions"), judgments,
                          lambda s: no_positives(interactions, s,
                                                 source["recommendation"]["splits"][s]))
    else:
        require_evaluated(split, p.evaluate.splits, artifacts.at("raw.queries"))
    report = split_report(split, queries, judgments, documents) | {
        "qrels_pointing_nowhere": source.get("qrels_pointing_nowhere"),
        "query_set": describe(queries, split.table, p.evaluate.splits,
                              p.query_set.min_per_category, p.no_answer.tag)}
    if p.recommendation:
        report["random_split"] = _random_split(p, split.table, queries, documents, judgments,
                                               interactions)
    return Outputs(split.table, report)


def _random_split(p: Params, table: pd.DataFrame, queries: pd.DataFrame,
                  documents: pd.DataFrame, judgments: pd.DataFrame,
                  interactions: pd.DataFrame) -> dict:
    """``releval.retrieval.leakage.random_split`` of the ``recommend.random_split`` systems on
    the test queries."""
    unknown = [s for s in p.recommend.random_split if s not in p.candidates.systems]
    if unknown:
        raise InputError(f"recommend.random_split names {', '.join(unknown)}, not in "
                         f"candidates.systems ({', '.join(p.candidates.systems)})", "params")
    test = queries[queries[S.QUERY_ID].isin(queries_in(table, [TEST]))]
    history = History.of(interactions, queries, p.recommend.exclude_seen)
    return random_split({s: p.candidates.systems[s] for s in p.recommend.random_split},
                        documents, test, judgments[judgments[S.QUERY_ID].isin(test[S.QUERY_ID])],
                        history, p.recommend.horizon_days, p.base.seed)


def line(p: Params, result: Outputs) -> str:
    return "split: " + ", ".join(f"{k} {v}"
                                 for k, v in result.split[S.SPLIT].value_counts().items())
