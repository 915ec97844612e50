"""Drift diagnosis: which changed documents moved a figure from corpus A to corpus B.

Two documents tables differ by their changes, one per doc_id: ``added`` (in B only),
``removed`` (in A only) or ``modified`` (in both, and some column other than doc_id differs:
list columns compared item by item as text, timestamps as UTC instants, a column one table
lacks as missing there). Reverting a set R of changes gives B with R undone: its added
documents dropped, its removed and modified ones restored to A's rows (B's other rows kept).

``diagnose(a, b, figure)``: ``figure(documents) -> float`` is one system's measure on a
corpus, every other input held fixed (``releval.diagnosis.rebuild``); each call is one
rebuild. With f_A = figure(A), f_B = figure(B) and f(R) = figure(B with R reverted):

- the figure moved iff |f_B − f_A| > tol;
- reverting R moves it back toward A iff |f(R) − f_A| < |f_B − f_A| − tol;
- reverting R restores it iff |f(R) − f_A| ≤ tol; R's effect is f_B − f(R), what R did to
  the figure.

Up to ``one_by_one`` changes are reverted each in turn (a rebuild each). More are bisected:
from all of them (reverting all is A, so it moves the figure back), a group that moves the
figure back is split in halves and each half reverted; a half that moves it back is split
again, down to single changes; a group neither of whose halves moves it back alone is kept
whole (its changes act together). Effects that cancel within one group stay hidden from the
bisection (reverting one by one sees them). The causes are the changes (or kept groups) that
move the figure back, with their own effect; ``restored``: reverting all causes together
restores f_A (one more rebuild when there are several).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.progress import track

KINDS = ("added", "removed", "modified")
TOL = 1e-6  # figures equal to 6 decimals (as metrics.json writes them) are the same figure
ONE_BY_ONE = 8  # up to this many changes are reverted each in turn; more are bisected


@dataclass(frozen=True, order=True)
class Change:
    kind: str  # one of KINDS
    doc_id: str


@dataclass(frozen=True)
class Cause:
    """Changes whose reversion moves the figure back toward A: ``figure`` with them reverted,
    their ``effect`` f_B − figure, and whether reverting them alone ``restores`` f_A."""

    changes: tuple[Change, ...]
    figure: float
    effect: float
    restores: bool


@dataclass(frozen=True)
class Drift:
    """Result of ``diagnose`` (module docstring): the figure at A and B, every change, the
    causes (largest effect first), ``together`` (the figure with every cause reverted; NaN
    when there is none), ``restored`` (it is within ``tol`` of A's), the rebuilds done and
    the ``method`` ("unmoved", "one by one" or "bisection")."""

    figure_a: float
    figure_b: float
    changes: tuple[Change, ...]
    causes: tuple[Cause, ...]
    together: float
    restored: bool
    rebuilds: int
    method: str
    tol: float

    @property
    def moved(self) -> bool:
        return abs(self.figure_b - self.figure_a) > self.tol

    def counts(self) -> dict[str, int]:
        """Changes by kind, every kind listed."""
        return {kind: sum(c.kind == kind for c in self.changes) for kind in KINDS}


def _ids(frame: pd.DataFrame, name: str) -> pd.Series:
    S.require_columns(frame, [S.DOC_ID], name)
    ids = frame[S.DOC_ID].astype(str)
    twice = ids[ids.duplicated()]
    if len(twice):
        raise InputError(f"doc_id {twice.iloc[0]!r} is not unique", name)
    return ids


def _plain(value) -> str:
    """One cell as text: list-likes item by item, missing as ''."""
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if hasattr(value, "__iter__"):
        return repr(tuple(map(str, value)))
    return repr(value)


def _canonical(column: pd.Series) -> pd.Series:
    if isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(column):
        return pd.to_datetime(column, utc=True).astype("datetime64[ns, UTC]")
    return column.map(_plain) if column.dtype == object else column


def _contents(frame: pd.DataFrame, ids: pd.Series, columns: list[str]) -> pd.Series:
    """One hash per document of its ``columns`` (module docstring), indexed by doc_id."""
    cells = pd.DataFrame({c: _canonical(frame[c].reset_index(drop=True)) if c in frame.columns
                          else pd.Series([""] * len(frame), dtype=object) for c in columns})
    return pd.Series(pd.util.hash_pandas_object(cells, index=False).to_numpy(),
                     index=ids.to_numpy())


def changes(a: pd.DataFrame, b: pd.DataFrame) -> tuple[Change, ...]:
    """The changes from documents table ``a`` to ``b`` (module docstring), by kind then doc_id;
    a doc_id that is not unique is an InputError."""
    ids_a, ids_b = _ids(a, "documents at A"), _ids(b, "documents at B")
    columns = sorted((set(a.columns) | set(b.columns)) - {S.DOC_ID})
    both = ids_b[ids_b.isin(ids_a)].to_numpy()
    content_a, content_b = _contents(a, ids_a, columns), _contents(b, ids_b, columns)
    differ = content_a.reindex(both).to_numpy() != content_b.reindex(both).to_numpy()
    found = {"added": ids_b[~ids_b.isin(ids_a)], "removed": ids_a[~ids_a.isin(ids_b)],
             "modified": both[differ]}
    return tuple(sorted(Change(kind, d) for kind, ids in found.items() for d in ids))


def revert(a: pd.DataFrame, b: pd.DataFrame, reverted: Iterable[Change]) -> pd.DataFrame:
    """``b`` with ``reverted`` undone: added documents dropped, removed and modified ones
    restored to their rows in ``a`` (after B's kept rows)."""
    reverted = list(reverted)
    undone = {c.doc_id for c in reverted}
    restored = {c.doc_id for c in reverted if c.kind != "added"}
    kept = b[~b[S.DOC_ID].astype(str).isin(undone)]
    return pd.concat([kept, a[a[S.DOC_ID].astype(str).isin(restored)]], ignore_index=True)


def _drain(stack: list) -> Iterator:
    while stack:
        yield stack.pop()


def diagnose(a: pd.DataFrame, b: pd.DataFrame, figure: Callable[[pd.DataFrame], float], *,
             tol: float = TOL, one_by_one: int = ONE_BY_ONE) -> Drift:
    """The changes from ``a`` to ``b`` that moved ``figure`` (module docstring). A figure
    undefined (NaN) at A or B is an InputError: there is nothing to restore."""
    found = changes(a, b)
    rebuilds = 0

    def at(documents: pd.DataFrame) -> float:
        nonlocal rebuilds
        rebuilds += 1
        return float(figure(documents))

    f_a, f_b = at(a), at(b)
    for name, value in (("A", f_a), ("B", f_b)):
        if math.isnan(value):
            raise InputError(f"the figure is undefined at {name} (no evaluated query has a "
                             "relevant judgment): there is nothing to restore", "drift")
    gap = abs(f_b - f_a)
    if gap <= tol:
        return Drift(f_a, f_b, found, (), math.nan, False, rebuilds, "unmoved", tol)

    def back(value: float) -> bool:
        return abs(value - f_a) < gap - tol

    def reverted(group: tuple[Change, ...]) -> float:
        return at(revert(a, b, group))

    units: list[tuple[tuple[Change, ...], float]] = []
    if len(found) <= one_by_one:
        method = "one by one"
        tried = [((c,), reverted((c,))) for c in track(found, "drift: reverting each change")]
        units = [(group, value) for group, value in tried if back(value)]
    else:
        method = "bisection"
        stack = [(found, f_a)]  # reverting every change gives A
        for group, value in track(_drain(stack), "drift: bisecting the changes"):
            if len(group) == 1:
                units.append((group, value))
                continue
            halves = (group[: len(group) // 2], group[len(group) // 2:])
            moving = [(h, v) for h, v in ((h, reverted(h)) for h in halves) if back(v)]
            if moving:
                stack.extend(reversed(moving))
            else:
                units.append((group, value))
    causes = tuple(sorted((Cause(group, value, f_b - value, abs(value - f_a) <= tol)
                           for group, value in units), key=lambda c: (-abs(c.effect), c.changes)))
    together = (math.nan if not causes else causes[0].figure if len(causes) == 1
                else reverted(tuple(c for cause in causes for c in cause.changes)))
    return Drift(f_a, f_b, found, causes, together, abs(together - f_a) <= tol, rebuilds,
                 method, tol)
