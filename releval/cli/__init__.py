"""The ``releval`` command line: the library's commands on files (``releval.cli.files``) and
the project runner's (``releval.cli.project``), in one app.

Help is click's plain formatter (``rich_markup_mode=None``): a docstring's paragraphs are
rewrapped to the terminal as paragraphs, flags show as flags, and ``releval --help`` lists
each command with the first sentence of its docstring.

``main`` is the command itself (the console script, ``python -m releval.cli``): the app with
every way it can end as one line on stderr (``releval.cli.output.usage_line``,
``releval.errors.end``)."""

from __future__ import annotations

import inspect
import re
import sys
from typing import NoReturn

import typer
from typer._click import exceptions as usage  # typer's own copy of click's exceptions

from releval.cli import files, plan, project
from releval.cli.output import usage_line
from releval.errors import DEBUG, end

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
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
def root() -> None:
    """releval: metrics with written definitions and trec_eval parity."""


VERBOSE = ("-v", "--verbose")  # the flag of the commands that run the pipeline (run, demo)


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the app on ``argv`` (default: the process's arguments) and exit: a usage error is
    one line, status 2 (``usage_line``); bad input one line, status 2; any other exception a
    bug, one line and status 1, with its traceback when the command was given -v/--verbose or
    $RELEVAL_DEBUG is 1 (``releval.errors.end``). No arguments print the help."""
    args = sys.argv[1:] if argv is None else list(argv)
    command = typer.main.get_command(app)
    try:
        code = command.main(args, prog_name="releval", standalone_mode=False)
    except usage.NoArgsIsHelpError as exc:
        exc.show()
        code = exc.exit_code
    except usage.UsageError as exc:
        print(usage_line(exc), file=sys.stderr)
        code = exc.exit_code
    except usage.ClickException as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        code = exc.exit_code
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        code = 1
    except Exception as exc:
        code = end(exc, verbose=bool(set(VERBOSE) & set(args)),
                   hint=f"rerun with {DEBUG}=1 for the traceback")
    sys.exit(code if isinstance(code, int) else 0)
