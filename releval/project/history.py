"""The ledger as a history: the kept runs oldest first, and what moved from one to the next.

Each run's receipt keeps its figures (live window: ``receipt.figures``; pinned fixture:
``receipt.fixture``). When a run's receipt is written, ``over_time`` sets it against the
run before it in the ledger: the uncontrolled decomposition per system and measure
(``releval.decision.over_time.compare_figures``) and, per system and measure, the
attribution of the
change of the mean between the two instruments, with e = ``compare.min_effect``:

- ``system``: the pinned fixture's mean moved by at least e: the system changed (code,
  model, params; for a fused system also its fusion, tuned on each run's live window),
  whatever the live window did;
- ``drift``: only the live window's mean moved by at least e: a change of the traffic or
  the corpus, to investigate before blaming the system;
- ``stable``: neither moved by e; ``unattributed``: the live mean moved and there is no
  fixture to tell (none in one of the runs, or the fixture itself changed); ``n/a``: the
  runs do not both have a live mean.

A run's **lineage** (``lineage``) is what makes its figures comparable with another run's:
the mode (retrieval or recommendation), the data source (the params' ``prepare`` section, less
the keys a scheduled run's window sets, as a digest) and the compared measures. Runs of
different lineages are never set against each other: ``previous`` finds the newest run of
the same lineage, and the report draws one lineage at a time.

``entries`` reads the ledger for ``releval history``, the report's history section and
``reports/plots/history.csv``: frozen typed rows (``releval.documents.ledger``: an ``Entry``
per receipt it reads as the ``Receipt`` model, an ``Unreadable`` per file it sets aside),
read by attribute. ``reuse`` says how many decisions the newest run's evaluated set has
informed (``releval.decision.looks``); ``taken`` gives the ledger's looks for it.

The writer's side (``previous``, ``lineage``'s argument, ``over_time``) reads and builds the
receipts as the dicts they are written from; ``previous`` skips a receipt ``entries`` sets
aside.
"""

from __future__ import annotations

from pathlib import Path

from releval import artifacts
from releval.decision import looks
from releval.decision.compare import canonical
from releval.decision.over_time import compare_figures, figure_of
from releval.documents.ledger import Entry, Lineage, Row, Unreadable
from releval.documents.receipt import Headline, Receipt
from releval.errors import InputError
from releval.numbers import formatted
from releval.params import parse_params
from releval.project.receipt import digest, read

FIXTURE_INPUT = artifacts.at("input.slot").format(slot="fixture")
SYSTEM, DRIFT, STABLE, UNATTRIBUTED = "system", "drift", "stable", "unattributed"
NOT_APPLICABLE = "n/a"
TOL = 1e-12


# why a receipt this releval cannot read is listed without its figures
SET_ASIDE = ("set aside (its figures cannot be read, so no run is compared with it and "
             "nothing is counted from it)")
ENTRY = ("code.commit", "code.dirty", "work.queries_evaluated", "inputs")  # what a row reads
BEFORE = ("inputs",)  # what ``over_time`` reads of the run before


def _read(path: Path, needs: tuple[str, ...]) -> Receipt:
    """The receipt at ``path`` (``read``) as its model; InputError where ``read`` refuses it
    or it is not of the model's shape (the first bad key named)."""
    return Receipt.validated(read(path, needs), str(path))


