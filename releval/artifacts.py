"""The artifact catalog: every file the pipeline writes, once, by name.

An artifact's name is ``<group>.<key>``: the group is its folder's (``raw``, ``evaluate``,
``reports``, …), the key is the field of the writing stage's ``Outputs`` that holds it. Each
entry gives its path relative to the project root (``{system}`` / ``{slot}`` stand for one
folder per system / pinned input), its format, the Great Expectations suite that checks it
between stages (with the params keys the suite takes), the document model of a JSON
document (``module:Class``, imported when read), the stage that writes it (None: the flow),
and why a rerun of the same inputs may write other bytes (``varies``: kept apart in the
receipt). dvc.yaml's outs and the stages' command lines are held against this catalog by
``tests/test_artifacts.py``.

A leaf: standard library only, imported by every stage.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

LATENCY = "measured latencies"
CARRIED = "counts rows already accepted by earlier runs"


@dataclass(frozen=True)
class Artifact:
    name: str
    path: str
    format: str  # parquet | json | csv | trec | md | html | xml | dir | log
    suite: str | None = None
    suite_params: tuple[tuple[str, str], ...] = ()  # suite keyword -> params.yaml dotted key
    document: str | None = None  # "module:Class", the pydantic model of a JSON document
    stage: str | None = None  # the dvc.yaml stage that writes it; None: the flow
    varies: str | None = None  # why a rerun of the same inputs may differ
    cache: bool = True  # False: kept in git, not in DVC's cache (a small document)
    persist: bool = False  # kept when its stage re-runs (the stage appends to it)
    metric: bool = False  # a ``dvc metrics`` file

    @property
    def file(self) -> str:
        """The file (or folder) name, as it sits in its stage's output folder."""
        return PurePosixPath(self.path).name

    @property
    def pattern(self) -> str:
        """The path with every ``{placeholder}`` as ``*`` (fnmatch, as in dvc.lock)."""
        return re.sub(r"\{[a-z]+\}", "*", self.path)


def _group(group: str, folder: str, stage: str | None, *entries: Artifact) -> list[Artifact]:
    return [replace(e, name=f"{group}.{e.name}", path=f"{folder}/{e.path}", stage=stage)
            for e in entries]


A = Artifact
MAX_GRADE = (("max_grade", "prepare.max_grade"),)
RUN_FILES = (A("run", "run.parquet", "parquet", "run"),
             A("latency", "latency.parquet", "parquet", varies=LATENCY),
             A("stats", "run_stats.json", "json", cache=False,
               varies="holds measured latency percentiles",
               document="releval.documents.run_stats:RunStats"))

