"""Paired comparison of a candidate system against a baseline, one measure at a time.

Values are aligned per query; a query whose value is undefined (NaN) in either system is
excluded and counted. For the n remaining queries, d_j = candidate_j − baseline_j.

Resampling units are the queries, or, with ``clusters`` (e.g. user_id per query), the
clusters g = 1..G with query counts m_g and difference sums S_g = Σ_{j∈g} d_j (for query
units G = n, m_g = 1, S_g = d_g). N = Σ m_g = n and the estimate is d̄ = Σ_g S_g / N.

- Bootstrap: for b = 1..B draw G units i_1..i_G uniformly with replacement and take
  d̄*_b = Σ_k S_{i_k} / Σ_k m_{i_k} (the query-weighted mean of the drawn clusters).
  The CI is the percentile interval [q_{α/2}, q_{1−α/2}] of d̄*_1..d̄*_B (``np.quantile``,
  linear interpolation).
- The p-value: the test named by ``test`` (``releval.decision.significance.TESTS``; the
  default, the sign-flip randomization test of E[d] = 0: for b = 1..B draw s_g ∈ {−1, +1}
  uniformly and T*_b = Σ_g s_g S_g; with T = Σ_g S_g, p = (1 + #{b : |T*_b| ≥ |T|}) /
  (1 + B), ties within 1e-9 · Σ_g |S_g| counting as ≥). The shifted bootstrap test reads
  the CI's own B resamples.

Streams: ``np.random.SeedSequence(seed).spawn(2)`` gives the bootstrap's sequence and the
test's. The B draws are cut into n_blocks = ⌈B / ``DRAW_BLOCK``⌉ blocks of ``DRAW_BLOCK`` (the
last may be shorter); block k draws from ``default_rng(bootstrap.spawn(n_blocks)[k])``, so
the layout depends on B alone. The test draws its B sign vectors in order from
``default_rng(test)``. Both work in chunks of at most ``CHUNK_BYTES``, each chunk one integer
(or bit) matrix of shape (rows, G); nothing loops per resample. The bootstrap's chunking never
changes a draw; the sign-flip test's chunk size is part of its layout
(``releval.decision.significance``). When ``releval.executor.active()``
is a Dask executor and G · B ≥ ``DASK_MIN_VALUES``, the bootstrap blocks are mapped on it,
otherwise they run here: either way equal inputs and seed give bit-identical results, whatever
the executor and its number of workers.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval import executor
from releval.data import contracts as S
from releval.decision.significance import (
    CHUNK_BYTES,
    Options,
    Units,
    checked,
    effect_sizes,
    streams,
)
from releval.errors import InputError
from releval.metrics.blocks import workers

DRAW_BLOCK = 1_000  # bootstrap draws per seeded block (changing it changes the CI)
DASK_MIN_VALUES = 20_000_000  # G · B from which the blocks are shipped to a Dask executor
SHOWN_IDS = 5

# Ordered rules on (ci_low, ci_high, min_effect); the first that holds is the verdict.
VerdictRule = Callable[[float, float, float], bool]
VERDICT_RULES: tuple[tuple[str, VerdictRule], ...] = (
    ("improved", lambda low, high, effect: low > effect),
    ("regressed", lambda low, high, effect: high < -effect),
    ("no consequential change", lambda low, high, effect: -effect <= low and high <= effect),
    ("inconclusive", lambda low, high, effect: True),
)


@dataclass(frozen=True)
class Comparison:
    """One measure's paired comparison.

    n: queries defined in both systems; excluded: queries undefined (NaN) in either; means
    over the n queries; wins/ties/losses: d > 0, d == 0 (exact), d < 0; [ci_low, ci_high]:
    percentile bootstrap CI of mean_diff at level 1 − alpha; p_value: the two-sided p of
    ``test`` (``releval.decision.significance``); effect_size: Cohen's d_z (None where the
    differences do not vary); share_improved: wins / n; unit: "query" or "cluster", units:
    how many were resampled.
    """

    n: int
    excluded: int
    mean_baseline: float
    mean_candidate: float
    mean_diff: float
    median_diff: float
    wins: int
    ties: int
    losses: int
    ci_low: float
    ci_high: float
    p_value: float
    min_effect: float
    verdict: str
    resamples: int
    alpha: float
    seed: int
    unit: str
    units: int
    test: str = "randomization"
    effect_size: float | None = None
    share_improved: float | None = None

    def to_dict(self) -> dict[str, float | int | str]:
        return dataclasses.asdict(self)


def clusters_of(queries: pd.DataFrame | None, column: str | None) -> pd.Series | None:
    """query_id -> resampling cluster, the ``column`` (``compare.cluster``, e.g. user_id) of
    ``queries``; None (every query its own unit) without a column."""
    if column is None:
        return None
    if queries is None or not {S.QUERY_ID, column} <= set(queries.columns):
        raise InputError(f"compare.cluster {column!r} needs queries with query_id "
                         f"and {column}", "queries")
    return queries.set_index(S.QUERY_ID)[column]


def paired_all(calls: Sequence[tuple[tuple, dict]]) -> list[Comparison]:
    """``paired(*args, **kwargs)`` of each call, in order, run in this process's threads
    with the caller's context (the active executor): the same results as one after another,
    since each call draws from its own generators."""
    with ThreadPoolExecutor(max(1, min(len(calls), workers(None)))) as pool:
        futures = [pool.submit(contextvars.copy_context().run,
                               functools.partial(paired, *args, **kwargs))
                   for args, kwargs in calls]
        return [future.result() for future in futures]


def verdict(ci_low: float, ci_high: float, min_effect: float = 0.0) -> str:
    """The first of ``VERDICT_RULES`` that holds for the CI and the minimum effect."""
    return next(name for name, rule in VERDICT_RULES if rule(ci_low, ci_high, min_effect))


def paired(
    baseline: np.ndarray,
    candidate: np.ndarray,
    *,
    clusters: np.ndarray | None = None,
    min_effect: float = 0.0,
    resamples: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
    test: str = "randomization",
    tie_band: float = 0.0,
) -> Comparison:
    """Compare ``candidate`` with ``baseline`` (aligned per query; NaN = undefined); the
    p-value is ``test``'s (``tie_band``: the sign test's)."""
    base, cand = _vector(baseline, "baseline"), _vector(candidate, "candidate")
    if base.shape != cand.shape:
        raise InputError(f"baseline has {base.size} values, candidate {cand.size}")
    _check_settings(min_effect, resamples, alpha)
    named = checked(test, tie_band)
    keep = ~(np.isnan(base) | np.isnan(cand))
    if clusters is not None:
        clusters = np.asarray(clusters)
        if clusters.shape != base.shape:
            raise InputError(f"clusters has {clusters.size} labels for {base.size} queries")
        clusters = clusters[keep]
    base, cand = base[keep], cand[keep]
    d = cand - base
    units = _units(d, clusters)
    low, high, boot = _interval(units, resamples, alpha, seed)
    p = named.p(units, Options(int(resamples), int(seed), float(tie_band), boot))
    return Comparison(
        n=int(d.size),
        excluded=int(keep.size - d.size),
        mean_baseline=float(base.mean()),
        mean_candidate=float(cand.mean()),
        mean_diff=float(d.mean()),
        median_diff=float(np.median(d)),
        wins=int(np.count_nonzero(d > 0)),
        ties=int(np.count_nonzero(d == 0)),
        losses=int(np.count_nonzero(d < 0)),
        ci_low=low,
        ci_high=high,
        p_value=p,
        min_effect=float(min_effect),
        verdict=verdict(low, high, float(min_effect)),
        resamples=int(resamples),
        alpha=float(alpha),
        seed=int(seed),
        unit=units.name,
        units=int(units.sums.size),
        test=test,
        **effect_sizes(d),
    )


def bootstrap_ci(
    d: np.ndarray,
    *,
    clusters: np.ndarray | None = None,
    resamples: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """The percentile CI of mean(d) alone; equals ``paired``'s for the same d and seed."""
    d = _vector(d, "d")
    if np.isnan(d).any():
        raise InputError("d has NaN: exclude undefined queries first (paired does)")
    _check_settings(0.0, resamples, alpha)
    if clusters is not None and np.shape(clusters) != d.shape:
        raise InputError(f"clusters has {np.size(clusters)} labels for {d.size} queries")
    return _interval(_units(d, clusters), resamples, alpha, seed)[:2]


