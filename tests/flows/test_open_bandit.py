"""The Open Bandit Dataset's sample end to end, as docs/recommendation.md runs it: ``releval
init --logged-feedback`` on the Thompson Sampling log with the random log as the reference,
then ``releval run --gate``: the off-policy section, the off_policy rule with its diagnostics
and the report, on that data only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "open-bandit"


@pytest.mark.slow  # the whole pipeline (about two minutes); in `make test-all`
def test_the_uniform_policy_estimated_from_bts_against_the_random_log(tmp_path):
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    init = subprocess.run(["releval", "init", "ob", "--logged-feedback",
                           str(SHARED / "bts" / "all"), "--reference",
                           str(SHARED / "random" / "all")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stderr
    root = tmp_path / "ob"
    done = subprocess.run(["releval", "run", "--gate"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1200)
    doc = json.loads((root / "data/offpolicy/offpolicy.json").read_text())
    assert doc["reference"]["value"] == pytest.approx(0.0038)  # the random log's 38 clicks
    assert doc["on_policy"]["value"] == pytest.approx(0.0042)  # bts's own 42
    overall = {e["estimator"]: e for e in doc["estimates"] if e["position"] == "all"}
    assert set(overall) == {"ips", "snips", "dm", "dr"}
    assert overall["ips"]["covers"] and overall["snips"]["covers"]
    assert overall["ips"]["n"] == 10_000 and overall["dr"]["n"] == 5_000
    assert not doc["diagnostics"]["passed"] and "never shows" in doc["diagnostics"]["reasons"][0]
    decision = json.loads((root / "data/gate/decision.json").read_text())
    rule = next(r for r in decision["rules"] if r["rule"] == "off_policy")
    assert not rule["passed"] and rule["reason"].startswith("the estimate cannot be trusted")
    assert done.returncode == 1 and not decision["passed"], done.stderr
    page = (root / "reports/index.html").read_text(encoding="utf-8")
    assert '<section id="offpolicy">' in page and 'id="plot-offpolicy_weights"' in page
    assert "## Off-policy evaluation" in (root / "reports/decision.md").read_text()