CATALOG: dict[str, Artifact] = {a.name: a for a in [
    *_group("input", "data/input", "inputs", A("slot", "{slot}", "dir")),
    *_group("raw", "data/raw", "prepare",
            A("documents", "documents.parquet", "parquet", "documents"),
            A("queries", "queries.parquet", "parquet", "queries"),
            A("judgments", "judgments.parquet", "parquet", "qrels", MAX_GRADE),
            A("given_split", "given_split.parquet", "parquet"),
            A("answers", "answers.parquet", "parquet"),
            A("must_not_return", "must_not_return.parquet", "parquet"),
            A("external_run", "external_run.trec", "trec"),
            A("retrained_run", "retrained_run.parquet", "parquet"),
            A("interactions", "interactions.parquet", "parquet", "interactions"),
            A("team_runs", "team_runs.parquet", "parquet", "team_runs"),
            A("horizons", "horizons.parquet", "parquet", "horizons"),
            A("source", "source.json", "json", cache=False,
              document="releval.documents.source:Source")),
    *_group("split", "data/split", "split",
            A("split", "split.parquet", "parquet", "split"),
            A("report", "split_report.json", "json", cache=False,
              document="releval.documents.split_report:SplitReport")),
    *_group("candidates", "data/candidates/{system}", "candidates", *RUN_FILES,
            A("seeds", "seeds.parquet", "parquet", "seeds")),
    *_group("selftest", "data/selftest", "selftest",
            A("rows", "selftest.parquet", "parquet", "selftest"),
            A("differential", "differential.parquet", "parquet"),
            A("totals", "selftest.json", "json", cache=False,
              document="releval.documents.selftest:SelfTest")),
    *_group("pool", "data/pool", "pool",
            A("pool", "pool.parquet", "parquet", "pool", persist=True),
            A("identity", "identity.json", "json", cache=False,
              document="releval.documents.identity:Identity"),
            A("judging", "judging.csv", "csv"),
            A("tasks", "label_studio_tasks.json", "json",
              document="releval.documents.tasks:Tasks"),
            A("label_config", "label_config.xml", "xml")),
    *_group("judgments", "data/judgments", "judgments",
            A("qrels", "qrels.parquet", "parquet", "qrels", MAX_GRADE),
            A("judgments", "judgments.parquet", "parquet", persist=True),
            A("quarantine", "quarantine.csv", "csv",
              varies="rows already accepted by earlier runs differ"),
            A("adjudication", "adjudication.csv", "csv"),
            A("agreement", "agreement.json", "json", cache=False,
              document="releval.documents.agreement:Agreement"),
            A("ingest", "ingest.json", "json", cache=False, varies=CARRIED,
              document="releval.documents.ingest:Ingest")),
    *_group("fused", "data/fused/{system}", "fuse", *RUN_FILES),
    *_group("fixture", "data/fixture", "fixture",
            A("per_query", "per_query.parquet", "parquet", "metrics"),
            A("summary", "fixture.json", "json",
              document="releval.documents.fixture:FixtureSummary")),
    *_group("evaluate", "data/evaluate", "evaluate",
            A("per_query", "per_query.parquet", "parquet", "metrics"),
            A("metrics", "metrics.json", "json", cache=False, metric=True,
              document="releval.documents.metrics:Metrics"),
            A("summary", "summary.json", "json", cache=False,
              document="releval.documents.summary:Summary"),
            A("route_hits", "route_hits.parquet", "parquet"),
            A("labels", "labels.parquet", "parquet", "labels"),
            A("unjudged", "unjudged.parquet", "parquet"),
            A("curves", "curves.parquet", "parquet"),
            A("reliability", "reliability.parquet", "parquet", "reliability"),
            A("seeds", "seeds.parquet", "parquet", "seed_metrics"),
            A("horizons", "horizons.parquet", "parquet", "horizon_metrics")),
    *_group("autojudge", "data/autojudge", "autojudge",
            A("automatic", "automatic.parquet", "parquet", "automatic_labels", MAX_GRADE),
            A("report", "agreement_auto.json", "json", cache=False,
              document="releval.documents.agreement_auto:AgreementAuto"),
            A("per_query", "per_query.parquet", "parquet")),
    *_group("compare", "data/compare", "compare",
            A("comparison", "comparison.json", "json", cache=False,
              document="releval.documents.comparison:Comparison"),
            A("diff", "per_query_diff.parquet", "parquet", "diff")),
    *_group("slices", "data/slices", "slices",
            A("table", "slices.parquet", "parquet", "slices"),
            A("summary", "slices.json", "json", cache=False,
              document="releval.documents.slices_summary:SlicesSummary")),
    *_group("safety", "data/safety", "safety",
            A("violations", "violations.parquet", "parquet", "violations"),
            A("report", "safety.json", "json", cache=False,
              document="releval.documents.safety:Safety")),
    *_group("health", "data/health", "health",
            A("table", "health.parquet", "parquet", "health",
              varies=LATENCY + ", and embedding-cache hits (a rerun finds the cache warm)"),
            A("report", "health.json", "json", cache=False,
              document="releval.documents.health:Health",
              varies=LATENCY + ", and embedding-cache hits (a rerun finds the cache warm)")),
    *_group("failures", "data/failures", "failures",
            A("failures", "failures.parquet", "parquet", "failures"),
            A("summary", "summary.parquet", "parquet"),
            A("worksheet", "worksheet.csv", "csv"),
            A("quarantine", "review_quarantine.csv", "csv"),
            A("report", "failures.json", "json", cache=False,
              document="releval.documents.failures:Failures")),
    *_group("offpolicy", "data/offpolicy", "offpolicy",
            A("estimates", "estimates.parquet", "parquet", "offpolicy_estimates"),
            A("weights", "weights.parquet", "parquet"),
            A("report", "offpolicy.json", "json", cache=False,
              document="releval.documents.offpolicy:OffPolicyDoc")),
    *_group("gate", "data/gate", "gate",
            A("decision", "decision.json", "json", cache=False,
              document="releval.documents.decision:Decision",
              varies="the latency rule reads " + LATENCY)),
    *_group("reports", "reports", "report",
            A("summary", "summary.md", "md", cache=False, varies="pages showing " + LATENCY),
            A("decision", "decision.md", "md", cache=False, varies="pages showing " + LATENCY),
            A("html", "index.html", "html", cache=False, varies="pages showing " + LATENCY),
            A("plots", "plots", "dir", cache=False, varies="pages showing " + LATENCY)),
    *_group("reports", "reports", None,
            A("receipt", "receipt.json", "json", document="releval.documents.receipt:Receipt"),
            A("ledger", "runs", "dir"),
            A("looks", "looks.json", "json", document="releval.documents.looks:LooksFile"),
            A("reproduced", "reproduced.json", "json",
              document="releval.documents.receipt:Receipt"),
            A("params", "params", "dir"),
            A("log", "run.log", "log"),
            A("reproduce_log", "reproduce.log", "log")),
    *_group("validation", "data", None, A("reports", "validation", "dir")),
    *_group("cache", "data", None, A("root", "cache", "dir")),
]}


