"""The CDP harness itself: it reads the DOM, reports console errors, uncaught exceptions and
blocked requests, keeps the page offline, takes full-page screenshots, and cleans up."""

import time

import pytest

from tests.browser.cdp import (
    Browser,
    BrowserError,
    JSError,
    chromium_path,
    png_size,
    require_chromium,
)
from tests.browser.cdp import _group_running as group_running
from tests.browser.cdp import _processes_using as processes_using


def write(tmp_path, body: str, name: str = "page.html"):
    path = tmp_path / name
    path.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>",
        encoding="utf-8",
    )
    return path


def test_chromium_is_installed():
    assert chromium_path() is not None, (
        "the browser checks need Chromium: apt-get install -y --no-install-recommends chromium"
    )


def test_no_chromium_fails_with_how_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("RELEVAL_CHROMIUM", raising=False)
    assert chromium_path() is None
    with pytest.raises(BrowserError, match="apt-get install"):
        require_chromium()
    with pytest.raises(BrowserError, match="apt-get install"):
        Browser()


def test_dom_facts_of_a_page_with_inline_svg_and_a_table(browser, tmp_path):
    (tmp_path / "local.js").write_text("window.fromLocalFile = 'yes';")
    path = write(
        tmp_path,
        """
        <h1 id="t">Report</h1>
        <svg id="plot" viewBox="0 0 200 100" width="200" height="100">
          <circle cx="10" cy="10" r="4"/><circle cx="50" cy="40" r="4"/>
          <circle cx="90" cy="70" r="4"/><text x="5" y="95">nDCG@10</text>
        </svg>
        <table id="q"><thead><tr><th>query</th><th>delta</th></tr></thead>
          <tbody><tr><td>q1</td><td>0.25</td></tr><tr><td>q2</td><td>-0.10</td></tr></tbody>
        </table>
        <script src="local.js"></script>
        <script>
          document.title = 'rows: ' + document.querySelectorAll('#q tbody tr').length;
        </script>
    """,
    )
    with browser.open(path) as page:
        assert page.url == path.resolve().as_uri()
        assert page.eval("document.title") == "rows: 2"
        assert page.eval("document.querySelectorAll('#plot circle').length") == 3
        assert page.eval("document.querySelector('#plot').getAttribute('viewBox')") == "0 0 200 100"
        assert page.eval("document.querySelector('#plot text').textContent") == "nDCG@10"
        assert page.eval("document.querySelector('#plot').getBBox().width") > 0  # laid out
        cells = "[...document.querySelectorAll('#q tbody tr')].map(r => [...r.cells]"
        assert page.eval(cells + ".map(c => c.textContent))") == [["q1", "0.25"], ["q2", "-0.10"]]
        assert page.eval("window.fromLocalFile") == "yes"  # file:// subresources still load
        assert page.eval("Promise.resolve(6 * 7)") == 42  # promises are awaited
        assert page.eval("undefined") is None
        assert page.errors == [] and page.failed_requests == []


def test_console_error_and_uncaught_exception_are_reported(browser, tmp_path):
    path = write(
        tmp_path,
        """
        <script>console.log('fine'); console.error('boom-console', 7);</script>
        <script>throw new TypeError('boom-throw');</script>
        <script>setTimeout(() => { throw new Error('boom-later'); }, 0);</script>
    """,
    )
    with browser.open(path) as page:
        page.wait_for("new Promise(r => setTimeout(() => r(true), 20))")
        by_kind = {}
        for e in page.errors:
            by_kind.setdefault(e.kind, []).append(e.text)
        assert by_kind.get("console") == ["boom-console 7"], page.errors
        exceptions = by_kind.get("exception", [])
        assert len(exceptions) == 2, page.errors
        assert "TypeError: boom-throw" in exceptions[0] and "boom-later" in exceptions[1]
        assert ("log", "fine") in page.console
        assert all(e.url == path.resolve().as_uri() for e in page.errors)


def test_eval_that_throws_raises(browser, tmp_path):
    with browser.open(write(tmp_path, "<p>x</p>")) as page:
        with pytest.raises(JSError, match="nope"):
            page.eval("(() => { throw new Error('nope'); })()")
        with pytest.raises(BrowserError, match="timed out after 0.3s"):
            page.wait_for("false", timeout=0.3)


def test_external_requests_fail_and_are_reported(browser, tmp_path):
    path = write(
        tmp_path,
        """
        <img id="ext" src="https://example.com/logo.png">
        <script>
          fetch('http://example.org/data.json')
            .then(() => { window.fetched = 'loaded'; })
            .catch(e => { window.fetched = 'failed: ' + e; });
        </script>
    """,
    )
    with browser.open(path) as page:
        assert page.wait_for("window.fetched").startswith("failed: TypeError")
        assert page.eval("document.getElementById('ext').naturalWidth") == 0
        failed = {r.url: r for r in page.failed_requests}
        assert set(failed) == {"https://example.com/logo.png", "http://example.org/data.json"}
        # stopped in the browser by the block list (offline mode and DNS stand behind it)
        assert {(r.error, r.blocked_reason) for r in failed.values()} == {
            ("net::ERR_BLOCKED_BY_CLIENT", "inspector")
        }
        assert {e.url for e in page.errors if e.kind == "request"} == set(failed)


def test_each_offline_layer_alone_keeps_the_page_off_the_network(browser, tmp_path):
    """Without the URL block list, emulated offline mode stops the request; without both,
    no host name resolves."""
    path = write(tmp_path, "<script>fetch('http://example.org/').catch(e => window.f = 1)</script>")
    with browser.new_page() as page:
        page.send("Network.setBlockedURLs", {"urls": []})
        page.goto(path)
        page.wait_for("window.f")
        assert [r.error for r in page.failed_requests] == ["net::ERR_INTERNET_DISCONNECTED"]
        page.send(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
        page.goto(path)
        page.wait_for("window.f")
        assert page.failed_requests[-1].error == "net::ERR_NAME_NOT_RESOLVED"


def test_full_page_screenshot_is_a_png_taller_than_the_viewport(browser, tmp_path):
    path = write(tmp_path, "<div style='height:3000px;background:linear-gradient(red,blue)'></div>")
    with browser.open(path) as page:
        viewport = page.eval("[window.innerWidth, window.innerHeight]")
        content = page.eval("document.documentElement.scrollHeight")
        png = page.screenshot(tmp_path / "shot.png")
        assert (tmp_path / "shot.png").read_bytes() == png
        width, height = png_size(png)
        assert width == viewport[0]
        assert height == content > 3000 > viewport[1]


def test_missing_file_is_an_error(browser, tmp_path):
    with pytest.raises(FileNotFoundError):
        browser.open(tmp_path / "absent.html")


def test_leaving_the_browser_kills_it_and_removes_its_profile(tmp_path):
    with Browser() as b:
        pid, profile = b.process.pid, b.profile
        assert profile.is_dir() and group_running(pid) and pid in processes_using(profile)
        b.open(write(tmp_path, "<p>x</p>")).eval("1")
    assert not profile.exists()
    deadline = time.monotonic() + 5
    while group_running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not group_running(pid)
    assert processes_using(profile) == []  # nor its crashpad handlers, in their own sessions
    assert b.process is None and b._ws is None
