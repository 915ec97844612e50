"""params.yaml written from a team's data (``releval init``): every choice with its reason.

A rule whose data is absent is not written; the file says, in a comment, what was left out
and why (no tags: no tag slices; no ACLs, tenants or statuses: no safety rule; …), so the
decision holds only rules the data can answer. Bounds that only the team knows (a latency
SLO, costs) are not invented: the comment says where the measured values will be. Team runs
judged by qrels without a corpus (``runs_only``) get only the runs as systems (no built-in
route, nothing fused, no pool) and no rule that reads documents or latency. Neither kind
gets a judged bound on qrels that judge only (or mostly) relevant documents: there
Judged@k measures precision, not the judgments' coverage.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import pandas as pd
import yaml

from releval.data.query_set import RISK_CATEGORIES
from releval.params import Params
from releval.params.systems import BM25System
from releval.project import template
from releval.project.profile import FORWARD, Collection, Feedback, JudgedRuns, Log, Run

JUDGED_MIN = 0.8  # Judged@10 below this: the judgments do not cover what the system retrieves
MAX_DROP = 0.02  # nDCG@10 may not fall below the baseline's by more than this (CI bound)
MIN_PER_CATEGORY = 15  # as slices.min_n: fewer tagged queries cannot be tested apart


@dataclass(frozen=True)
class Choices:
    """What the user gave beside the data: paths as params will name them (relative to the
    project), the team's runs and the compared pair (None: chosen from the data)."""

    data_path: str
    runs: dict[str, Run] = field(default_factory=dict)
    baseline: str | None = None
    candidate: str | None = None
    reference: str | None = None  # logged feedback: a log of the candidate policy deployed
    queries: str | None = None  # runs only: the queries file


def _flow(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000,
                          sort_keys=False).strip().removesuffix("\n...")


SECTION = object()  # ``put`` without a value: a section header


class _Text:
    """Lines of YAML by top-level section; ``put(indent, key, value, why)`` writes
    ``key: value  # why``. ``text(required)`` adds, at their defaults, the keys dvc.yaml
    tracks that the sections do not write (DVC refuses a stage whose params key is absent)."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.sections: dict[str, list[str]] = {}
        self.keys: dict[str, list[str]] = {}
        self.current: list[str] = self.head

    def _line(self, line: str) -> None:
        self.current.append(line)

    def put(self, indent: int, key: str, value=SECTION, why: str = "") -> None:
        if indent == 0:
            self.current = self.sections.setdefault(key, [])
            self.keys[key] = []
        elif indent == 1:
            self.keys[next(reversed(self.sections))].append(key)
        pad = "  " * indent
        head = f"{pad}{key}:" if value is SECTION else f"{pad}{key}: {_flow(value)}"
        self._line(f"{head}  # {why}" if why else head)

    def note(self, indent: int, text: str) -> None:
        """A comment, wrapped at 92 columns."""
        pad = f"{'  ' * indent}# "
        self.current += textwrap.wrap(text, 92, initial_indent=pad, break_on_hyphens=False,
                                      subsequent_indent=pad + "  ")

    def item(self, indent: int, value: dict, why: str = "") -> None:
        head = f"{'  ' * indent}- {_flow(value)}"
        self._line(f"{head}  # {why}" if why else head)

    def blank(self) -> None:
        self._line("")

    def text(self, required: set[str], defaults: dict) -> str:
        for key in sorted(required):
            top, _, sub = key.partition(".")
            sub = sub.split(".")[0]
            if top not in self.sections:
                self.put(0, top, SECTION, "at its defaults")
                for name, value in defaults[top].items():
                    self.put(1, name, value)
                self.blank()
            elif sub and "$" not in sub and sub not in self.keys[top]:
                lines = self.sections[top]
                at = len(lines) - (1 if lines and lines[-1] == "" else 0)
                lines.insert(at, f"  {sub}: {_flow(defaults[top][sub])}  # its default")
                self.keys[top].append(sub)
        body = [line for lines in self.sections.values() for line in lines]
        return "\n".join([*self.head, *body]).rstrip("\n") + "\n"


def _tracked() -> tuple[set[str], dict]:
    """The params keys the shipped dvc.yaml tracks, and every key's default."""
    keys = {k for stage in template.dag()["stages"].values() for k in stage.get("do", stage)
            .get("params", []) if isinstance(k, str)}
    return keys, Params().model_dump(mode="json")


