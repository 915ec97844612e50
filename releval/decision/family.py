"""Many systems in one decision: a leaderboard, every pair of a family compared, the family's
correction, and the groups of systems that cannot be told apart.

Over k systems and the n queries defined for every one of them (the others left out and
counted), one measure at a time:

- the leaderboard: each system's mean over the n queries with its percentile bootstrap CI,
  best first (the measure's direction);
- the family (``FAMILIES``): ``baseline`` (each system against the baseline: k − 1 pairs)
  or ``all_pairs`` (k(k − 1)/2 pairs, the lower-ranked system of each the baseline); each
  pair a paired comparison (``releval.decision.stats.paired``: Δ, bootstrap CI, the named
  test's raw p, effect sizes);
- the correction (``CORRECTIONS``) over the family's p-values: ``holm`` (Holm–Bonferroni),
  ``bh`` (Benjamini–Hochberg: with the m p sorted ascending, p̃_(i) = min_{j≥i} m·p_(j)/j,
  capped at 1) or ``tukey`` (all pairs: Tukey's HSD by randomization, Carterette 2012: for
  b = 1..B each query's k values are permuted across the systems, R*_b = max_s mean*_s −
  min_s mean*_s; a pair's adjusted p = (1 + #{b : R*_b ≥ |Δ|}) / (1 + B), ties within
  1e-9 · max(1, max |value|));
- a pair's verdict is its CI's (``releval.decision.stats.verdict``) read in the measure's
  direction (lower is better: the CI of −Δ), kept only when its adjusted p ≤ α
  (``holm_verdicts``); share_improved counts the queries better in that direction, while Δ,
  its CI and d_z stay candidate − baseline;
- a pair whose adjusted p ≤ α differs; the groups are the compact letter display of that
  relation (Piepho 2004, insert and absorb): systems sharing a letter are not told apart,
  the letters in order of the best system each holds.

A (system, query_id) with two rows of the measure, a non-numeric value or a missing column is
refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import combinations
from string import ascii_lowercase

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.significance import CHUNK_BYTES, TIE_TOLERANCE
from releval.decision.stats import holm, holm_verdicts, mean_ci, paired, verdict
from releval.errors import InputError


def bh(p_values) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (module docstring); NaN stays NaN."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise InputError(f"p-values must be one-dimensional, got shape {p.shape}")
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    valid = p[defined]
    if ((valid < 0) | (valid > 1)).any():
        raise InputError(f"p-values must lie in [0, 1], got {valid[(valid < 0) | (valid > 1)]}")
    m = valid.size
    order = np.argsort(valid, kind="stable")
    scaled = valid[order] * m / np.arange(1, m + 1)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out[defined] = adjusted
    return out


def tukey_hsd(matrix: np.ndarray, diffs: np.ndarray, *, resamples: int,
              seed: int) -> np.ndarray:
    """Tukey HSD adjusted p of each |Δ| in ``diffs`` by randomization (module docstring) over
    ``matrix`` (n queries × k systems). Permutations are the argsort of uniform keys, drawn
    in order (b, query, system) from ``default_rng(seed)``, in chunks that never change a
    draw."""
    n, k = matrix.shape
    rng = np.random.default_rng(seed)
    ranges = np.empty(resamples)
    rows = np.arange(n)[None, :, None]
    step = max(1, CHUNK_BYTES // (n * k * 24))
    for start in range(0, resamples, step):
        stop = min(start + step, resamples)
        order = np.argsort(rng.random((stop - start, n, k)), axis=2)
        means = matrix[rows, order].mean(axis=1)
        ranges[start:stop] = means.max(axis=1) - means.min(axis=1)
    threshold = np.abs(diffs)[:, None] - TIE_TOLERANCE * max(1.0, float(np.abs(matrix).max()))
    return (1 + (ranges[None, :] >= threshold).sum(axis=1)) / (1 + resamples)


def letters(systems: list[str], differ: set[frozenset]) -> dict[str, str]:
    """The compact letter display of ``systems`` (best first) under the pairs that
    ``differ``: insert (split every group holding a differing pair) and absorb (drop a group
    inside another), then a letter per group in order of its best system."""
    groups = [set(systems)]
    for pair in sorted(differ, key=lambda p: sorted(systems.index(s) for s in p)):
        a, b = tuple(pair)
        split = []
        for g in groups:
            split += [g - {a}, g - {b}] if {a, b} <= g else [g]
        groups = [g for i, g in enumerate(split)
                  if g and not any(g <= h and (g != h or j < i) for j, h in enumerate(split)
                                   if j != i)]
    groups.sort(key=lambda g: sorted(systems.index(s) for s in g))
    names = [ascii_lowercase[i % 26] * (1 + i // 26) for i in range(len(groups))]
    return {s: "".join(n for n, g in zip(names, groups, strict=True) if s in g)
            for s in systems}


@dataclass(frozen=True)
class Family:
    """Which pairs a family holds."""

    pairs: Callable[[list[str], str | None], list[tuple[str, str]]]
    needs_baseline: bool


FAMILIES: dict[str, Family] = {
    "baseline": Family(lambda systems, base: [(base, s) for s in systems if s != base], True),
    # best first in, each pair (lower-ranked, higher-ranked): every Δ reads as a gain
    "all_pairs": Family(lambda systems, base: [(b, a) for a, b in combinations(systems, 2)],
                        False),
}
CORRECTIONS = ("holm", "bh", "tukey")


@dataclass(frozen=True)
class FamilyResult:
    """One measure's family comparison: ``leaderboard`` (rank, system, mean, its CI, n,
    group; best first), ``pairs`` (baseline, candidate, n, means, Δ = candidate − baseline,
    CI, p_value, p_adjusted, verdict, differ, effect_size, share_improved), the settings, n
    (queries defined for every system) and left_out (queries with a row but undefined for a
    system); ``to_dict`` holds plain JSON values (NaN as None)."""

    measure: str
    family: str
    correction: str
    test: str
    alpha: float
    resamples: int
    seed: int
    n: int
    left_out: int
    leaderboard: list[dict]
    pairs: list[dict]

    def to_dict(self) -> dict:
        return asdict(self)


def _none(value):
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else value


def compare_family(per_query: pd.DataFrame, systems: list[str], measure: str, *,
                   family: str = "baseline", baseline: str | None = None,
                   correction: str = "holm", test: str = "randomization",
                   tie_band: float = 0.0, higher_is_better: bool = True,
                   min_effect: float = 0.0, alpha: float = 0.05, resamples: int = 10_000,
                   seed: int = 0) -> FamilyResult:
    """``measure`` compared over ``systems`` (module docstring) from ``per_query`` (system,
    query_id, measure, value)."""
    if family not in FAMILIES:
        raise InputError(f"family {family!r} is not one of {', '.join(FAMILIES)}")
    if correction not in CORRECTIONS:
        raise InputError(f"correction {correction!r} is not one of {', '.join(CORRECTIONS)}")
    if correction == "tukey" and family != "all_pairs":
        raise InputError("correction tukey (Tukey's HSD) is for the family all_pairs")
    systems = list(dict.fromkeys(systems))
    if len(systems) < 2:
        raise InputError(f"a family needs at least two systems, got {systems}")
    if FAMILIES[family].needs_baseline and baseline not in systems:
        raise InputError(f"the family 'baseline' needs its baseline among the systems "
                         f"({baseline!r} is not in {systems})")
    wide = _wide(per_query, systems, measure)
    absent = [s for s in systems if s not in wide.columns]
    if absent:
        raise InputError(f"no {measure} values for {', '.join(absent)}", "per_query")
    wide = wide[systems]
    defined = wide.dropna()
    if len(defined) < 2:
        raise InputError(f"{len(defined)} queries have {measure} defined for every system; at "
                         "least 2 are needed")
    means = defined.mean()
    best = means.sort_values(ascending=not higher_is_better, kind="stable").index.tolist()
    pairs = FAMILIES[family].pairs(best if family == "all_pairs" else systems, baseline)
    out = []
    for base, cand in pairs:
        r = paired(defined[base].to_numpy(), defined[cand].to_numpy(), min_effect=min_effect,
                   resamples=resamples, alpha=alpha, seed=seed, test=test, tie_band=tie_band)
        out.append({"baseline": base, "candidate": cand, "n": r.n,
                    "mean_baseline": r.mean_baseline, "mean_candidate": r.mean_candidate,
                    "mean_diff": r.mean_diff, "ci_low": r.ci_low, "ci_high": r.ci_high,
                    "p_value": r.p_value, "effect_size": r.effect_size,
                    "share_improved": (r.wins if higher_is_better else r.losses) / r.n})
    raw = np.array([r["p_value"] for r in out])
    if correction == "tukey":
        adjusted = tukey_hsd(defined[best].to_numpy(), np.array([r["mean_diff"] for r in out]),
                             resamples=resamples, seed=seed)
    else:
        adjusted = (holm if correction == "holm" else bh)(raw)
    sign = 1.0 if higher_is_better else -1.0
    found = [verdict(*sorted((sign * r["ci_low"], sign * r["ci_high"])), min_effect)
             for r in out]
    differ = set()
    for r, p, v in zip(out, adjusted, holm_verdicts(found, adjusted, alpha), strict=True):
        r["p_adjusted"], r["verdict"], r["differ"] = float(p), str(v), bool(p <= alpha)
        if r["differ"]:
            differ.add(frozenset((r["baseline"], r["candidate"])))
    groups = letters(best, differ)
    board = [{"system": s, "mean": float(means[s]), "n": int(len(defined)), "group": groups[s],
              "rank": i + 1, **{k: mean_ci(defined[s].to_numpy(), resamples=resamples,
                                           alpha=alpha, seed=seed)[k]
                                for k in ("ci_low", "ci_high")}}
             for i, s in enumerate(best)]
    return FamilyResult(measure, family, correction, test, float(alpha), int(resamples),
                        int(seed), int(len(defined)), int(len(wide) - len(defined)), board,
                        [{k: _none(v) for k, v in r.items()} for r in out])


def _wide(per_query: pd.DataFrame, systems: list[str], measure: str) -> pd.DataFrame:
    """query_id × system values of ``measure`` (NaN: no row or undefined)."""
    columns = [S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE]
    missing = [c for c in columns if c not in per_query.columns]
    if missing:
        raise InputError(f"missing columns {missing}", "per_query")
    rows = per_query.loc[(per_query[S.MEASURE] == measure)
                         & per_query[S.SYSTEM].isin(systems), columns]
    twice = rows.duplicated([S.SYSTEM, S.QUERY_ID])
    if twice.any():
        first = rows.loc[twice].iloc[0]
        raise InputError(f"{int(twice.sum())} duplicate (system, query_id) rows of {measure}, "
                         f"e.g. ({first[S.SYSTEM]!r}, {first[S.QUERY_ID]!r})", "per_query")
    try:
        values = pd.to_numeric(rows[S.VALUE], errors="raise").astype(float)
    except (TypeError, ValueError) as error:
        raise InputError(f"non-numeric value: {error}", "per_query") from None
    return rows.assign(**{S.VALUE: values}).pivot(index=S.QUERY_ID, columns=S.SYSTEM,
                                                  values=S.VALUE)


def groups_text(result: FamilyResult) -> str:
    """The groups in one line: "a: s1, s2; b: s3" (systems sharing a letter are not told
    apart at α under the correction)."""
    by_letter: dict[str, list[str]] = {}
    for row in result.leaderboard:
        for letter in row["group"]:
            by_letter.setdefault(letter, []).append(row["system"])
    return "; ".join(f"{letter}: {', '.join(names)}" for letter, names in by_letter.items())
