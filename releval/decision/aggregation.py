"""Aggregating per-query metric values over slices, and explaining a change between two
evaluations: of the same query sample (a paired comparison: controlled) or of different ones
(e.g. this week vs last week: not controlled).

Input: one row per (query, slice) with a slice label, a value v_j (NaN = undefined: excluded
from every mean and counted) and a traffic weight w_j ≥ 0 (all 1 when ``weight_col`` is None).
Over the defined rows J_i of slice i:

- n_i = |J_i|, W_i = Σ_{J_i} w_j (total weight), m_i = Σ_{J_i} w_j v_j / W_i
  (traffic-weighted slice mean; undefined when W_i = 0)
- macro = Σ_j v_j / n; traffic-weighted = Σ_j w_j v_j / Σ_j w_j = Σ_i s_i m_i with traffic
  shares s_i = W_i / Σ_k W_k; equal-slice = (1/k) Σ_i m_i over the k slices with W_i > 0;
  micro = Σ_j num_j / Σ_j den_j (unweighted)

Rows are the units: a query listed in two slices counts in both, so for the traffic-weighted
aggregate to describe the query population the slices should partition the queries.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError

CONTROLLED_NOTE = "different query samples: not a controlled comparison"
PAIRED_NOTE = ("the same query sample on both sides (paired): a controlled comparison; the "
               "shares move only with queries undefined on one side")


def _reject(bad: pd.Series, rule: str, source: str) -> None:
    """InputError naming the first offending row label and the count, if any row is bad."""
    if bad.any():
        labels = bad.index[bad.to_numpy()]
        raise InputError(f"{rule} ({len(labels)} row(s))", source, f"row {labels[0]}")


def _frame(values: pd.DataFrame, slice_col: str, value_col: str, weight_col: str | None,
           extra: tuple[str, ...] = (), source: str = "<values>") -> pd.DataFrame:
    """Columns slice, value, weight (and ``extra``) as float, checked: slice labels present,
    values finite or NaN, weights finite and ≥ 0."""
    needed = [slice_col, value_col, *([weight_col] if weight_col else []), *extra]
    missing = [c for c in needed if c not in values.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; found {list(values.columns)}",
                         source)
    for col in needed[1:]:
        if not pd.api.types.is_numeric_dtype(values[col]):
            raise InputError(f"{col} must be numeric, got dtype {values[col].dtype}", source)
    frame = pd.DataFrame({
        S.SLICE: values[slice_col],
        "value": values[value_col].astype("float64"),
        "weight": values[weight_col].astype("float64") if weight_col else 1.0,
        **{col: values[col].astype("float64") for col in extra},
    }, index=values.index)
    _reject(frame[S.SLICE].isna(), f"{slice_col} is missing", source)
    _reject(np.isinf(frame["value"]), f"{value_col} must be finite or NaN (undefined)", source)
    weight = frame["weight"]
    _reject(~np.isfinite(weight) | (weight < 0), f"{weight_col} must be finite and ≥ 0", source)
    return frame


def _by_slice(frame: pd.DataFrame) -> pd.DataFrame:
    """Per slice (sorted index): n, n_undefined, weighted_mean, weight, and the weighted sum
    wv = Σ w_j v_j, all over the defined rows."""
    defined = frame["value"].notna()
    groups = frame.assign(
        defined=defined,
        w=frame["weight"].where(defined, 0.0),
        wv=(frame["weight"] * frame["value"]).where(defined, 0.0),
    ).groupby(S.SLICE, sort=True, observed=True)
    per = pd.DataFrame({
        "n": groups["defined"].sum().astype("int64"),
        "n_undefined": (groups.size() - groups["defined"].sum()).astype("int64"),
        "weight": groups["w"].sum(),
        "wv": groups["wv"].sum(),
    })
    per["weighted_mean"] = (per["wv"] / per["weight"]).where(per["weight"] > 0)
    return per


def _num(x: float) -> float | None:
    """A plain float, or None where undefined (NaN): JSON-ready."""
    return None if math.isnan(x) else float(x)


def aggregates(values: pd.DataFrame, *, slice_col: str = S.SLICE, value_col: str = S.VALUE,
               weight_col: str | None = S.WEIGHT,
               micro: tuple[str, str] | None = None) -> dict[str, float | int | None]:
    """The aggregates side by side, over the defined (non-NaN) rows:

    - macro = Σ_j v_j / n
    - traffic_weighted = Σ_j w_j v_j / Σ_j w_j
    - equal_slice = (1/k) Σ_i m_i, each of the k = n_slices slices with W_i > 0 weighted 1/k
    - micro = Σ_j num_j / Σ_j den_j with ``micro=(num_col, den_col)`` (e.g. relevant retrieved
      and relevant counts); None when not asked for

    plus n, n_undefined and n_slices. An aggregate that is undefined (nothing to average, or a
    zero denominator) is None.
    """
    extra = tuple(micro) if micro else ()
    frame = _frame(values, slice_col, value_col, weight_col, extra)
    per = _by_slice(frame)
    defined = frame["value"].notna()
    total = per["weight"].sum()
    result: dict[str, float | int | None] = {
        "n": int(defined.sum()),
        "n_undefined": int((~defined).sum()),
        "n_slices": int(per["weighted_mean"].notna().sum()),
        "macro": _num(frame["value"].mean()),
        "traffic_weighted": _num(per["wv"].sum() / total) if total > 0 else None,
        "equal_slice": _num(per["weighted_mean"].mean()),
        "micro": None,
    }
    if micro:
        num, den = (frame.loc[defined, col] for col in micro)
        _reject(~np.isfinite(num) | ~np.isfinite(den),
                f"{micro[0]} and {micro[1]} must be finite where {value_col} is defined",
                "<values>")
        result["micro"] = float(num.sum() / den.sum()) if den.sum() > 0 else None
    return result


@dataclass(frozen=True)
class SliceChange:
    """One slice of a decomposition: counts, shares s_i → s'_i, traffic-weighted means m_i → m'_i
    (None where the slice has no defined, positively weighted rows on that side), and its
    contributions rate_i = (m'_i − m_i)(s_i + s'_i)/2 and mix_i = (s'_i − s_i)(m_i + m'_i)/2."""

    slice: object
    n_before: int
    n_after: int
    n_undefined_before: int
    n_undefined_after: int
    share_before: float
    share_after: float
    mean_before: float | None
    mean_after: float | None
    rate: float
    mix: float


@dataclass(frozen=True)
class Decomposition:
    """Change of the traffic-weighted aggregate A = Σ_i s_i m_i between two evaluations:
    delta = after − before = rate + mix (Σ of the per-slice parts in ``slices``), with the
    equal-slice aggregates (1/k) Σ_i m_i before and after, and the composition flag
    ``mix_shift`` (see :func:`decompose`). ``controlled``: both sides are the same query
    sample (paired), ``note`` says which (``PAIRED_NOTE`` or ``CONTROLLED_NOTE``)."""

    before: float
    after: float
    delta: float
    rate: float
    mix: float
    equal_slice_before: float
    equal_slice_after: float
    mix_shift: bool
    slices: tuple[SliceChange, ...]
    controlled: bool
    note: str

    def to_dict(self) -> dict:
        """JSON-ready: plain types, per-slice rows as a list of dicts."""
        out = asdict(self)
        out["slices"] = list(out["slices"])
        return out


def _label(x: object) -> object:
    return x.item() if isinstance(x, np.generic) else x


def decompose(before: pd.DataFrame, after: pd.DataFrame, *, slice_col: str = S.SLICE,
              value_col: str = S.VALUE, weight_col: str | None = S.WEIGHT,
              tol: float = 1e-12, same_sample: bool = False) -> Decomposition:
    """Split the change of the traffic-weighted aggregate into rate and mix (symmetric Shapley /
    midpoint decomposition, exact: rate + mix = Δ):

        Δ = Σ_i (m'_i − m_i)(s_i + s'_i)/2  [rate: within-slice change]
          + Σ_i (s'_i − s_i)(m_i + m'_i)/2  [mix: change in the slices' traffic shares]

    with s_i = W_i / Σ_k W_k and m_i the traffic-weighted slice means (module docstring).

    A slice absent on one side (no rows there, only undefined values, or zero total weight) has
    share 0 there, and its mean there is taken from the other side for the midpoint: its rate
    part is 0 and its whole term s'_i m'_i (or −s_i m_i) is mix. Its reported mean stays None.

    Equal-slice aggregates weight each present slice 1/k; with the same slices on both sides
    they move only with the slice means.

    ``mix_shift`` (composition) is True iff |Δ| > tol, |mix| > |rate|, and no slice present on
    both sides moved in Δ's direction: sign(Δ)·(m'_i − m_i) ≤ tol for every such slice. The
    aggregate then moves although no slice does (or against every slice that does).

    ``same_sample``: the two sides are the same queries (a paired comparison), which makes the
    decomposition ``controlled``; else the samples differ and it is not.

    Raises InputError when a side has no defined value with positive weight.
    """
    return compare_slices(*(slice_table(values, slice_col=slice_col, value_col=value_col,
                                        weight_col=weight_col, source=name)
                            for name, values in (("before", before), ("after", after))),
                          tol=tol, same_sample=same_sample)


def slice_table(values: pd.DataFrame, *, slice_col: str = S.SLICE, value_col: str = S.VALUE,
                weight_col: str | None = S.WEIGHT, source: str = "<values>") -> pd.DataFrame:
    """Per slice (sorted index): n, n_undefined, weight W_i, wv = Σ w_j v_j and the
    traffic-weighted mean m_i, over the defined rows (the checked ``values``)."""
    return _by_slice(_frame(values, slice_col, value_col, weight_col, source=source))


def slice_rows(per: pd.DataFrame) -> list[dict]:
    """A ``slice_table`` as JSON-ready rows (slice, n, n_undefined, weight, mean), the form a
    run keeps for a later run's decomposition (``from_rows`` reads it back)."""
    return [{"slice": _label(label), "n": int(r.n), "n_undefined": int(r.n_undefined),
             "weight": float(r.weight), "mean": _num(r.weighted_mean)}
            for label, r in per.iterrows()]


