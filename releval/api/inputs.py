"""``read_qrels`` and ``read_run``: judgments and ranked lists as small frozen values over the
frames the pipeline's readers produce (``releval.data.readers``: TREC, BEIR TSV, CSV,
parquet; ``releval.data.adapters``: a BEIR folder's qrels), or over a pandas DataFrame with
the contract's columns. Bad input is the readers' one-line ``InputError`` (file, line or row,
rule)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from releval.api.display import html_table
from releval.data import contracts as S
from releval.data import readers
from releval.data.adapters import QRELS_SPLITS, _read_qrels
from releval.decision.missing import run_queries
from releval.errors import InputError

Source = str | Path | pd.DataFrame
FRAME = "<DataFrame>"  # the source of a frame given in memory


@dataclass(frozen=True, eq=False)
class Qrels:
    """Judgments: ``frame`` (query_id, doc_id, grade[, hard_negative]; ids strings, grades
    integers) and where they came from (``source``)."""

    frame: pd.DataFrame
    source: str

    @property
    def queries(self) -> frozenset[str]:
        """The judged queries: those with at least one judgment of any grade."""
        return frozenset(map(str, self.frame[S.QUERY_ID].unique()))

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return f"Qrels({len(self)} judgments of {len(self.queries)} queries from {self.source})"

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def _repr_html_(self) -> str:
        return html_table(self.frame.head(10), f"qrels {self.source}: {len(self)} judgments of "
                                               f"{len(self.queries)} queries (first 10)")


@dataclass(frozen=True, eq=False)
class Run:
    """One system's ranked lists: ``frame`` (query_id, doc_id, score and/or rank[, system];
    ids strings), its ``name`` and where it came from (``source``). Without a rank column the
    order is score descending, ties by doc_id descending, as trec_eval orders a run."""

    frame: pd.DataFrame
    name: str
    source: str

    @property
    def queries(self) -> frozenset[str]:
        """The queries the run ranks at least one document for."""
        return frozenset(run_queries(self.frame))

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (f"Run({self.name!r}: {len(self)} rows over {len(self.queries)} queries from "
                f"{self.source})")

    def named(self, name: str) -> Run:
        return replace(self, name=name)

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def _repr_html_(self) -> str:
        return html_table(self.frame.head(10), f"run {self.name} ({self.source}): "
                                               f"{len(self)} rows over {len(self.queries)} "
                                               "queries (first 10)")


def _tagged(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """A copy of a frame given in memory, tagged as the readers tag theirs (rows from 1)."""
    frame = frame.reset_index(drop=True)
    frame.index = frame.index + 1
    frame.attrs.update(source=f"{what} {FRAME}", unit="row")
    return frame


def _ids(frame: pd.DataFrame) -> None:
    for column in (S.QUERY_ID, S.DOC_ID):
        frame[column] = frame[column].astype(str)


def _beir_qrels(folder: Path, split: str | None) -> pd.DataFrame:
    """A BEIR folder's qrels (``qrels/<split>.tsv``, or the qrels folder itself), every split
    or the one named."""
    qrels, splits = _read_qrels(folder / "qrels" if (folder / "qrels").is_dir() else folder)
    if split is not None:
        if split not in QRELS_SPLITS:
            raise InputError(f"unknown qrels split {split!r}; expected one of "
                             f"{', '.join(QRELS_SPLITS)}", str(folder))
        kept = splits.loc[splits[S.SPLIT] == QRELS_SPLITS[split], S.QUERY_ID]
        qrels = qrels[qrels[S.QUERY_ID].isin(kept)].reset_index(drop=True)
    qrels.attrs.update(source=str(folder))
    return qrels


def read_qrels(source: Source | Qrels, *, split: str | None = None) -> Qrels:
    """Judgments from a TREC qrels file (``qid iter docid grade``), a BEIR qrels TSV, a BEIR
    folder (its ``qrels/*.tsv``; ``split``: only that file's queries), a CSV/parquet table
    or a DataFrame with query_id, doc_id, grade (BEIR's query-id, corpus-id, score too)."""
    if isinstance(source, Qrels):
        return source
    if isinstance(source, pd.DataFrame):
        frame = _tagged(source.rename(columns={"query-id": S.QUERY_ID, "corpus-id": S.DOC_ID,
                                               "score": S.GRADE}), "qrels")
        S.require_columns(frame, S.QRELS_COLUMNS, "qrels")
        _ids(frame)
        readers._numeric(frame, S.GRADE, integer=True)  # the readers' own check and message
        return Qrels(frame, frame.attrs["source"])
    path = Path(source)
    if path.is_dir():
        return Qrels(_beir_qrels(path, split), str(path))
    if split is not None:
        raise InputError("a split selects a file of a BEIR folder's qrels; this is one file",
                         str(path))
    return Qrels(readers.read_qrels(path), str(path))


def _system(frame: pd.DataFrame, system: str | None, source: str) -> pd.DataFrame:
    """The rows of ``system`` (a runs table of several systems needs one named)."""
    if S.SYSTEM not in frame.columns:
        if system is not None:
            raise InputError(f"no system column to find {system!r} in", source)
        return frame
    systems = sorted(map(str, frame[S.SYSTEM].unique()))
    if system is None:
        if len(systems) > 1:
            raise InputError(f"the run holds {len(systems)} systems ({', '.join(systems[:5])});"
                             " name the one to read", source)
        return frame
    if system not in systems:
        raise InputError(f"no system {system!r} in the run; it has {systems}", source)
    picked = frame[frame[S.SYSTEM].astype(str) == system]
    picked.attrs.update(frame.attrs)
    return picked


def read_run(source: Source | Run, *, name: str | None = None,
             system: str | None = None) -> Run:
    """A run from a TREC run file (``qid Q0 docid rank score tag``), a CSV/parquet table or a
    DataFrame with query_id, doc_id and score and/or rank (a table of several systems: the
    one named ``system``). Its ``name``: given, else the file's stem, else the table's one
    system, else ``run``."""
    if isinstance(source, Run):
        return source if name is None else source.named(name)
    if isinstance(source, pd.DataFrame):
        frame = _tagged(source, "run")
        S.require_columns(frame, (S.QUERY_ID, S.DOC_ID), "run")
        if S.RANK not in frame.columns:
            S.require_columns(frame, (S.SCORE,), "run")
        _ids(frame)
        for column, integer in ((S.SCORE, False), (S.RANK, True)):
            if column in frame.columns:
                readers._numeric(frame, column, integer=integer)
        where, stem = frame.attrs["source"], None
    else:
        frame = readers.read_run(source)
        where, stem = str(source), Path(source).stem
    frame = _system(frame, system, where)
    tags = frame[S.SYSTEM].unique() if S.SYSTEM in frame.columns else []
    own = str(tags[0]) if len(tags) == 1 else None
    return Run(frame, name or system or stem or own or "run", where)
