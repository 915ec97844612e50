"""params.yaml as typed, validated models: one section per stage plus ``base``.

A leaf package: the models (here, and the route, rule, slice and executor settings in its
modules) import no search, check or stage code, so what a stage depends on is what it runs.

Unknown keys are errors (``extra="forbid"``), so a typo never silently falls back to a
default. ``load_params`` applies ``-S key=value`` overrides (as ``dvc exp run -S``).

Every name params give that is declared elsewhere (``Params.references``: a system, a
candidate system, a slice dimension, a measure, a cron string) is checked at load, so a bad
one is refused before the first stage runs, naming its key. Systems and slice dimensions are
checked against the params themselves; a measure and a cron string need code a leaf does not
import (the measure registry, Prefect's cron), so they are checked where a loader passes their
parsers (``parse_params(..., parsers=...)``: the commands that start a run).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from releval.errors import InputError, reading
from releval.params.executor import DaskSettings, Shards
from releval.params.offpolicy import OffPolicy
from releval.params.rules import RULE_MODELS, Reference, Rollback, Rule
from releval.params.slices import SINGLE_DIMENSIONS, Slices
from releval.params.systems import SYSTEMS, System
from releval.section import Section

# the kinds of change a comparison declares (``releval.decision.change.KINDS``)
CHANGES = ("route", "ranker", "diversity", "training_signal")


class Base(Section):
    """The run as a whole: its seed, and where its heavy work runs (``releval.executor``):
    ``local`` (this process) or ``dask`` (a LocalCluster, or the team's scheduler at
    ``dask.address``), with the shard layout of the sharded work."""

    seed: int = 0
    executor: Literal["local", "dask"] = "local"
    dask: DaskSettings = DaskSettings()
    shards: Shards = Shards()


class Prepare(Section):
    source: Literal["demo", "beir", "tables", "interactions", "recsys_demo",
                    "logged_feedback", "runs"] = "demo"
    path: str | None = None  # BEIR folder or folder of parquet tables
    # runs: no corpus, the team's runs judged by these qrels (TREC, BEIR TSV, CSV or parquet)
    qrels: str | None = None
    queries: str | None = None  # runs: a table or JSON lines (query_id[, text, tags, timestamp,
    # user_id]); None: the qrels' and runs' query ids, untimed and untagged
    # logged_feedback: offpolicy.log's impressions are the interactions (click: label 1)
    n_docs: int = Field(5000, ge=50)  # demo: documents (recsys_demo: items)
    n_queries: int = Field(1000, ge=20)  # demo: queries (recsys_demo: users)
    start: str = "2025-01-01"
    months: int = Field(12, ge=1)
    tenants: int = Field(2, ge=1)
    max_grade: int = Field(3, ge=1)  # the declared grade scale is 0..max_grade
    # judgments of documents not in the corpus above this share refuse the data (wrong corpus?)
    max_unknown_docs: float = Field(0.0, ge=0, le=1)


class Recommend(Section):
    """The recommendation protocol (``prepare.source`` interactions | recsys_demo).

    At each cut t of the split (validation: t1, test: t2) every user with an interaction
    before t or in [t, t + horizon) is one query issued at t: "given the history before t,
    which items does the user buy in [t, t + horizon)". Those items are the user's positives
    (grade 1); a user with none is undefined (counted, never scored). ``horizons_days``
    evaluates the same candidates at further horizons h (positives in [t, t + h)), each at most
    ``horizon_days``, whose user-queries the run holds; the main figures stay those of
    ``horizon_days``.
    """

    horizon_days: int = Field(30, ge=1)
    horizons_days: list[int] = []  # further horizons, each ≤ horizon_days ([]: none)
    exclude_seen: bool = True  # items bought before t are neither candidates nor positives
    holdout_users: float = Field(0.0, ge=0, lt=1)  # share of users kept out of all fitting
    context: list[str] = []  # log columns carried onto the user-queries (slices)
    negatives: Literal["sample", "window"] = "sample"  # AUC negatives: a seeded sample of
    # visible items the user never bought, or the non-positives of the window
    n_negatives: int = Field(100, ge=1)  # seeded sample of never-bought items (sample)
    expected: str | None = None  # serendipity's "expected" system (default: the popularity one)
    random_split: list[str] = ["popularity", "cooccurrence"]  # routes whose leakage is shown

    @field_validator("horizons_days")
    @classmethod
    def _within(cls, days: list[int], info: ValidationInfo) -> list[int]:
        """Distinct horizons of 1 to ``horizon_days`` days, in ascending order."""
        longest = info.data.get("horizon_days", 30)
        bad = [d for d in days if not 1 <= d <= longest]
        if bad or len(set(days)) < len(days):
            raise ValueError(f"horizons_days must be distinct whole days from 1 to horizon_days "
                             f"({longest}: the run's user-queries), got {days}")
        return sorted(days)


class Split(Section):
    method: Literal["dates", "quantiles", "given"] = "quantiles"
    cuts: tuple[str, str] | None = None
    quantiles: tuple[float, float] = (0.7, 0.85)


class Candidates(Section):
    depth: int = Field(100, ge=1)  # the one candidate budget every compared system gets
    systems: dict[str, System] = {"bm25": SYSTEMS["bm25"](), "dense": SYSTEMS["dense"]()}


class FusionSystem(Section):
    """Fusion of two candidate systems' windows, tuned on the validation split only."""

    lexical: str = "bm25"
    dense: str = "dense"
    methods: list[Literal["rrf", "linear"]] = ["rrf", "linear"]
    rrf_k: list[int] = [10, 30, 60, 100]
    weights: list[float] = [0.2, 0.35, 0.5, 0.65, 0.8]  # weight of `lexical`; dense gets 1 − w
    norms: list[Literal["minmax", "zscore"]] = ["minmax", "zscore"]
    objective: str = "nDCG@10"