def mean_ci(values: np.ndarray, *, resamples: int, alpha: float, seed: int) -> dict:
    """A figure of one system and measure: the mean over the defined (non-NaN) values, its
    percentile-bootstrap CI (``bootstrap_ci``), n and n_undefined; mean and CI None when no
    value is defined."""
    values = np.asarray(values, dtype="float64")
    defined = values[~np.isnan(values)]
    if not defined.size:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0,
                "n_undefined": int(values.size)}
    low, high = bootstrap_ci(defined, resamples=resamples, alpha=alpha, seed=seed)
    return {"mean": float(defined.mean()), "ci_low": low, "ci_high": high,
            "n": int(defined.size), "n_undefined": int(values.size - defined.size)}


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni: with the m non-NaN p sorted ascending p_(1) ≤ … ≤ p_(m),
    p̃_(i) = min(1, max_{k≤i} (m − k + 1) · p_(k)); NaN stays NaN in its place."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise InputError(f"p-values must be one-dimensional, got shape {p.shape}")
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    valid = p[defined]
    if ((valid < 0) | (valid > 1)).any():
        raise InputError(f"p-values must lie in [0, 1], got {valid[(valid < 0) | (valid > 1)]}")
    order = np.argsort(valid, kind="stable")
    m = valid.size
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * valid[order]))
    out[defined] = adjusted
    return out


