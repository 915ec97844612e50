"""SIMULATED judges, for the demo and tests only: no person graded these rows.

``simulate`` reads the hidden ground truth of the demo data and adds per-judge bias and
noise, so the judgments stage can run end to end without real annotators; ``corrupt``
injects the malformed rows real files contain, to exercise the quarantine; ``simulate_round``
does both for the pairs of a pool not judged yet. Rows come out in the judges' CSV layout and
go through ``releval.judging.ingest.ingest`` like a real file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.membership import member
from releval.judging.ingest import (
    CONFLICT,
    MISSING_ANNOTATOR,
    NOT_AN_INTEGER,
    OUT_OF_RANGE,
    UNKNOWN_BLIND_ID,
    WRONG_POOL,
)

SIM_PREFIX = "sim-judge-"
DEFAULT_BIAS = (0.0, 0.3, -0.3)  # repeated when there are more judges
SIM_START = pd.Timestamp("2025-01-01", tz="UTC")  # judged_at of the first simulated row
INJECTED = "injected"  # column added by corrupt: the quarantine reason a row should get
SIM_COLUMNS = (S.BLIND_ID, S.POOL_ID, S.ANNOTATOR, S.GRADE, S.JUDGED_AT)


def _draws(seed: int, blind_ids: pd.Series, judges: int) -> np.ndarray:
    """Uniforms in (0, 1], shape (3, pairs, judges), from a generator seeded per pair by
    sha256(seed | blind id): a pair's simulated grades do not depend on which other pairs are
    pooled or in what order (a demo simulation; the loop is over pairs, not a hot path)."""
    draws = [np.random.default_rng(list(np.frombuffer(
        hashlib.sha256(f"{seed}|{b}".encode()).digest(), dtype="<u4"))).random((3, judges))
        for b in blind_ids]
    return 1.0 - (np.stack(draws, axis=1) if draws else np.zeros((3, 0, judges)))


def simulate(pool: pd.DataFrame, truth: pd.DataFrame, *, judges: int = 3, seed: int = 0,
             noise: float = 0.6, bias: tuple[float, ...] | None = None, max_grade: int = 3,
             coverage: float = 1.0) -> pd.DataFrame:
    """Simulated grades for the pool's pairs by judges ``sim-judge-1`` … ``sim-judge-<judges>``.

    Judge j sees each pair with probability ``coverage`` (a pair no judge drew goes to one judge
    drawn at random, so every pair has ≥ 1 grade) and gives
    grade = clip(round(t + bias_j + ε), 0, max_grade), ε ~ N(0, noise²),
    where t is the pair's ground-truth grade (0 when ``truth`` has no row for it). Seeded per
    pair: the same seed gives a pair the same grades whatever else is pooled. Columns
    ``SIM_COLUMNS``; judged_at counts minutes from ``SIM_START``; rows ordered by judge, then
    pool order.
    """
    if judges < 1 or not 0 < coverage <= 1:
        raise ValueError(f"need judges ≥ 1 and 0 < coverage ≤ 1; got {judges}, {coverage}")
    bias = np.resize(DEFAULT_BIAS, judges) if bias is None else np.asarray(bias, dtype=float)
    if len(bias) != judges:
        raise ValueError(f"bias needs one value per judge ({judges}); got {len(bias)}")
    hidden = (pool[[S.QUERY_ID, S.DOC_ID]]
              .merge(truth[[S.QUERY_ID, S.DOC_ID, S.GRADE]], how="left",
                     on=[S.QUERY_ID, S.DOC_ID], validate="many_to_one")[S.GRADE]
              .fillna(0).to_numpy(dtype=float))
    draw = _draws(seed, pool[S.BLIND_ID], judges)  # per (pair, judge), whatever the pool order
    sees = draw[0] < coverage
    unseen = ~sees.any(axis=1)
    sees[unseen, np.minimum((draw[1][unseen, 0] * judges).astype(int), judges - 1)] = True
    epsilon = noise * np.sqrt(-2.0 * np.log(draw[1])) * np.cos(2.0 * np.pi * draw[2])
    grades = np.clip(np.rint(hidden[:, None] + bias + epsilon), 0, max_grade).astype(np.int64)
    judge, pair = np.nonzero(sees.T)
    return pd.DataFrame({
        S.BLIND_ID: pool[S.BLIND_ID].to_numpy()[pair], S.POOL_ID: pool[S.POOL_ID].to_numpy()[pair],
        S.ANNOTATOR: np.char.add(SIM_PREFIX, (judge + 1).astype(str)),
        S.GRADE: grades[pair, judge],
        S.JUDGED_AT: SIM_START + pd.to_timedelta(np.arange(len(pair)), unit="min"),
    })


_DAMAGE: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    UNKNOWN_BLIND_ID: lambda part: part.assign(**{S.BLIND_ID: "unknown-" + part.index.astype(str)}),
    OUT_OF_RANGE: lambda part: part.assign(**{S.GRADE: 7}),
    NOT_AN_INTEGER: lambda part: part.assign(**{S.GRADE: "abc"}),
    MISSING_ANNOTATOR: lambda part: part.assign(**{S.ANNOTATOR: None}),
    WRONG_POOL: lambda part: part.assign(**{S.POOL_ID: part[S.POOL_ID].astype(str) + "-other"}),
    CONFLICT: lambda part: part,  # the row stays; a twin with another grade is appended
}


def corrupt(rows: pd.DataFrame, share: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """``rows`` (valid, e.g. from ``simulate``) with max(1, round(share × n)) rows damaged.

    The damaged rows are drawn at random and take the kinds of ``_DAMAGE`` in turn: unknown
    blind id, grade 7 (out of range for max_grade < 7), grade "abc", missing annotator, wrong
    pool id, and a conflicting duplicate (a copy of the row with another grade, appended, so
    both rows conflict). Column ``INJECTED`` holds the quarantine reason each damaged row
    should get (<NA> for untouched rows), so tests and the demo can check the quarantine.
    """
    rng = np.random.default_rng(seed)
    out = rows.reset_index(drop=True).astype({S.GRADE: object, S.ANNOTATOR: object})
    out[INJECTED] = pd.Series(pd.NA, index=out.index, dtype="string")
    picked = rng.choice(len(out), size=min(len(out), max(1, round(share * len(out)))),
                        replace=False)
    kinds = np.resize(list(_DAMAGE), len(picked))
    for kind, damage in _DAMAGE.items():
        at = picked[kinds == kind]
        out.loc[at] = damage(out.loc[at]).assign(**{INJECTED: kind})
    twins = out.loc[picked[kinds == CONFLICT]]
    grade = twins[S.GRADE].astype(int)
    twins = twins.assign(**{S.GRADE: np.where(grade > 0, grade - 1, 1).astype(object)})
    return pd.concat([out, twins], ignore_index=True)


def simulate_round(pool: pd.DataFrame, truth: pd.DataFrame, accepted: pd.DataFrame | None, *,
                   judges: int, seed: int, noise: float, max_grade: int,
                   corrupt_share: float) -> pd.DataFrame:
    """Simulated judges grade the pool's pairs not judged yet (blind_id not in ``accepted``),
    a new round as people would judge it: ``simulate`` seeded with ``seed`` + the latest round
    of those pairs (1 when there are none), then ``corrupt`` (seed ``seed``) when
    ``corrupt_share`` > 0."""
    if accepted is not None and len(accepted):
        pool = pool[~member(pool[S.BLIND_ID], accepted[S.BLIND_ID])]
    latest = int(pool[S.ROUND].max()) if len(pool) else 1
    rows = simulate(pool, truth, judges=judges, seed=seed + latest, noise=noise,
                    max_grade=max_grade)
    return corrupt(rows, share=corrupt_share, seed=seed) if corrupt_share else rows
