"""Measure names: ir_measures-style strings and trec_eval names, both to one ``Measure``.

ir_measures style: ``Family(param=value, ...)@cutoff`` — ``nDCG@10``, ``P(rel=2)@5``,
``nDCG(dcg='exp-log2')@10``, ``nDCG(gains={1: 1, 2: 5})``, ``AP``, ``Judged@10``.
trec_eval style: ``ndcg``, ``ndcg_cut.10`` (or ``ndcg_cut_10``), ``P.5,10``,
``recall.100``, ``recip_rank``, ``map``, ``map_cut.10``, ``Rprec``, ``bpref``,
``success.10``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``iprec_at_recall_0.50`` (or
``iprec_at_recall.0,.5,1``); a bare cut family expands to trec_eval's default cutoffs, bare
``iprec_at_recall`` to its 11 recall levels. Family options: ``ECE(bins=15, binning='mass')``,
``ILD(space='cooccurrence')@10``, ``LongTail(head=0.1)@10``, ``P(judged_only=True)@10``; an
option at its default is left out of the canonical name. For ``IPrec`` the ``@`` names the
recall level, as in ir_measures: ``IPrec@0.5`` is ``IPrec(recall=0.5)`` (its canonical name),
and bare ``IPrec`` expands to the 11 levels 0.0, 0.1, …, 1.0.
"""

from __future__ import annotations

import ast
import difflib
import re

from releval.errors import InputError
from releval.metrics.measures import MEASURES, RECALL_LEVELS
from releval.metrics.spec import Measure

# trec_eval base name -> (family, default cutoffs when a cut family is named bare)
TREC_NAMES: dict[str, tuple[str, tuple[int, ...] | None]] = {
    "P": ("P", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "recall": ("R", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": ("Hit", (1, 5, 10)),
    "ndcg_cut": ("nDCG", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": ("AP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "ndcg": ("nDCG", None),
    "map": ("AP", None),
    "recip_rank": ("RR", None),
    "Rprec": ("Rprec", None),
    "bpref": ("Bpref", None),
    "num_ret": ("NumRet", None),
    "num_rel": ("NumRel", None),
    "num_rel_ret": ("NumRelRet", None),
}
# HR (hit rate) is Hit; MAP@k is AP@k, |R| in the denominator as trec_eval's map_cut (rectools'
# MAP divides by |R| too; recommenders' map_at_k by min(|R|, k))
ALIASES = {"Success": "Hit", "HR": "Hit", "MRR": "RR", "MAP": "AP", "R_prec": "Rprec",
           "bpref": "Bpref", "Recall": "R"}

# families whose @ names an option rather than a rank cutoff (ir_measures' AT_PARAM), with the
# values a bare name expands to
AT_OPTIONS: dict[str, tuple[str, tuple[float, ...]]] = {"IPrec": ("recall", RECALL_LEVELS)}

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_IRM = re.compile(rf"^(?P<family>[A-Za-z_]+)(?P<params>\(.*\))?(?:@(?P<cutoff>{_NUMBER}))?$")
_TREC = re.compile(r"^(?P<base>[A-Za-z_]+?)(?:[._](?P<cuts>\d+(?:,\d+)*))?$")
_IPREC = re.compile(rf"^iprec_at_recall(?:[._](?P<levels>{_NUMBER}(?:,{_NUMBER})*))?$")


def _params(text: str, source: str) -> dict:
    try:
        call = ast.parse(f"f{text}", mode="eval").body
        if not isinstance(call, ast.Call) or call.args:
            raise ValueError
        return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    except (SyntaxError, ValueError):
        raise InputError(f"cannot parse measure parameters {text!r}; "
                         "expected e.g. (rel=2) or (dcg='exp-log2')", source) from None


def parse_measures(text: str, *, rel: int = 1, families=None) -> list[Measure]:
    """Parse one measure string into one or more ``Measure`` (trec cut lists expand).

    ``rel`` is the default relevance threshold for measures that take one and name none.
    ``families`` is the registry used to check names and parameters.
    """
    return _parse(text.strip(), rel, MEASURES if families is None else families, suggest=True)


def _parse(text: str, rel: int, families, *, suggest: bool) -> list[Measure]:
    m = _IRM.match(text)
    family = m and ALIASES.get(m["family"], m["family"])
    if m and family in families and (m["params"] or m["cutoff"] or family not in TREC_NAMES):
        params = _params(m["params"], text) if m["params"] else {}
        if family in AT_OPTIONS:
            return _at_option(families, family, params, m["cutoff"], rel, text)
        if m["cutoff"] and not m["cutoff"].isdigit():
            raise InputError(f"cutoff must be an integer, got {m['cutoff']}", text)
        cutoffs = [int(m["cutoff"])] if m["cutoff"] else [None]
    elif i := _IPREC.match(text):
        levels = i["levels"].split(",") if i["levels"] else None
        return _at_option(families, "IPrec", {}, levels, rel, text)
    else:
        t = _TREC.match(text)
        if not t or t["base"] not in TREC_NAMES:
            hint = _closest(text, families) if suggest else "unknown"
            raise InputError(f"unknown measure {text!r}; {hint}", text)
        family, defaults = TREC_NAMES[t["base"]]
        params = {}
        if t["cuts"]:
            cutoffs = [int(c) for c in t["cuts"].split(",")]
        else:
            cutoffs = list(defaults) if defaults else [None]
    return [families[family].make(family, cutoff, params, rel, text) for cutoff in cutoffs]


def _closest(text: str, families) -> str:
    """"did you mean nDCG@10?": the name with its family replaced by the closest known one
    (a family, an alias or a trec_eval name) that parses; else what a name may be."""
    m = _IRM.match(text) or _TREC.match(text)
    head = m[1] if m else text
    known = [*families, *ALIASES, *TREC_NAMES]
    lower = sorted({k.lower() for k in known})
    for close in difflib.get_close_matches(head.lower(), lower, n=5, cutoff=0.6):
        for family in (k for k in known if k.lower() == close):
            name = family + text[len(head):]
            try:
                _parse(name, 1, families, suggest=False)
            except InputError:
                continue
            return f"did you mean {name}?"
    return "not a measure family, alias or trec_eval name (e.g. nDCG@10, AP, ndcg_cut.10)"


def _at_option(families, family: str, params: dict, at, rel: int, text: str) -> list[Measure]:
    """The measures of a family whose @ is an option (``AT_OPTIONS``): one per value of ``at``
    (a string, a list of strings, or None: the named option or its default values)."""
    name, defaults = AT_OPTIONS[family]
    if at is not None and name in params:
        raise InputError(f"{family} names its {name} twice (@ and {name}=)", text)
    if name in params:
        values = [params.pop(name)]
    elif at is None:
        values = list(defaults)
    else:
        values = [float(v) for v in ([at] if isinstance(at, str) else at)]  # matched numbers
    out = []
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # IPrec@1 and IPrec(recall=1) name IPrec(recall=1.0)
        out.append(families[family].make(family, None, {**params, name: value}, rel, text))
    return out


def parse_measure(text: str, *, rel: int = 1) -> Measure:
    """Parse exactly one measure (a trec cut list naming several is an error)."""
    found = parse_measures(text, rel=rel)
    if len(found) != 1:
        raise InputError(f"{text!r} names {len(found)} measures; name one", text)
    return found[0]
