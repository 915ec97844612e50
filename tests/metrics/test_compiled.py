"""The engine's compiled loops: compiled and cached on first use; without a writable cache
folder they still compile (in every process) and say so once."""

import subprocess
import sys

import pandas as pd
import pyarrow as pa

from releval.data.readers import read_qrels, read_run
from releval.metrics import compiled, doc_join
from releval.metrics.engine import evaluate

NO_CACHE = """
import warnings
from numba.core import caching
def refuse(*args, **kwargs):
    raise RuntimeError("cannot cache function: no locator available")
caching.CacheImpl.__init__ = refuse
import numpy as np, pyarrow as pa
from releval.metrics import compiled
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = np.empty(2, np.uint64)
    compiled.hash_strings(*compiled.buffers(pa.array(["d1", "é"], pa.large_string())), out)
print(out.tolist())
print(len(caught), caught[0].message)
"""


def test_without_a_cache_folder_the_loops_compile_and_say_so_once():
    done = subprocess.run([sys.executable, "-c", NO_CACHE], capture_output=True, text=True,
                          check=True)
    hashes, warned = done.stdout.splitlines()
    assert hashes == str(doc_join.hash64(pa.array(["d1", "é"], pa.large_string())).tolist())
    assert warned.startswith("1 releval: numba cannot cache the metrics engine's loops")
    assert "NUMBA_CACHE_DIR" in warned


def test_warming_compiles_every_loop_with_the_signatures_the_engine_calls(tmp_path):
    compiled.warm().join()
    names = ("hash_strings", "same_as_previous", "repeated_hashes", "join", "in_order",
             "trec_block", "gather_bytes")
    warmed = {name: len(getattr(compiled, name).signatures) for name in names}
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"],
                        "score": [2.0, 1.0, 3.0]})
    qrels = pd.DataFrame({"query_id": ["q2", "q1", "q1"], "doc_id": ["a", "b", "c"],
                          "grade": [1, 2, 0]})
    evaluate(run, qrels, ["nDCG@10", "AP"])
    evaluate(run.assign(rank=[1, 2, 1]), qrels, ["nDCG@10", "AP"])
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1.5e40 r\nq2 Q0 a 1 3 r\n")
    (tmp_path / "qrels.txt").write_text("q2 0 a 1\nq1 0 b 2\nq1 0 c 0\n")
    evaluate(read_run(tmp_path / "run.txt", compact=True),  # as ``releval metrics`` reads
             read_qrels(tmp_path / "qrels.txt", compact=True), ["nDCG@10", "AP"])
    assert all(warmed.values())
    assert {name: len(getattr(compiled, name).signatures) for name in names} == warmed
