"""The first screen of a report as a PNG, in the offline headless Chromium of cdp.py:

    python -m tests.browser.first_screen reports/index.html [--out PNG] [--width W] [--height H]

writes ``build/report-first-screen.png`` (1400 × 900 CSS pixels) unless told otherwise."""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.browser.cdp import Browser

OUT = Path("build/report-first-screen.png")


def first_screen(page_file: Path, out: Path = OUT, width: int = 1400, height: int = 900) -> Path:
    """Write the top ``width`` × ``height`` of ``page_file`` as rendered to ``out``; ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with Browser(window_size=(width, height)) as b, b.open(page_file) as page:
        page.set_viewport(width, height)
        page.screenshot(out, full=False)
        if page.errors:
            raise SystemExit(f"the page has errors: {page.errors}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", type=Path, help="a report's index.html")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=900)
    args = ap.parse_args()
    print(first_screen(args.page, args.out, args.width, args.height))


if __name__ == "__main__":
    main()
