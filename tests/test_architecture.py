"""The layers of docs/architecture.md hold: imports run flows -> stages -> releval only."""

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