def from_rows(rows: list[dict]) -> pd.DataFrame:
    """``slice_rows`` back to a ``slice_table`` (wv = W_i m_i; 0 where m_i is undefined)."""
    frame = pd.DataFrame(rows, columns=["slice", "n", "n_undefined", "weight", "mean"])
    mean = pd.to_numeric(frame["mean"], errors="coerce").astype("float64")
    weight = frame["weight"].astype("float64")
    table = pd.DataFrame({"n": frame["n"].astype("int64"),
                          "n_undefined": frame["n_undefined"].astype("int64"),
                          "weight": weight, "wv": (weight * mean).fillna(0.0),
                          "weighted_mean": mean})
    return table.set_axis(pd.Index(frame["slice"], name=S.SLICE)).sort_index()


def compare_slices(before: pd.DataFrame, after: pd.DataFrame, tol: float = 1e-12,
                   same_sample: bool = False) -> Decomposition:
    """:func:`decompose` from two ``slice_table``s (e.g. two runs' kept ``slice_rows``:
    different samples)."""
    sides = []
    for name, per in (("before", before), ("after", after)):
        if not per["weight"].sum() > 0:
            raise InputError("no defined value with positive weight: nothing to aggregate", name)
        sides.append(per)
    table = sides[0].merge(sides[1], how="outer", left_index=True, right_index=True,
                           suffixes=("_b", "_a"), sort=True)
    counts = ["n_b", "n_a", "n_undefined_b", "n_undefined_a", "weight_b", "weight_a", "wv_b",
              "wv_a"]
    table[counts] = table[counts].fillna(0)
    share_b = table["weight_b"] / table["weight_b"].sum()
    share_a = table["weight_a"] / table["weight_a"].sum()
    mean_b, mean_a = table["weighted_mean_b"], table["weighted_mean_a"]
    mid_b, mid_a = mean_b.fillna(mean_a).fillna(0.0), mean_a.fillna(mean_b).fillna(0.0)
    rate = (mid_a - mid_b) * (share_b + share_a) / 2
    mix = (share_a - share_b) * (mid_b + mid_a) / 2

    agg_b = table["wv_b"].sum() / table["weight_b"].sum()
    agg_a = table["wv_a"].sum() / table["weight_a"].sum()
    delta = agg_a - agg_b
    moved = (mean_a - mean_b).dropna() * np.sign(delta)
    mix_shift = bool(abs(delta) > tol and abs(mix.sum()) > abs(rate.sum())
                     and not (moved > tol).any())

    rows = pd.DataFrame({
        "slice": table.index.map(_label),
        "n_before": table["n_b"].astype("int64"), "n_after": table["n_a"].astype("int64"),
        "n_undefined_before": table["n_undefined_b"].astype("int64"),
        "n_undefined_after": table["n_undefined_a"].astype("int64"),
        "share_before": share_b, "share_after": share_a,
        "mean_before": mean_b.astype(object).where(mean_b.notna(), None),
        "mean_after": mean_a.astype(object).where(mean_a.notna(), None),
        "rate": rate, "mix": mix,
    })
    return Decomposition(
        before=float(agg_b), after=float(agg_a), delta=float(delta),
        rate=float(rate.sum()), mix=float(mix.sum()),
        equal_slice_before=float(mean_b.mean()), equal_slice_after=float(mean_a.mean()),
        mix_shift=mix_shift,
        slices=tuple(SliceChange(**row) for row in rows.to_dict("records")),
        controlled=same_sample, note=PAIRED_NOTE if same_sample else CONTROLLED_NOTE,
    )