def kept(folder: Path) -> list[tuple[Path, Receipt | str]]:
    """The ledger's receipts oldest first (file names start with the finish time): (path,
    receipt), or (path, why it is set aside: ``SET_ASIDE``, then why it cannot be read:
    unreadable, edited, a receipt of another schema and the fields it lacks, or not of the
    receipt model's shape)."""
    out: list[tuple[Path, Receipt | str]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            out.append((path, _read(path, ENTRY)))
        except InputError as exc:
            out.append((path, f"{SET_ASIDE}: {exc.rule}"))
    return out


def lineage(doc: dict) -> Lineage:
    """The receipt's lineage: ``mode`` (retrieval | recommendation | ?), ``data`` (its
    ``prepare.source``, and ``prepare.path`` where one is set, else ``prepare.qrels``),
    ``measures`` (the compared measures, canonical), ``key`` (a digest of the mode, the
    whole ``prepare`` section less the keys of the run's schedule window, and the measures)
    and ``derived``: what the receipt lacked and how it was made up instead (empty when
    nothing was). A receipt without
    params this version can read keeps its raw ``prepare`` section (if any), and its measures
    are its headline measure alone; its mode is ``?``, so it shares a lineage only with runs
    as unreadable."""
    raw = (doc["receipt"].get("params") or {}).get("values")
    prepare = dict((raw or {}).get("prepare") or {})
    window = ((doc.get("run") or {}).get("schedule") or {}).get("window") or {}
    for key in window:
        if key.startswith("prepare."):
            prepare.pop(key.removeprefix("prepare."), None)
    derived = []
    try:
        p = None if raw is None else parse_params(raw, "receipt")
    except InputError:
        p = None
    if p is not None:
        mode = "recommendation" if p.recommendation else "retrieval"
        measures = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)[0]
    else:
        mode = "?"
        head = ((doc.get("run") or {}).get("headline") or {}).get("measure")
        measures = [head] if head else []
        derived.append("no params this version can read: mode unknown, the headline measure "
                       "alone")
    if "source" not in prepare:
        derived.append("no prepare.source recorded: the default data source assumed")
    where = prepare.get("path") or prepare.get("qrels")  # runs only: judged by these qrels
    data = str(prepare.get("source", "demo")) + (f":{where}" if where else "")
    key = digest({"mode": mode, "prepare": prepare, "measures": sorted(measures)})[:12]
    return Lineage(mode=mode, data=data, measures=list(measures), key=key, derived=derived)


def previous(folder: Path, of: Lineage | None = None) -> dict | None:
    """The newest readable receipt in the ledger (of the lineage ``of``, a ``lineage``, where
    given) as written, or None; reads from the newest back, so a long ledger of one lineage
    costs one file."""
    for path in sorted(folder.glob("*.json"), reverse=True):
        try:
            doc = read(path, BEFORE)
            Receipt.check(doc, str(path))
        except InputError:
            continue
        if of is None or lineage(doc).key == of.key:
            return doc
    return None


def _effects(doc: dict) -> dict[str, float]:
    raw = doc["receipt"]["params"]["values"]
    try:
        p = parse_params(raw, "receipt")
    except InputError:
        return {}
    names, effect = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)
    return effect if isinstance(effect, dict) else dict.fromkeys(names, effect)


def _mean(block: dict | None, system: str, measure: str) -> float | None:
    return figure_of(block, system, measure).get("mean")


def _moved(delta: float, effect: float) -> bool:
    """|Δ| ≥ e, and beyond rounding: with e = 0 an unchanged figure did not move."""
    return abs(delta) >= effect and abs(delta) > TOL


def _attribute(live: float | None, fixture: float | None, effect: float,
               fixture_why: str | None) -> tuple[str, str]:
    moved = {k: formatted(v, "+.4f") for k, v in (("live", live), ("fixture", fixture))
             if v is not None}
    if fixture is not None and _moved(fixture, effect):
        return SYSTEM, (f"the pinned fixture moved {moved['fixture']} (|Δ| ≥ {effect:g}): the "
                        "system changed")
    if live is None:
        return NOT_APPLICABLE, "the runs do not both have a live mean"
    if not _moved(live, effect):
        if fixture is None:
            return STABLE, f"live {moved['live']}, within ±{effect:g} ({fixture_why})"
        return STABLE, (f"live {moved['live']}, fixture {moved['fixture']}: both within "
                        f"±{effect:g}")
    if fixture is None:
        return UNATTRIBUTED, (f"live {moved['live']} and {fixture_why}: cannot tell the system "
                              "from the traffic")
    return DRIFT, (f"live {moved['live']} while the pinned fixture stayed "
                   f"({moved['fixture']}): drift of the traffic or the corpus, to investigate")


