"""The shared headless Chromium for the browser checks (see cdp.py).

No Chromium is a failure, never a skip: the HTML report is checked in a real browser, and
CI (.ci/run) installs one.
"""

from collections.abc import Iterator

import pytest

from tests.browser.cdp import INSTALL_HINT, Browser, chromium_path


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if chromium_path() is None:
        pytest.fail(f"the browser checks need Chromium, and none was found: {INSTALL_HINT}")
    with Browser() as b:
        yield b
