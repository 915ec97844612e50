"""``Measure``: one measure fully specified (family, cutoff, relevance threshold, gains and the
family's own options), the value the parser produces and every measure function takes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    """One measure with all its parameters; ``name`` is its canonical string.

    ``options``: the family's own parameters (e.g. ECE's ``bins``, ILD's ``space``) that differ
    from the family's defaults, as (name, value) pairs in the family's order; an option at its
    default is left out, so ``ECE(bins=10)`` and ``ECE`` are one measure.
    """

    family: str
    cutoff: int | None = None
    rel: int = 1
    dcg: str = "log2"
    gains: tuple[tuple[int, float], ...] | None = None
    options: tuple[tuple[str, object], ...] = ()

    @property
    def name(self) -> str:
        params = []
        if self.rel != 1:
            params.append(f"rel={self.rel}")
        if self.dcg != "log2":
            params.append(f"dcg='{self.dcg}'")
        if self.gains is not None:
            params.append("gains={" + ", ".join(f"{g}: {v:g}" for g, v in self.gains) + "}")
        params += [f"{key}={value!r}" for key, value in self.options]
        head = self.family + (f"({', '.join(params)})" if params else "")
        return head + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def __str__(self) -> str:
        return self.name
