"""Regenerate tests/data/trec_eval10: what trec_eval 9.0.8 and 10.0 print (``CASES``) for
trec_eval's own test files and for inputs made here, as ``<version>.<case>.out`` (its
stdout, or ``exit N`` when it refused the input).

    python tests/metrics/trec_eval10_golden.py SRC [SRC_9]

SRC: a usnistgov/trec_eval git repository (a checkout or a bare mirror) holding the tags
``v10.0`` and ``v9.0.8``, or a folder of the 10.0 sources (then SRC_9, a folder of the 9.0.8
sources or such a repository, builds 9.0.8). Each is built with make in a temporary folder;
nothing of the sources is kept, only these inputs and the binaries' outputs:

- ``upstream/``: trec_eval 10.0's ``test/`` files named in ``UPSTREAM``, copied unchanged
  (NIST's notice in ``upstream/NOTICE``, as its license asks); where a case is one of its
  ``make quicktest`` lines, the 10.0 binary's output is checked against the expected output
  it ships;
- ``qrels.ties`` / ``run.ties``: 20 queries with many score ties, exact and equal only in
  float32 (``write_ties``), and a qrels query the run misses;
- ``qrels.comments`` / ``run.comments``: 10.0's comment lines at their edges
  (``write_comments``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval10"
TAGS = {"9.0.8": "v9.0.8", "10.0": "v10.0"}
UPSTREAM = ("qrels.test", "results.test", "results.trunc", "qrels.rel_level",
            "qrels.test.with-comments", "qrels-302.test", "results-302.test")
U = "upstream/"
# case -> (trec_eval's arguments before the files, qrels, run, releval's extra arguments,
# the expected output trec_eval 10.0 ships for exactly this command, if any)
CASES = {
    "test": ([], U + "qrels.test", U + "results.test", [], "out.test"),
    "test.comments": ([], U + "qrels.test.with-comments", U + "results.test", [], "out.test"),
    "test.a": (["-m", "all_trec"], U + "qrels.test", U + "results.test", [], "out.test.a"),
    "test.aq": (["-m", "all_trec", "-q"], U + "qrels.test", U + "results.test", [],
                "out.test.aq"),
    "test.aqc": (["-m", "all_trec", "-q", "-c"], U + "qrels.test", U + "results.trunc", [],
                 "out.test.aqc"),
    "test.aqcM": (["-m", "all_trec", "-q", "-c", "-M100"], U + "qrels.test",
                  U + "results.trunc", [], "out.test.aqcM"),
    "test.aqJ": (["-m", "all_trec", "-q", "-J"], U + "qrels.test", U + "results.test", [],
                 None),
    "test.aql": (["-m", "all_trec", "-q", "-l2"], U + "qrels.rel_level", U + "results.test",
                 ["--max-grade", "4"], None),
    "test.params": (["-q", "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3",
                     "-m", "recall.20,2000", "-m", "ndcg_cut.10,20,23", "-m", "success.2,5,20"],
                    U + "qrels.test", U + "results.test", [], None),
    "test.unj": (["-q", "-m", "unj.3,7,1000", "-m", "rbp_resid"], U + "qrels.test",
                 U + "results.test", [], None),
    "302": (["-m", "all_trec", "-q"], U + "qrels-302.test", U + "results-302.test", [], None),
    "ties.q": (["-m", "all_trec", "-q"], "qrels.ties", "run.ties", [], None),
    "ties.cq": (["-m", "all_trec", "-q", "-c"], "qrels.ties", "run.ties", [], None),
    "ties.cM": (["-m", "all_trec", "-c", "-M20"], "qrels.ties", "run.ties", [], None),
    "ties.cl2": (["-m", "all_trec", "-c", "-l2"], "qrels.ties", "run.ties", [], None),
    "ties.cJ": (["-m", "all_trec", "-c", "-J"], "qrels.ties", "run.ties", [], None),
    "comments": (["-q", "-c", "-m", "num_q", "-m", "num_rel", "-m", "map", "-m", "P.1",
                  "-m", "rbp"], "qrels.comments", "run.comments", [], None),
}
NOTICE = """trec_eval 10.0's test files (https://github.com/usnistgov/trec_eval, tag v10.0,
test/), copied unchanged by tests/metrics/trec_eval10_golden.py. Its LICENSE.md:

"""


def write_ties() -> None:
    """run.ties: 20 queries of up to 60 documents, scores from 4 bases plus coarse offsets
    (exact ties) plus 1e-9 offsets (equal in float32, distinct in double); qrels.ties: 25 of
    each query's documents graded 0..2, one relevant document never ranked, and query 21,
    judged but not in the run."""
    rng = np.random.default_rng(7)
    run, qrels = [], []
    for q in range(1, 21):
        docs = list(dict.fromkeys(f"d{rng.integers(0, 400):03d}" for _ in range(60)))
        scores = (rng.choice([0.5, 0.25, 1.0, 3.0], size=len(docs))
                  + rng.integers(0, 4, size=len(docs)) * 0.01
                  + rng.integers(0, 3, size=len(docs)) * 1e-9)
        run += [f"{q} Q0 {d} 0 {float(s)!r} tie" for d, s in zip(docs, scores, strict=True)]
        qrels += [f"{q} 0 {d} {rng.integers(0, 3)}"
                  for d in rng.choice(docs, size=min(25, len(docs)), replace=False)]
        qrels.append(f"{q} 0 zz{q} 1")
    qrels += ["21 0 d001 1", "21 0 d002 0"]
    (DATA / "run.ties").write_text("\n".join(run) + "\n")
    (DATA / "qrels.ties").write_text("\n".join(qrels) + "\n")


def write_comments() -> None:
    """qrels.comments: a comment line first; two and three in a row (10.0 reads the second
    of a pair as a judgment: queries "#q" and "#d"); run.comments: comment lines at the start,
    indented, between judgments, a blank line and a score tie."""
    (DATA / "qrels.comments").write_text(
        "# first comment\n#q 0 dx 1\n1 0 d1 1\n1 0 d2 0\n#c\n#d 0 dz 0\n#e 0 dy 2\n"
        "2 0 d3 1\n2 0 d4 1\n")
    (DATA / "run.comments").write_text(
        "# a comment\n  # indented\n1 Q0 d1 1 0.5 r\n1 Q0 d2 2 0.5 r\n\n2 Q0 d3 1 1.0 r\n"
        "#x\n2 Q0 d4 2 0.9 r\n")


def tagged(src: Path, tag: str) -> bool:
    """Whether ``src`` is a git repository holding the tag ``tag``."""
    return subprocess.run(["git", "-C", str(src), "rev-parse", "-q", "--verify",
                           f"{tag}^{{commit}}"], capture_output=True).returncode == 0


def build(src: Path, tag: str, into: Path) -> Path:
    """trec_eval built with make in a new folder of ``into``: the git tag ``tag`` of
    ``src`` when ``src`` is a git repository holding it, else the folder ``src`` as it is."""
    folder = into / f"{tag}-{len(list(into.iterdir()))}"
    if tagged(src, tag):
        folder.mkdir()
        archive = subprocess.run(["git", "-C", str(src), "archive", tag], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    else:
        shutil.copytree(src, folder, ignore=shutil.ignore_patterns(".git", "*.o", "trec_eval"))
    subprocess.run(["make", "-s", "trec_eval"], cwd=folder, check=True, capture_output=True)
    return folder / "trec_eval"


def output(binary: Path, case: str, data: Path = DATA) -> str:
    """What ``binary`` prints for ``case`` on the inputs in ``data``: its stdout, or
    ``exit N`` when it refused them."""
    args, qrels, run, _, _ = CASES[case]
    done = subprocess.run([str(binary), *args, str(data / qrels), str(data / run)],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else f"exit {done.returncode}\n"


def main(src: str, src_9: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        binaries = {"10.0": build(Path(src), TAGS["10.0"], Path(tmp)),
                    "9.0.8": build(Path(src_9 or src), TAGS["9.0.8"], Path(tmp))}
        tests = binaries["10.0"].parent / "test"
        (DATA / "upstream").mkdir(parents=True, exist_ok=True)
        for name in UPSTREAM:
            shutil.copyfile(tests / name, DATA / "upstream" / name)
        (DATA / "upstream" / "NOTICE").write_text(
            NOTICE + (binaries["10.0"].parent / "LICENSE.md").read_text())
        write_ties()
        write_comments()
        for version, binary in binaries.items():
            for case, (*_, shipped) in CASES.items():
                printed = output(binary, case)
                if version == "10.0" and shipped:
                    assert printed == (tests / shipped).read_text(), (case, shipped)
                (DATA / f"{version}.{case}.out").write_text(printed)
        args, qrels, run, _, _ = CASES["ties.cq"]  # 10.0 reads the run from stdin as a file
        piped = subprocess.run([str(binaries["10.0"]), *args, str(DATA / qrels), "-"],
                               input=(DATA / run).read_text(), capture_output=True, text=True)
        assert piped.stdout == output(binaries["10.0"], "ties.cq")


if __name__ == "__main__":
    main(*sys.argv[1:])
