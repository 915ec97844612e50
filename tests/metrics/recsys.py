"""Hand-made and random recommendation frames (users at one cut, items, a log) for the
recommendation measures' tests, and the real online-retail log."""

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.csv as pacsv

from releval.data import contracts as S
from releval.metrics.catalog import Catalog

CUT = pd.Timestamp("2024-06-01", tz="UTC")
BEFORE = pd.Timestamp("2024-02-01", tz="UTC")
RETAIL = Path(__file__).resolve().parents[3] / "shared" / "data" / "online-retail"


def items_table(ids, published=BEFORE) -> pd.DataFrame:
    """Items in the documents contract, published at ``published`` (one value or one each)."""
    ids = list(ids)
    return pd.DataFrame({
        S.DOC_ID: ids, S.TITLE: ids, S.TEXT: ids, S.SOURCE_ID: ids,
        S.PUBLISHED_AT: pd.to_datetime(pd.Series(published, index=range(len(ids))), utc=True),
        S.STATUS: "published", S.DELETED_AT: pd.NaT, S.TENANT: "default",
        S.ACL: [[] for _ in ids]})


def user_queries(users, cut=CUT) -> pd.DataFrame:
    users = list(users)
    return pd.DataFrame({S.QUERY_ID: [f"{u}@test" for u in users],
                         S.ISSUED_AT: pd.Timestamp(cut), S.USER_ID: users})


def purchases(pairs, when=BEFORE) -> pd.DataFrame:
    """A log of label-1 interactions (user, item) at ``when``."""
    users, items = zip(*pairs, strict=True) if pairs else ((), ())
    return pd.DataFrame({S.USER_ID: list(users), S.ITEM_ID: list(items),
                         S.TIMESTAMP: pd.Timestamp(when), S.LABEL: 1})


def ranked(lists: dict[str, list[str]], probabilities: dict[str, list[float]] | None = None):
    """A run: each user's items in rank order (query_id = user@test)."""
    rows = [(f"{u}@test", d, i + 1) for u, docs in lists.items() for i, d in enumerate(docs)]
    run = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK])
    run[S.SCORE] = 1.0 / run[S.RANK]
    if probabilities is not None:
        run[S.PROBABILITY] = [p for u in lists for p in probabilities[u]]
    return run


def positives(sets: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame([(f"{u}@test", d, 1) for u, docs in sets.items() for d in docs],
                        columns=[S.QUERY_ID, S.DOC_ID, S.GRADE])


def random_case(seed: int, n_users: int = 40, n_items: int = 30, depth: int = 8):
    """A random run (some windows empty, some probabilities missing), positives (some
    outside the window, some users without any), a log before the cut and its catalogue
    (every item visible), seeded."""
    rng = np.random.default_rng(seed)
    items = [f"i{j:02d}" for j in range(n_items)]
    users = [f"u{j:02d}" for j in range(n_users)]
    lists, probs, sets, log = {}, {}, {}, []
    for u in users:
        window = list(rng.choice(items, size=rng.integers(0, depth + 1), replace=False))
        lists[u] = window
        p = np.round(rng.random(len(window)), 2)
        p[rng.random(len(window)) < 0.1] = np.nan
        probs[u] = list(p)
        sets[u] = list(rng.choice(items, size=rng.integers(0, 4), replace=False))
        bought = rng.choice([i for i in items if i not in sets[u]], size=rng.integers(0, 6),
                            replace=False)
        log += [(u, i) for i in bought]
    run, qrels = ranked(lists, probs), positives(sets)
    catalog = Catalog.of(purchases(log), items_table(items), user_queries(users))
    return run, qrels, catalog


def retail_log(rows: int = 60_000) -> pd.DataFrame:
    """The first ``rows`` lines of the online-retail log (item_id read as a string)."""
    table = pacsv.read_csv(RETAIL / "interactions.csv", convert_options=pacsv.ConvertOptions(
        column_types={"item_id": "string", "user_id": "string"},
        include_columns=["user_id", "item_id", "timestamp", "label"]))
    log = table.slice(0, rows).to_pandas()
    log[S.TIMESTAMP] = pd.to_datetime(log[S.TIMESTAMP], utc=True)
    return log
