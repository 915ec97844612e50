"""``releval metrics --format trec --trec-eval V`` prints what trec_eval V prints.

The oracles: the outputs trec_eval 9.0.8 and 10.0, built from their sources, printed for
trec_eval's own test files and for made inputs (tests/data/trec_eval10, written by
tests/metrics/trec_eval10_golden.py, whose ``CASES`` these tests run); pytrec_eval per query
for the default version; and, when RELEVAL_TREC_EVAL_10_SRC names trec_eval's sources (a
folder of 10.0's, or a git repository with the tags v10.0 and v9.0.8), the binaries built
from them now.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from releval.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metrics"))
from trec_eval10_golden import CASES, DATA, TAGS, build, output, tagged  # noqa: E402

runner = CliRunner()
# the measures of trec_eval's table releval prints, in every version, and each version's own
SHARED = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
          "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut",
          "map_cut", "success"}
OWN = {"9.0.8": set(), "10.0": {"rbp", "rbp_resid", "unj"}}
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret"}


def base(line: str) -> str:
    """A trec_eval output line's measure, without its cutoff (``P_10`` → ``P``)."""
    return re.sub(r"_\d+(\.\d+)?$", "", line.split("\t")[0].strip())


def releval(version: str, case: str, run: str | None = None, stdin: str | None = None):
    """releval on ``case``'s inputs as trec_eval ``version`` (the run at ``run`` instead of
    the case's, e.g. ``-``, fed ``stdin``)."""
    args, qrels, run_file, extra, _ = CASES[case]
    return runner.invoke(app, ["metrics", "--format", "trec", "--trec-eval", version, *extra,
                               *args, str(DATA / qrels), run or str(DATA / run_file)],
                         input=stdin)


def check(version: str, case: str, theirs: str) -> None:
    """releval prints exactly trec_eval's lines of the measures it shares with ``version``,
    in its order; where trec_eval refused the input (``exit N``), releval refuses it in one
    line. Where trec_eval divides 0 by 0 (iprec_at_recall on an empty -J ranking) it prints
    nan and releval 0: such a per-query line is 0.0000, such a mean is not compared."""
    result = releval(version, case)
    if theirs.startswith("exit "):
        assert result.exit_code == 2 and not result.stdout, result.output
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
        return
    assert result.exit_code == 0, result.output
    expected, unsure = [], set()
    for line in theirs.splitlines():
        name, query, value = line.split("\t")
        if base(line) not in SHARED | OWN[version]:
            continue
        if value.strip() in ("nan", "-nan"):
            if query == "all":
                unsure.add(name)
                continue
            line = f"{name}\t{query}\t0.0000"
        expected.append(line)
    ours = [line for line in result.stdout.splitlines()
            if line.split("\t")[0] not in unsure or "\tall\t" not in line]
    assert expected and ours == expected


@pytest.mark.parametrize("version", TAGS)
@pytest.mark.parametrize("case", CASES)
def test_equals_the_binary(version: str, case: str) -> None:
    check(version, case, (DATA / f"{version}.{case}.out").read_text())


def test_the_data_holds_what_differs_between_the_versions() -> None:
    """Each difference the tests above check shows in the binaries' outputs: the order of
    tied scores, the recall counts, the own measures, the missing query, the comments."""
    def lines(version: str, case: str, name: str) -> list[str]:
        text = (DATA / f"{version}.{case}.out").read_text()
        return [line for line in text.splitlines() if base(line) == name]

    for name in ("map", "bpref"):  # the queries both evaluate, in each version's tie order
        old, new = lines("9.0.8", "ties.cq", name), lines("10.0", "ties.cq", name)
        new = [line for line in new if "\t21\t" not in line]
        assert sum(a != b for a, b in zip(old, new, strict=True)) > 10
    assert lines("9.0.8", "302", "iprec_at_recall") != lines("10.0", "302", "iprec_at_recall")
    assert lines("10.0", "test.a", "unj") and not lines("9.0.8", "test.a", "unj")
    assert any("\t21\t" in line for line in lines("10.0", "ties.cq", "map"))
    assert (DATA / "10.0.ties.q.out").read_text().startswith("exit ")
    assert (DATA / "9.0.8.test.comments.out").read_text().startswith("exit ")


def _trec(path: Path) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        out.setdefault(fields[0], {})[fields[2]] = fields[3] if len(fields) == 4 else fields[4]
    return out