class Fusion(Section):
    systems: dict[str, FusionSystem] = {"hybrid": FusionSystem()}


class Selftest(Section):
    """The self-test (stage selftest, ``releval.selftest``): ``trials`` per relation, on a
    sample of at most ``max_docs`` documents (more when the evaluator's judged documents need
    it), drawn with ``base.seed``; and the metrics engine against each of ``oracles`` where
    installed on ``cases`` generated cases (``releval.selftest.differential``)."""

    trials: int = Field(50, ge=1)
    max_docs: int = Field(1000, ge=10)
    oracles: list[Literal["pytrec_eval", "ir_measures", "ranx"]] = [
        "pytrec_eval", "ir_measures", "ranx"]
    cases: int = Field(450, ge=9)


class Pool(Section):
    """Which systems' top candidates are pooled for judging, and how deep."""

    systems: list[str] | None = None  # None: every system of candidates.systems
    depth: int = Field(10, ge=1)
    splits: list[Literal["train", "validation", "test"]] = ["validation", "test"]
    guideline: str = "relevance-v1"


class AutomaticJudge(Section):
    """``judgments.automatic``: labels from a model, validated against the human ones (stage
    ``autojudge``). ``judge: dense`` with no ``labels``: the built-in similarity judge (the
    first dense system's encoder, thresholds fitted on the validation sample); ``labels``: a
    judge's labels file (docs/contracts.md) named ``judge`` / ``model``. ``validation_share``
    of the human-judged evaluated queries (a seeded random sample of queries) is the sample the
    judge is fitted on and PPI's labelled sample; the other queries' human labels are only the
    ground truth. ``gate: ppi``: the gate's paired-comparison rules read PPI intervals."""

    judge: str = "dense"
    labels: str | None = None  # a labels file (table or TREC qrels); None: the built-in judge
    model: str | None = None  # the labels' model (None: taken from the file, if it has one)
    validation_share: float = Field(0.5, gt=0, lt=1)
    fill_holes: bool = True  # label the pool's unjudged entries (counted apart)
    measures: list[str] | None = None  # None: compare.measures
    gate: Literal["human", "ppi"] = "human"

    @model_validator(mode="after")
    def _built_in_or_file(self) -> AutomaticJudge:
        if self.labels is None and self.judge != "dense":
            raise ValueError(f"judge {self.judge!r} needs a labels file (judgments.automatic."
                             "labels); the built-in judge is 'dense'")
        return self


