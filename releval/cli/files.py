"""The library's own commands, on files: ``metrics`` (a run against qrels), ``compare`` (two
per-query tables or runs) and ``gate`` (a gate decision as the exit status)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from releval import artifacts
from releval.api.evaluation import evaluate
from releval.api.inputs import Qrels, Run
from releval.cli.family import families, names_of, print_families
from releval.cli.output import AsJson, console, emit, fail
from releval.cli.printers import PRINTERS, Format, note_counts
from releval.data import contracts as S
from releval.data.readers import read_qrels, read_run
from releval.errors import InputError, reading
from releval.metrics import compiled, trec_eval
from releval.metrics.condensed import as_judged_only
from releval.metrics.engine import DEFAULT_MEASURES, resolve
from releval.metrics.measures import MEASURES
from releval.metrics.ranking import truncated
from releval.report.formats import (
    NOT_APPLICABLE,
    applicable,
    interval,
    mark,
    number,
    plural,
    rule_mark,
    rule_value,
    split_applicable,
    verdict,
    wins_ties_losses,
)


def _worded(exc: InputError) -> str:
    """A library error in this command's words: the flag that declares the scale named."""
    if isinstance(exc, S.AboveScale):
        return str(InputError(f"grade {exc.grade} is above the declared scale's maximum "
                              f"{exc.max_grade} (declare the scale: --max-grade)", exc.source,
                              exc.where))
    return str(exc)


def _select_system(run: pd.DataFrame, system: str | None) -> pd.DataFrame:
    # the distinct names first, then strings: never a string per row (100M rows at scale)
    systems = sorted(map(str, run[S.SYSTEM].unique())) if S.SYSTEM in run.columns else []
    if system is not None:
        if system not in systems:
            raise InputError(f"no system {system!r} in the run; it has {systems}",
                             run.attrs.get("source", "run"))
        picked = run[run[S.SYSTEM].map(str, na_action="ignore") == system] \
            if run[S.SYSTEM].dtype == object else run[run[S.SYSTEM] == system]
        picked.attrs.update(run.attrs)
        return picked
    if len(systems) > 1:
        raise InputError(f"the run holds {len(systems)} systems ({', '.join(systems[:5])}); "
                         "choose one with --system", run.attrs.get("source", "run"))
    return run