@pytest.mark.parametrize("case", ["ties.q", "test.aq", "302"])
def test_the_default_equals_pytrec_eval_per_query(case: str) -> None:
    """9.0.8 (the default) is pytrec_eval's evaluation, per query, scores tied or not."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    _, qrels, run, _, _ = CASES[case]
    judged = {q: {d: int(g) for d, g in docs.items()} for q, docs in _trec(DATA / qrels).items()}
    scored = {q: {d: float(s) for d, s in docs.items()} for q, docs in _trec(DATA / run).items()}
    theirs = pytrec_eval.RelevanceEvaluator(judged, SHARED - {"runid", "num_q"}).evaluate(scored)
    result = runner.invoke(app, ["metrics", "--format", "trec", "-q", "-m", "all_trec",
                                 str(DATA / qrels), str(DATA / run)])
    assert result.exit_code == 0, result.output
    per_query = [[field.strip() for field in line.split("\t")]
                 for line in result.stdout.splitlines() if "\tall\t" not in line]
    assert len(per_query) > 50 * len(theirs)
    for name, query, value in per_query:
        v = theirs[query][name]
        assert value == (f"{int(v)}" if name in COUNTS else f"{v:.4f}"), (name, query)


@pytest.mark.parametrize("version", TAGS)
def test_a_run_read_from_stdin_equals_the_file(version: str) -> None:
    text = (DATA / "run.ties").read_text()
    piped = releval(version, "ties.cq", run="-", stdin=text)
    assert piped.exit_code == 0, piped.output
    assert piped.stdout == releval(version, "ties.cq").stdout


def test_an_error_after_comment_lines_names_the_line_of_the_file(tmp_path: Path) -> None:
    run = "# one\n   # two\n1 Q0 d1 1 0.5 r\n1 Q0 d2 2 high r\n"
    (tmp_path / "run").write_text(run)
    for path, name in ((str(tmp_path / "run"), str(tmp_path / "run")), ("-", "<stdin>")):
        result = runner.invoke(app, ["metrics", "--format", "trec", "--trec-eval", "10.0",
                                     str(DATA / "qrels.comments"), path], input=run)
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: {name}:line 4: score must be a number")


def test_undefined_aware_leaves_a_query_without_a_relevant_judgment_out_of_rbp(
        tmp_path: Path) -> None:
    """trec_eval's rbp of a query without a relevant judgment is 0 and in the mean; with
    --undefined-aware it is left out (as RBP), while unj, defined wherever there are
    judgments, stays."""
    (tmp_path / "qrels").write_text("a 0 d1 1\na 0 d2 0\nb 0 d3 0\n")
    (tmp_path / "run").write_text("a Q0 d1 1 2 r\na Q0 d9 2 1 r\nb Q0 d3 1 1 r\nb Q0 d8 2 0 r\n")

    def summary(*flags: str) -> dict[str, str]:
        result = runner.invoke(app, ["metrics", "--format", "trec", "--trec-eval", "10.0",
                                     "-m", "rbp", "-m", "unj.5", *flags,
                                     str(tmp_path / "qrels"), str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        return {line.split("\t")[0].strip(): line.split("\t")[2]
                for line in result.stdout.splitlines() if "\tall\t" in line}

    assert summary() == {"rbp": "0.0500", "unj_5": "0.2000"}  # as trec_eval 10.0 prints
    assert summary("--undefined-aware") == {"rbp": "0.1000", "unj_5": "0.2000"}


@pytest.mark.skipif(not os.environ.get("RELEVAL_TREC_EVAL_10_SRC"),
                    reason="RELEVAL_TREC_EVAL_10_SRC names no trec_eval sources")
@pytest.mark.parametrize("version", TAGS)
def test_equals_the_binary_built_now(version: str) -> None:
    """Every case against trec_eval ``version`` built from RELEVAL_TREC_EVAL_10_SRC (9.0.8:
    from its tag there, or from RELEVAL_TREC_EVAL_9_SRC)."""
    src = Path(os.environ["RELEVAL_TREC_EVAL_10_SRC"])
    if version == "9.0.8":
        src = Path(os.environ.get("RELEVAL_TREC_EVAL_9_SRC", src))
        if "RELEVAL_TREC_EVAL_9_SRC" not in os.environ and not tagged(src, TAGS[version]):
            pytest.skip(f"{src} holds no tag {TAGS[version]} and RELEVAL_TREC_EVAL_9_SRC "
                        "names no 9.0.8 sources")
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(src, TAGS[version], Path(tmp))
        for case in CASES:
            check(version, case, output(binary, case))
