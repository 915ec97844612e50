"""The documentation holds together: README stays short and leads to every page of docs/,
every relative link and anchor resolves, and the worked example of docs/cli.md runs as
written. (README's own-data block: tests/test_readme.py; the measure reference:
tests/metrics/test_reference.py.)"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from releval.metrics.reference import slug

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def headings(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(h.strip()) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def where_to_go_next() -> str:
    text = README.read_text()
    start = text.index("## Where to go next")
    return text[start:text.index("\n## ", start + 1)]


def test_readme_is_at_most_250_lines():
    assert len(README.read_text().splitlines()) <= 250


def test_every_page_of_docs_is_listed_where_to_go_next():
    listed = set(LINK.findall(where_to_go_next()))
    assert [p.name for p in DOCS if f"docs/{p.name}" not in listed] == []


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_and_their_anchors_resolve(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in headings(file):
            broken.append(target)
    assert broken == []


def test_the_ties_example_of_docs_cli_runs_as_written(tmp_path):
    text = (ROOT / "docs" / "cli.md").read_text()
    block = text[text.index("Worked example"):]
    block = re.search(r"```\n(.*?)```", block, re.S).group(1)
    commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    shown = [" ".join(line.replace("│", " ").split()) for line in block.splitlines()
             if line.startswith("│")]
    assert commands[-1].startswith("releval metrics ") and len(shown) == 3
    script = "\n".join(commands[:-1] + [commands[-1].replace(
        "releval ", f"{sys.executable} -m releval.cli ", 1)])
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "120",
                                            "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    out = {" ".join(line.replace("│", " ").split()) for line in done.stdout.splitlines()}
    assert [row for row in shown if row not in out] == []
