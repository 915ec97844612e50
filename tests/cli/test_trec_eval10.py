"""releval metrics --format trec --trec-eval V against trec_eval V's own output
(tests/data/trec_eval10, from tests/metrics/trec_eval10_golden.py) and, for 9.0.8, against
pytrec_eval per query on a run with many score ties; live against a source checkout named by
RELEVAL_TREC_EVAL_10_SRC."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval10"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metrics"))
from trec_eval10_golden import CASES, VERSIONS, build  # noqa: E402

RELEVAL = [sys.executable, "-m", "releval.cli"]


def releval(version: str, args: list[str], run: str = "-") -> list[str]:
    """releval's trec lines for ``args`` on the tie data (the run through stdin for ``-``)."""
    out = subprocess.run([*RELEVAL, "metrics", "--format", "trec", "--trec-eval", version,
                          *args, str(DATA / "qrels.ties"), run],
                         input=(DATA / "run.ties").read_text() if version == "10.0" else
                         _plain(), capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _plain() -> str:
    return "".join(line for line in (DATA / "run.ties").read_text().splitlines(True)
                   if not line.startswith("#"))


def same_lines(ours: list[str], theirs: list[str]) -> None:
    """Every line we print is the binary's line, in its order; we leave out only the
    measures releval lacks."""
    names = {line.split("\t")[0] for line in ours}
    assert ours and [line for line in theirs if line.split("\t")[0] in names] == ours


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_equals_the_binary(version: str, case: str) -> None:
    same_lines(releval(version, CASES[case]),
               (DATA / f"{version}.{case}.out").read_text().splitlines())


def test_default_equals_pytrec_eval_per_query() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = collections.defaultdict(dict), collections.defaultdict(dict)
    for line in (DATA / "qrels.ties").read_text().splitlines():
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    for line in _plain().splitlines():
        q, _, d, _, s, _ = line.split()
        run[q][d] = float(s)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "bpref", "P", "ndcg_cut",
                                                    "iprec_at_recall"}).evaluate(run)
    compared = 0
    for line in releval("9.0.8", ["-q", "-m", "all_trec"]):
        name, q, value = line.split("\t")
        if q != "all" and name.strip() in theirs[q]:
            compared += 1
            assert value == f"{theirs[q][name.strip()]:.4f}", line  # as trec_eval prints it
    assert compared > 900


def test_versions_differ_on_ties() -> None:
    assert releval("9.0.8", CASES["all"]) != releval("10.0", CASES["all"])


@pytest.mark.skipif(not os.environ.get("RELEVAL_TREC_EVAL_10_SRC"),
                    reason="RELEVAL_TREC_EVAL_10_SRC names no trec_eval checkout")
@pytest.mark.parametrize("version", VERSIONS)
def test_live(version: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(Path(os.environ["RELEVAL_TREC_EVAL_10_SRC"]), VERSIONS[version],
                       Path(tmp))
        run = Path(tmp) / "run"
        run.write_text((DATA / "run.ties").read_text() if version == "10.0" else _plain())
        for args in CASES.values():
            theirs = subprocess.run([str(binary), *args, str(DATA / "qrels.ties"), str(run)],
                                    capture_output=True, text=True, check=True).stdout
            same_lines(releval(version, args), theirs.splitlines())