class Judgments(Section):
    """Where grades come from: simulated judges (demo), judges' files, or the dataset's
    own qrels; ``auto`` picks simulated for the demo and the dataset's qrels otherwise.
    ``automatic``: a model's labels beside them (``AutomaticJudge``; None: none)."""

    source: Literal["auto", "simulated", "files", "dataset"] = "auto"
    files: str = "labels"  # folder of judges' CSV / Label Studio JSON exports (source: files)
    judges: int = Field(3, ge=1)  # simulated judges
    noise: float = Field(0.6, ge=0)
    corrupt: float = Field(0.0, ge=0, le=0.5)  # share of malformed rows injected (demo)
    method: Literal["median", "majority"] = "median"
    max_spread: int = Field(2, ge=1)
    low_agreement: float = 0.4
    adjudicator: str | None = None  # CSV of (blind_id, grade) overriding adjudicated pairs
    automatic: AutomaticJudge | None = None


class Evaluate(Section):
    measures: list[str] = ["nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10"]
    rel: int = Field(1, ge=1)
    splits: list[Literal["train", "validation", "test"]] = ["test"]
    judged_k: int = Field(10, ge=1)  # unjudged top-k candidates listed for the next round


class Also(Section):
    """A further comparison reported beside the primary one (``compare.also``), treated alike
    (paired rows, conditions, inspections, training variance); the gate's rules read the
    primary pair, but for a rule that names the candidate it reads (``seeds``)."""

    baseline: str
    candidate: str
    change: Literal[CHANGES] | None = None  # its kind of change (``Compare.change``)
    measures: list[str] | None = None  # None: compare.measures


class Compare(Section):
    """The controlled comparison of ``candidate`` against ``baseline``. ``change``: the kind
    of change compared (``releval.decision.change.KINDS``: route, ranker, diversity,
    training_signal): what it holds fixed besides the general conditions, and what else is
    inspected; None: the general conditions only."""

    baseline: str = "bm25"
    candidate: str = "hybrid"
    change: Literal[CHANGES] | None = None
    also: list[Also] = []
    top_k: int = Field(10, ge=1)  # the top k the change inspections read (topics, repetition)
    measures: list[str] = ["nDCG@10", "R@100", "RR@10"]
    min_effect: float | dict[str, float] = 0.01  # smallest consequential difference
    resamples: int = Field(10_000, ge=100)
    alpha: float = Field(0.05, gt=0, lt=1)
    cluster: Literal["user_id"] | None = None  # resample and test over users, not queries
    allow_uncontrolled: bool = False  # compare anyway when conditions differ (labelled)
    strata: Literal[SINGLE_DIMENSIONS] = "kind"  # slices for equal-slice weights, mix check
    # the judged queries the means run over (releval.decision.missing): judged (a query a
    # run misses scores 0, labelled), common (those both answer) or refuse
    query_set: Literal["judged", "common", "refuse"] = "judged"
    # the test behind every p-value (releval.decision.significance.TESTS); tie_band: the
    # sign test's |Δ| that counts as a tie
    test: Literal["randomization", "t", "wilcoxon", "sign", "bootstrap"] = "randomization"
    tie_band: float = Field(0.0, ge=0)
    # many systems in one decision (releval.decision.family): [] none, "all" every evaluated
    # system, or a list; the family (each against the baseline, or all pairs) and its
    # correction (holm, bh: Benjamini–Hochberg, tukey: Tukey's HSD by randomization)
    systems: list[str] | Literal["all"] = []
    family: Literal["baseline", "all_pairs"] = "baseline"
    correction: Literal["holm", "bh", "tukey"] = "holm"


class Plan(Section):
    """Power planning (``releval.decision.power``): the power at which a minimum detectable
    effect is stated and the needed queries are counted, at ``compare.alpha``."""

    power: float = Field(0.8, gt=0, lt=1)


class NoAnswer(Section):
    """Queries with this tag have no answer: excluded from relevance means, reported alone."""

    tag: str = "no_answer"
    thresholds: dict[str, float] = {}  # system -> score a candidate must reach to count


class Gate(Section):
    """Release rules (``releval.params.rules``, checked by ``releval.decision.gate.RULES``); the
    candidate ships only when every rule passes. ``rollback``: the values at which the
    deployed candidate (shadow, canary) must be rolled back, written into the decision (a
    monitoring contract, not a rule)."""

    rules: list[Rule] = [model() for model, default in RULE_MODELS.values() if default]
    rollback: list[Rollback] = []


