"""Logged bandit feedback read as recommendation mode's interaction log
(``prepare.source: logged_feedback``), so a project on a bandit log alone runs the whole
pipeline: its impressions are the interactions, its clicks the positives.

- one interaction per impression: ``user_id`` the log's user (``users``: its user_id; a log
  without one, as the Open Bandit Dataset: the tuple of its text feature columns, hashed
  user features, each distinct tuple one user named by its SHA-1's first 12 hex digits; a
  log without either: its context, each context its own user), ``item_id``, ``timestamp``,
  ``label`` 1 where the reward is positive (a click) and 0 where it is not: the item was
  shown and not taken, a negative interaction as a cancellation is (recommendation mode
  fits its routes and draws its positives from label 1 only; label 0 counts towards a
  user's history);
- the items: every logged item, first seen at its first impression, without a title (a log
  names none, so no route embeds titles).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from releval.data import contracts as S

USER, CONTEXT, REWARD = "user_id", "context_id", "reward"


def users(log: pd.DataFrame) -> tuple[pd.Series, str]:
    """Each row's user (module docstring) and how it was told."""
    if USER in log.columns:
        return log[USER].astype(str), "the log's user_id"
    text = [c for c in S.feature_columns(log) if not pd.api.types.is_numeric_dtype(log[c])]
    if text:
        codes, tuples = pd.factorize(log[text].astype(str).agg("|".join, axis=1))
        ids = np.array([hashlib.sha1(t.encode()).hexdigest()[:12] for t in tuples])
        return (pd.Series(ids[codes], index=log.index),
                f"the tuple of the log's text features ({', '.join(text)}), its SHA-1's "
                "first 12 hex digits")
    return log[CONTEXT].astype(str), "the log's context (each its own user)"


def as_interactions(log: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(interactions, items) of a log read by ``releval.offpolicy.log.read_log`` (module
    docstring), in the log's time order."""
    log = log.sort_values(S.TIMESTAMP, kind="stable")
    interactions = pd.DataFrame({
        S.USER_ID: users(log)[0].to_numpy(),
        S.ITEM_ID: log[S.ITEM_ID].astype(str).to_numpy(),
        S.TIMESTAMP: log[S.TIMESTAMP].to_numpy(),
        S.LABEL: (pd.to_numeric(log[REWARD]) > 0).to_numpy().astype(np.int64)})
    first = interactions.groupby(S.ITEM_ID, sort=True)[S.TIMESTAMP].min()
    items = pd.DataFrame({S.ITEM_ID: first.index.astype(str), S.TITLE: "",
                          S.FIRST_SEEN: first.to_numpy()})
    return interactions, items