def _header(t: _Text, what: str) -> None:
    t.note(0, f"Written by `releval init` from {what}.")
    t.note(0, "Every choice says why; edit freely (releval's docs/pipeline.md). Rules the data")
    t.note(0, "cannot answer are left out, and a comment says which and why. Keys marked")
    t.note(0, "\"its default\" are the pipeline's defaults, written because dvc.yaml tracks them.")
    t.put(0, "base")
    t.put(1, "seed", 13, "every sample and resample is seeded from it")
    t.blank()


def _team_systems(t: _Text, runs: dict[str, Run]) -> None:
    for name, run in runs.items():
        t.put(2, name, SECTION, "a team's run, evaluated like the built-in routes")
        t.put(3, "route", "external")
        t.put(3, "path", run.path, f"{run.queries} queries")
        if run.system:
            t.put(3, "system", run.system, "the run's own tag")
        if run.seeds:
            t.put(3, "seeds", run.seeds, "its tags carry training seeds; the first ships")


def _compared(c: Choices, default: tuple[str, str]) -> tuple[str, str]:
    """The pair the user named, else ``default``."""
    return c.baseline or default[0], c.candidate or default[1]


def _guards(t: _Text, hard_negatives: bool, latency: bool = True) -> None:
    t.put(2, "- rule", "guarded", "recall may not be bought with precision")
    t.put(3, "primary", "R@100")
    t.put(3, "guards")
    t.item(4, {"measure": "P@10", "tolerance": 0.01})
    if hard_negatives:
        t.item(4, {"measure": "HardNeg@10", "tolerance": 0.005},
               "the qrels mark hard negatives")
    t.put(2, "- rule", "guarded", "a first-hit gain may not cost the graded ranking")
    t.put(3, "primary", "RR@10")
    t.put(3, "guards")
    t.item(4, {"measure": "nDCG@10", "tolerance": 0.01})
    if latency:
        t.put(2, "- rule", "guarded", "a faster system may not answer worse")
        t.put(3, "primary", "latency p95")
        t.put(3, "guards")
        t.item(4, {"measure": "nDCG@10", "tolerance": 0.01})


def _plan(t: _Text) -> None:
    t.put(0, "plan")
    t.put(1, "power", 0.8, "what the query set could detect is stated at this power")
    t.blank()


def _no_log(t: _Text) -> None:
    t.put(0, "offpolicy")
    t.put(1, "log", None, "no logged bandit feedback given (releval init --logged-feedback): "
          "no off-policy evaluation")
    t.blank()


def _seed_rules(t: _Text, runs: dict[str, Run], compared: set[str]) -> list[str]:
    seeded = [name for name, run in runs.items() if run.seeds and name in compared]
    for name in seeded:
        t.item(2, {"rule": "seeds", "candidate": name, "measure": "nDCG@10",
                   "require": "mean"}, f"{name}'s gain must hold over its training seeds")
    return seeded


def _no_judged(judgments: int, relevant: int, grades: int = 2) -> str:
    """Why no judged rule is written: qrels that judge (mostly) relevant documents only make
    Judged@10 a precision (it equals P@10 on positive-only qrels), which no absolute bound
    on coverage fits, and no bound relative to the baseline is a rule the gate has."""
    shape = (f"the qrels are positive-only: all {judgments:,} judgments give one grade"
             if grades <= 1 else
             f"the qrels judge {relevant:,} of {judgments:,} documents relevant")
    return f"judged ({shape}: Judged@10 would measure precision, not the qrels' coverage)"


