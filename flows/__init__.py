"""Prefect flows: run the DVC stages in order and validate their outputs between them.

``evaluate_project`` (``flows.project``), the pipeline of a project folder as a flow a
team's own flow calls, is found on first use (PEP 562), so importing this package imports no
flow."""

import importlib


def __getattr__(name: str):
    if name == "evaluate_project":
        return importlib.import_module("flows.project").evaluate_project
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
