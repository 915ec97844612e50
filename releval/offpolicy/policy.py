"""The candidate policy, as Open Bandit Pipeline's ``action_dist``: an array (n_rows,
n_actions, n_positions) holding, for each logged row's context, the candidate's probability
of showing each action (item) at each slate position; ``actions`` names the item of each
action index. Each (row, position) sums to 1 over the actions (the independent-position view:
one distribution per slot).

``POLICIES`` holds the kinds of candidate (``build(kind, ...)``):

- ``uniform``: 1/n_actions for every item at every position;
- ``table``: given per context (``S.POLICY_COLUMNS``: context_id, item_id, position,
  probability); probabilities in [0, 1], each (context, position) sums to 1 within
  ``SUM_TOLERANCE``, every context of the log present;
- ``ranking``: derived from a system's ranking (a run: context_id or query_id, item_id or
  doc_id, rank or score) by a rule of ``RANKING_RULES``, mixed with uniform by ``epsilon``:
  π = (1 − ε)·π_rule + ε/n_actions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import read_strings
from releval.errors import InputError

SUM_TOLERANCE = 1e-6


def actions_of(*frames: pd.DataFrame) -> np.ndarray:
    """The sorted item ids (str) of the frames' item_id columns: the action space of a log and
    of the candidates that may show items the log never shows."""
    return np.unique(np.concatenate([f[S.ITEM_ID].astype(str).to_numpy() for f in frames]))


def action_index(frame: pd.DataFrame, actions: np.ndarray, default: str = "log",
                 column: str = S.ITEM_ID) -> np.ndarray:
    """Each row's item as its index in ``actions``; InputError at a row whose item is not one."""
    index = pd.Index(np.asarray(actions, dtype=str)).get_indexer(frame[column].astype(str))
    S.fail_first(frame, default, index < 0,
                 lambda i: f"{column} {frame[column].tolist()[i]!r} is not among the actions")
    return index


def _positions(frame: pd.DataFrame, n_positions: int, default: str) -> np.ndarray:
    raw = frame[S.POSITION]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    S.fail_first(frame, default, np.isnan(values) | (values != np.floor(values)) | (values < 1)
                 | (values > n_positions),
                 lambda i: f"position must be an integer in 1..{n_positions}, got "
                 f"{raw.tolist()[i]!r}")
    return values.astype(np.int64)


def _per_row(log: pd.DataFrame, contexts: pd.Index, default: str) -> np.ndarray:
    """Each log row's context as its index in ``contexts``; InputError naming the first log
    row whose context the candidate does not cover."""
    index = contexts.get_indexer(log[S.CONTEXT_ID].astype(str))
    missing = index < 0
    if missing.any():
        i = int(np.argmax(missing))
        raise InputError(f"context_id {log[S.CONTEXT_ID].iloc[i]!r} of the log (at "
                         f"{S.where(log, log.index[i])} of {S.source_of(log, 'log')}) is not in "
                         "the candidate policy", default)
    return index


def uniform(log: pd.DataFrame, actions: np.ndarray, n_positions: int) -> np.ndarray:
    """π(a | x, k) = 1 / n_actions for every row x, action a and position k."""
    return np.full((len(log), len(actions), n_positions), 1.0 / len(actions))


def read_table(path: str | Path) -> pd.DataFrame:
    """A policy table (CSV or parquet, ``S.POLICY_COLUMNS``), ids as str, tagged with its
    file and line/row numbers; the rules are checked by ``from_table``."""
    frame = S.require_columns(read_strings(Path(path)), S.POLICY_COLUMNS, str(path))
    for column in (S.CONTEXT_ID, S.ITEM_ID):
        frame[column] = frame[column].astype(str)
    return frame


def from_table(frame: pd.DataFrame, log: pd.DataFrame, actions: np.ndarray,
               n_positions: int) -> np.ndarray:
    """The candidate given as a table: π(a | x, k) = the probability of (context x, item a,
    position k), 0 where the table has no row. Rules: probabilities are numbers in [0, 1];
    positions integers in 1..n_positions; items among ``actions``; a (context, item,
    position) at most once; each (context, position) of a listed context sums to 1 within
    ``SUM_TOLERANCE``; every context of the log is listed."""
    source = "policy"
    S.require_columns(frame, S.POLICY_COLUMNS, source)
    probability = pd.to_numeric(frame[S.PROBABILITY], errors="coerce").to_numpy(dtype=float)
    S.fail_first(frame, source, np.isnan(probability) | (probability < 0) | (probability > 1),
                 lambda i: f"probability must be a number in [0, 1], got "
                 f"{frame[S.PROBABILITY].tolist()[i]!r}")
    position = _positions(frame, n_positions, source) - 1
    action = action_index(frame, actions, source)
    context, contexts = pd.factorize(frame[S.CONTEXT_ID].astype(str))
    cell = (context * len(actions) + action) * n_positions + position
    dup = S.first_duplicate(cell)
    if dup:
        raise InputError(f"(context_id, item_id, position) repeated (first at "
                         f"{S.where(frame, frame.index[dup[0]])})", S.source_of(frame, source),
                         S.where(frame, frame.index[dup[1]]))
    table = np.zeros((len(contexts), len(actions), n_positions))
    table[context, action, position] = probability
    total = table.sum(axis=1)  # (contexts, positions)
    off = np.abs(total - 1.0) > SUM_TOLERANCE
    if off.any():
        c, k = np.argwhere(off)[0]
        rows = np.flatnonzero(context == c)
        at = rows[np.argmax(position[rows] == k)] if (position[rows] == k).any() else rows[0]
        raise InputError(f"probabilities of context_id {contexts[c]!r} at position {k + 1} sum "
                         f"to {total[c, k]:.9g}, not 1", S.source_of(frame, source),
                         S.where(frame, frame.index[at]))
    return table[_per_row(log, pd.Index(contexts), S.source_of(frame, source))]


