"""The measure reference, written from the registry: every family's names, options, level,
direction, trec_eval names and definition (its compute function's docstring, the text the
receipt's ``metric_definitions_sha256`` hashes), grouped by the module that registers it,
under that module's own notation.

``render()`` is the generated part of ``docs/measures.md``, between ``BEGIN`` and ``END``; the
rest of that file is written by hand. ``python -m releval.metrics.reference`` prints the
generated part; ``python -m releval.metrics.reference --write docs/measures.md`` (``make
docs``) replaces it in the file and keeps the hand-written rest.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from releval.metrics import condensed
from releval.metrics.measures import MEASURES, gain
from releval.metrics.names import ALIASES, AT_OPTIONS, TREC_NAMES
from releval.metrics.registry import SHARED, Family, Option

BEGIN = ("<!-- generated from the measure registry (python -m releval.metrics.reference): edit "
         "the measures' docstrings, then run `make docs`; do not edit by hand -->")
END = "<!-- end of the generated reference -->"

# the modules that register measures, in reading order, with their section titles; a module not
# listed here follows them, titled by its docstring's first sentence
GROUPS = {
    "releval.metrics.measures": "Relevance, judged share and counts",
    "releval.metrics.cascade": "User models: ERR and RBP",
    "releval.metrics.user_auc": "Recommendation: AUC per user and GAUC",
    "releval.metrics.calibration": "Recommendation: probabilities and calibration",
    "releval.metrics.exposure": "Recommendation: exposure over the catalogue",
    "releval.metrics.beyond": "Recommendation: beyond accuracy, per user",
    "releval.metrics.propensity": "Recommendation: propensity-scored, for the long tail",
}
LEVELS = {  # (level, aggregate) -> (short, long)
    ("query", "mean"): ("query, mean", "query: one value per query, averaged over the queries "
                                       "where it is defined"),
    ("query", "sum"): ("query, sum", "query: one value per query, summed over the queries (as "
                                     "trec_eval)"),
    ("query", "geometric"): ("query, geometric mean", "query: one value per query, their "
                                                      "geometric mean over the queries where "
                                                      "it is defined (as trec_eval's gm_map)"),
    ("system", "mean"): ("system", "system: one value per system, pooled over the queries that "
                                   "contribute"),
}


def markdown(text: str) -> str:
    """Docstring text as markdown: whitespace collapsed, ``code`` as `code`."""
    return re.sub(r"``(.+?)``", r"`\1`", " ".join(text.split()))


def paragraphs(doc: str | None) -> list[str]:
    """A docstring's paragraphs, each as one markdown line."""
    return [markdown(p) for p in re.split(r"\n\s*\n", doc or "") if p.strip()]


def slug(heading: str) -> str:
    """The anchor a markdown renderer gives a heading (GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _value(v: object) -> str:
    return "none" if v is None else repr(v)


def _option(name: str, o: Option) -> str:
    return f"`{name}` = `{_value(o.default)}` ({o.rule})"


def names(name: str, f: Family) -> list[str]:
    """How the family is written: with or without a cutoff, or with its @-option."""
    if name in AT_OPTIONS:
        option, values = AT_OPTIONS[name]
        levels = ", ".join(f"{v:g}" for v in values)
        return [f"`{name}@x` = `{name}({option}=x)`", f"`{name}` (the levels {levels})"]
    forms = {"required": [f"{name}@k"], "optional": [name, f"{name}@k"], "none": [name]}
    return [f"`{n}`" for n in forms[f.cutoff]]


K = 987654321  # a cutoff no one writes: trec_eval's name for it, with "k" in its place


def trec_names(name: str, f: Family) -> list[str]:
    """trec_eval's name for each form of the family's measures (an @-option at 0.5)."""
    cutoffs = {"required": [K], "optional": [None, K], "none": [None]}[f.cutoff]
    params = {AT_OPTIONS[name][0]: 0.5} if name in AT_OPTIONS else {}
    shown = []
    for cutoff in cutoffs:
        m = f.make(name, cutoff, params, 1, name)
        if (trec := f.trec(m)) is not None:
            shown.append(f"`{trec}` (`{m.name}`)".replace(str(K), "k"))
    return shown


def read_as(name: str) -> list[str]:
    """The other names the parser reads as this family: aliases and trec_eval's."""
    aliases = [f"`{a}`" for a, target in ALIASES.items() if target == name and a != name]
    trec = [f"`{base}.k`" if defaults else f"`{base}`"
            for base, (family, defaults) in TREC_NAMES.items() if family == name and base != name]
    return aliases + trec


