"""The looks file kept before the gate (releval.project.run_receipt.write_looks): built from the
ledger once, a new look added, a rerun of the same candidates leaving it byte for byte."""

import json

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.params import load_params
from releval.project.receipt import digest, write
from releval.project.run_receipt import LEDGER, LOOKS, write_looks
from tests.frames import write_looks_inputs

RUN = "data/fused/hybrid/run.parquet"


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """A project whose ledger holds one receipt written before looks were recorded."""
    (tmp_path / "params.yaml").write_text("base: {seed: 1}\n")
    write_looks_inputs(tmp_path, runs=[RUN])
    (tmp_path / LOOKS).unlink()
    older = {"schema": "releval.project.receipt/1", "code": {"commit": "abc", "dirty": False},
             "work": {"queries_evaluated": 1}, "inputs": {}}
    write(tmp_path / LEDGER / "20251201T100000Z-a.json",
          {"receipt": older, "sha256": digest(older),
           "run": {"finished_at": "2025-12-01T10:00:00+00:00"}})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_rerun_leaves_the_looks_file_and_a_new_candidate_adds_one_look(project):
    p = load_params("params.yaml")  # parsed once, as the flow does
    assert write_looks(p) is True  # built from the ledger, this run's looks added
    doc = json.loads(LOOKS.read_text())
    assert doc["unrecorded"] == 1  # the older receipt: said, not guessed
    assert [(r["split"], r["system"]) for r in doc["looks"]] == [("test", "hybrid"),
                                                                 ("validation", "hybrid")]
    written = LOOKS.read_bytes()
    assert write_looks(p) is False and LOOKS.read_bytes() == written
    pd.DataFrame({S.QUERY_ID: ["q4"], S.DOC_ID: ["d3"]}).to_parquet(RUN)  # a new candidate
    assert write_looks(p) is True
    looks = json.loads(LOOKS.read_text())["looks"]
    assert len(looks) == 4 and len({r["candidate"] for r in looks}) == 2