def holm_verdicts(verdicts: Sequence[str], p_holm: Sequence[float], alpha: float) -> np.ndarray:
    """A CI verdict of "improved" or "regressed" stands only when its Holm-adjusted p ≤ alpha
    (the difference survives the correction over the family); otherwise it is
    "inconclusive". Other verdicts are kept."""
    verdicts = np.asarray(verdicts, dtype=object)
    p = np.asarray(p_holm, dtype=float)
    changed = np.isin(verdicts, ("improved", "regressed"))
    return np.where(changed & ~(p <= alpha), "inconclusive", verdicts)


def compare_table(
    per_query: pd.DataFrame,
    baseline: str,
    candidate: str,
    measures: Iterable[str],
    *,
    clusters: pd.Series | None = None,
    min_effect: float | dict[str, float] = 0.0,
    resamples: int = 10_000,
    alpha: float = 0.05,
    seed: int = 0,
    test: str = "randomization",
    tie_band: float = 0.0,
) -> pd.DataFrame:
    """One row per measure: ``measure``, the ``Comparison`` fields and ``p_holm`` (Holm over
    the measures of this table; verdicts per :func:`holm_verdicts`). ``per_query`` is the
    metrics table (system, query_id, measure, value), paired by query_id; ``clusters`` maps
    query_id → cluster label. Every measure uses the same seed, so all measures see the same
    resampled units."""
    measures = list(dict.fromkeys(measures))
    if not measures:
        raise InputError("no measures to compare", "per_query")
    columns = [S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE]
    missing = [c for c in columns if c not in per_query.columns]
    if missing:
        raise InputError(f"missing columns {missing}", "per_query")
    effects = _effects(min_effect, measures)
    rows = per_query.loc[
        per_query[S.SYSTEM].isin([baseline, candidate]) & per_query[S.MEASURE].isin(measures),
        columns,
    ]
    _check_rows(rows, baseline, candidate, measures)
    try:
        values = pd.to_numeric(rows[S.VALUE], errors="raise").astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"non-numeric value: {error}", "per_query") from None
    wide = rows.assign(**{S.VALUE: values}).pivot(
        index=[S.MEASURE, S.QUERY_ID], columns=S.SYSTEM, values=S.VALUE
    )
    table = []
    for measure in measures:
        pairs = wide.xs(measure, level=S.MEASURE)
        labels = None if clusters is None else _cluster_labels(clusters, pairs.index)
        result = paired(
            pairs[baseline].to_numpy(), pairs[candidate].to_numpy(), clusters=labels,
            min_effect=effects[measure], resamples=resamples, alpha=alpha, seed=seed,
            test=test, tie_band=tie_band,
        )
        table.append({S.MEASURE: measure, **result.to_dict()})
    frame = pd.DataFrame(table)
    frame["p_holm"] = holm(frame["p_value"].to_numpy())
    frame["verdict"] = holm_verdicts(frame["verdict"], frame["p_holm"], alpha)
    return frame