def retrieval(data: Collection, c: Choices) -> str:
    """params.yaml for a corpus with queries and qrels (and the team's runs)."""
    t = _Text()
    _header(t, f"{c.data_path} ({data.source}: {data.documents:,} documents, "
            f"{data.queries:,} queries, {data.judged_queries:,} judged)")
    t.put(0, "prepare")
    t.put(1, "source", data.source)
    t.put(1, "path", c.data_path)
    t.put(1, "max_grade", data.max_grade, f"the qrels grade 0..{data.max_grade}")
    t.blank()

    t.put(0, "split")
    validation = "validation" in data.splits
    if data.splits:
        shares = ", ".join(f"{k} {v}" for k, v in data.splits.items())
        t.put(1, "method", "given", f"the dataset's own split ({shares} queries)")
    elif data.query_times:
        t.put(1, "method", "quantiles", "forward in time: the queries carry issue times")
        t.put(1, "quantiles", [0.7, 0.85], "train < 70% ≤ validation < 85% ≤ test")
        validation = True
    else:
        t.put(1, "method", "given", "no split and no query times: every query is tested")
    if not validation:
        t.note(1, "no validation split: the hybrid takes its grid's first entry, untuned")
    t.blank()

    t.put(0, "candidates")
    t.put(1, "depth", 100, "the one candidate budget every compared system gets")
    t.put(1, "systems")
    bm25 = BM25System()  # the comment states the defaults the route runs with
    t.put(2, "bm25", {"route": "bm25"}, f"lexical baseline (k1 {bm25.k1:g}, b {bm25.b:g}, "
          f"{bm25.method}, stemmer {bm25.stemmer}, stopwords {bm25.stopwords})")
    t.put(2, "dense", {"route": "dense"}, "all-MiniLM-L6-v2 over title + text, exact search")
    _team_systems(t, c.runs)
    t.blank()
    t.put(0, "fusion")
    t.put(1, "systems")
    t.put(2, "hybrid", {"lexical": "bm25", "dense": "dense"},
          "RRF / linear" + (", tuned on the validation split" if validation else ""))
    t.blank()
    t.put(0, "pool")
    t.put(1, "systems", ["bm25", "dense", *c.runs], "every system's top 10 is judged")
    t.put(0, "judgments")
    t.put(1, "source", "dataset", "the collection's own qrels")
    t.put(1, "automatic", None, "no automatic judge (judge: dense, or labels: <file>): "
          "docs/automatic-judgments.md")
    t.blank()

    measures = ["nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10"]
    if data.hard_negatives:
        measures.insert(4, "HardNeg@10")
    t.put(0, "evaluate")
    t.put(1, "measures", measures)
    t.put(1, "splits", ["test"])
    t.blank()

    dims = ["length", "route_hit"]
    absent = []
    for dim, present, why in (
            ("tag", bool(data.tags), "no query carries tags"),
            ("tenant", data.tenants > 1, "one tenant"), ("role", data.roles > 1, "one role"),
            ("freshness", data.published and data.query_times,
             "needs publication dates and query times"),
            ("user_activity", data.users, "each query is its own user")):
        (dims if present else absent).append(dim if present else f"{dim} ({why})")
    t.put(0, "slices")
    t.put(1, "dimensions", dims)
    if absent:
        t.note(1, f"left out: {', '.join(absent)}")
    t.put(1, "min_n", MIN_PER_CATEGORY, "fewer queries in a slice: too small to test")
    t.blank()

    baseline, candidate = _compared(c, ("bm25", "hybrid"))
    t.put(0, "compare")
    t.put(1, "baseline", baseline)
    t.put(1, "candidate", candidate)
    if (baseline, candidate) == ("bm25", "hybrid"):
        t.put(1, "change", "route", "hybrid adds the dense route to bm25")
    t.put(1, "measures", ["nDCG@10", "R@100", "RR@10"])
    t.put(1, "min_effect", 0.02, "smaller differences are not consequential")
    if data.users:
        t.put(1, "cluster", "user_id", "a user's queries correlate: resample users")
    t.put(1, "strata", "kind" if data.tags else "length",
          "the slices of the equal-slice aggregate")
    t.blank()
    _plan(t)

    t.put(0, "health")
    t.put(1, "cost", {}, "no cost model given: cost per query is not stated")
    t.put(0, "fixture")
    t.put(1, "path", None, "no frozen fixture beside the live data")
    t.blank()

    minimums = {k: MIN_PER_CATEGORY for k in data.tagged}
    t.put(0, "query_set")
    t.put(1, "min_per_category", minimums,
          "the risk categories the queries are tagged with" if minimums
          else "the queries carry no risk tags: no minimum to cover")
    if data.by_text:
        t.note(1, "recognised from the text only (described, no minimum): "
               + ", ".join(f"{RISK_CATEGORIES[k].label} {n}" for k, n in data.by_text.items()))
    t.blank()

    _no_log(t)
    safety = data.acl or data.tenants > 1 or data.restricted_status or data.must_not_return
    no_answer = "no_answer" in data.tags
    t.put(0, "gate")
    t.put(1, "rollback")
    t.item(2, {"metric": "nDCG@10", "min": "baseline"},
           f"online below {baseline}'s offline value: roll back")
    t.put(1, "rules")
    t.put(2, "- rule", "no_regression")
    t.put(3, "measure", "nDCG@10")
    t.put(3, "max_drop", MAX_DROP)
    tag_slices = [f"tag={tag}" for tag, n in data.tags.items() if n >= MIN_PER_CATEGORY]
    if tag_slices:
        t.put(3, "slices", tag_slices, f"tags with ≥ {MIN_PER_CATEGORY} queries")
    if data.pooled:
        t.item(2, {"rule": "judged", "measure": "Judged@10", "min": JUDGED_MIN},
               "the qrels must cover what the candidate retrieves")
    if safety:
        t.item(2, {"rule": "safety", "max_violations": 0},
               "the data restricts documents: zero tolerance")
    if no_answer:
        t.item(2, {"rule": "no_answer", "max_drop": 0.05}, "queries tagged no_answer")
    if minimums:
        t.item(2, {"rule": "coverage"}, "each tagged category reaches its minimum")
    _guards(t, data.hard_negatives)
    seeded = _seed_rules(t, c.runs, {candidate})
    health = {}
    if data.deleted:
        health["deletion_propagation_max_days"] = 1
    if data.chunks:
        health["near_duplicate_ratio"] = 0.6
    if health:
        t.item(2, {"rule": "health", "max": health}, "from the documents' deletions / chunks")
    left = [name for name, present in (
        ("safety (no ACLs, tenants, statuses or must-not-return pairs)", safety),
        ("no_answer (no query tagged no_answer)", no_answer),
        ("coverage (no risk tags)", bool(minimums)),
        ("seeds (the candidate carries no seed tags)", bool(seeded)),
        ("health deletion bound (no document deleted)", data.deleted),
        (_no_judged(data.judgments, data.relevant, data.grades), data.pooled)) if not present]
    if left:
        t.note(1, f"left out: {'; '.join(left)}")
    t.note(1, "latency: no bound is written, your SLO is not in the data; the measured p95 of")
    t.note(1, "every system is in data/health/health.json after the first run. Add e.g.")
    t.note(1, "- {rule: latency, percentile: p95, max_ms: <your SLO>}")
    return t.text(*_tracked())