class Failures(Section):
    """Failure classification of the compared systems: each judged-relevant document not in
    a system's top ``k`` traced to the first layer that lost it; routes are re-searched
    exactly to ``deep_k`` for the representation check."""

    k: int = Field(10, ge=1)
    deep_k: int = Field(1000, ge=1)
    review: str | None = None  # a reviewed worksheet (CSV); its verdicts override the layers


class Safety(Section):
    """Safety violations are counted at every rank; those ranked within ``top_k`` (what a user
    is shown) are also counted apart from those below it."""

    top_k: int = Field(10, ge=1)


class Cost(Section):
    """A system's cost model: cost per query = ``per_query`` + ``per_candidate`` × the
    candidates it returned for the query, in ``unit``."""

    per_query: float = Field(0.0, ge=0)
    per_candidate: float = Field(0.0, ge=0)
    unit: str = "USD"


class Health(Section):
    """System health beside relevance (stage ``health``)."""

    cost: dict[str, Cost] = {}  # system -> its cost model; a system without one: not given


class QuerySet(Section):
    """What the evaluated query set must cover (``releval.data.query_set``): the fewest
    evaluated queries per risk category (a key of ``RISK_CATEGORIES``; the gate's
    ``coverage`` rule fails a category below it; ``auto``: for every category, the queries
    the comparison's first measure needs to detect ``compare.min_effect`` at ``plan.power``,
    derived at the gate from this run's per-query differences); the most decisions the
    evaluated set may inform before it is no longer held out (``max_looks``; the gate's
    ``holdout`` rule, n/a while unset: ``releval.decision.looks``)."""

    min_per_category: dict[str, Annotated[int, Field(ge=0)]] | Literal["auto"] = {}
    max_looks: int | None = Field(None, ge=1)


class Fixture(Section):
    """The pinned fixture: a frozen corpus, topics and judgments (a BEIR folder or a folder
    of tables) every system is evaluated on beside the live window, so a change there is
    the system's and a change only on the live window is drift (stage ``fixture``)."""

    path: str | None = None
    source: Literal["beir", "tables"] = "beir"


class Schedule(Section):
    """``releval serve``: the pipeline on a schedule (a cron string or an interval in
    seconds; flags override), each run's inputs from ``window``: params key -> value, where
    ``{date:%Y-%m-%d}`` is the run's scheduled time and a glob picks the last match by name
    (``flows.schedule``)."""

    name: str = "releval"
    cron: str | None = None
    interval: float | None = Field(None, gt=0)
    window: dict[str, str] = {}


