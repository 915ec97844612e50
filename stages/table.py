"""The stage table: every stage of the pipeline, once, and dvc.yaml generated from it.

A stage's row names what its module cannot say itself: the params keys it reads, the
params list it runs once per item of (``foreach``), the pinned input slots it reads through
``releval.project.inputs.pinned`` and the artifacts a library module reads by their catalog
path (``also``). What it reads is its module's ``Inputs`` (``releval.artifacts.reads``
fields); what it writes, the catalog's entries it writes (``releval.artifacts.written_by``);
the code it runs, its import closure (``releval.project.closure``). ``python -m
stages.table`` (``make dag``) writes dvc.yaml; tests/test_dvc_yaml.py holds the file equal
to ``render()``.

Adding a stage is a row here and a module with ``Inputs``, ``Outputs`` and ``run``; adding an
input, a field in ``Inputs``.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from releval import artifacts
from releval.project.closure import PACKAGE_ROOT, stage_files

FOREACH = "${key}"


@dataclass(frozen=True)
class Stage:
    name: str
    params: tuple[str, ...]
    foreach: str | None = None  # params key: one stage per item, ``--system ${key}``
    pinned: tuple[str, ...] = ()  # slots under data/input/ it reads (errors in users' words)
    also: tuple[str, ...] = ()  # artifacts a library module it runs reads by catalog path
    always_changed: bool = False

    @property
    def cmd(self) -> str:
        item = f" --system {FOREACH}" if self.foreach else ""
        return f"python -m stages {self.name} --params params.yaml{item}"


SLOTS = ("prepare", "judgments", "adjudicator", "automatic", "review", "fixture", "runs",
         "logged", "policy", "reference")  # releval.project.inputs, in its order

STAGES = (
    Stage("inputs", ("prepare.source", "prepare.path", "judgments.source", "judgments.files",
                     "judgments.adjudicator", "judgments.automatic", "failures.review",
                     "fixture.path", "candidates.systems", "offpolicy.log",
                     "offpolicy.policy", "offpolicy.reference"), always_changed=True),
    Stage("prepare", ("base.seed", "prepare", "candidates.depth", "split", "recommend",
                      "offpolicy.log", "offpolicy.slate_size"),
          pinned=("prepare", "logged")),
    Stage("split", ("split", "base.seed", "prepare.source", "prepare.path", "recommend",
                    "candidates", "query_set", "evaluate.splits", "no_answer.tag")),
    Stage("candidates", ("base.executor", "base.dask", "base.shards", "candidates.depth",
                         f"candidates.systems.{FOREACH}", "prepare.source",
                         "recommend.exclude_seen"),
          foreach="candidates.systems", pinned=(f"runs/{FOREACH}",),
          also=("raw.external_run", "raw.retrained_run")),
    Stage("selftest", ("base.seed", "selftest", "prepare.source", "prepare.max_grade",
                       "recommend.exclude_seen", "candidates.depth", "candidates.systems",
                       "fusion.systems", "evaluate.rel", "evaluate.measures")),
    Stage("pool", ("base.seed", "prepare.source", "candidates.systems", "pool"),
          also=("selftest.totals",)),
    Stage("judgments", ("base.seed", "prepare.source", "prepare.max_grade",
                        "judgments.source", "judgments.files", "judgments.judges",
                        "judgments.noise", "judgments.corrupt", "judgments.method",
                        "judgments.max_spread", "judgments.low_agreement",
                        "judgments.adjudicator"),
          pinned=("judgments", "adjudicator")),
    Stage("fuse", ("candidates.depth", "prepare.max_grade", f"fusion.systems.{FOREACH}"),
          foreach="fusion.systems"),
    Stage("fixture", ("base.seed", "candidates", "fusion", "fixture", "compare.measures",
                      "compare.min_effect", "compare.resamples", "compare.alpha",
                      "evaluate.rel", "prepare.max_grade"), pinned=("fixture",)),
    Stage("evaluate", ("base.executor", "base.dask", "base.shards", "base.seed",
                       "prepare.source", "recommend", "evaluate", "pool.splits", "slices",
                       "compare.strata", "no_answer.tag", "prepare.max_grade", "candidates",
                       "fusion")),
    Stage("autojudge", ("base.seed", "prepare.max_grade", "judgments.automatic", "evaluate",
                        "no_answer.tag", "compare.measures", "compare.baseline",
                        "compare.candidate", "compare.alpha", "candidates", "fusion.systems"),
          pinned=("automatic",)),
    Stage("compare", ("base.executor", "base.dask", "base.shards", "base.seed", "evaluate.rel",
                      "compare", "candidates.systems", "fusion.systems", "slices.dimensions",
                      "slices.min_n", "health.cost", "judgments.source", "prepare.source",
                      "plan.power")),
    Stage("slices", ("base.seed", "evaluate.rel", "slices.min_n", "slices.dimensions",
                     "compare", "plan.power")),
    Stage("safety", ("evaluate.splits", "no_answer", "safety", "candidates.systems",
                     "fusion.systems")),
    Stage("health", ("health", "candidates.systems", "fusion.systems", "evaluate.splits")),
    Stage("failures", ("prepare.source", "recommend.exclude_seen", "evaluate.rel",
                       "evaluate.splits", "no_answer.tag", "compare.baseline",
                       "compare.candidate", "compare.strata", "candidates", "fusion.systems",
                       "failures"), pinned=("review",)),
    Stage("offpolicy", ("base.seed", "offpolicy", "candidates.systems", "fusion.systems"),
          pinned=("logged", "policy", "reference")),
    Stage("gate", ("compare.baseline", "compare.candidate", "gate", "judgments.automatic",
                   "candidates.systems", "fusion.systems", "evaluate.splits", "query_set")),
    Stage("report", ("candidates.systems", "fusion.systems", "slices.min_n", "gate",
                     "judgments.automatic")),
)
STAGE = {s.name: s for s in STAGES}


def data_deps(stage: Stage) -> list[str]:
    """What ``stage`` reads, as dvc.yaml deps: each ``Inputs`` field's artifact (a per-system
    one as the folders of every system, a per-source one as both fused systems' runs), its
    pinned slots, then ``also``."""
    module = importlib.import_module(f"stages.{stage.name}")
    deps: list[str] = []
    for f in dataclasses.fields(module.Inputs):
        read = f.metadata.get("read")
        if read is None or not read.dep:
            continue
        path = artifacts.get(read.artifact).path
        if read.each == "system":
            deps += [artifacts.group_folder("candidates"), artifacts.group_folder("fused")]
        elif read.each in ("candidate", "fused"):
            deps.append(artifacts.group_folder("candidates" if read.each == "candidate"
                                               else "fused"))
        elif read.each == "source":
            deps += [path.replace("{system}", "${item." + side + "}")
                     for side in ("lexical", "dense")]
        else:
            path = path.replace("{system}", FOREACH)
            deps.append(str(Path(path).parent) if read.folder else path)
    deps += [f"data/input/{slot}" for slot in stage.pinned]
    deps += [artifacts.get(name).path for name in stage.also]
    return list(dict.fromkeys(deps))


PROPERTIES = {"recommendation": "prepare.source"}  # a ``when`` property, by the key it reads


def switches(stage: Stage) -> list[str]:
    """The params keys that switch ``stage``'s inputs on (``reads(…, when=)``) and its row
    does not list already (itself or a section holding it)."""
    module = importlib.import_module(f"stages.{stage.name}")
    listed = list(stage.params)
    keys = []
    for f in dataclasses.fields(module.Inputs):
        read = f.metadata.get("read")
        key = read and read.when and PROPERTIES.get(read.when, read.when)
        if key and not any(key == k or key.startswith(k + ".") for k in listed):
            listed.append(key)
            keys.append(key)
    return keys


def outs(stage: Stage) -> tuple[list, list]:
    """(outs, metrics) of ``stage``: the catalog's entries it writes, each with its flags;
    the inputs stage's, one persisted folder per slot."""
    if stage.name == "inputs":
        return [{f"data/input/{slot}": {"persist": True}} for slot in SLOTS], []
    entries: tuple[list, list] = ([], [])
    for a in artifacts.written_by(stage.name):
        flags = {k: v for k, v in (("cache", a.cache), ("persist", a.persist))
                 if v != (k == "cache")}
        path = a.path.replace("{system}", FOREACH)
        entries[a.metric].append({path: flags} if flags else path)
    return entries


