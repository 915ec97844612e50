"""The paired significance tests IR papers report, one registry (``TESTS``), each two-sided.

Every test reads the paired differences as resampling units (``Units``): the units' sums
S_g and sizes m_g (queries, or clusters of queries such as a user's; for queries m_g = 1 and
S_g = d_g), their means x_g = S_g / m_g, and the paired bootstrap's resampled means d̄*_b
(``releval.decision.stats``). With G units and d̄ = Σ S_g / Σ m_g:

- ``randomization`` (the default): the sign-flip test; s_g ∈ {−1, +1} uniform,
  T*_b = Σ s_g S_g, p = (1 + #{b : |T*_b| ≥ |T|}) / (1 + B), T = Σ S_g; ties within
  1e-9 · Σ |S_g| count as ≥. Its stream (``streams(seed)[1]``) gives each resample ⌈G/8⌉
  random bytes (bit g set: s_g = −1), drawn in chunks of ⌊CHUNK_BYTES / (10 G)⌋ resamples;
  numpy draws bytes from 32-bit words and a chunk drops the rest of its last word, so that
  chunk size is part of the layout (fixed: the p depends on the data, seed and B alone).
- ``t``: paired Student t on the x_g: t = x̄ / (s / √G), s with ddof 1, ν = G − 1,
  p = I_{ν/(ν+t²)}(ν/2, 1/2) (the regularised incomplete beta), as scipy's ``ttest_rel``;
  every x_g equal (s = 0; scipy: NaN): p = 1 when they are 0, else 0.
- ``wilcoxon``: signed-rank on the x_g ≠ 0 (zeros dropped, Wilcoxon's rule), ranks of |x_g|
  averaged over ties, R⁺ the sum of the positive ones, n their count. Below 50 pairs
  without ties or zeros: the exact null distribution (all 2ⁿ sign patterns, by dynamic
  programming), p = min(1, 2 · min(P(T ≥ R⁺), P(T ≤ R⁺))); otherwise the normal
  approximation with continuity correction, as R's ``wilcox.test``: μ = n(n+1)/4,
  σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tie groups of size t,
  z = (R⁺ − μ − ½ · sign(R⁺ − μ)) / σ, p = 2 · Φ(−|z|).
- ``sign``: the binomial sign test; |x_g| ≤ ``tie_band`` is a tie and dropped, k the
  positive ones of the n left, p = min(1, 2 · P(X ≤ min(k, n − k))) for X ~ Bin(n, ½)
  (1 when k = n − k or n = 0), as scipy's ``binomtest``.
- ``bootstrap``: the shifted bootstrap test; the bootstrap means centred on d̄ are the null
  distribution, p = (1 + #{b : |d̄*_b − d̄| ≥ |d̄|}) / (1 + B) (ties as the randomization
  test's). It reads the same B resamples as the bootstrap CI.

Monte Carlo tests (randomization, bootstrap) state their resamples and seed in every row.
Effect sizes beside Δ (``effect_sizes``): Cohen's d_z = d̄ / s_d over the queries (s_d with
ddof 1; None where every d is equal, s_d = 0) and the share of queries improved (d > 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from releval.errors import InputError

CHUNK_BYTES = 64 * 2**20
TIE_TOLERANCE = 1e-9
EXACT_BELOW = 50  # pairs below which the Wilcoxon test is exact (no ties, no zeros)


@dataclass(frozen=True)
class Units:
    """The resampling units of one paired comparison (module docstring)."""

    sums: np.ndarray  # S_g
    sizes: np.ndarray | None  # m_g; None when every unit is one query
    name: str

    @property
    def means(self) -> np.ndarray:
        """x_g = S_g / m_g."""
        return self.sums if self.sizes is None else self.sums / self.sizes

    @property
    def mean(self) -> float:
        """d̄ = Σ S_g / Σ m_g."""
        return float(self.sums.sum() / (self.sums.size if self.sizes is None
                                        else self.sizes.sum()))


def streams(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(the bootstrap's seed sequence, the sign-flip test's), fresh for every call."""
    boot, flip = np.random.SeedSequence(seed).spawn(2)
    return boot, flip


@dataclass(frozen=True)
class Options:
    """What a test may read beside the units: B and the seed (Monte Carlo tests), the sign
    test's tie band and the bootstrap's resampled means."""

    resamples: int
    seed: int
    tie_band: float = 0.0
    boot: np.ndarray | None = None


@dataclass(frozen=True)
class Test:
    """One test: its two-sided p from the units, and whether it is Monte Carlo."""

    p: Callable[[Units, Options], float]
    monte_carlo: bool
    label: str


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_p(units: Units, options: Options) -> float:
    x = units.means
    n = x.size
    if (x == x[0]).all():  # s = 0 (rounding would leave a spurious ~1e-17)
        return 1.0 if x[0] == 0.0 else 0.0
    t = float(x.mean()) / (float(x.std(ddof=1)) / math.sqrt(n))
    df = n - 1.0
    return min(1.0, betainc(df / 2.0, 0.5, df / (df + t * t)))


def ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ranks 1..n with ties averaged, the sizes of the tie groups)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, ordered.size])
    average = starts + (sizes + 1) / 2.0  # (first + last rank) / 2, ranks from 1
    out = np.empty(values.size)
    out[order] = np.repeat(average, sizes)
    return out, sizes


def signed_rank_counts(n: int) -> np.ndarray:
    """c[s] = the sign patterns of 1..n whose positive ranks sum to s (Σ c = 2ⁿ)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    return counts


def wilcoxon_p(units: Units, options: Options) -> float:
    x = units.means
    zeros = x == 0
    x = x[~zeros]
    n = x.size
    if n == 0:
        return 1.0
    r, ties = ranks(np.abs(x))
    plus = float(r[x > 0].sum())
    if n < EXACT_BELOW and not zeros.any() and (ties == 1).all():
        pmf = signed_rank_counts(n) / 2.0 ** n
        k = int(round(plus))
        return float(min(1.0, 2.0 * min(pmf[k:].sum(), pmf[:k + 1].sum())))
    mu = n * (n + 1) / 4.0
    sigma = math.sqrt((n * (n + 1) * (2 * n + 1) - float((ties ** 3 - ties).sum()) / 2.0) / 24)
    z = (plus - mu) / sigma
    z -= math.copysign(0.5, z) / sigma if z else 0.0
    return min(1.0, 2.0 * _normal_sf(abs(z)))


def _binom_cdf(k: int, n: int) -> float:
    """P(X ≤ k) for X ~ Bin(n, ½)."""
    i = np.arange(k + 1)
    log_pmf = (math.lgamma(n + 1) - np.array([math.lgamma(j + 1) + math.lgamma(n - j + 1)
                                              for j in i]) - n * math.log(2.0))
    return float(np.exp(log_pmf).sum())


def sign_p(units: Units, options: Options) -> float:
    x = units.means
    kept = x[np.abs(x) > options.tie_band]
    n = kept.size
    k = int((kept > 0).sum())
    if n == 0 or 2 * k == n:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf(min(k, n - k), n))


def randomization_p(units: Units, options: Options) -> float:
    """Two-sided sign-flip p; a set bit flips a unit: T* = T − 2 · Σ_{flipped} S_g."""
    sums, resamples = units.sums, options.resamples
    rng = np.random.default_rng(streams(options.seed)[1])
    g = sums.size
    total = sums.sum()
    threshold = abs(total) - TIE_TOLERANCE * np.abs(sums).sum()
    extreme = 0
    step = max(1, CHUNK_BYTES // (g * 10))
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        packed = rng.integers(0, 256, size=(rows, (g + 7) // 8), dtype=np.uint8)
        flips = np.unpackbits(packed, axis=1, count=g).view(bool)
        flipped = (flips * sums).sum(axis=1)  # exact: an unflipped unit adds ±0.0
        extreme += int(np.count_nonzero(np.abs(total - 2 * flipped) >= threshold))
    return (1 + extreme) / (1 + resamples)


def bootstrap_p(units: Units, options: Options) -> float:
    boot = options.boot
    if boot is None:
        raise InputError("the shifted bootstrap test reads the bootstrap's resampled means")
    mean = units.mean
    threshold = abs(mean) - TIE_TOLERANCE * float(np.abs(units.sums).sum())
    return (1 + int(np.count_nonzero(np.abs(boot - mean) >= threshold))) / (1 + boot.size)


TESTS: dict[str, Test] = {
    "randomization": Test(randomization_p, True, "sign-flip randomization test"),
    "t": Test(t_p, False, "paired t-test"),
    "wilcoxon": Test(wilcoxon_p, False, "Wilcoxon signed-rank test"),
    "sign": Test(sign_p, False, "sign test"),
    "bootstrap": Test(bootstrap_p, True, "shifted bootstrap test"),
}


def checked(name: str, tie_band: float = 0.0) -> Test:
    """The test named ``name``; InputError naming the known ones otherwise."""
    if name not in TESTS:
        raise InputError(f"unknown test {name!r} (known: {', '.join(TESTS)})")
    if not (np.isfinite(tie_band) and tie_band >= 0):
        raise InputError(f"tie_band must be finite and ≥ 0, got {tie_band}")
    return TESTS[name]


def effect_sizes(d: np.ndarray) -> dict[str, float | None]:
    """Cohen's d_z = mean(d) / sd(d, ddof 1) (None where every d is equal: sd = 0) and the
    share of queries improved (d > 0), over the n paired queries."""
    flat = (d == d[0]).all()
    return {"effect_size": None if flat else float(d.mean()) / float(d.std(ddof=1)),
            "share_improved": float(np.count_nonzero(d > 0) / d.size)}