class Params(Section):
    base: Base = Base()
    prepare: Prepare = Prepare()
    split: Split = Split()
    recommend: Recommend = Recommend()
    candidates: Candidates = Candidates()
    selftest: Selftest = Selftest()
    pool: Pool = Pool()
    judgments: Judgments = Judgments()
    fusion: Fusion = Fusion()
    evaluate: Evaluate = Evaluate()
    slices: Slices = Slices()
    no_answer: NoAnswer = NoAnswer()
    compare: Compare = Compare()
    plan: Plan = Plan()
    safety: Safety = Safety()
    health: Health = Health()
    query_set: QuerySet = QuerySet()
    gate: Gate = Gate()
    failures: Failures = Failures()
    fixture: Fixture = Fixture()
    schedule: Schedule = Schedule()
    offpolicy: OffPolicy = OffPolicy()

    def systems(self) -> list[str]:
        """Every system evaluated: candidate systems, then fused ones."""
        return [*self.candidates.systems, *self.fusion.systems]

    def sources(self, system: str) -> tuple[str, ...]:
        """The two systems a fused ``system`` is built from (lexical, dense); () otherwise."""
        f = self.fusion.systems.get(system)
        return (f.lexical, f.dense) if f else ()

    def pooled(self) -> list[str]:
        """The systems whose top candidates are pooled (``pool.systems``, None: all)."""
        return list(self.candidates.systems) if self.pool.systems is None else self.pool.systems

    def windows(self, system: str) -> list[str]:
        """The candidate windows ``system`` answers for: its own, then its sources'."""
        return [system, *self.sources(system)]

    @property
    def recommendation(self) -> bool:
        """Users as queries over an interaction log (``Recommend``)."""
        return self.prepare.source in ("interactions", "recsys_demo", "logged_feedback")

    @property
    def runs_only(self) -> bool:
        """No corpus: the team's runs judged by their qrels (``prepare.source: runs``); no
        documents, so nothing that reads them (routes, visibility, near-duplicates, the
        corpus layers) applies."""
        return self.prepare.source == "runs"

    @property
    def judges_source(self) -> str:
        """``judgments.source`` with ``auto`` resolved: simulated for the demo, else the
        dataset's own qrels."""
        c = self.judgments.source
        return c if c != "auto" else ("simulated" if self.prepare.source == "demo" else "dataset")

    def references(self) -> Iterator[Reference]:
        """(kind, params key, name) of every name these params give that must resolve: a kind
        of ``CHECKS``."""
        c = self.compare
        yield from (("system", f"compare.{side}", getattr(c, side))
                    for side in ("baseline", "candidate"))
        for i, also in enumerate(c.also):
            yield from (("system", f"compare.also.{i}.{side}", getattr(also, side))
                        for side in ("baseline", "candidate"))
            yield from (("measure", f"compare.also.{i}.measures.{j}", m)
                        for j, m in enumerate(also.measures or []))
        yield from (("measure", f"compare.measures.{i}", m) for i, m in enumerate(c.measures))
        if isinstance(c.systems, list):
            yield from (("system", f"compare.systems.{i}", s) for i, s in enumerate(c.systems))
        if isinstance(c.min_effect, dict):
            yield from (("measure", f"compare.min_effect.{m}", m) for m in c.min_effect)
        yield from (("measure", f"evaluate.measures.{i}", m)
                    for i, m in enumerate(self.evaluate.measures))
        auto = self.judgments.automatic
        yield from (("measure", f"judgments.automatic.measures.{i}", m)
                    for i, m in enumerate(auto.measures or [] if auto else []))
        yield from (("candidate", f"pool.systems.{i}", s)
                    for i, s in enumerate(self.pool.systems or []))
        for name, f in self.fusion.systems.items():
            yield "candidate", f"fusion.systems.{name}.lexical", f.lexical
            yield "candidate", f"fusion.systems.{name}.dense", f.dense
            yield "measure", f"fusion.systems.{name}.objective", f.objective
        yield from (("system", f"health.cost.{s}", s) for s in self.health.cost)
        yield from (("system", f"no_answer.thresholds.{s}", s) for s in self.no_answer.thresholds)
        if self.recommend.expected is not None:
            yield "system", "recommend.expected", self.recommend.expected
        for group, entries in (("rules", self.gate.rules), ("rollback", self.gate.rollback)):
            for i, entry in enumerate(entries):
                yield from ((kind, f"gate.{group}.{i}.{key}", name)
                            for kind, key, name in entry.references())
        if self.schedule.cron is not None:
            yield "cron", "schedule.cron", self.schedule.cron
        if self.offpolicy.system is not None:
            yield "system", "offpolicy.policy.system", self.offpolicy.system

    @model_validator(mode="after")
    def _names_resolve(self, info: ValidationInfo) -> Params:
        """Every reference resolves (``CHECKS``: a kind without a parser in the validation
        context is not checked); the compared pairs are two different systems; a log given
        where prepare reads the logged feedback."""
        parsers = info.context or {}
        checks = {kind: check(self, parsers) for kind, check in CHECKS.items()}
        for kind, key, name in self.references():
            if checks[kind] is not None:
                try:
                    checks[kind](name)
                except ValueError as exc:
                    raise InputError(getattr(exc, "rule", str(exc)), "params", key) from None
        for key, pair in [("compare", self.compare),
                          *((f"compare.also.{i}", a) for i, a in enumerate(self.compare.also))]:
            if pair.baseline == pair.candidate:
                raise InputError(f"baseline and candidate are both {pair.baseline!r}", "params",
                                 key)
        if self.compare.correction == "tukey" and self.compare.family != "all_pairs":
            raise InputError("correction tukey (Tukey's HSD) is for the family all_pairs",
                             "params", "compare.correction")
        if self.prepare.source == "logged_feedback" and self.offpolicy.log is None:
            raise InputError("prepare.source logged_feedback reads offpolicy.log: give the log",
                             "params", "offpolicy.log")
        if self.prepare.source == "runs" and not self.prepare.qrels:
            raise InputError("prepare.source runs reads the qrels the team's runs are judged "
                             "by: give prepare.qrels", "params", "prepare.qrels")
        return self