def runs_only(data: JudgedRuns, c: Choices) -> str:
    """params.yaml for the team's runs judged by qrels, without a corpus (``prepare.source:
    runs``): the runs are the only systems (no built-in route, nothing fused), the qrels the
    dataset's own (no pool), and no rule that reads documents or latency."""
    t = _Text()
    _header(t, f"{c.data_path} (runs only, no corpus: {len(c.runs)} team runs, "
            f"{data.judgments:,} judgments of {data.judged_queries:,} queries)")
    t.put(0, "prepare")
    t.put(1, "source", "runs", "no corpus: the team's runs judged by the qrels; nothing "
          "reads a document's text")
    t.put(1, "qrels", c.data_path, f"{data.judgments:,} judgments, {data.relevant:,} relevant")
    t.put(1, "queries", c.queries, f"{data.queries:,} queries" + (
        ", with their issue times" if data.query_times else "") if c.queries else
        f"no queries file: the {data.queries:,} query ids of the qrels and the runs, "
        "untimed, untagged, without text")
    t.put(1, "max_grade", data.max_grade, f"the qrels grade 0..{data.max_grade}")
    t.blank()

    t.put(0, "split")
    if data.query_times:
        t.put(1, "method", "quantiles", "forward in time: the queries carry issue times")
        t.put(1, "quantiles", list(FORWARD), "train < 70% ≤ validation < 85% ≤ test; tags "
              "are counted over the test queries")
    else:
        t.put(1, "method", "given", "no query times: every query is evaluated (test)")
    t.blank()

    depths = {name: run.depth for name, run in c.runs.items()}
    depth = min(depths.values()) if depths else 100
    t.put(0, "candidates")
    t.put(1, "depth", depth, "every run's own depth" if len(set(depths.values())) <= 1 else
          "the shallowest run's depth ("
          + ", ".join(f"{n} {d}" for n, d in depths.items())
          + "): every run gets the same budget")
    t.put(1, "systems")
    _team_systems(t, c.runs)
    t.note(1, "no built-in route (bm25, dense): they search a corpus, and there is none")
    t.blank()
    t.put(0, "fusion")
    t.put(1, "systems", {}, "nothing fused: dvc.yaml has no fuse stage")
    t.blank()
    t.put(0, "pool")
    t.put(1, "systems", [], "no pool: the qrels are the dataset's own, nothing goes to judges")
    t.put(0, "judgments")
    t.put(1, "source", "dataset", "the dataset's own qrels")
    t.put(1, "automatic", None, "no automatic judge: the built-in one reads documents")
    t.blank()

    measures = ["nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10"]
    if data.hard_negatives:
        measures.insert(4, "HardNeg@10")
    t.put(0, "evaluate")
    t.put(1, "measures", measures)
    t.put(1, "splits", ["test"])
    t.blank()

    dims, absent = [], []
    for dim, present, why in (
            ("tag", bool(data.tags), "no query carries tags"),
            ("kind", bool(data.tags), "no query carries tags"),
            ("length", data.text, "the queries carry no text"),
            ("user_activity", data.users, "each query is its own user")):
        (dims if present else absent).append(dim if present else f"{dim} ({why})")
    absent += ["freshness (no documents)", "route_hit (nothing fused)",
               "tenant and role (one of each)"]
    t.put(0, "slices")
    t.put(1, "dimensions", dims)
    t.note(1, f"left out: {', '.join(absent)}")
    t.put(1, "min_n", MIN_PER_CATEGORY, "fewer queries in a slice: too small to test")
    t.blank()

    names = list(c.runs)
    baseline, candidate = _compared(c, (names[0], names[1]) if len(names) > 1
                                    else (names[0], names[0]))
    t.put(0, "compare")
    t.put(1, "baseline", baseline)
    t.put(1, "candidate", candidate)
    t.note(1, "change: the kind of change, if you know it (route, ranker, diversity, "
           "training_signal): what it must hold fixed")
    t.put(1, "measures", ["nDCG@10", "R@100", "RR@10"])
    t.put(1, "min_effect", 0.02, "smaller differences are not consequential")
    if data.users:
        t.put(1, "cluster", "user_id", "a user's queries correlate: resample users")
    t.put(1, "query_set", "judged", "every judged query; one a run misses scores 0 there and "
          "is counted (common: only those every run answers; refuse)")
    t.put(1, "test", "randomization", "the paired sign-flip test (t, wilcoxon, sign, "
          "bootstrap: the others papers report)")
    if len(names) > 2:
        t.put(1, "systems", "all", f"all {len(names)} runs in one decision: a leaderboard "
              "with the groups that cannot be told apart")
        t.put(1, "family", "baseline", f"each run against {baseline} (all_pairs: every pair)")
        t.put(1, "correction", "holm", "over the family's pairs (bh: Benjamini–Hochberg; "
              "tukey: Tukey's HSD, all_pairs)")
    strata = "kind" if data.tags else "length" if data.text else "kind"
    t.put(1, "strata", strata, "the slices of the equal-slice aggregate" + (
        "" if data.tags or data.text else ": one (no tags, no text)"))
    t.blank()
    _plan(t)

    t.put(0, "health")
    t.put(1, "cost", {}, "no cost model given: cost per query is not stated")
    t.put(0, "fixture")
    t.put(1, "path", None, "no frozen fixture beside the live data")
    t.blank()

    minimums = {k: MIN_PER_CATEGORY for k, n in data.tagged.items() if n >= MIN_PER_CATEGORY}
    thin = {k: n for k, n in data.tagged.items() if n < MIN_PER_CATEGORY}
    t.put(0, "query_set")
    t.put(1, "min_per_category", minimums,
          "the tagged risk categories the evaluated queries cover" if minimums
          else "no tagged risk category reaches the minimum: none to cover" if thin
          else "the queries carry no risk tags: no minimum to cover")
    if thin:
        t.note(1, f"tagged but below {MIN_PER_CATEGORY} evaluated queries (described, no "
               "minimum: add one to require more): "
               + ", ".join(f"{RISK_CATEGORIES[k].label} {n}" for k, n in thin.items()))
    if data.by_text:
        t.note(1, "recognised from the text only (described, no minimum): "
               + ", ".join(f"{RISK_CATEGORIES[k].label} {n}" for k, n in data.by_text.items()))
    t.blank()

    _no_log(t)
    no_answer = "no_answer" in data.tags
    t.put(0, "gate")
    t.put(1, "rollback")
    t.item(2, {"metric": "nDCG@10", "min": "baseline"},
           f"online below {baseline}'s offline value: roll back")
    t.put(1, "rules")
    t.put(2, "- rule", "no_regression")
    t.put(3, "measure", "nDCG@10")
    t.put(3, "max_drop", MAX_DROP)
    tag_slices = [f"tag={tag}" for tag, n in data.tags.items() if n >= MIN_PER_CATEGORY]
    if tag_slices:
        t.put(3, "slices", tag_slices, f"tags with ≥ {MIN_PER_CATEGORY} queries")
    if data.pooled:
        t.item(2, {"rule": "judged", "measure": "Judged@10", "min": JUDGED_MIN},
               "the qrels must cover what the candidate retrieves")
    if no_answer:
        t.item(2, {"rule": "no_answer", "max_drop": 0.05}, "queries tagged no_answer")
    if minimums:
        t.item(2, {"rule": "coverage"}, "each tagged category reaches its minimum")
    _guards(t, data.hard_negatives, latency=False)
    seeded = _seed_rules(t, c.runs, {candidate})
    left = [name for name, present in (
        (_no_judged(data.judgments, data.relevant), data.pooled),
        ("no_answer (no query tagged no_answer)", no_answer),
        ("coverage (no tagged risk category reaches its minimum)" if thin else
         "coverage (no risk tags)", bool(minimums)),
        ("seeds (the candidate carries no seed tags)", bool(seeded))) if not present]
    left += ["safety (no documents: no ACL, tenant, status or must-not-return to check a "
             "returned document against)",
             "health bounds (no documents: deletions, near-duplicates, freshness)",
             "the latency guard and any latency bound (team runs carry no latency)"]
    t.note(1, f"left out: {'; '.join(left)}")
    return t.text(*_tracked())


