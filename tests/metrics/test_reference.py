"""docs/measures.md's reference is the measure registry rendered: a family, an option or a
definition changed in the code and not in the docs fails here."""

from pathlib import Path

import pytest

from releval.metrics.measures import MEASURES
from releval.metrics.reference import BEGIN, END, generated, main, render, splice

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "measures.md"


def test_docs_measures_is_the_registry_rendered():
    assert generated(DOC.read_text()) == render(), \
        "docs/measures.md is stale: run `make docs`"


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_every_family_is_there_with_its_options_level_direction_and_definition(name):
    family = MEASURES[name]
    text = render()
    entry = text[text.index(f"### `{name}`\n"):]
    entry = entry[:entry.index("\n### ") if "\n### " in entry else len(entry)]
    assert f"- level: {family.level}" in entry
    assert f"- better: {family.better}" in entry
    for option in family.params:
        assert f"`{option}` = " in entry
    assert family.definition.replace("``", "`") in entry
    assert f"[{name}](#" in text  # in the overview table


def test_undefined_is_said_where_the_docstrings_say_it():
    assert render().count("Undefined when") >= 20


def test_splice_replaces_the_generated_part_and_keeps_the_rest():
    doc = f"# Measures\n\nby hand, above\n\n{BEGIN}\nold\n{END}\n\nby hand, below\n"
    new = splice(doc)
    assert new.startswith("# Measures\n\nby hand, above\n\n")
    assert new.endswith("\n\nby hand, below\n")
    assert generated(new) == render()
    assert splice(new) == new


def test_a_document_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="markers"):
        splice("# Measures\n")


def test_the_module_writes_the_file_in_place(tmp_path, capsys):
    doc = tmp_path / "measures.md"
    doc.write_text(f"above\n{BEGIN}\n{END}\nbelow\n")
    assert main(["--write", str(doc)]) == 0
    assert doc.read_text() == f"above\n{render()}below\n"
    assert main([]) == 0
    assert capsys.readouterr().out == render()
