"""Scheduled evaluations end to end, and reproducing them: a real Prefect server on a loopback
port, `releval serve --interval 5` in a git project whose window of inputs (a folder outside
it) is replaced in place between two runs; the ledger, the over-time comparison, the Failed
state of a run whose gate fails; then `reproduce` of the last run from the DVC cache
(identical) and of the first, whose input has changed since (named, with what moved)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from flows.reproduce import reproduce
from tests.flows.windows import window
from tests.projects import SELFTEST, git_project, lexical_only, tiny_beir

ROOT = Path(__file__).resolve().parents[2]
SERVER_S, RUN_S = 90, 600  # bounds: the server's start, and the two runs together
FLOW = "releval-scheduled"
# two scheduled runs on a real server and two reproductions (about 7 minutes of one worker):
# in `make test-slow`, which .ci/run runs after `make test`
pytestmark = pytest.mark.slow


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _until(check, seconds: float, what: str, proc: subprocess.Popen | None = None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process ended ({proc.returncode})")
        found = check()
        if found:
            return found
        time.sleep(1)
    raise AssertionError(f"{what}: not within {seconds} s")


def project(base: Path) -> Path:
    """releval's code in a git project with params for the weekly window (tables, outside
    the project), two lexical routes (no model), a CACM slice as the pinned fixture and a
    gate of the safety rule alone."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["prepare"] |= {"source": "tables", "path": None}
    params = lexical_only(params)
    params["candidates"]["depth"] = 20
    params["evaluate"]["splits"] = ["train", "validation", "test"]
    params["compare"] |= {"measures": ["RR@10", "nDCG@10"], "resamples": 500,
                          "cluster": None, "strata": "kind"}
    params["gate"]["rules"] = [{"rule": "safety", "max_violations": 0}]
    params["failures"]["deep_k"] = 50
    params["selftest"] |= SELFTEST
    params["fixture"] = {"path": str(tiny_beir(base / "fixture", n_queries=10,
                                               extra_docs=40)), "source": "beir"}
    params["schedule"] |= {"name": "weekly",
                           "window": {"prepare.path": str(base / "windows" / "*")}}
    window(base / "windows" / "current", "w1")
    return git_project(base / "project", params)


