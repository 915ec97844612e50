"""The ``releval`` command line: the library's commands on files (``releval.cli.files``) and
the project runner's (``releval.cli.project``), in one app.

Help is click's plain formatter (``rich_markup_mode=None``): a docstring's paragraphs are
rewrapped to the terminal as paragraphs, flags show as flags, and ``releval --help`` lists
each command with the first sentence of its docstring."""

from __future__ import annotations

import inspect
import re

import typer

from releval.cli import files, plan, project

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None,
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


def first_sentence(command) -> str:
    """The first sentence of ``command``'s docstring, on one line."""
    paragraph = " ".join(inspect.getdoc(command).split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s", paragraph, maxsplit=1)[0]


for name, command in COMMANDS.items():
    app.command(name, short_help=first_sentence(command))(command)


@app.callback()
def main() -> None:
    """releval: metrics with written definitions and trec_eval parity."""