def block(stage: Stage) -> dict:
    """``stage``'s dvc.yaml block."""
    body: dict = {"cmd": stage.cmd}
    if stage.always_changed:
        body["always_changed"] = True
    body["deps"] = sorted(stage_files(stage.name, f"stages.{stage.name}")) + data_deps(stage)
    body["params"] = list(stage.params) + switches(stage)
    written, metrics = outs(stage)
    body["outs"] = written
    if metrics:
        body["metrics"] = metrics
    return {"foreach": "${" + stage.foreach + "}", "do": body} if stage.foreach else body


PLOTS_NOTE = ("# `dvc plots show` / `dvc plots diff REV`: the report stage writes these tables\n"
              "# (releval.report.dvc_plots), baseline and candidate side by side.\n")
PLOTS = (
    {"reports/plots/per_query_delta.csv": {
        "title": "Per-query difference, candidate − baseline (gate measure), sorted",
        "template": "linear", "x": "rank", "y": "delta"}},
    {"R@k, baseline and candidate": {
        "template": "linear", "x": "k",
        "y": {"reports/plots/recall_at_k.csv": ["baseline", "candidate"]}}},
    {"nDCG@k, baseline and candidate": {
        "template": "linear", "x": "k",
        "y": {"reports/plots/ndcg_at_k.csv": ["baseline", "candidate"]}}},
    {"reports/plots/slices.csv": {
        "title": "Slices, candidate − baseline (gate measure)",
        "template": "bar_horizontal", "x": "delta", "y": "slice"}},
    {"History of the headline measure over the kept runs (reports/runs), live and fixture": {
        "template": "linear", "x": "run",
        "y": {"reports/plots/history.csv": ["baseline", "candidate", "fixture_baseline",
                                            "fixture_candidate"]}}},
)
HEADER = ("# Generated by `python -m stages.table` (make dag) from the stage table\n"
          "# (stages/table.py), the stages' Inputs and the artifact catalog: edit those.\n")


def render() -> str:
    """dvc.yaml's text: every stage's block, then ``PLOTS``."""
    stages = yaml.safe_dump({"stages": {s.name: block(s) for s in STAGES}},
                            sort_keys=False, width=92)
    plots = yaml.safe_dump({"plots": list(PLOTS)}, sort_keys=False, width=92,
                           allow_unicode=True)
    return HEADER + stages + "\n" + PLOTS_NOTE + plots


if __name__ == "__main__":
    target = PACKAGE_ROOT / (sys.argv[1] if len(sys.argv) > 1 else "dvc.yaml")
    target.write_text(render())
    print(f"{target.name}: {len(STAGES)} stages")