def family(name: str, f: Family) -> list[str]:
    """One family's entry."""
    options = [_option(o, v) for o, v in f.params.items()]
    lines = [f"### `{name}`", "",
             f"- names: {', '.join(names(name, f))}"]
    if other := read_as(name):
        lines.append(f"- also read as: {', '.join(other)}")
    lines += [f"- options: {'; '.join(options) if options else 'none'}",
              f"- level: {LEVELS[f.level, f.aggregate][1]}",
              f"- better: {f.better}",
              f"- trec_eval: {', '.join(trec_names(name, f)) or '—'}",
              (f"- not applicable when: {f.available.missing}" if f.available.missing
               else "- applies to every run")]
    return [*lines, "", markdown(f.definition), ""]


def groups() -> dict[str, list[str]]:
    """The families by the module that registers them, in ``GROUPS`` order."""
    found: dict[str, list[str]] = {}
    for name, f in MEASURES.items():
        found.setdefault(f.compute.__module__, []).append(name)
    order = [m for m in GROUPS if m in found] + [m for m in found if m not in GROUPS]
    return {m: found[m] for m in order}


def _title(module: str) -> str:
    if module in GROUPS:
        return GROUPS[module]
    first = paragraphs(sys.modules[module].__doc__)[:1] or [module]
    return first[0].split(". ")[0].rstrip(".")


def render() -> str:
    """The generated part of docs/measures.md, ``BEGIN`` and ``END`` included."""
    by_module = groups()
    lines = [BEGIN, "", "## The measures", "",
             "| family | names | options | level | better | trec_eval |",
             "|---|---|---|---|---|---|"]
    for members in by_module.values():
        for name in members:
            f = MEASURES[name]
            options = ", ".join(f"`{o}`" for o in f.params) or "—"
            trec = ", ".join(t if name in AT_OPTIONS else t.split(" ")[0]
                             for t in trec_names(name, f)) or "—"
            lines.append(f"| [{name}](#{slug(name)}) | {', '.join(names(name, f))} | {options} | "
                         f"{LEVELS[f.level, f.aggregate][0]} | {f.better} | {trec} |")
    lines += ["", "### Parameters several families share", ""]
    lines += [f"- {_option(n, o)}" for n, o in SHARED.items()]
    lines += ["", f"nDCG's gains (`dcg`, `gains`): {markdown(gain.__doc__)}", "",
              f"`judged_only`: {' '.join(paragraphs(condensed.__doc__)[:2])}", ""]
    for module, members in by_module.items():
        lines += [f"## {_title(module)}", ""]
        for p in paragraphs(sys.modules[module].__doc__):
            lines += [p, ""]
        for name in members:
            lines += family(name, MEASURES[name])
    lines.append(END)
    return "\n".join(lines) + "\n"


def generated(text: str) -> str:
    """The generated part of a document (``BEGIN`` to ``END``, both included)."""
    if BEGIN not in text or END not in text:
        raise ValueError("no generated measure reference in the document (its markers are "
                         "missing)")
    start, end = _bounds(text)
    return text[start:end].rstrip("\n") + "\n"


def _bounds(text: str) -> tuple[int, int]:
    start = text.index(BEGIN)
    end = text.index(END, start) + len(END)
    return start, end + (text[end:end + 1] == "\n")


def splice(text: str) -> str:
    """``text`` with its generated part replaced by ``render()``."""
    generated(text)  # the markers are there
    start, end = _bounds(text)
    return text[:start] + render() + text[end:]


def main(argv: list[str]) -> int:
    if not argv:
        sys.stdout.write(render())
        return 0
    if len(argv) == 2 and argv[0] == "--write":
        path = Path(argv[1])
        path.write_text(splice(path.read_text()))
        return 0
    sys.stderr.write("usage: python -m releval.metrics.reference [--write docs/measures.md]\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
