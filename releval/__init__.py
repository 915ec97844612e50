"""releval: offline evaluation of retrieval and candidate generation.

The public API (docs/api.md): ``read_qrels``, ``read_run`` → ``Qrels``, ``Run``;
``evaluate`` → ``Results``; ``compare`` → ``Comparison``; ``gate`` → ``Decision``; ``plan`` →
``Plan``; ``flows.evaluate_project``, the pipeline of a project folder as a Prefect flow.

These names are resolved lazily (PEP 562: the module ``__getattr__`` imports the module that
implements a name, by name, on its first use). Every pipeline stage imports this package, and
a stage's code dependencies are the static import closure of its module
(``releval.project.closure``: an ``import`` anywhere in a file counts); so a stage that never
calls the API neither imports it nor depends on it. ``flows`` is the ``flows`` package, found
the same way: imports run flows → stages → releval, never back up.
"""

import importlib

__version__ = "0.1.0"

_API = {  # public name -> the module that implements it
    "read_qrels": "releval.api.inputs",
    "read_run": "releval.api.inputs",
    "Qrels": "releval.api.inputs",
    "Run": "releval.api.inputs",
    "evaluate": "releval.api.evaluation",
    "Results": "releval.api.evaluation",
    "compare": "releval.api.comparison",
    "Comparison": "releval.api.comparison",
    "gate": "releval.api.gating",
    "Decision": "releval.api.gating",
    "plan": "releval.api.planning",
    "Plan": "releval.api.planning",
}
_PACKAGES = {"flows": "flows"}  # public name -> a package of its own

__all__ = ["__version__", *_API, *_PACKAGES]


def __getattr__(name: str):
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    elif name in _PACKAGES:
        value = importlib.import_module(_PACKAGES[name])
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