def _ranked(run: pd.DataFrame, n_positions: int, source: str) -> pd.DataFrame:
    """The top ``n_positions`` of each context's ranking, as (context_id, item_id, position):
    by rank where the run has one, else by score descending (ties: item id ascending)."""
    context = S.CONTEXT_ID if S.CONTEXT_ID in run.columns else S.QUERY_ID
    item = S.ITEM_ID if S.ITEM_ID in run.columns else S.DOC_ID
    S.require_columns(run, (context, item), source)
    frame = pd.DataFrame({S.CONTEXT_ID: run[context].astype(str),
                          S.ITEM_ID: run[item].astype(str)}, index=run.index)
    frame.attrs.update(run.attrs)
    keys = pd.factorize(frame[S.CONTEXT_ID])[0].astype(np.int64)
    dup = S.first_duplicate(keys * (len(frame) + 1) + pd.factorize(frame[S.ITEM_ID])[0])
    if dup:
        raise InputError(f"item {frame[S.ITEM_ID].iloc[dup[1]]!r} ranked twice for context "
                         f"{frame[S.CONTEXT_ID].iloc[dup[1]]!r}", S.source_of(run, source),
                         S.where(run, run.index[dup[1]]))
    if S.RANK in run.columns:
        frame["order"] = rank = S.check_ranks(run)
        dup = S.first_duplicate(keys * (int(rank.max()) + 1) + rank)
        if dup:
            raise InputError(f"rank {int(rank[dup[1]])} repeated for context "
                             f"{frame[S.CONTEXT_ID].iloc[dup[1]]!r}", S.source_of(run, source),
                             S.where(run, run.index[dup[1]]))
        frame = frame.sort_values([S.CONTEXT_ID, "order"], kind="stable")
    else:
        frame["order"] = -S.check_scores(run)
        frame = frame.sort_values([S.CONTEXT_ID, "order", S.ITEM_ID], kind="stable")
    frame[S.POSITION] = frame.groupby(S.CONTEXT_ID, sort=False).cumcount() + 1
    short = frame.groupby(S.CONTEXT_ID, sort=False)[S.POSITION].max() < n_positions
    if short.any():
        raise InputError(f"the ranking of context {short.idxmax()!r} has fewer items than the "
                         f"slate's {n_positions} positions", S.source_of(run, source))
    return frame[frame[S.POSITION] <= n_positions]


def _by_rank(run: pd.DataFrame, log: pd.DataFrame, actions: np.ndarray,
             n_positions: int) -> np.ndarray:
    """π_rank(a | x, k) = 1 when a is the item at rank k of x's ranking, else 0."""
    source = "run"
    top = _ranked(run, n_positions, source)
    action = action_index(top, actions, source)
    context, contexts = pd.factorize(top[S.CONTEXT_ID])
    table = np.zeros((len(contexts), len(actions), n_positions))
    table[context, action, top[S.POSITION].to_numpy() - 1] = 1.0
    return table[_per_row(log, pd.Index(contexts), S.source_of(run, source))]


RANKING_RULES: dict[str, Callable[..., np.ndarray]] = {
    "rank": _by_rank,  # the item at rank k is shown at position k
}


def from_ranking(run: pd.DataFrame, log: pd.DataFrame, actions: np.ndarray, n_positions: int,
                 epsilon: float = 0.0, rule: str = "rank") -> np.ndarray:
    """π(a | x, k) = (1 − ε)·π_rule(a | x, k) + ε / n_actions, π_rule by ``RANKING_RULES``
    (``rank``: the item at rank k of context x's ranking is shown at position k)."""
    if not 0.0 <= epsilon <= 1.0:
        raise InputError(f"epsilon must be in [0, 1], got {epsilon!r}", "params")
    if rule not in RANKING_RULES:
        raise InputError(f"unknown ranking rule {rule!r}; known: {', '.join(RANKING_RULES)}",
                         "params")
    chosen = RANKING_RULES[rule](run, log, actions, n_positions)
    return (1.0 - epsilon) * chosen + epsilon / len(actions)


class Policy(NamedTuple):
    """A kind of candidate: its rule in words, and how its action_dist is built from its
    source frame (None for ``uniform``), the log, the actions and the slate."""

    rule: str
    build: Callable[..., np.ndarray]


POLICIES: dict[str, Policy] = {
    "uniform": Policy("1/n_actions for every item at every position",
                      lambda source, log, actions, n_positions: uniform(log, actions,
                                                                        n_positions)),
    "table": Policy("the table's probability per context, item and position", from_table),
    "ranking": Policy("(1 − ε)·(the item at rank k shown at position k) + ε·uniform",
                      from_ranking),
}


def build(kind: str, source: pd.DataFrame | None, log: pd.DataFrame, actions: np.ndarray,
          n_positions: int, **options) -> np.ndarray:
    """The action_dist of a candidate of kind ``kind`` (``POLICIES``)."""
    if kind not in POLICIES:
        raise InputError(f"unknown policy kind {kind!r}; known: {', '.join(POLICIES)}",
                         "params")
    return POLICIES[kind].build(source, log, actions, n_positions, **options)