def metrics(
    qrels: Annotated[Path, typer.Argument(help="qrels: TREC (qid 0 docid grade), BEIR .tsv, "
                                          ".csv or .parquet")],
    run: Annotated[Path, typer.Argument(help="run: TREC (qid Q0 docid rank score tag), "
                                        ".csv or .parquet; - reads a TREC run from stdin")],
    measure: Annotated[list[str] | None, typer.Option(
        "-m", "--measure", help="measure, ir_measures or trec_eval style; repeatable "
        f"[default: {' '.join(DEFAULT_MEASURES)}]")] = None,
    per_query: Annotated[bool, typer.Option("-q", "--per-query",
                                            help="also print per-query values")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="output format; trec: trec_eval's "
                                        "lines, names and rules (default measures: its "
                                        "official set)")] = Format.table,
    complete: Annotated[bool, typer.Option(
        "-c", "--complete", help="average over every qrels query, one missing from the run "
        "scoring 0 (trec_eval -c; the default of every format but trec)")] = False,
    common_only: Annotated[bool, typer.Option(
        "--common-only", help="average over queries in both qrels and run (trec_eval's "
        "default, and --format trec's)")] = False,
    max_docs: Annotated[int | None, typer.Option(
        "-M", "--max-docs", min=1, help="evaluate only the first N documents of each ranked "
        "list (trec_eval -M)")] = None,
    judged_only: Annotated[bool, typer.Option(
        "-J", "--judged-only", help="measure on the ranking without its unjudged documents, "
        "where the measure has that form (trec_eval -J)")] = False,
    undefined_aware: Annotated[bool, typer.Option(
        "--undefined-aware", help="with --format trec: leave a query without a relevant "
        "judgment out of the means, as the other formats do, instead of scoring it 0 as "
        "trec_eval does")] = False,
    rel: Annotated[int, typer.Option("-l", "--rel", help="minimum grade that counts as "
                                     "relevant for binary measures (trec_eval -l)")] = 1,
    max_grade: Annotated[int, typer.Option("--max-grade",
                                           help="top of the declared grade scale")] = 3,
    system: Annotated[str | None, typer.Option(
        "--system", help="system to evaluate when the run table holds several")] = None,
    ties: Annotated[bool, typer.Option(
        "--ties", help="also report score ties: per measure the queries where a tie "
        "straddles the cutoff, and the range [worst, best] over every order of the tied "
        "documents beside the value")] = False,
    trec_version: Annotated[str, typer.Option(
        "--trec-eval", help="with --format trec: the trec_eval version reproduced "
        f"({', '.join(trec_eval.VERSIONS)}; 9.0.8 is pytrec_eval's)")] = trec_eval.DEFAULT_VERSION,
) -> None:
    """Evaluate RUN against QRELS. Queries without a relevant judgment are undefined:
    excluded from the means and counted; --format trec follows trec_eval (scored 0)."""
    if complete and common_only:
        fail("-c and --common-only name opposite query sets: choose one")
    if trec_version not in trec_eval.VERSIONS:
        fail(f"--trec-eval {trec_version}: unknown version (known: "
             f"{', '.join(trec_eval.VERSIONS)})")
    compiled.warm()  # the engine's loops compile (or load) while the files are read
    common_only = common_only or (fmt == Format.trec and not complete)
    comments = fmt == Format.trec and trec_eval.VERSIONS[trec_version].comments
    try:
        wanted = trec_eval.request(measure or trec_eval.DEFAULT, level=rel,
                                   judged_only=judged_only,
                                   version=trec_version) if fmt == Format.trec else None
        measures = [m for _, m in wanted.measures] if wanted else \
            resolve(measure or DEFAULT_MEASURES, rel=rel)
        if judged_only and not wanted:
            measures = as_judged_only(measures)
        run_frame = _select_system(read_run(run, comments=comments, compact=True), system)
        if run_frame.empty:  # trec_eval refuses an empty results file too
            raise InputError("the run holds no ranked document: nothing to evaluate", str(run))
        if wanted:
            run_frame = trec_eval.as_ranked(run_frame, trec_version)
        if max_docs is not None:
            run_frame = truncated(run_frame, max_docs)
        truth = read_qrels(qrels, comments=comments, compact=True)
        tag = str(run_frame[S.SYSTEM].iloc[0]) if S.SYSTEM in run_frame.columns and len(
            run_frame) else run.stem
        if wanted:
            result = trec_eval.evaluate(run_frame, truth, wanted, run_id=tag, level=rel,
                                        complete=not common_only, max_grade=max_grade,
                                        undefined_aware=undefined_aware, version=trec_version,
                                        per_query=per_query)
        else:
            result = evaluate(Qrels(truth, str(qrels)), {tag: Run(run_frame, tag, str(run))},
                              measures, query_set="common" if common_only else "judged",
                              rel=rel, max_grade=max_grade).evaluations[tag]
        if ties:
            from releval.metrics.ties import ties as tie_ranges

            tied = tie_ranges(run_frame, truth, measures, rel=rel, max_grade=max_grade,
                              common_only=common_only)
    except InputError as exc:
        fail(_worded(exc))
    evaluation = result.evaluation if wanted else result
    if evaluation.counts["queries_evaluated"] == 0:
        fail(f"{qrels}: nothing evaluated: no query of the qrels "
             + ("is in the run" if common_only and len(truth) else
                "has a judgment") + " (zero work is not a pass)")
    integer = {m.name for m in measures if MEASURES[m.family].aggregate == "sum"}
    if wanted:
        sys.stdout.write(result.text(per_query))
        note_counts(evaluation)
        if ties:
            _print_ties(tied, console(stderr=True), per_query=per_query, integer=integer)
    elif ties:
        _print_with_ties(result, tied, fmt, per_query=per_query, integer=integer)
    else:
        PRINTERS[fmt](result, per_query=per_query, integer=integer)
    if fmt == Format.csv:
        note_counts(result)


TIES_LEGEND = ("value: in trec_eval's order (score descending, ties by doc_id descending); "
               "[worst, best]: the least and greatest value over every order of the tied "
               "documents; ties: queries with a score tie across the measure's cutoff (no "
               "cutoff: a tie that changes the value); changed: queries whose value differs "
               "between the worst and best orders")
