"""Whether an off-policy estimate can be trusted (``diagnose``), from the unclipped importance
weights w_i = π_e(a_i | x_i, k_i) / π_b(a_i | x_i, k_i) of the n logged rows and the
candidate's action_dist:

- ``ess`` = (Σ w_i)² / Σ w_i² (Kish's effective sample size; 0 when every weight is 0) and
  ``ess_share`` = ess / n; passes when ess ≥ ``min_ess``;
- ``max_weight``, ``mean_weight`` (about 1 when the log covers the candidate);
- ``unsupported_share``: the share of logged rows whose (item, position) the candidate never
  takes there (π_e = 0, so w_i = 0);
- ``mass_off_support``: the candidate's probability mass on (item, position) pairs the log
  never shows at all, as a share of its whole mass (what a log can tell of the support
  condition π_e > 0 ⇒ π_b > 0); passes when ≤ ``support_tolerance`` (default 0).

``passed`` is every check passing; ``reasons`` holds one sentence per failed check.
"""

from __future__ import annotations

import numpy as np

SUPPORT_TOLERANCE = 0.0


def ess(weight: np.ndarray) -> float:
    """(Σ w)² / Σ w²; 0 when every weight is 0."""
    square = float(np.sum(weight ** 2))
    return float(np.sum(weight)) ** 2 / square if square > 0 else 0.0


def off_support(action_dist: np.ndarray, action: np.ndarray, position: np.ndarray) -> float:
    """The share of the candidate's mass on (action, position) pairs no logged row shows."""
    shown = np.zeros(action_dist.shape[1:], bool)
    shown[action, position] = True
    return float(action_dist[:, ~shown].sum() / action_dist.sum())


def diagnose(weight: np.ndarray, action_dist: np.ndarray, action: np.ndarray,
             position: np.ndarray, *, min_ess: float,
             support_tolerance: float = SUPPORT_TOLERANCE) -> dict:
    """The diagnostics of the module docstring for rows with ``weight``, logged ``action``
    and 0-based ``position`` indices, and the candidate's ``action_dist``."""
    n = len(weight)
    effective = ess(weight)
    mass = off_support(action_dist, action, position)
    checks = {"ess": effective >= min_ess, "support": mass <= support_tolerance}
    reasons = {
        "ess": f"effective sample size {effective:.1f} is below the minimum {min_ess:g} "
               f"({n} rows; max importance weight {weight.max():.3g})",
        "support": f"{mass:.2%} of the candidate's probability mass is on (item, position) "
                   f"pairs the log never shows (tolerance {support_tolerance:.2%}): no log "
                   "can estimate their reward",
    }
    return {
        "n": n, "ess": effective, "ess_share": effective / n,
        "max_weight": float(weight.max()), "mean_weight": float(weight.mean()),
        "unsupported_share": float(np.mean(weight == 0)), "mass_off_support": mass,
        "min_ess": float(min_ess), "support_tolerance": float(support_tolerance),
        "checks": checks, "passed": all(checks.values()),
        "reasons": [reasons[name] for name, ok in checks.items() if not ok],
    }
