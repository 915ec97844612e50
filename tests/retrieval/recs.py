"""Tiny interaction logs, catalogues and user-queries per the recommendation contracts, and
the real online-retail log as the pipeline would cut it, shared by the recommendation tests."""

from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.data.history import History, user_query_id

CUT = pd.Timestamp("2024-06-01", tz="UTC")
RETAIL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "online-retail"


def days(n: float) -> pd.Timestamp:
    """``n`` days after the cut (negative: before it)."""
    return CUT + pd.Timedelta(days=n)


def interactions(*rows) -> pd.DataFrame:
    """A log from (user_id, item_id, days from the cut[, label]) rows."""
    frame = pd.DataFrame([(*r, 1) if len(r) == 3 else r for r in rows],
                         columns=list(S.INTERACTION_COLUMNS))
    return frame.assign(**{S.TIMESTAMP: frame[S.TIMESTAMP].map(days)})


def catalogue(*item_ids, titles=None, published=None) -> pd.DataFrame:
    """Items as documents (open to everyone), published long before the cut unless
    ``published`` (item -> days from the cut) says otherwise."""
    published = published or {}
    ids = list(item_ids)
    frame = pd.DataFrame({
        S.DOC_ID: ids, S.TITLE: [(titles or {}).get(i, i) for i in ids],
        S.TEXT: [(titles or {}).get(i, i) for i in ids], S.SOURCE_ID: ids,
        S.PUBLISHED_AT: [days(published.get(i, -1000)) for i in ids], S.STATUS: "published",
        S.DELETED_AT: pd.NaT, S.TENANT: "default", S.ACL: [[] for _ in ids]})
    frame[S.DELETED_AT] = pd.to_datetime(frame[S.DELETED_AT], utc=True)
    return frame


def user_queries(*users, at=CUT, split="test", held_out=()) -> pd.DataFrame:
    """One user-query per user issued at ``at``; ``held_out`` users are marked."""
    users = list(users)
    return pd.DataFrame({
        S.QUERY_ID: [user_query_id(u, split) for u in users], S.TEXT: "",
        S.ISSUED_AT: pd.Timestamp(at), S.USER_ID: users, S.TENANT: "default",
        S.GROUPS: [[] for _ in users], S.ROLE: "guest", S.TAGS: [[] for _ in users],
        S.WEIGHT: 1.0, S.HELD_OUT: [u in held_out for u in users]})


def windows(run: pd.DataFrame) -> dict[str, list[tuple[str, float]]]:
    """query_id -> [(doc_id, score)] in rank order."""
    ordered = run.sort_values([S.QUERY_ID, S.RANK])
    return {q: list(zip(g[S.DOC_ID], g[S.SCORE].round(6), strict=True))
            for q, g in ordered.groupby(S.QUERY_ID)}


def online_retail(test_cut: str = "2011-10-15", horizon_days: int = 30):
    """The real log cut at ``test_cut`` as the pipeline cuts it: (documents, test queries,
    qrels, history). Items are published at their first interaction; every user with a
    positive before t + h is a query; positives are the items bought in [t, t + h) that the
    user had not bought before t."""
    log = pd.read_csv(RETAIL / "interactions.csv", dtype={S.USER_ID: str, S.ITEM_ID: str},
                      usecols=list(S.INTERACTION_COLUMNS))
    log[S.TIMESTAMP] = pd.to_datetime(log[S.TIMESTAMP], utc=True)
    items = pd.read_csv(RETAIL / "items.csv", dtype={S.ITEM_ID: str}, keep_default_na=False)
    first = log.groupby(S.ITEM_ID)[S.TIMESTAMP].min()
    items = items[items[S.ITEM_ID].isin(first.index)].reset_index(drop=True)
    documents = catalogue(*items[S.ITEM_ID], titles=dict(zip(items[S.ITEM_ID], items[S.TITLE],
                                                             strict=True)))
    documents[S.PUBLISHED_AT] = items[S.ITEM_ID].map(first).to_numpy()
    t = pd.Timestamp(test_cut, tz="UTC")
    end = t + pd.Timedelta(days=horizon_days)
    positive = log[log[S.LABEL] == 1]
    queries = user_queries(*positive.loc[positive[S.TIMESTAMP] < end, S.USER_ID].unique(), at=t)
    window = positive[(positive[S.TIMESTAMP] >= t) & (positive[S.TIMESTAMP] < end)]
    before = positive.loc[positive[S.TIMESTAMP] < t, [S.USER_ID, S.ITEM_ID]].drop_duplicates()
    new = window[[S.USER_ID, S.ITEM_ID]].drop_duplicates().merge(before, how="left",
                                                                  indicator=True)
    new = new[new["_merge"] == "left_only"]
    qrels = pd.DataFrame({S.QUERY_ID: [user_query_id(u, "test") for u in new[S.USER_ID]],
                          S.DOC_ID: new[S.ITEM_ID].to_numpy(), S.GRADE: 1})
    return documents, queries, qrels, History.of(log, queries, exclude_seen=True)