BY_RANK = ("ties: the run has a rank column, so its ranks decide the order: no score tie "
           "can change a value")


def _range(low, high, integer: bool) -> str:
    return escape(interval(low, high, ".0f" if integer else ".4f"))


def _tie_count(value, n=None) -> str:
    if pd.isna(value):
        return "not computed"
    return f"{int(value)}" + ("" if n is None else f"/{n}")


def _ties_tables(tied, *, per_query: bool, integer: set[str]) -> list:
    """The rich renderables of ``--ties``: per query (the pairs where a tie straddles the
    cutoff or changes the value), then per measure, then the legend."""
    if tied.by_rank:
        return [BY_RANK]
    out = []
    if per_query:
        rows = tied.per_query[tied.per_query["tied"].fillna(True)
                              | tied.per_query["changed"].fillna(True)]
        grid = Table(title="score ties per query (where a tie straddles the cutoff or changes "
                     "the value)")
        for col in ("query_id", "measure", "value", "[worst, best]", "tied"):
            grid.add_column(escape(col),
                            justify="left" if col in ("query_id", "measure") else "right")
        for r in rows.itertuples(index=False):
            whole = r.measure in integer
            grid.add_row(escape(str(r.query_id)), r.measure, number(r.value, ".0f" if whole
                                                                     else ".4f"),
                         _range(r.worst, r.best, whole) if not pd.isna(r.worst) else
                         "not computed", "?" if pd.isna(r.tied) else mark(bool(r.tied)))
        out.append(grid if len(rows) else "score ties per query: none that matter")
    table = Table(title="score ties (mean over n queries; counts are sums)")
    for col in ("measure", "value", "[worst, best]", "ties/n", "changed"):
        table.add_column(escape(col), justify="left" if col == "measure" else "right")
    for r in tied.summary.itertuples(index=False):
        whole = r.measure in integer
        table.add_row(r.measure, number(r.value, ".0f" if whole else ".4f"),
                      _range(r.worst, r.best, whole) if r.exact else "not computed",
                      _tie_count(r.ties, r.n), _tie_count(r.changed))
    c = tied.counts
    out += [table, escape(f"{c['tie_groups']} tie group(s) of {c['tied_documents']} documents "
                          f"in {c['queries_with_ties']} of {c['queries_evaluated']} queries. "
                          + TIES_LEGEND)]
    return out


def _none(value):
    return None if pd.isna(value) else value.item() if hasattr(value, "item") else value


def _ties_doc(tied, per_query: bool) -> dict:
    """``--ties`` in JSON: how the order was decided, the counts, per measure (and per query)
    worst, best, ties and changed."""
    doc = {"ranked_by": "rank" if tied.by_rank else "score", "counts": tied.counts,
           "measures": {r.measure: {"worst": _none(r.worst), "best": _none(r.best),
                                    "ties": _none(r.ties), "changed": _none(r.changed),
                                    "exact": bool(r.exact)}
                        for r in tied.summary.itertuples(index=False)}}
    if per_query:
        doc["per_query"] = [{k: _none(v) for k, v in r._asdict().items() if k != "value"}
                            for r in tied.per_query.itertuples(index=False)]
    return doc


def _print_with_ties(result, tied, fmt: Format, *, per_query: bool, **kw) -> None:
    """The evaluation as ``--format`` prints it, with the ties: table: the ties tables after
    it; trec (stdout is trec_eval's lines): the ties tables on stderr; json: a "ties" object
    added; csv: the ties table (per query with -q) in place of the summary."""
    if fmt == Format.csv:
        frame = tied.per_query if per_query else tied.summary
        frame.to_csv(sys.stdout, index=False)
        return
    if fmt == Format.json:
        import contextlib
        import io

        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            PRINTERS[fmt](result, per_query=per_query, **kw)
        doc = json.loads(buffer.getvalue())
        doc["ties"] = _ties_doc(tied, per_query)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    PRINTERS[fmt](result, per_query=per_query, **kw)
    _print_ties(tied, console(), per_query=per_query, integer=kw["integer"])


def _print_ties(tied, out: Console, *, per_query: bool, integer: set[str]) -> None:
    for part in _ties_tables(tied, per_query=per_query, integer=integer):
        if isinstance(part, str):
            out.print(part, highlight=False, soft_wrap=False)
        else:
            out.print(part)