Parser = Callable[[str], object]  # raises ValueError (an InputError too) for a bad name


def _among(what: str, declared: str, names: list[str]) -> Parser:
    """A check that a name is one of ``names`` (those ``declared`` declares)."""
    def check(name: str) -> None:
        if name not in names:
            raise ValueError(f"{name!r} is not {what} ({declared}: {', '.join(names) or 'none'})")
    return check


def _slice(dimensions: list[str]) -> Parser:
    """A check that a slice is written ``dimension=value`` over a labelled dimension (the
    values are the data's: the gate names those present when an asked one is not)."""
    def check(spec: str) -> None:
        dimension, sep, value = spec.partition("=")
        if not sep or not value:
            raise ValueError(f"slice {spec!r} is not written dimension=value")
        if dimension not in dimensions:
            raise ValueError(f"slice {spec!r}: {dimension!r} is not a labelled dimension "
                             f"(slices.dimensions: {', '.join(dimensions)})")
    return check


# the kinds of Params.references -> the check of a name of that kind for these params and the
# parsers the loader gave (None: not checked here)
CHECKS: dict[str, Callable[[Params, dict[str, Parser]], Parser | None]] = {
    "system": lambda p, parsers: _among("a system", "candidates.systems and fusion.systems",
                                        p.systems()),
    "candidate": lambda p, parsers: _among("a candidate system", "candidates.systems",
                                           list(p.candidates.systems)),
    "slice": lambda p, parsers: _slice(list(p.slices.dimensions)),
    "estimator": lambda p, parsers: _among("an estimator", "offpolicy.estimators",
                                           list(p.offpolicy.estimators)),
    "measure": lambda p, parsers: parsers.get("measure"),
    "cron": lambda p, parsers: parsers.get("cron"),
}


def lookup(tree, dotted: str):
    """The value at ``dotted`` ("a.b.c") in nested dicts; KeyError where a part is absent."""
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            raise KeyError(dotted)
        tree = tree[part]
    return tree


def holds(tree, dotted: str) -> bool:
    """Whether nested dicts ``tree`` hold ``dotted`` (``lookup`` finds it)."""
    try:
        lookup(tree, dotted)
    except KeyError:
        return False
    return True


def _set(tree: dict, dotted: str, value) -> None:
    *parents, leaf = dotted.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
        if not isinstance(tree, dict):
            raise InputError(f"cannot set {dotted}: {key} is not a section", "-S")
    tree[leaf] = value


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    """``key.sub=value`` strings onto a params dict (values parsed as YAML scalars)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"override {item!r} is not key=value", "-S")
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
            raise InputError(f"the value is not valid YAML ({problem})",
                             f"override {item!r}") from None
        _set(raw, key.strip(), parsed)
    return raw


def _comment_at(line: str, start: int) -> int:
    """Where the ``#`` comment of ``line`` begins after column ``start`` (len if none),
    outside quotes."""
    quote = None
    for i in range(start, len(line)):
        ch = line[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
    return len(line)


def _inline(raw: str, value) -> str:
    """The value as one line of YAML: the user's own text when it reads back the same."""
    try:
        if yaml.safe_load(f"k: {raw}") == {"k": value}:
            return raw.strip()
    except yaml.YAMLError:
        pass
    return json.dumps(value, ensure_ascii=False)