def _fixture_why(before: dict, after: dict) -> str | None:
    a, b = before["receipt"], after["receipt"]
    if not a.get("fixture") or not b.get("fixture"):
        return "no pinned fixture in both runs"
    if a["inputs"].get(FIXTURE_INPUT) != b["inputs"].get(FIXTURE_INPUT):
        return "the pinned fixture itself changed"
    return None


def over_time(before: dict | None, after: dict) -> dict:
    """``after``'s receipt against ``before``'s (None: the first run): the decomposition
    block (``releval.decision.over_time.compare_figures``) with ``previous`` (its sha256[:12]
    and finish time) and ``attribution``: system -> measure -> {live, fixture, verdict,
    why}."""
    if before is None:
        return {"controlled": False, "comparable": False, "previous": None,
                "why": "the first run of its lineage in the ledger: nothing earlier to "
                       "compare with"}
    then, now = before["receipt"], after["receipt"]
    block = compare_figures(then.get("figures"), now.get("figures"))
    block["previous"] = {"sha256": before["sha256"][:12],
                         "finished_at": before.get("run", {}).get("finished_at")}
    why = _fixture_why(before, after)
    effects = _effects(after)
    attribution: dict[str, dict] = {}
    for system, measures in ((now.get("figures") or {}).get("systems") or {}).items():
        for measure in measures:
            live = _delta(_mean(then.get("figures"), system, measure),
                          _mean(now.get("figures"), system, measure))
            fixture = None if why else _delta(_mean(then.get("fixture"), system, measure),
                                              _mean(now.get("fixture"), system, measure))
            verdict, reason = _attribute(live, fixture, effects.get(measure, 0.0),
                                         why or "the fixture has no figure for it")
            attribution.setdefault(system, {})[measure] = {
                "live": live, "fixture": fixture, "verdict": verdict, "why": reason}
    block["attribution"] = attribution
    return block


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def entries(folder: Path) -> list[Row]:
    """One row per file of the ledger, oldest first (``releval.documents.ledger``): an
    ``Entry`` per receipt it reads (``kept``), with its ``lineage``; an ``Unreadable`` (run,
    file, problem) per file it sets aside."""
    rows: list[Row] = []
    for i, (path, doc) in enumerate(kept(folder), start=1):
        if isinstance(doc, str):
            rows.append(Unreadable(run=i, file=path.name, problem=doc))
            continue
        r, run = doc.receipt, doc.run
        head = run.headline or Headline()
        rows.append(Entry(run=i, file=path.name, sha256=doc.sha256[:12],
                          finished_at=run.finished_at, schedule=run.schedule,
                          commit=(r.code["commit"] or "")[:10], dirty=r.code["dirty"],
                          queries=r.work["queries_evaluated"], inputs=r.inputs,
                          measure=head.measure, baseline=head.baseline,
                          candidate=head.candidate, values=head.systems,
                          decision=head.decision, failed=head.failed,
                          controlled=head.controlled, figures=r.figures, fixture=r.fixture,
                          over_time=run.over_time,
                          lineage=lineage(doc.model_dump(by_alias=True, exclude_unset=True)),
                          looks=r.looks))
    return rows


def taken(rows: list[Row]) -> list[tuple[list[dict] | None, str | None]]:
    """Each row's looks (as dicts; None: unknown, for a receipt without looks and a file set
    aside) and finish time, oldest first: what ``releval.decision.looks.from_ledger`` reads."""
    return [(None if r.looks is None else [look.model_dump(by_alias=True) for look in r.looks],
             r.finished_at) if isinstance(r, Entry) else (None, None) for r in rows]


def reuse(rows: list[Row]) -> str | None:
    """How many decisions the evaluated set of the newest run with looks has informed, over
    the ledger's ``entries`` (``looks.sentence``); None when no run recorded looks."""
    newest = next((r for r in reversed(rows) if isinstance(r, Entry) and r.looks), None)
    if newest is None:
        return None
    doc = looks.from_ledger(taken(rows))
    return looks.sentence(looks.count(doc, newest.looks[0].model_dump(by_alias=True),
                                      (newest.finished_at or "")[:10]))
