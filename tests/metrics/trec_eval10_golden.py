"""Regenerate tests/data/trec_eval10: a run with many score ties (exact, and equal only in
float32), its qrels, and what trec_eval 9.0.8 and 10.0 print for it (``CASES``).

    python tests/metrics/trec_eval10_golden.py SRC   # SRC: a usnistgov/trec_eval checkout

SRC's tags v9.0.8 and v10.0 are built with make in a temporary folder; nothing of their
source is kept here, only the inputs generated below and the binaries' outputs.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval10"
VERSIONS = {"9.0.8": "v9.0.8", "10.0": "v10.0"}
CASES = {"all": ["-m", "all_trec"], "q": ["-q", "-m", "all_trec"],
         "cq": ["-c", "-q", "-m", "all_trec"], "M": ["-M", "20", "-q", "-m", "all_trec"],
         "l2": ["-l", "2", "-q", "-m", "all_trec"]}


def write_inputs() -> None:
    """run.ties (30 queries, 4 base scores + coarse and 1e-9 offsets; a ``#`` line first) and
    qrels.ties."""
    rng = np.random.default_rng(7)
    run, qrels = [], []
    for q in range(1, 31):
        docs = list(dict.fromkeys(f"d{rng.integers(0, 400):03d}" for _ in range(60)))
        scores = (rng.choice([0.5, 0.25, 1.0, 3.0], size=len(docs))
                  + rng.integers(0, 4, size=len(docs)) * 0.01
                  + rng.integers(0, 3, size=len(docs)) * 1e-9)
        run += [f"{q} Q0 {d} 0 {float(s)!r} tie" for d, s in zip(docs, scores, strict=True)]
        qrels += [f"{q} 0 {d} {rng.integers(0, 3)}"
                  for d in rng.choice(docs, size=min(25, len(docs)), replace=False)]
        qrels.append(f"{q} 0 zz{q} 1")
    (DATA / "run.ties").write_text("# trec_eval 10.0 skips this line\n" + "\n".join(run) + "\n")
    (DATA / "qrels.ties").write_text("\n".join(qrels) + "\n")


def build(src: Path, tag: str, into: Path) -> Path:
    """trec_eval at ``tag`` of the checkout ``src``, built in ``into``."""
    folder = into / tag
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(src), "archive", tag], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    subprocess.run(["make", "-s"], cwd=folder, check=True, capture_output=True)
    return folder / "trec_eval"


def main(src: str) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    write_inputs()
    body = "".join(line for line in (DATA / "run.ties").read_text().splitlines(True)
                   if not line.startswith("#"))
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "run.plain"
        plain.write_text(body)  # 9.0.8 reads no comment line
        for version, tag in VERSIONS.items():
            binary = build(Path(src), tag, Path(tmp))
            run = DATA / "run.ties" if version == "10.0" else plain
            for case, args in CASES.items():
                out = subprocess.run([str(binary), *args, str(DATA / "qrels.ties"), str(run)],
                                     check=True, capture_output=True, text=True)
                (DATA / f"{version}.{case}.out").write_text(out.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