class QuerySet(StrEnum):
    judged = "judged"
    common = "common"
    refuse = "refuse"


def print_paired(result: dict, out: Console | None = None) -> None:
    """A comparison.json's paired rows as one table, under the query set it ran over (a
    comparison where a run misses judged queries scored 0 says so in its title)."""
    block = result.get("query_set") or {}
    scored_zero = block.get("choice") == "judged" and not block.get("complete", True)
    n = max((r["n"] for r in result["paired"]), default=0)
    title = (f"paired comparison over {n} {plural(result['unit'], n)} (candidate − baseline)"
             + (" — MISSING QUERIES SCORED 0" if scored_zero else ""))
    table = Table(title=title)
    rows = result["paired"]
    named = rows[0].get("test", "randomization") if rows else "randomization"
    for col in ("measure", "slice", "n", "baseline", "candidate", "Δ mean", "95% CI",
                "W/T/L", f"p ({named})", "p (Holm)", "verdict"):
        table.add_column(col, justify="left" if col in ("measure", "slice", "verdict")
                         else "right")
    for r in result["paired"]:
        table.add_row(r["measure"], r["slice"], str(r["n"]), number(r["mean_baseline"]),
                      number(r["mean_candidate"]), number(r["mean_diff"], "+.4f"),
                      interval(r["ci_low"], r["ci_high"]), wins_ties_losses(r),
                      number(r["p_value"]), number(r["p_holm"]), r["verdict"])
    out = out or console()
    out.print(table)
    if block:
        out.print(f"query set ({block['choice']}): {escape(block['label'])}", highlight=False,
                  soft_wrap=True)


