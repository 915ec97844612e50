"""Versioned judging guidelines, shipped as package data (``<version>.md``).

A guideline file opens with a front matter block holding ``version: <version>`` and then
markdown; its "Grades" section lists one line per grade, ``- **<grade>** — <meaning>``, for
grades 0 to 3. Judgments record the version they were made under.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files

from releval.errors import InputError

SOURCE = "guideline"
GRADES = (0, 1, 2, 3)
_FRONT_MATTER = re.compile(r"\A---\n(?P<head>.*?)\n---\n(?P<body>.*)\Z", re.DOTALL)
_VERSION_LINE = re.compile(r"^version:\s*(?P<version>\S+)\s*$", re.MULTILINE)
_GRADE_LINE = re.compile(r"^- \*\*(?P<grade>\d)\*\* — (?P<meaning>.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Guideline:
    """A judging guideline: its ``version`` and its markdown ``text`` (front matter removed)."""

    version: str
    text: str

    @property
    def grades(self) -> dict[int, str]:
        """What each grade 0..3 means, from the text's ``- **<grade>** — <meaning>`` lines."""
        found = {int(m["grade"]): m["meaning"].strip() for m in _GRADE_LINE.finditer(self.text)}
        missing = [g for g in GRADES if g not in found]
        if missing:
            raise InputError(f"guideline {self.version} does not define grade(s) {missing}",
                             SOURCE)
        return {g: found[g] for g in GRADES}


def known_versions() -> list[str]:
    """The guideline versions shipped with the package, sorted."""
    return sorted(p.name.removesuffix(".md") for p in files(__name__).iterdir()
                  if p.name.endswith(".md"))


def load_guideline(version: str = "relevance-v1") -> Guideline:
    """The shipped guideline ``version``; InputError for an unknown version or a file whose
    front matter names another version."""
    if version not in known_versions():
        raise InputError(f"unknown guideline version {version!r}; known: "
                         f"{', '.join(known_versions())}", SOURCE)
    raw = files(__name__).joinpath(f"{version}.md").read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(raw.replace("\r\n", "\n"))
    declared = _VERSION_LINE.search(match["head"]) if match else None
    if declared is None or declared["version"] != version:
        found = declared["version"] if declared else None
        raise InputError(f"front matter says version {found!r}, expected {version!r}",
                         f"{SOURCE} {version}.md", "line 1")
    return Guideline(version, match["body"].strip() + "\n")
