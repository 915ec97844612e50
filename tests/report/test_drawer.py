"""The drawing helper (releval/report/drawer.py): the SVG it draws is the one drawn in the
process itself; a spec vl-convert rejects raises here; a helper gone leaves the drawing to
the process. Run in a fresh interpreter: the helper is a forked process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import os
    from releval.report import drawer
    spec = {"data": {"values": [{"a": 1, "b": 2}, {"a": 2, "b": 3}]}, "mark": "line",
            "encoding": {"x": {"field": "a", "type": "quantitative"},
                         "y": {"field": "b", "type": "quantitative"}}}
    drawer.start()
    assert drawer.draw(spec) == drawer.here(spec)
    try:
        drawer.draw({"mark": {"type": "no such mark"}})
    except ValueError as exc:
        print("rejected:", str(exc)[:40])
    pid = os.wait3(os.WNOHANG)[0]
    assert pid == 0  # the helper still runs
    drawer._HELPER[0][0].close()  # our end closed: the helper ends
    drawer._HELPER.clear()
    os.wait()  # returns: the helper has ended
""")


def _run(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_helper_draws_what_the_process_draws_and_ends_with_it():
    done = _run(SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("rejected: vl-convert:")


def test_a_helper_gone_leaves_the_drawing_to_the_process():
    done = _run(textwrap.dedent("""
        import os, signal
        from releval.report import drawer
        spec = {"data": {"values": [{"a": 1}]}, "mark": "point",
                "encoding": {"x": {"field": "a", "type": "quantitative"}}}
        real_fork = os.fork
        pids = []
        os.fork = lambda: pids.append(real_fork()) or pids[-1]
        drawer.start()
        os.fork = real_fork
        if pids[0]:
            os.kill(pids[0], signal.SIGKILL)
            os.waitpid(pids[0], 0)
            assert drawer.draw(spec) == drawer.here(spec)
            assert not drawer._HELPER  # passed over from now on
            print("drawn here")
    """))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "drawn here"


def test_a_process_running_other_threads_starts_no_helper():
    done = _run(textwrap.dedent("""
        import threading
        from releval.report import drawer
        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        drawer.start()
        stop.set()
        print("helpers", len(drawer._HELPER))
    """))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "helpers 0"