def _print_unpaired(result: dict) -> None:
    out = console()
    table = Table(title="UNCONTROLLED: different query samples, not a paired comparison")
    for col in ("measure", "before", "after", "Δ", "rate", "mix", "equal-slice", "mix shift"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for r in result["uncontrolled"]:
        table.add_row(r["measure"], number(r["before"]), number(r["after"]),
                      number(r["delta"], "+.4f"), number(r["rate"], "+.4f"),
                      number(r["mix"], "+.4f"),
                      f"{number(r['equal_slice_before'])} → {number(r['equal_slice_after'])}",
                      "yes" if r["mix_shift"] else "no")
    out.print(table)
    for r in result["uncontrolled"]:
        if r["mix_shift"]:
            out.print(f"FLAGGED (composition): {r['measure']} moved "
                      f"{number(r['delta'], '+.4f')} while no slice moved that way: the query "
                      "mix changed", highlight=False)
    d = result["differences"]
    out.print(f"queries only in baseline: {d['queries_only_in_baseline']}, only in candidate: "
              f"{d['queries_only_in_candidate']}", highlight=False)


class Test(StrEnum):
    randomization = "randomization"
    t = "t"
    wilcoxon = "wilcoxon"
    sign = "sign"
    bootstrap = "bootstrap"


class FamilyKind(StrEnum):
    baseline = "baseline"
    all_pairs = "all_pairs"


class Correction(StrEnum):
    holm = "holm"
    bh = "bh"
    tukey = "tukey"


def compare(
    files: Annotated[list[Path], typer.Argument(
        help="BASELINE CANDIDATE [MORE …]: per-query tables (query_id, measure, value) or "
        "runs (with --qrels); the first is the baseline")],
    qrels: Annotated[Path | None, typer.Option("--qrels", help="qrels, when the inputs are "
                                               "runs")] = None,
    measure: Annotated[list[str] | None, typer.Option("-m", "--measure",
                                                      help="measure; repeatable")] = None,
    slices: Annotated[Path | None, typer.Option("--slices", help="CSV/TSV: query_id, slice")]
    = None,
    weights: Annotated[Path | None, typer.Option("--weights", help="CSV/TSV: query_id, weight")]
    = None,
    cluster: Annotated[Path | None, typer.Option(
        "--cluster", help="CSV/TSV: query_id, user_id (resample and test over users)")] = None,
    allow_uncontrolled: Annotated[bool, typer.Option(
        "--allow-uncontrolled", help="different query sets: show the unpaired rate/mix view "
        "instead of refusing")] = False,
    min_effect: Annotated[float, typer.Option("--min-effect", min=0.0,
                                              help="minimum consequential effect")] = 0.0,
    seed: Annotated[int, typer.Option("--seed", min=0)] = 0,
    common_measures: Annotated[bool, typer.Option(
        "--common-measures", help="compare the measures both tables have, when one has more "
        "(else that is an error)")] = False,
    resamples: Annotated[int, typer.Option("--resamples", min=1,
                                           help="bootstrap and Monte Carlo resamples")]
    = 10_000,
    max_grade: Annotated[int, typer.Option("--max-grade")] = 3,
    fmt: Annotated[Format, typer.Option("--format", help="table or json")] = Format.table,
    query_set: Annotated[QuerySet, typer.Option(
        "--query-set", help="with runs: the judged queries the means run over: judged (every "
        "one; a query a run misses scores 0, trec_eval -c), common (those every run "
        "answers) or refuse (exit 2 when a run misses one)")] = QuerySet.judged,
    test: Annotated[Test, typer.Option(
        "--test", help="the significance test behind p: randomization (sign-flip), t (paired "
        "t), wilcoxon (signed-rank), sign, bootstrap (shifted)")] = Test.randomization,
    tie_band: Annotated[float, typer.Option(
        "--tie-band", min=0.0, help="--test sign: |Δ| ≤ X counts as a tie")] = 0.0,
    family: Annotated[FamilyKind | None, typer.Option(
        "--family", help="several systems: baseline (each against the first) or all_pairs "
        "[default with three or more files: baseline]")] = None,
    correction: Annotated[Correction, typer.Option(
        "--correction", help="the family's correction: holm, bh (Benjamini–Hochberg) or "
        "tukey (Tukey's HSD by randomization, all_pairs)")] = Correction.holm,
    gate_rules: Annotated[Path | None, typer.Option(
        "--gate", help="a rules file (gate.rules' entries): apply the rules that need only "
        "this comparison and exit 1 when one fails")] = None,
    reproduction: Annotated[bool, typer.Option(
        "--reproduction", help="ORIGINAL REPRODUCED (or ORIG_BASELINE REPRO_BASELINE "
        "ORIG_CANDIDATE REPRO_CANDIDATE) runs with --qrels: how close the reproduction is "
        "(RMSE, KTU, RBO; ER and ΔRI for a pair)")] = False,
) -> None:
    """Compare CANDIDATE with BASELINE: paired per query (bootstrap CI, the named test,
    Holm), or, for different query sets, refused unless --allow-uncontrolled. Three or more
    files (or --family): a leaderboard with the groups that cannot be told apart and every
    pair of the family with its correction. With runs and --qrels, the judged queries each
    run misses are counted and the query set is stated."""
    from releval.api.comparison import paired
    from releval.cli.inputs import check_coverage, read_map, read_side
    from releval.decision.compare import MeasuresDiffer, QueriesDiffer
    from releval.decision.missing import MissingQueries

    if reproduction:
        if qrels is None or len(files) not in (2, 4):
            fail("--reproduction needs runs and --qrels: ORIGINAL REPRODUCED, or "
                 "ORIG_BASELINE REPRO_BASELINE ORIG_CANDIDATE REPRO_CANDIDATE")
        from releval.cli.reproduction import reproduction_report

        try:  # four runs: the baseline's pair, then the candidate's (the run)
            reproduction_report(*(files[2:] if len(files) == 4 else files), qrels, measure,
                                baseline_pair=tuple(files[:2]) if len(files) == 4 else None,
                                fmt=fmt.value, max_grade=max_grade)
        except InputError as exc:
            fail(_worded(exc))
        return
    if len(files) < 2:
        fail("Missing argument: compare needs a baseline and a candidate (BASELINE CANDIDATE "
             "[MORE …]); see releval compare --help")
    several = family is not None or len(files) > 2
    if several and (slices or weights or cluster or allow_uncontrolled or gate_rules):
        fail("--slices, --weights, --cluster, --allow-uncontrolled and --gate compare one "
             "pair: give two files without --family")
    names = names_of(files)
    try:
        truth = read_qrels(qrels) if qrels else None
        judged = None if truth is None else set(map(str, truth[S.QUERY_ID].unique()))
        read = [read_side(p, truth, measure, max_grade=max_grade) for p in files]
        if several:
            result = families(dict(zip(names, read, strict=True)), measure, judged,
                              query_set=query_set.value,
                              family=(family or FamilyKind.baseline).value,
                              baseline=names[0], correction=correction.value,
                              test=test.value, tie_band=tie_band, min_effect=min_effect,
                              resamples=resamples, seed=seed)
        else:
            sides = [side.per_query for side in read]
            queries = set(sides[0][S.QUERY_ID]) | set(sides[1][S.QUERY_ID])
            maps = {}
            for kind, path in (("slice", slices), ("weight", weights), ("user_id", cluster)):
                if path:
                    maps[kind] = read_map(path, kind)
                    check_coverage(maps[kind], queries, kind)
            result = paired(
                dict(zip(names, sides, strict=True)), names[0], names[1],
                answers=dict(zip(names, (r.answers for r in read), strict=True)),
                judged=judged, measures=measure, query_set=query_set.value,
                slices=maps.get("slice"), weights=maps.get("weight"),
                clusters=maps.get("user_id"), allow_uncontrolled=allow_uncontrolled,
                min_effect=min_effect, seed=seed, resamples=resamples,
                common_measures=common_measures, test=test.value, tie_band=tie_band).doc
    except MeasuresDiffer as exc:  # the library's refusals, worded with this command's flags
        fail(f"{exc}; name the measures with -m, or pass --common-measures to compare "
             f"{', '.join(exc.common) or 'none'}")
    except QueriesDiffer as exc:
        fail(f"{exc}; pass --allow-uncontrolled for the unpaired rate/mix view")
    except MissingQueries as exc:
        fail(f"{exc}; pass --query-set common to compare the queries every run answers, or "
             "judged to score the missing ones 0")
    except InputError as exc:
        fail(_worded(exc))
    decision = _gate_of(result, gate_rules) if gate_rules else None
    if fmt == Format.json:
        sys.stdout.write(json.dumps(result if decision is None else result | {
            "gate": decision}, indent=2, default=str) + "\n")
    elif several:
        print_families(result)
    elif result["controlled"]:
        print_paired(result)
    else:
        _print_unpaired(result)
    if decision is not None:
        if fmt != Format.json:
            print_decision(decision, result.get("controlled", True) is not False)
        if not decision["passed"]:
            raise typer.Exit(1)


def _read_decision(path: Path) -> dict:
    """The decision at ``path``, checked; a missing file, bad JSON, a comparison or another
    document ends in one line saying what to give instead."""
    if not path.is_file():
        fail(f"{path}: file not found: no decision here; run `releval run` in a project, or "
             "give --comparison FILE --rules FILE")
    try:
        with reading(str(path)):
            doc = json.loads(path.read_text())
    except InputError as exc:
        fail(str(exc))
    if not isinstance(doc, dict) or not isinstance(doc.get("passed"), bool) \
            or not isinstance(doc.get("rules"), list) \
            or not all(isinstance(r, dict) for r in doc["rules"]):
        compared = isinstance(doc, dict) and ("paired" in doc or "uncontrolled" in doc)
        fail(f"{path}: not a gate decision " + (
            f"but a comparison: give --comparison {path} --rules FILE" if compared else
            "(needs a boolean 'passed' and a 'rules' list of objects)"))
    failed = [str(r.get("name", r.get("rule", "?"))) for r in doc["rules"]
              if r.get("passed") is not True]
    if doc["passed"] == bool(failed):
        fail(f"{path}: inconsistent decision: 'passed' is {str(doc['passed']).lower()} but "
             + (f"rule(s) failed: {', '.join(failed)}" if failed else "every rule passed"))
    return doc


def print_decision(doc: dict, controlled: bool, out: Console | None = None,
                   failed_only: bool = False) -> None:
    """The gate's rules as a table (``failed_only``: the failed and the n/a ones, the others
    counted in the title; no table when there are none), then the verdict."""
    out = out or console()
    title = f"release gate: {doc.get('candidate', '?')} against {doc.get('baseline', '?')}"
    checked, na = split_applicable(doc["rules"])
    failing = [r for r in checked if r.get("passed") is not True]
    rules = [r for r in doc["rules"] if not failed_only or not applicable(r)
             or r.get("passed") is not True]
    if failed_only:
        title += (f" — {len(failing)} of {len(checked)} rules failed"
                  + (f", {len(na)} {NOT_APPLICABLE}" if na else "")
                  + " (every rule: reports/decision.md)")
    table = Table(title=title + ("" if controlled else " (UNCONTROLLED)"))
    for col in ("rule", "passed", "value", "threshold", "reason"):
        table.add_column(col, justify="right" if col in ("value", "threshold") else "left")
    for r in rules:
        color = ("yellow" if not applicable(r) else "green" if r.get("passed") is True
                 else "red")
        table.add_row(escape(str(r.get("name", r.get("rule", "?")))),
                      f"[{color}]{rule_mark(r)}[/]",
                      rule_value(r.get("value")), rule_value(r.get("threshold")),
                      escape(str(r.get("reason", ""))))
    if rules or not failed_only:
        out.print(table)
    if doc.get("note"):
        out.print(f"note: {escape(str(doc['note']))}", highlight=False, soft_wrap=True)
    if not controlled:
        diffs = doc.get("differences") or []
        shown = "; ".join(map(str, diffs)) if isinstance(diffs, list) else str(diffs)
        out.print("UNCONTROLLED: the comparison's conditions differ"
                  + (f" ({escape(shown)})" if shown else ""), highlight=False, soft_wrap=True)
    failed = doc.get("failed") or []
    out.print(f"[{'green' if doc['passed'] else 'red'}]{verdict(doc['passed'])}[/]"
              + ("" if controlled else " UNCONTROLLED")
              + (f" ({len(failed)} failed: {escape(', '.join(map(str, failed)))})" if failed
                 else "")
              + (f" · {NOT_APPLICABLE}, nothing in the data to check: {len(na)}" if na else ""),
              highlight=False, soft_wrap=True)


def print_changed_slices(doc: dict, out: Console | None = None) -> None:
    """slices.json's slices whose verdict is improved or regressed after Holm, one table."""
    out = out or console()
    changed = [r for r in doc.get("changed", []) if r["dimension"] != "all"]
    head = (f"slices: {doc['tested']} tested, {doc['too_small']} too small; changed after Holm "
            f"over {doc['family']}:")
    if not changed:
        out.print(f"{head} none", highlight=False)
        return
    table = Table(title=head)
    for col in ("dimension", "slice", "measure", "n", "Δ mean", "p (Holm)", "verdict"):
        table.add_column(col, justify="right" if col in ("n", "Δ mean", "p (Holm)") else "left")
    for r in changed:
        table.add_row(r["dimension"], r["slice"], r["measure"], str(r["n"]),
                      number(r["mean_diff"], "+.4f"), number(r["p_holm"]), r["verdict"])
    out.print(table)


DECISION = artifacts.path("gate.decision")


def _gate_of(comparison: dict | Path, rules_file: Path) -> dict:
    """The gate's rules of ``rules_file`` applied to a comparison alone (a document, or its
    JSON file: ``releval.api.gating.gate``); bad input ends in one line."""
    from releval.api.gating import gate as gate_on

    try:
        return gate_on(comparison, rules_file).doc
    except InputError as exc:
        fail(str(exc))


def gate(
    decision: Annotated[Path, typer.Option("--decision", help="the gate stage's decision")]
    = DECISION,
    comparison: Annotated[Path | None, typer.Option(
        "--comparison", help="a comparison (releval compare --format json, or a pipeline's "
        "comparison.json): apply --rules to it instead of reading a decision")] = None,
    rules: Annotated[Path | None, typer.Option(
        "--rules", help="with --comparison: the rules (a list of gate.rules entries, or a "
        "params file)")] = None,
    as_json: AsJson = False,
) -> None:
    """Show the release decision; exit 0 when every rule passed, 1 when one failed, 2 when the
    decision file is missing or invalid. With --comparison and --rules: the rules that need
    only a comparison are applied to it (the others n/a, saying what they need). --json: the
    decision document as it is."""
    if (comparison is None) != (rules is None):
        fail("--comparison and --rules go together: the rules applied to the comparison")
    if comparison is not None:
        doc = _gate_of(comparison, rules)
    else:
        doc = _read_decision(decision)
    controlled = doc.get("controlled", True) is not False
    if as_json:
        emit(doc)
    else:
        print_decision(doc, controlled)
    if not doc["passed"]:
        raise typer.Exit(1)