def _day(ts: pd.Timestamp) -> str:
    return ts.strftime("%Y-%m-%d")


HORIZON_DAYS = 30
FEEDBACK_DEPTH = 10  # a bandit log's few clicks fill short windows only


def _horizon(log: Log) -> int:
    """HORIZON_DAYS, or a third of a shorter log's whole days (at least 1), so that the
    train, validation and test windows all lie inside it (logged feedback: days of
    impressions, not months of purchases)."""
    days = (log.end.floor("D") - log.start.floor("D")).days
    return max(1, min(HORIZON_DAYS, days // 3))


def _feedback(t: _Text, fb: Feedback, c: Choices) -> None:
    """The offpolicy section of a project on logged bandit feedback."""
    t.put(0, "offpolicy")
    t.put(1, "log", c.data_path, f"{fb.log.interactions:,} impressions, "
          f"{fb.positives:,} with a positive reward")
    t.put(1, "slate_size", fb.slate, "the log's largest position")
    t.put(1, "policy", "uniform", "the candidate policy estimated: uniform over the items; "
          "or a table of action probabilities, or {system: <name>, rule: rank, epsilon: …}")
    t.put(1, "estimators", ["ips", "snips", "dm", "dr"])
    t.put(1, "clip", None, "importance weights unclipped")
    t.put(1, "reward_model", {"train_share": 0.5}, "DM and DR: fitted on the first half by "
          "time, estimated on the second")
    t.put(1, "resamples", 1000)
    t.put(1, "alpha", 0.05)
    t.put(1, "min_ess", 100, "fewer effective rows: the estimate is not trusted")
    t.put(1, "cluster", None, f"users are {fb.users_from}, not a column: each row is resampled")
    t.put(1, "reference", c.reference, "the candidate policy's own deployed log: ground truth"
          if c.reference else "no log of the candidate policy deployed")
    t.blank()


def recommendation(log: Log, c: Choices, feedback: Feedback | None = None) -> str:
    """params.yaml for an interaction log (users as queries); ``feedback``: the log is
    logged bandit feedback (its impressions the interactions, its clicks the positives),
    evaluated off-policy too."""
    t = _Text()
    if feedback is None:
        _header(t, f"{c.data_path} (interactions: {log.interactions:,} by {log.users:,} users "
                f"on {log.items:,} items, {_day(log.start)} to {_day(log.end)})")
    else:
        _header(t, f"{c.data_path} (logged feedback: {log.interactions:,} impressions, "
                f"{feedback.positives:,} clicked, {log.users:,} users, {log.items:,} items, "
                f"{_day(log.start)} to {_day(log.end)})")
    t.put(0, "prepare")
    if feedback is None:
        t.put(1, "source", "interactions")
        t.put(1, "path", c.data_path)
    else:
        t.put(1, "source", "logged_feedback", "offpolicy.log's impressions: a click is a "
              "label-1 interaction, an impression without one label 0")
    t.put(1, "max_grade", 1, "a positive is a label-1 interaction")
    t.blank()
    horizon = HORIZON_DAYS if feedback is None else _horizon(log)
    end = log.end.floor("D")
    test = end - pd.Timedelta(days=horizon)
    validation = test - pd.Timedelta(days=horizon)
    t.put(0, "split")
    t.put(1, "method", "dates", "forward in time")
    t.put(1, "cuts", [_day(validation), _day(test)],
          f"the last {horizon}-day horizon before the log ends is the test window")
    t.blank()
    context = log.context
    t.put(0, "recommend")
    t.put(1, "horizon_days", horizon, "a user's positives: label-1 items within it")
    t.put(1, "horizons_days", [], "further horizons (each ≤ horizon_days), e.g. [7, 28]: "
          "the gain per horizon and its novelty flag")
    t.put(1, "exclude_seen", True, "items bought before the cut are neither candidates "
          "nor positives")
    t.put(1, "holdout_users", 0.1, "users kept out of every route's fitting (slice: unseen)")
    t.put(1, "context", context, "the log's categorical columns, carried for slicing")
    t.blank()
    t.put(0, "candidates")
    if feedback is None:
        t.put(1, "depth", 100, "the same candidate budget for every system")
    else:
        t.put(1, "depth", FEEDBACK_DEPTH, f"the same candidate budget for every system: a "
              f"slate shows {feedback.slate}; the measures read the top 10")
    t.put(1, "systems")
    t.put(2, "popularity", {"route": "popularity", "window_days": 90},
          "the most bought items of the last 90 days")
    t.put(2, "cooccurrence", {"route": "cooccurrence"}, "items bought with the user's")
    content = log.titles
    if content:
        t.put(2, "content", {"route": "content"}, "item titles embedded, user = their mean")
    _team_systems(t, c.runs)
    t.blank()
    t.put(0, "fusion")
    t.put(1, "systems")
    t.put(2, "hybrid", {"lexical": "cooccurrence",
                        "dense": "content" if content else "popularity"},
          "two routes fused, tuned on the validation cut")
    t.blank()
    pooled = ["popularity", "cooccurrence", *(["content"] if content else []), *c.runs]
    t.put(0, "pool")
    t.put(1, "systems", pooled)
    t.put(0, "judgments")
    t.put(1, "source", "dataset", "the log's own future is the judge")
    t.put(1, "automatic", None, "no automatic judge (judge: dense, or labels: <file>): "
          "docs/automatic-judgments.md")
    t.blank()
    t.put(0, "evaluate")
    t.put(1, "measures", ["nDCG@10", "HR@10", "R@10", "P@10", "AP@10", "RR", "Coverage@10",
                          "Novelty@10", "LongTail@10"])
    t.put(1, "splits", ["test"])
    t.blank()
    dims = ["history", "returning", "holdout", "freshness",
            *(["country"] if "country" in context else [])]
    t.put(0, "slices")
    t.put(1, "dimensions", dims)
    t.put(1, "min_n", MIN_PER_CATEGORY)
    t.blank()
    baseline, candidate = _compared(c, ("popularity", "cooccurrence"))
    t.put(0, "compare")
    t.put(1, "baseline", baseline, "the simplest route that works")
    t.put(1, "candidate", candidate)
    t.put(1, "measures", ["nDCG@10", "HR@10", "R@10"])
    t.put(1, "min_effect", 0.01)
    t.put(1, "cluster", "user_id", "a user's two cuts correlate: resample users")
    t.put(1, "strata", "history")
    t.blank()
    _plan(t)
    t.put(0, "health")
    t.put(1, "cost", {}, "no cost model given")
    t.put(0, "query_set")
    t.put(1, "min_per_category", {}, "users as queries carry no risk tags")
    t.put(0, "fixture")
    t.put(1, "path", None, "routes that learn from the log have no frozen fixture")
    t.put(0, "failures")
    t.put(1, "deep_k", 500)
    t.blank()
    if feedback is None:
        _no_log(t)
    else:
        _feedback(t, feedback, c)
    t.put(0, "gate")
    t.put(1, "rollback")
    t.item(2, {"metric": "nDCG@10", "min": "baseline"},
           f"online below {baseline}'s offline value: roll back")
    t.put(1, "rules")
    t.item(2, {"rule": "no_regression", "measure": "nDCG@10", "max_drop": 0.0,
               "slices": ["history=long_tail"]}, "not worse overall nor for short histories")
    t.item(2, {"rule": "not_worse", "measure": "Coverage@10", "tolerance": 0.0},
           "the catalogue reached may not shrink")
    seeded = _seed_rules(t, c.runs, {candidate})
    if feedback is not None:
        t.item(2, {"rule": "off_policy", "estimator": "dr", "margin": 0.0},
               "the policy's DR estimate may not fall below the logged policy's value, and "
               "only a trusted estimate counts")
        t.note(1, f"the ranking rules read the {feedback.positives:,} clicks of the log: with "
               "few, their CIs are wide and they fail rather than pass; the comparison states "
               "what it could detect (MDE)")
    t.note(1, "left out: safety, no_answer, coverage (a log has no ACLs, no-answer tags or "
           "risk tags)" + ("" if seeded else "; seeds (no seed tags)")
           + "; latency (your SLO is not in the data)")
    return t.text(*_tracked())
