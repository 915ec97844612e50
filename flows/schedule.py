"""The pipeline on a schedule: ``releval serve`` serves flow ``releval-scheduled`` as a
Prefect deployment (``flow.serve``) with a cron or interval schedule. Prefect's server
creates the runs on the schedule; the serving process runs them, one at a time.

Each scheduled run:

1. resolves its window: every ``window`` entry (params key -> value) is formatted with the
   run's scheduled time (``{date:%Y-%m-%d}``, ``{date:%G-W%V}``, UTC); a value with glob
   characters (``* ? [``) then names the last matching path in string order (relative to
   the project; ``prod-9`` sorts after ``prod-10``: pad numbers or use dates). No match
   fails the run naming the key and the pattern;
2. takes the project's run lock (a manual run holding it fails this run in one line, and
   nothing is written), then writes those values into the params file (as ``releval run
   -S`` does: comments kept; each value quoted, a string), so the run pins its own inputs
   (stage inputs) and writes its own receipt;
3. runs the pipeline flow as a subflow, the deployment, flow run, scheduled time and window
   kept in the receipt, which also sets this run against the previous one in the ledger
   (``releval.project.history``);
4. ends Completed when the gate passed; Failed, with the failed rules in its message, when
   the gate failed or a stage failed, so Prefect's notifications and automations fire.
"""

from __future__ import annotations

import glob
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.runtime import deployment, flow_run
from prefect.schedules import Cron, Interval
from prefect.states import Failed

from flows.console import offline_env
from flows.pipeline import on_executor, parsers
from releval import artifacts
from releval.errors import InputError
from releval.params import load_params, write_overrides
from releval.project.runner import exclusive

GLOB = set("*?[")
FLOW_NAME = "releval-scheduled"


def window_values(window: dict[str, str], when: datetime, root: Path = Path(".")
                  ) -> dict[str, str]:
    """This run's value of each window entry (module docstring, step 1); InputError naming
    the key when a pattern does not format or matches nothing."""
    values = {}
    for key, pattern in window.items():
        try:
            value = pattern.format(date=when)
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(f"cannot format {pattern!r} with the run's date ({exc}); use "
                             "{date:%Y-%m-%d}-style fields", "schedule.window", key) from None
        if GLOB & set(value):
            found = sorted(glob.glob(value, root_dir=root))
            if not found:
                raise InputError(f"no path matches {value!r} for the run of "
                                 f"{when:%Y-%m-%d %H:%M} UTC", "schedule.window", key)
            value = found[-1]
        values[key] = value
    return values


def write_window(params_path: str, values: dict[str, str]) -> None:
    """The window's values into the params file, each quoted (a string, whatever YAML would
    read it as: a date, a number), every comment kept."""
    write_overrides(params_path, [f"{k}={json.dumps(v)}" for k, v in values.items()])


def gate_message(decision: dict) -> str:
    """One line: the verdict, the pair, and each failed rule with its reason."""
    failed = [r for r in decision["rules"] if not r["passed"]]
    return (f"release gate FAIL: {decision['candidate']} vs {decision['baseline']}: "
            + "; ".join(f"{r['name']}: {r['reason']}" for r in failed))


@flow(name=FLOW_NAME)
def scheduled(params_path: str = "params.yaml", window: dict[str, str] | None = None):
    """One scheduled evaluation (module docstring): Completed with the pipeline's record when
    the gate passed, else Failed with the failed rules."""
    logger = get_run_logger()
    when = datetime.fromtimestamp(flow_run.scheduled_start_time.timestamp(), UTC)
    try:
        values = window_values(window or {}, when)
        context = {"deployment": deployment.name, "flow_run": flow_run.name,
                   "flow_run_id": flow_run.id, "scheduled_at": when.isoformat(),
                   "window": values}
        with exclusive() as cleared:  # nothing is written before the project is ours
            for what in cleared:
                logger.warning("cleared what an ended run left: %s", what)
            if values:
                write_window(params_path, values)
                logger.info("window: %s", ", ".join(f"{k}={v}" for k, v in values.items()))
            with on_executor(params_path) as (run, executed):
                state = run(params_path, schedule=context, executed=executed,
                            return_state=True)
    except InputError as exc:
        logger.error(str(exc))
        return Failed(message=str(exc))
    if not state.is_completed():
        return Failed(message=state.message)
    decision = json.loads(artifacts.path("gate.decision").read_text())
    if not decision["passed"]:
        message = gate_message(decision)
        logger.error(message)
        return Failed(message=message)
    return state.result()


def serve(params_path: str, cron: str | None, interval: float | None,
          window: dict[str, str], name: str) -> None:
    """Serve ``scheduled`` as deployment ``name`` on its schedule until stopped; InputError
    for a schedule that is not exactly one valid cron string or positive interval."""
    if bool(cron) == bool(interval is not None):
        raise InputError("give the schedule as exactly one of --cron or --interval (or "
                         "schedule.cron / schedule.interval)", params_path)
    if interval is not None and interval <= 0:
        raise InputError(f"--interval must be a positive number of seconds, got {interval:g}",
                         params_path)
    try:
        schedule = (Cron(cron, timezone="UTC") if cron else Interval(interval))
    except ValueError as exc:
        raise InputError(f"not a valid cron schedule {cron!r}: {exc}", "--cron") from None
    scheduled.serve(name=name, schedule=schedule, limit=1,
                    parameters={"params_path": params_path, "window": window},
                    description=f"releval pipeline on {params_path}, "
                                f"{'cron ' + cron + ' (UTC)' if cron else f'every {interval:g} s'}")


def main() -> None:
    """``python -m flows.schedule [--params P] [--cron C | --interval S] [--window K=V ...]
    [--name N]``: flags override params' ``schedule`` section."""
    import argparse

    import httpx
    from prefect.settings import PREFECT_API_URL

    ap = argparse.ArgumentParser(description="Serve the releval pipeline on a schedule.")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--cron")
    ap.add_argument("--interval", type=float)
    ap.add_argument("--window", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--name")
    args = ap.parse_args()
    offline_env()
    api = PREFECT_API_URL.value()
    try:
        s = load_params(args.params, parsers=parsers()).schedule  # checked before anything
        if not api:
            raise InputError("releval serve needs a Prefect server: start one (prefect server "
                             "start) and set PREFECT_API_URL, e.g. http://127.0.0.1:4200/api",
                             "PREFECT_API_URL")
        window = dict(s.window) | dict(_pair(w) for w in args.window)
        given = args.cron or args.interval is not None
        cron, interval = (args.cron, args.interval) if given else (s.cron, s.interval)
        serve(args.params, cron, interval, window, args.name or s.name)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except (httpx.HTTPError, OSError) as exc:
        print(f"error: PREFECT_API_URL: no Prefect server answers at {api} ({exc})",
              file=sys.stderr)
        sys.exit(2)


def _pair(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise InputError(f"{item!r} is not KEY=VALUE", "--window")
    return key.strip(), value


if __name__ == "__main__":
    main()