def _runs(api: str) -> list[dict]:
    """The scheduled flow's runs that started, oldest first."""
    found = httpx.post(f"{api}/flow_runs/filter", json={
        "flows": {"name": {"any_": [FLOW]}}, "sort": "START_TIME_ASC"}, timeout=10)
    found.raise_for_status()
    return [r for r in found.json() if r.get("start_time")]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("schedule")
    root = project(base)
    port = _port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(base / "prefect"), "PREFECT_API_URL": api,
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_UI_ENABLED": "false",
           "DO_NOT_TRACK": "1"}
    env.pop("PREFECT_API_KEY", None)
    log = (base / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host",
                               "127.0.0.1", "--port", str(port), "--no-ui"], env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    serve = None
    try:
        _until(lambda: _healthy(api), SERVER_S, "the Prefect server", server)
        serve_log = (base / "serve.log").open("w")
        serve = subprocess.Popen([sys.executable, "-m", "releval.cli", "serve", "--interval",
                                  "5"], cwd=root, env={**env, "PYTHONPATH": str(root)},
                                 stdout=serve_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + RUN_S
        # the first run pins week 1; then the retraining job replaces the window in place
        # with week 2, which has a document the legal team asked never to return
        _until(lambda: (root / "data/input/prepare/pinned.json").exists(), RUN_S,
               "the first run's pinned inputs", serve)
        window(base / "windows" / "current", "w2", must_not_return=True)
        runs = _until(lambda: _finished(api, 2), deadline - time.monotonic(),
                      "two finished scheduled runs", serve)
        serve.send_signal(signal.SIGTERM)  # a third run, if one started, stops unfinished
        serve.wait(timeout=60)
        kept = sorted((root / "reports/runs").glob("*.json"))[:2]
        yield {"root": root, "base": base, "runs": runs, "api": api, "env": env,
               "kept": kept}
    finally:
        if serve is not None and serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def _healthy(api: str) -> bool:
    try:
        return httpx.get(f"{api}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _finished(api: str, n: int) -> list[dict] | None:
    runs = _runs(api)
    done = [r for r in runs if r["state"]["type"] in ("COMPLETED", "FAILED", "CRASHED")]
    return done[:n] if len(done) >= n else None


def _receipts(served) -> list[dict]:
    return [json.loads(p.read_text()) for p in served["kept"]]


def test_two_scheduled_runs_each_pin_their_window_and_write_a_receipt(served):
    first, second = served["runs"]
    assert first["state"]["type"] == "COMPLETED", first["state"]
    kept = _receipts(served)
    current = str(served["base"] / "windows" / "current")  # the glob's one match
    assert [r["run"]["schedule"]["window"] for r in kept] == [{"prepare.path": current}] * 2
    assert {r["run"]["schedule"]["flow_run_id"] for r in kept} == {first["id"], second["id"]}
    digests = [r["receipt"]["inputs"]["data/input/prepare"] for r in kept]
    assert digests[0] != digests[1]  # the same path, replaced in place: DVC saw the content
    assert kept[0]["receipt"]["inputs"]["data/input/fixture"] == \
        kept[1]["receipt"]["inputs"]["data/input/fixture"]  # the pinned fixture stays


def test_a_run_whose_gate_fails_ends_in_prefects_failed_state_naming_the_rule(served):
    _, second = served["runs"]
    assert second["state"]["type"] == "FAILED"
    message = second["state"]["message"]
    assert message.startswith("release gate FAIL: hybrid vs bm25: safety hybrid: ")
    assert "must_not_return" in message or "violation" in message


def test_the_second_run_is_set_against_the_first_uncontrolled_with_the_composition(served):
    first, second = _receipts(served)
    moved = second["run"]["over_time"]
    assert moved["controlled"] is False and "uncontrolled" in moved["note"]
    assert moved["previous"]["sha256"] == first["sha256"][:12]
    rr = moved["systems"]["bm25"]["RR@10"]
    assert rr["before"] == pytest.approx(0.32) and rr["after"] == pytest.approx(0.68)
    assert rr["rate"] == pytest.approx(0.0, abs=1e-12)
    assert rr["mix"] == pytest.approx(0.36)
    assert rr["rate"] + rr["mix"] == pytest.approx(rr["delta"], abs=1e-12)
    assert rr["equal_slice_before"] == pytest.approx(0.5) == rr["equal_slice_after"]
    assert rr["mix_shift"] is True  # the aggregate moved; neither slice did
    for parts in (p for measures in moved["systems"].values() for p in measures.values()):
        assert parts["rate"] + parts["mix"] == pytest.approx(parts["delta"], abs=1e-12)
    # the pinned fixture did not move: the live change is drift, not the system
    why = moved["attribution"]["bm25"]["RR@10"]
    assert why["fixture"] == 0.0 and why["verdict"] == "drift", why


def test_releval_history_shows_both_runs_and_the_decomposition(served):
    done = subprocess.run([sys.executable, "-m", "releval.cli", "history"],
                          cwd=served["root"], env={**served["env"], "COLUMNS": "400"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert text.count("prepare.path=") >= 2
    assert "UNCONTROLLED" in text and "slices by kind" in text
    row = next(line for line in done.stdout.splitlines() if "│ bm25" in line and "RR@10" in line)
    assert "0.3200 → 0.6800" in row and "0.5000 → 0.5000" in row
    assert "Δ +0.3600 = rate 0.0000 + mix" in text and "COMPOSITION: the query mix" in text
    assert "drift: live +0.3600 while the pinned fixture stayed (0.0000)" in text


@pytest.fixture(scope="module")
def prefect_api(served):
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PREFECT_API_URL", served["api"])  # reproduce's flows use the server too
        yield


def test_the_last_scheduled_run_reproduces_from_the_dvc_cache_byte_for_byte(served,
                                                                          prefect_api):
    root = served["root"]
    out = reproduce(served["kept"][1], root, pinned_only=True, progress=lambda _: None)
    assert out.identical, out.differences
    assert any("restored from the DVC cache" in note for note in out.notes)
    assert out.digests > 100 and out.metrics >= 12
    new = json.loads((root / "reports/reproduced.json").read_text())
    assert new["sha256"] == json.loads(served["kept"][1].read_text())["sha256"]


def test_reproducing_the_first_run_names_the_input_changed_in_place_and_what_moved(
        served, prefect_api):
    first = json.loads(served["kept"][0].read_text())
    out = reproduce(served["kept"][0], served["root"], progress=lambda _: None)
    assert not out.identical
    assert out.differences[0].startswith("input data/input/prepare: ")
    before = first["receipt"]["metrics"]["bm25"]["RR@10"]
    assert f"metric bm25 RR@10: {before:.6g} → 0.68" in out.differences
