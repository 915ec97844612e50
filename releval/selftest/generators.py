"""Trial queries that reach something, and the corpus sample they are searched on.

A retrieval trial is drawn from a chosen document: its text is a window of 2..6 consecutive
words of the document's indexed text (title + " " + text), issued while the document is
visible (after the latest publication of the corpus, or just before the document's deletion)
by an admin of its tenant in its ACL groups. So every word of the query occurs in a document
the query may see, and every relation has a window to work on. A recommendation trial is a
real user-query (users at a cut), preferring users with a history before their cut.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History

SOURCE_DOC = "source_doc"  # the document a trial query was drawn from
USER = "selftest"
ROLE = "admin"
WORDS = (2, 6)  # a window's length in words, inclusive
SECOND = pd.Timedelta(seconds=1)


def indexed_words(documents: pd.DataFrame) -> pd.Series:
    """Each document's indexed text (title + " " + text) split on whitespace."""
    return (documents[S.TITLE].fillna("").astype(str) + " "
            + documents[S.TEXT].fillna("").astype(str)).str.split()


def corpus_sample(documents: pd.DataFrame, max_docs: int, rng: np.random.Generator,
                  keep=()) -> pd.DataFrame:
    """At most ``max_docs`` documents (every one of ``keep`` first, then drawn at random),
    in the table's order; the whole table when it is no larger."""
    if len(documents) <= max_docs:
        return documents.reset_index(drop=True)
    kept = documents[S.DOC_ID].isin(pd.Index(keep)).to_numpy()
    others = np.flatnonzero(~kept)
    extra = rng.choice(others, size=max(0, min(len(others), max_docs - int(kept.sum()))),
                       replace=False)
    chosen = kept.copy()
    chosen[extra] = True
    return documents[chosen].reset_index(drop=True)


def _visible_at(documents: pd.DataFrame) -> pd.Series:
    """When a trial drawn from each document is issued: one second after the corpus' latest
    publication, or one second before the document's deletion when that comes first; NaT for
    a document that is never visible (draft, expired, deleted when published)."""
    published = pd.to_datetime(documents[S.PUBLISHED_AT], utc=True)
    deleted = pd.to_datetime(documents[S.DELETED_AT], utc=True)
    at = pd.Series(published.max() + SECOND, index=documents.index,
                   dtype=published.dtype)  # no documents: an empty series of that type
    at = at.where(deleted.isna() | (deleted - SECOND > at), deleted - SECOND)
    status = documents[S.STATUS].astype(str)
    live = (status == "published") | ((status == "deleted") & (at >= published))
    return at.where(live & (at >= published))


def window_queries(documents: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` trial queries (fewer when fewer documents have text and are ever visible), each
    a window of one document's words (module docstring); the queries contract's columns plus
    ``SOURCE_DOC``. Query ids ``selftest-0000``, ...; documents drawn without replacement."""
    words = indexed_words(documents)
    at = _visible_at(documents)
    eligible = np.flatnonzero((words.str.len() > 0).to_numpy() & at.notna().to_numpy())
    picked = np.sort(rng.choice(eligible, size=min(n, len(eligible)), replace=False))
    texts = []
    for row in picked:
        doc_words = words.iloc[row]
        length = min(len(doc_words), int(rng.integers(WORDS[0], WORDS[1] + 1)))
        first = int(rng.integers(0, len(doc_words) - length + 1))
        texts.append(" ".join(doc_words[first:first + length]))
    chosen = documents.iloc[picked]
    return pd.DataFrame({
        S.QUERY_ID: [f"{USER}-{i:04d}" for i in range(len(picked))],
        S.TEXT: pd.Series(texts, dtype=str),
        S.ISSUED_AT: at.iloc[picked].reset_index(drop=True),
        S.USER_ID: USER,
        S.TENANT: chosen[S.TENANT].astype(str).to_numpy(),
        S.GROUPS: [list(acl) if acl is not None else [] for acl in chosen[S.ACL]],
        S.ROLE: ROLE,
        S.TAGS: [[] for _ in picked],
        S.WEIGHT: 1.0,
        SOURCE_DOC: chosen[S.DOC_ID].astype(str).to_numpy(),
    })


def user_queries(queries: pd.DataFrame, history: History, n: int,
                 rng: np.random.Generator) -> pd.DataFrame:
    """At most ``n`` of the users-as-queries, those whose user has a positive before the cut
    first (a recommendation route answers from that history), each group drawn at random; in
    the table's order."""
    positives = history.positives
    first = positives.groupby(S.USER_ID)[S.TIMESTAMP].min()
    issued = pd.to_datetime(queries[S.ISSUED_AT], utc=True)
    profiled = (queries[S.USER_ID].astype(str).map(first) < issued).to_numpy(dtype=bool)
    order = np.concatenate([rng.permutation(np.flatnonzero(profiled)),
                            rng.permutation(np.flatnonzero(~profiled))])
    return queries.iloc[np.sort(order[:n])].reset_index(drop=True)
