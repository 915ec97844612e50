"""No module under releval/report/ reads a document by string key (``doc["key"]``,
``doc.get("key")``): the report reads the models' attributes, and every part of a document
the report reads has a model (``releval.documents``; the ledger's rows too,
``releval.documents.ledger``). A lookup by a data key held in a variable
(``summary.systems[name][measure]``) is not flagged; a string key that is a field of a
document model is, except on a line marked ``# column``: a column of a table (a pandas frame
or row read from a parquet artifact), which has no attributes to read."""

import ast
from pathlib import Path

from pydantic import BaseModel

from releval import artifacts

REPORT = Path(__file__).parents[2] / "releval" / "report"


def _fields(model: type, seen: set) -> set[str]:
    """Every field name (and alias) of ``model`` and of the models nested in it."""
    if model in seen or not (isinstance(model, type) and issubclass(model, BaseModel)):
        return set()
    seen.add(model)
    names = set()
    for name, f in model.model_fields.items():
        names |= {name, f.alias} - {None, "root"}
        for t in _nested(f.annotation):
            names |= _fields(t, seen)
    return names


def _nested(annotation) -> list:
    args = getattr(annotation, "__args__", ()) or ()
    return [annotation, *[t for a in args for t in _nested(a)]]


COLUMN = "# column"  # the mark of a line reading a column of a table by name
KEYS = set().union(*(_fields(artifacts.document(n), set()) for n, a in artifacts.CATALOG.items()
                     if a.document))


def string_key_lookups(source: str) -> list[tuple[int, str]]:
    """(line, key) of each ``x["key"]`` / ``x.get("key")`` whose key is a document field."""
    found, lines = [], source.splitlines()
    for node in ast.walk(ast.parse(source)):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args
              and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if isinstance(key, str) and key in KEYS \
                and not lines[node.lineno - 1].endswith(COLUMN):
            found.append((node.lineno, key))
    return found


def test_no_string_key_lookup_of_a_document_in_report():
    bad = {p.name: string_key_lookups(p.read_text(encoding="utf-8"))
           for p in sorted(REPORT.glob("*.py"))}
    assert {name: found for name, found in bad.items() if found} == {}


def test_the_check_finds_a_planted_lookup():
    planted = "def f(summary):\n    return summary[\"systems\"], summary.get(\"recommendation\")\n"
    assert string_key_lookups(planted) == [(2, "systems"), (2, "recommendation")]
    assert string_key_lookups("def f(summary, name):\n    return summary.systems[name]\n") == []
    column = "def f(frame):\n    return frame[\"n\"].sum()  # column\n"
    assert string_key_lookups(column) == []
    assert string_key_lookups(column.replace("  # column", "")) == [(2, "n")]


def test_no_line_is_left_untyped():
    """The mark of a document part left untyped is gone: every part has a model."""
    assert not [p.name for p in REPORT.glob("*.py") if "# untyped" in p.read_text()]