def _vector(values: np.ndarray, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise InputError(f"{name} must be numeric: {error}") from None
    if array.ndim != 1:
        raise InputError(f"{name} must be one-dimensional, got shape {array.shape}")
    if np.isinf(array).any():
        raise InputError(f"{name} has infinite values at {np.flatnonzero(np.isinf(array))[:5]}")
    return array


def _check_settings(min_effect: float, resamples: int, alpha: float) -> None:
    if not (np.isfinite(min_effect) and min_effect >= 0):
        raise InputError(f"min_effect must be finite and ≥ 0, got {min_effect}")
    if int(resamples) != resamples or resamples < 1:
        raise InputError(f"resamples must be a positive integer, got {resamples}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")


def _units(d: np.ndarray, clusters: np.ndarray | None) -> Units:
    """Query units, or cluster sums S_g and sizes m_g (clusters in order of first appearance)."""
    if clusters is None:
        units = Units(d, None, "query")
    else:
        codes, labels = pd.factorize(np.asarray(clusters, dtype=object), use_na_sentinel=True)
        if (codes < 0).any():
            raise InputError(f"{np.count_nonzero(codes < 0)} queries have no cluster label")
        sizes = np.bincount(codes, minlength=labels.size).astype(float)
        units = Units(np.bincount(codes, weights=d, minlength=labels.size), sizes, "cluster")
    if units.sums.size < 2:
        n = units.sums.size
        name = units.name if n == 1 else {"query": "queries", "cluster": "clusters"}[units.name]
        of = "" if clusters is None else f" (holding {d.size} queries)"
        raise InputError(f"{n} {name}{of} with values in both systems; at least 2 are needed: "
                         "the evaluated set is (nearly) empty where both systems are defined")
    return units


def _rows(units: int, bytes_per_value: int) -> int:
    return max(1, CHUNK_BYTES // (units * bytes_per_value))


def _draw_blocks(resamples: int, seed: int) -> list[tuple[np.random.SeedSequence, int]]:
    """The bootstrap's blocks in order: (its own stream, its number of draws)."""
    blocks = streams(seed)[0].spawn(-(-resamples // DRAW_BLOCK))
    return [(stream, min(DRAW_BLOCK, resamples - k * DRAW_BLOCK))
            for k, stream in enumerate(blocks)]


def _block_means(block: tuple[np.random.SeedSequence, int], units: Units) -> np.ndarray:
    """d̄*_b of one block's draws, drawn in order from its stream, in chunks of CHUNK_BYTES."""
    stream, count = block
    rng = np.random.default_rng(stream)
    g = units.sums.size
    means = np.empty(count)
    step = _rows(g, 16 if units.sizes is None else 24)
    for start in range(0, count, step):
        stop = min(start + step, count)
        drawn = rng.integers(0, g, size=(stop - start, g))
        weight = g if units.sizes is None else units.sizes[drawn].sum(axis=1)
        means[start:stop] = units.sums[drawn].sum(axis=1) / weight
    return means


def _interval(units: Units, resamples: int, alpha: float,
              seed: int) -> tuple[float, float, np.ndarray]:
    """Percentile bootstrap CI of the query-weighted mean difference, and the B resampled
    means; the blocks run on the active Dask executor when the work is large enough to
    ship, else in this process's threads (each block its own stream: the same means)."""
    blocks = _draw_blocks(resamples, seed)
    runner = executor.active()
    if runner.name == "dask" and units.sums.size * resamples >= DASK_MIN_VALUES:
        parts = runner.map(_block_means, blocks, shared={"units": units},
                           description="bootstrap")
    else:  # numpy's draws and sums release the GIL: the blocks on this machine's cores
        with ThreadPoolExecutor(min(len(blocks), workers(None))) as pool:
            parts = list(pool.map(functools.partial(_block_means, units=units), blocks))
    means = np.concatenate(parts)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), means


def _effects(min_effect: float | dict[str, float], measures: list[str]) -> dict[str, float]:
    if not isinstance(min_effect, dict):
        return dict.fromkeys(measures, float(min_effect))
    undeclared = [m for m in measures if m not in min_effect]
    if undeclared:
        raise InputError(f"no min_effect declared for measures {undeclared}")
    return {m: float(min_effect[m]) for m in measures}


def _check_rows(rows: pd.DataFrame, baseline: str, candidate: str, measures: list[str]) -> None:
    """Both systems and all measures present, keys unique, every query in both systems."""
    if baseline == candidate:
        raise InputError(f"baseline and candidate are the same system {baseline!r}")
    for system in (baseline, candidate):
        if not (rows[S.SYSTEM] == system).any():
            raise InputError(f"system {system!r} has no rows for {measures}", "per_query")
    absent = [m for m in measures if not (rows[S.MEASURE] == m).any()]
    if absent:
        raise InputError(f"measures {absent} have no rows", "per_query")
    duplicated = rows.duplicated([S.SYSTEM, S.QUERY_ID, S.MEASURE])
    if duplicated.any():
        first = rows.loc[duplicated].iloc[0]
        raise InputError(
            f"{int(duplicated.sum())} duplicate (system, query_id, measure) rows, e.g. "
            f"({first[S.SYSTEM]!r}, {first[S.QUERY_ID]!r}, {first[S.MEASURE]!r})",
            "per_query",
        )
    keys = {
        system: pd.MultiIndex.from_frame(rows.loc[rows[S.SYSTEM] == system,
                                                   [S.QUERY_ID, S.MEASURE]])
        for system in (baseline, candidate)
    }
    only = {
        baseline: keys[baseline].difference(keys[candidate]),
        candidate: keys[candidate].difference(keys[baseline]),
    }
    ids = {system: sorted(set(k.get_level_values(0)), key=str) for system, k in only.items()}
    count = len(set(ids[baseline]) | set(ids[candidate]))
    if count:
        shown = "; ".join(
            f"only in {system!r}: {', '.join(map(str, found[:SHOWN_IDS]))}"
            + (" …" if len(found) > SHOWN_IDS else "")
            for system, found in ids.items() if found
        )
        raise InputError(
            f"{count} queries present for only one system (uncontrolled comparison); {shown}",
            "per_query",
        )


def _cluster_labels(clusters: pd.Series, query_ids: pd.Index) -> np.ndarray:
    if not clusters.index.is_unique:
        raise InputError("clusters has duplicate query_ids", "clusters")
    labels = clusters.reindex(query_ids)
    unlabelled = query_ids[labels.isna().to_numpy()]
    if len(unlabelled):
        shown = ", ".join(map(str, unlabelled[:SHOWN_IDS]))
        raise InputError(f"{len(unlabelled)} queries have no cluster label, e.g. {shown}",
                         "clusters")
    return labels.to_numpy()
