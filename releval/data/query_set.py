"""The evaluated query set, described and checked: how its queries were sampled, how many
each risk category holds, and whether each category reaches its minimum.

- sampling source (``S.QUERY_SOURCE``): ``logged`` (sampled from traffic) or ``template``
  (written to a template); queries without the column are all logged, and the description
  says so. Per source: count, share of the queries, weight (``S.WEIGHT``, the traffic a query
  stands for) and share of the weight.
- risk categories (``RISK_CATEGORIES``, the one registry): a query is in a category when its
  tags hold every one of the category's tags; a query with no tags at all is recognised from
  its text instead, where the category has a rule for text (numeric, error code, negation,
  multi-intent). Tags win: a tagged query is never recognised from its text. Per category:
  count (of which recognised from text), share = count / queries, weight share = weight of
  its queries / weight of all (None when there is no weight), the minimum
  ``query_set.min_per_category`` sets (None: none), whether the count reaches it, and the
  gate rules whose figures rest on the category (``underwrites``).

Shares are None (undefined), not zero, for an empty query set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError

# text rules, for queries without tags
ERROR_CODE_TEXT = (r"(?i:\b(?:error|err|fault|exception)\b)|\b[A-Z]{1,3}-?\d{4,5}\b"
                   r"|(?i:\b0x[0-9a-f]{4,}\b)")
NUMERIC_TEXT = (r"(?i)\d(?:[.,]?\d)*\s?(?:%|°\s?[cf]\b|[kmgt]?b\b|[kmg]?hz\b|k?w\b|mah\b|v\b"
                r"|kg\b|g\b|mm\b|cm\b|ms\b|hours?\b|days?\b|weeks?\b|months?\b|years?\b)"
                r"|\bhow (?:many|much|long|far|heavy|big)\b")
NEGATION_TEXT = (r"(?i)\b(?:not|no|without|never|except|excluding|neither|nor)\b|n't\b"
                 r"|\b(?:other than|instead of)\b")
MULTI_INTENT_TEXT = (r"(?i)\?\s*\S.*\?|;|\b(?:and also|as well as|and then)\b"
                     r"|\band (?:how|what|where|when|why|which|who|can|could|is|are|do|does"
                     r"|should)\b")


@dataclass(frozen=True)
class Category:
    """A risk category: ``label``, its queries' name in a sentence; ``tags``, all of which a
    query's tags hold when it is in the category; ``text``, a regular expression its text
    matches (queries without tags only; None: tags alone); ``underwrites``, the gate rules
    whose figures are untrustworthy when the category has too few queries."""

    label: str
    tags: tuple[str, ...]
    text: str | None = None
    underwrites: tuple[str, ...] = ()


RISK_CATEGORIES: dict[str, Category] = {
    "head": Category("head", ("head",)),
    "long_tail": Category("long-tail", ("tail",)),
    "high_risk": Category("high-risk", (S.HIGH_RISK_TAG,), underwrites=("safety",)),
    **{f"high_risk_{domain}": Category(f"high-risk {domain}", (S.HIGH_RISK_TAG, domain),
                                       underwrites=("safety",)) for domain in S.RISK_DOMAINS},
    "no_answer": Category("no-answer", ("no_answer",), underwrites=("no_answer",)),
    "authorization_boundary": Category("authorization-boundary", ("authz_boundary",),
                                       underwrites=("safety",)),
    "typo": Category("typo", ("typo",)),
    "error_code": Category("error-code", ("error_code",), ERROR_CODE_TEXT),
    "numeric": Category("numeric", ("numeric",), NUMERIC_TEXT),
    "negation": Category("negation", ("negation",), NEGATION_TEXT),
    "paraphrase": Category("paraphrase", ("paraphrase",)),
    "multi_intent": Category("multi-intent", (S.MULTI_INTENT_TAG,), MULTI_INTENT_TEXT),
}
NO_SOURCE_NOTE = (f"the queries have no {S.QUERY_SOURCE} column: how they were sampled is "
                  f"not known (counted under {S.LOGGED}, not shown to be logged traffic)")


AUTO = "auto"  # the minimums derived at the gate from the comparison's power plan


def check_minimums(minimums: Mapping[str, int] | str) -> None:
    """InputError (params.yaml, the key) for the first key of ``query_set.min_per_category``
    that names no category of ``RISK_CATEGORIES``; ``AUTO`` names none."""
    for key in () if minimums == AUTO else minimums:
        if key not in RISK_CATEGORIES:
            raise InputError(f"unknown query-set category {key!r} (known: "
                             f"{', '.join(RISK_CATEGORIES)})", "params.yaml",
                             f"query_set.min_per_category.{key}")


def categories_of(no_answer_tag: str = "no_answer") -> dict[str, Category]:
    """``RISK_CATEGORIES`` with the no-answer category read from ``no_answer_tag`` (the
    ``no_answer.tag`` the no_answer rule reads)."""
    return RISK_CATEGORIES | {"no_answer": replace(RISK_CATEGORIES["no_answer"],
                                                   tags=(no_answer_tag,))}


def held_tags(queries: pd.DataFrame) -> pd.DataFrame:
    """Per query (``queries``' rows, on a unique index) and tag: does its tags list hold the
    tag (a bool frame, one column per tag any query holds)."""
    tags = queries[S.TAGS].explode()
    tags = tags[tags.notna()].astype(str)
    return (pd.crosstab(tags.index, tags.to_numpy()).gt(0)
            .reindex(queries.index, fill_value=False))


def memberships(queries: pd.DataFrame,
                categories: Mapping[str, Category]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per query (``queries``' rows, on a unique index) and category: is it in the category
    (bool frame), and was it recognised from its text (bool frame: untagged queries only)."""
    held = held_tags(queries)
    untagged = ~held.any(axis=1).to_numpy(bool)
    text = queries[S.TEXT].fillna("").astype(str)
    member, by_text = {}, {}
    for name, category in categories.items():
        from_tags = np.ones(len(queries), bool)
        for tag in category.tags:
            from_tags &= held[tag].to_numpy(bool) if tag in held else False
        matched = (text.str.contains(category.text, regex=True).to_numpy(bool)
                   if category.text else np.zeros(len(queries), bool))
        by_text[name] = untagged & matched
        member[name] = from_tags | by_text[name]
    return (pd.DataFrame(member, index=queries.index, columns=list(categories)),
            pd.DataFrame(by_text, index=queries.index, columns=list(categories)))


def _share(part: float, whole: float) -> float | None:
    """part / whole, rounded to 6 places; None where whole is 0 (undefined)."""
    return round(float(part) / float(whole), 6) if whole > 0 else None


def describe(queries: pd.DataFrame, split: pd.DataFrame, splits: Iterable[str],
             minimums: Mapping[str, int] | str, no_answer_tag: str = "no_answer",
             source: str = "queries") -> dict:
    """The query set evaluated (the queries of ``split`` in ``splits``, ``evaluate.splits``),
    JSON-ready: ``splits``, ``queries``, ``weight``, ``untagged`` (recognised from text),
    ``source_given`` and ``note`` (why every query counts as logged), ``sources`` (per
    sampling source: count, share, weight, weight_share), ``categories`` (per category:
    label, count, from_text, share, weight_share, minimum, covered, underwrites) and
    ``undercovered`` (the categories below their minimum); ``minimums``: ``AUTO`` when they
    are derived at the gate (then every category's minimum is None here). See the module
    docstring."""
    check_minimums(minimums)
    auto, minimums = minimums == AUTO, {} if minimums == AUTO else minimums
    splits = list(splits)
    chosen = split.loc[split[S.SPLIT].isin(splits), S.QUERY_ID]
    evaluated = queries[queries[S.QUERY_ID].isin(chosen)]
    evaluated.attrs.update(queries.attrs)  # bad source values are named by file and row
    weight = pd.to_numeric(evaluated[S.WEIGHT], errors="coerce").to_numpy(float)
    n, total = len(evaluated), float(np.nansum(weight))
    sampled = S.query_sources(evaluated, source).to_numpy()
    sources = {}
    for name in S.QUERY_SOURCES:
        rows = sampled == name
        sources[name] = {"count": int(rows.sum()), "share": _share(rows.sum(), n),
                         "weight": round(float(np.nansum(weight[rows])), 6),
                         "weight_share": _share(np.nansum(weight[rows]), total)}
    categories = categories_of(no_answer_tag)
    member, by_text = memberships(evaluated, categories)
    described = {}
    for name, category in categories.items():
        rows = member[name].to_numpy()
        count, minimum = int(rows.sum()), minimums.get(name)
        described[name] = {
            "label": category.label, "count": count, "from_text": int(by_text[name].sum()),
            "share": _share(count, n), "weight_share": _share(np.nansum(weight[rows]), total),
            "minimum": minimum,
            "covered": None if minimum is None else count >= minimum,
            "underwrites": list(category.underwrites)}
    untagged = int((~held_tags(evaluated).any(axis=1)).sum())
    given = S.QUERY_SOURCE in evaluated.columns
    return {"splits": splits, "queries": n, "weight": round(total, 6), "untagged": untagged,
            "source_given": given, "note": None if given else NO_SOURCE_NOTE,
            "sources": sources, "categories": described,
            **({"minimums": AUTO} if auto else {}),
            "undercovered": [k for k, v in described.items() if v["covered"] is False]}
