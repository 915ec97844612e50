"""The layers of docs/architecture.md hold: imports run flows -> stages -> releval only."""

import ast
import re

import pytest

from releval.project.closure import imports
from tests.dag import ROOT

FORBIDDEN = {
    "releval": ("prefect", "dvc", "great_expectations", "flows", "stages"),
    "stages": ("prefect", "great_expectations", "flows"),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_runs_upward(layer):
    upward = {}
    for path in sorted((ROOT / layer).rglob("*.py")):
        names = {n.split(".")[0] for n in imports(path, ROOT)}
        bad = sorted(names & set(FORBIDDEN[layer]))
        if bad:
            upward[str(path.relative_to(ROOT))] = bad
    assert upward == {}


def test_the_architecture_document_names_every_library_folder():
    text = (ROOT / "docs" / "architecture.md").read_text()
    folders = sorted(p.name for p in (ROOT / "releval").iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    assert [f for f in folders if f"`releval/{f}/`" not in text] == []
    citing = [str(f.relative_to(ROOT)) for layer in ("releval", "stages", "flows")
              for f in (ROOT / layer).rglob("*.py") if "DESIGN.md" in f.read_text()]
    assert citing == []  # modules cite docs/architecture.md, a file of this project


FLAG = re.compile(r"(?<![\w`-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])")


def test_the_library_raises_no_command_line_flags():
    """Errors raised under releval/ (the CLI's own folder aside) speak of the data; the CLI
    catches them and names its flags. A command of another tool in backticks may show its
    own flags (`dvc fetch --all-commits`)."""
    found = []
    for path in sorted((ROOT / "releval").rglob("*.py")):
        if (ROOT / "releval" / "cli") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                text = "".join(n.value for n in ast.walk(node.exc)
                               if isinstance(n, ast.Constant) and isinstance(n.value, str))
                text = re.sub(r"`[^`]*`", "", text)
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {m}"
                          for m in FLAG.findall(text)]
    assert found == []