def get(name: str) -> Artifact:
    """The catalog entry ``name``; KeyError naming the known ones when there is none."""
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f"no artifact {name!r} in the catalog ({', '.join(CATALOG)})") from None


def path(name: str, root: str | Path = ".", **folders: str) -> Path:
    """``name``'s path under ``root``; ``folders`` fill its placeholders (``system=…``)."""
    return Path(root) / get(name).path.format(**folders)


def at(name: str) -> str:
    """``name``'s path relative to the project root, as dvc.yaml writes it (an argparse
    default)."""
    return get(name).path


def within(folder: str | Path, name: str) -> Path:
    """``name``'s file in ``folder``, the output folder a stage's command line names."""
    return Path(folder) / get(name).file


def folder(group: str) -> str:
    """The folder of ``group``'s artifacts relative to the project root (``data/raw``)."""
    folders = {str(PurePosixPath(a.path).parent) for n, a in CATALOG.items()
               if n.split(".")[0] == group}
    if len(folders) != 1:
        raise KeyError(f"artifact group {group!r} has no single folder: {sorted(folders)}")
    return folders.pop()


def group_folder(group: str) -> str:
    """The folder holding one folder per system (``data/candidates``) for a per-system
    group."""
    return str(PurePosixPath(folder(group)).parent)


def document(name: str) -> type | None:
    """The pydantic model of ``name``'s JSON document (``releval.documents``, imported now),
    None when it has none."""
    ref = get(name).document
    if ref is None:
        return None
    module, _, model = ref.partition(":")
    return getattr(importlib.import_module(module), model)


def matching(out: str) -> Artifact | None:
    """The entry whose path (placeholders as ``*``) matches the output path ``out``."""
    return next((a for a in CATALOG.values() if fnmatch(out, a.pattern)), None)


def written_by(stage: str) -> list[Artifact]:
    """The artifacts ``stage`` writes, in catalog order."""
    return [a for a in CATALOG.values() if a.stage == stage]


@dataclass(frozen=True)
class Read:
    """How a field of a stage's ``Inputs`` reads artifact ``artifact``.

    ``when``: a params dotted key; the artifact is read only when its value is set (else
    the field is None). ``each``: ``"system"`` reads one per evaluated system (candidate
    systems, then fused: ``{system: value}``, the ``candidates.*`` entry and its ``fused.*``
    twin), ``"candidate"`` one per candidate system, ``"fused"`` one per fused one,
    ``"source"`` one per source system of the stage's fused item; a ``{system}`` path
    without ``each`` is the stage's own item's. ``dep``: False for what
    the flow writes around the stage (read when present, never a DVC dependency).
    ``optional``: a missing file reads as None (a per-system one is left out).
    ``reader``: ``reader(path)`` instead of the format's reader. ``folder``: DVC depends on
    the artifact's folder rather than the file (the stage reads several files in it)."""

    artifact: str
    when: str | None = None
    each: str | None = None
    dep: bool = True
    optional: bool = False
    reader: object = None
    folder: bool = False


def reads(artifact: str, **how) -> object:
    """A dataclass field of a stage's ``Inputs`` that reads ``artifact`` (``Read``). Every
    such field defaults to None: a caller that builds ``Inputs`` itself (a test, the API)
    gives what its use reads; a stage's reader gives every field it reads."""
    get(artifact)  # an unknown artifact fails where the field is declared
    return field(default=None, metadata={"read": Read(artifact, **how)})
