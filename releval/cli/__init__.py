"""The ``releval`` command line: the library's commands on files (``releval.cli.files``) and
the project runner's (``releval.cli.project``), in one app."""

from __future__ import annotations

import typer

from releval.cli import files, plan, project

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Offline evaluation of retrieval and candidate generation.")

COMMANDS = {  # in the order ``releval --help`` lists them
    "metrics": files.metrics,
    "init": project.init,
    "run": project.run_pipeline,
    "reproduce": project.reproduce,
    "history": project.history,
    "serve": project.serve,
    "drift": project.drift,
    "plan": plan.plan,
    "demo": project.demo,
    "compare": files.compare,
    "gate": files.gate,
}
for name, command in COMMANDS.items():
    app.command(name)(command)


@app.callback()
def main() -> None:
    """releval: metrics with written definitions and trec_eval parity."""