def _set_text(lines: list[str], tree, dotted: str, text: str) -> None:
    """Edit ``lines`` so ``dotted`` holds ``text``: the value in place on its key's line (a
    block value below it is replaced), or a new key line under its parent."""
    *parents, leaf = dotted.split(".")
    node, indent, after = tree, 0, len(lines) - 1  # a new top-level key goes last
    for i, key in enumerate(parents):
        if key not in node:
            child = " " * indent + key + ":"
            lines.insert(after + 1, child)
            for j, rest in enumerate([*parents[i + 1:], leaf]):
                pad = " " * (indent + 2 * (j + 1))
                lines.insert(after + 2 + j, pad + rest + (":" if j < len(parents) - i - 1
                                                           else ": " + text))
            return
        after = node.lc.key(key)[0]
        node = node[key]
        first = next(iter(node), None) if hasattr(node, "lc") else None
        indent = node.lc.key(first)[1] if first is not None else indent + 2
    if parents and node.fa.flow_style():  # {a: 1, b: 2}: write the whole mapping back
        plain = yaml.safe_load("\n".join(lines))
        for key in parents:
            plain = plain[key]
        flow = yaml.safe_dump(plain | {leaf: yaml.safe_load(text)}, default_flow_style=True,
                              sort_keys=False, width=1 << 16).strip()
        _set_text(lines, tree, ".".join(parents), flow)
        return
    if leaf not in node:
        lines.insert(after + 1, " " * indent + f"{leaf}: {text}")
        return
    row, col = node.lc.key(leaf)
    vrow, vcol = node.lc.value(leaf)
    line = lines[row]
    if vrow == row:  # scalar or flow value on the key's line: keep its comment's column
        cut = _comment_at(line, vcol)
        comment = line[cut:]
        head = line[:vcol] + text
        pad = max(1, cut - len(head)) if comment else 0
        lines[row] = head + (" " * pad + comment if comment else "")
        return
    colon = line.index(":", col) + 1  # a block value: the lines below, deeper than the key
    end = row + 1
    while end < len(lines) and (not lines[end].strip() or
                                len(lines[end]) - len(lines[end].lstrip()) > col):
        end += 1
    while end > row + 1 and not lines[end - 1].strip():
        end -= 1
    cut = _comment_at(line, colon)
    lines[row] = line[:colon] + " " + text + (" " + line[cut:] if cut < len(line) else "")
    del lines[row + 1:end]


def write_overrides(path: str | Path, overrides: list[str]) -> None:
    """Set ``key=value`` overrides in the params file itself, changing only those values:
    every comment, blank line, key order and quoting stays as the user wrote it (as
    ``dvc exp run -S`` does)."""
    from ruamel.yaml import YAML

    path = Path(path)
    text = path.read_text()
    expected = apply_overrides(read_raw(path), overrides)
    for item in overrides:
        key, _, raw = item.partition("=")
        tree = YAML().load(text) or {}
        lines = text.splitlines()
        _set_text(lines, tree, key.strip(), _inline(raw, yaml.safe_load(raw)))
        text = "\n".join(lines) + "\n"
    try:
        written = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        written = None
    if written != expected:
        raise InputError("could not set the overrides in place (unusual layout); edit the "
                         "file by hand", str(path))
    path.write_text(text)


def parse_params(raw: dict, source: str = "params.yaml",
                 parsers: dict[str, Parser] | None = None) -> Params:
    """Validate params: InputError naming ``source``, the key and the rule of the first
    problem. ``parsers``: kind -> parser of the references a leaf cannot check itself
    (``CHECKS``: ``measure``, ``cron``)."""
    try:
        return Params.model_validate(raw or {}, context=parsers or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        cause = (first.get("ctx") or {}).get("error")
        if isinstance(cause, InputError):  # a reference: its key and its own words
            rule, where = cause.rule, cause.where
        else:
            rule = str(cause) if isinstance(cause, ValueError) else first["msg"]
            where = ".".join(str(p) for p in first["loc"])
        count = len(exc.errors())
        raise InputError(rule + (f" ({count} problems)" if count > 1 else ""), source,
                         where) from None


def read_raw(path: str | Path) -> dict:
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", str(path))
    with reading(str(path)):
        return yaml.safe_load(path.read_text()) or {}


def load_params(path: str | Path = "params.yaml", overrides: list[str] = (),
                parsers: dict[str, Parser] | None = None) -> Params:
    """Read, override and validate params (``parse_params``)."""
    return parse_params(apply_overrides(read_raw(path), list(overrides)), str(path), parsers)
