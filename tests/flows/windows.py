"""Weekly windows of a tiny knowledge base whose BM25 figures are known exactly: a folder of
contract tables per window, for the scheduled-evaluation test.

Every query is one invented word, found once in two unjudged documents. A *hit* query's
word is twice in its relevant document, so BM25 ranks that document first (RR@10 = 1); a
*miss* query's word is once in a judged non-relevant document too, and its relevant
document shares no word with it (RR@10 = 0).
Queries tagged ``error_code`` hit 80% of the time and those tagged ``paraphrase`` 20%, in
every window: the slice means never move. Only the mix does: ``COMPOSITION`` gives the
example of 0.32 → 0.68 (rate 0, mix +0.36) over ``compare.strata: kind``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FILLER = ("printer", "network", "driver", "update", "reset", "battery", "screen", "cable",
          "router", "firmware", "install", "account", "password", "backup", "server",
          "error", "device", "setting", "monitor", "keyboard", "storage", "license",
          "window", "signal", "power", "adapter", "laptop", "camera", "folder", "report")
# window -> (error_code queries, of them hits; paraphrase queries, of them hits)
COMPOSITION = {"w1": (5, 4, 20, 4), "w2": (20, 16, 5, 1)}


def _word(prefix: str, i: int) -> str:
    letters = "".join(chr(ord("a") + (i // 26 ** k) % 26) for k in range(3))
    return f"{prefix}{letters}"


def _filler(i: int, n: int = 8) -> str:
    return " ".join(FILLER[(i * 7 + k * 3) % len(FILLER)] for k in range(n))


def window(folder: Path, name: str, *, must_not_return: bool = False) -> Path:
    """Window ``name`` of ``COMPOSITION`` as contract tables in ``folder`` (created, or its
    tables replaced in place); with ``must_not_return`` the first hit's document is listed
    as never to be returned for it (a safety violation for every route that finds it)."""
    codes, code_hits, phrases, phrase_hits = COMPOSITION[name]
    start = pd.Timestamp("2026-01-05", tz="UTC") + pd.Timedelta(weeks=int(name[1:]))
    docs, queries, qrels = [], [], []
    kinds = [("error_code", i < code_hits) for i in range(codes)] + [
        ("paraphrase", i < phrase_hits) for i in range(phrases)]
    for i, (tag, hit) in enumerate(kinds):
        qid, word = f"{name}-q{i:03d}", _word("zq", i + 100 * int(name[1:]))
        relevant, decoy = f"{name}-d{i:03d}", f"{name}-x{i:03d}"
        key = f"{word} {word}" if hit else f"{_word('rel', i)} {_word('rel', i)}"
        docs.append((relevant, f"{key} {_filler(i)}"))
        docs += [(f"{name}-n{i:03d}{k}", f"{word} {_filler(i + 2 + k)}") for k in (0, 1)]
        judged = [(qid, relevant, 2)]
        if not hit:
            docs.append((decoy, f"{word} {_filler(i + 1)}"))
            judged.append((qid, decoy, 0))
        qrels += judged
        queries.append({"query_id": qid, "text": word,
                        "issued_at": start + pd.Timedelta(hours=i + 1), "user_id": f"u{i}",
                        "tenant": "t1", "groups": [], "role": "employee", "tags": [tag],
                        "weight": 1.0})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "must_not_return.parquet").unlink(missing_ok=True)
    pd.DataFrame({"doc_id": [d for d, _ in docs], "title": [t.split()[0] for _, t in docs],
                  "text": [t for _, t in docs], "source_id": [d for d, _ in docs],
                  "published_at": start, "status": "published",
                  "deleted_at": pd.Series([pd.NaT] * len(docs), dtype="datetime64[ns, UTC]"),
                  "tenant": "t1", "acl": [[] for _ in docs]}
                 ).to_parquet(folder / "documents.parquet")
    pd.DataFrame(queries).to_parquet(folder / "queries.parquet")
    pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"]).to_parquet(
        folder / "judgments.parquet")
    if must_not_return:
        pd.DataFrame({"query_id": [queries[0]["query_id"]], "doc_id": [f"{name}-d000"],
                      "reason": ["legal hold"]}).to_parquet(folder / "must_not_return.parquet")
    return folder
