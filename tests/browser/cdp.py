"""A small Chrome DevTools Protocol client: checks a page in a real, offline, headless Chromium.

No selenium, no playwright: the browser is started as a child process in a throw-away
profile, and driven over one DevTools websocket (``websockets``' sync client) with flattened
target sessions.

    with Browser() as b:
        page = b.open("reports/index.html")        # a file on disk, the network off
        page.eval("document.querySelectorAll('svg').length")
        page.errors                                 # console errors, uncaught exceptions,
                                                    # error log entries, failed requests
        page.screenshot("shot.png")                 # the full page, beyond the viewport
        page.set_viewport(1400, 900)                # lay it out at another size
        page.screenshot("top.png", full=False)      # the first screen only

Offline is enforced three times over: the browser resolves no host name
(``--host-resolver-rules``) and uses no proxy; each page is put in emulated offline mode
(``Network.emulateNetworkConditions``); and every URL that is not ``file:``, ``data:``,
``blob:`` or ``about:`` is blocked (``Network.setBlockedURLs``). A request that tries anyway
fails, and is reported in ``page.failed_requests`` and ``page.errors``.

Every wait has a timeout and ends in a ``BrowserError`` that says what it waited for. The
browser (its whole process group) is killed and its profile removed on leaving the ``with``.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ENV_BINARY = "RELEVAL_CHROMIUM"  # an explicit browser binary, over the PATH search
INSTALL_HINT = (
    "install it with `apt-get update && apt-get install -y --no-install-recommends chromium` "
    "(Debian; .ci/run does this on CI), or name a Chromium/Chrome binary in $" + ENV_BINARY
)

# Flags, and why. The launcher adds --user-data-dir (a temp profile), --window-size and
# --remote-debugging-port=0 (any free port, read back from the profile's DevToolsActivePort).
FLAGS = (
    "--headless",  # no display
    "--no-sandbox",  # CI containers run as root, where the sandbox refuses to start
    "--disable-gpu",  # no GPU in CI; software rendering is deterministic enough
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm: use /tmp instead
    "--disable-background-networking",  # no update checks, safe-browsing lists, field trials
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",  # Debian's launcher loads extensions from /usr/share by default
    "--disable-breakpad",  # no crash uploads (crashpad still starts: see start() and close())
    "--no-first-run",
    "--no-default-browser-check",
    "--no-service-autorun",
    "--no-pings",
    "--password-store=basic",  # never ask a desktop keyring
    "--mute-audio",
    "--hide-scrollbars",  # screenshots without scrollbars
    "--no-proxy-server",  # never route through a proxy from the environment
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves: offline from the start
)
OFFLINE_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "devtools:")
BLOCKED_URLS = ("http://*", "https://*", "ws://*", "wss://*", "ftp://*")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class BrowserError(RuntimeError):
    """The browser did not start, died, timed out, or answered a command with an error."""


class JSError(BrowserError):
    """An expression given to ``Page.eval`` threw."""


@dataclass(frozen=True)
class PageError:
    """One thing that went wrong in a page. ``kind``: console | exception | log | request |
    dialog."""

    kind: str
    text: str
    url: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = f" ({self.url}{'' if self.line is None else f':{self.line}'})" if self.url else ""
        return f"{self.kind}: {self.text}{where}"


@dataclass(frozen=True)
class FailedRequest:
    """A request that did not load: blocked, offline, missing file, or an HTTP error."""

    url: str
    error: str  # net::ERR_… or "HTTP <status>"
    blocked_reason: str | None = None
    resource_type: str = ""


def chromium_path() -> str | None:
    """The browser binary: $RELEVAL_CHROMIUM, else the first of ``BINARIES`` on PATH, else None."""
    explicit = os.environ.get(ENV_BINARY)
    if explicit:
        return shutil.which(explicit) or (explicit if os.access(explicit, os.X_OK) else None)
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """``chromium_path()``, or a ``BrowserError`` that says how to install it."""
    path = chromium_path()
    if path is None:
        raise BrowserError(f"no Chromium found (looked for {', '.join(BINARIES)}): {INSTALL_HINT}")
    return path


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; ValueError if ``data`` is not a PNG."""
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def file_url(path: str | os.PathLike[str]) -> str:
    """A file:// URL for a file on disk (FileNotFoundError if it is missing); URLs pass."""
    text = os.fspath(path)
    if text.startswith(OFFLINE_SCHEMES):
        return text
    resolved = Path(text).resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"no such file: {resolved}")
    return resolved.as_uri()


class Browser:
    """A headless Chromium in a temp profile, driven over one DevTools websocket.

    ``timeout``: the default limit, in seconds, on every wait (commands, loads, evals);
    ``launch_timeout``: the limit on the browser's start.
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        timeout: float = 15.0,
        launch_timeout: float = 30.0,
        window_size: tuple[int, int] = (1280, 800),
        extra_flags: tuple[str, ...] = (),
    ) -> None:
        self.binary = binary or require_chromium()
        self.timeout = timeout
        self.launch_timeout = launch_timeout
        self.window_size = window_size
        self.extra_flags = tuple(extra_flags)
        self.profile: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.ws_url: str | None = None
        self._ws: ClientConnection | None = None
        self._log = None
        self._ids = itertools.count(1)
        self._pages: dict[str, Page] = {}

    # --- life cycle ---------------------------------------------------------------------

    def __enter__(self) -> Browser:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def command_line(self) -> list[str]:
        assert self.profile is not None
        width, height = self.window_size
        return [
            self.binary,
            *FLAGS,
            *self.extra_flags,
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-port=0",
            "about:blank",
        ]

    def start(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="releval-chromium-"))
        self._log = open(self.profile.parent / f"{self.profile.name}.stderr", "w+b")
        # its config, cache and crash-report folders inside the profile too, not in $HOME
        env = dict(os.environ)
        for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
            env[var] = str(self.profile / var.lower())
        self.process = subprocess.Popen(
            self.command_line,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            start_new_session=True,  # its own process group: close() ends it and its children
        )
        self.ws_url = self._wait_for_devtools_url()
        try:
            self._ws = connect(
                self.ws_url,
                max_size=None,  # screenshots are megabytes
                proxy=None,
                compression=None,
                open_timeout=self.launch_timeout,
                ping_interval=None,
            )
        except (OSError, TimeoutError) as e:
            raise BrowserError(
                f"could not connect to {self.ws_url}: {e}{self._stderr_tail()}"
            ) from e

    def _wait_for_devtools_url(self) -> str:
        assert self.process is not None and self.profile is not None
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + self.launch_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserError(
                    f"chromium exited with status {self.process.returncode} before DevTools "
                    f"started: {' '.join(self.command_line)}{self._stderr_tail()}"
                )
            with contextlib.suppress(OSError, ValueError):
                lines = port_file.read_text().split()
                if len(lines) >= 2 and int(lines[0]) > 0:
                    return f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
            url = self._stderr_devtools_url()
            if url:
                return url
            time.sleep(0.02)
        raise BrowserError(
            f"timed out after {self.launch_timeout:g}s waiting for chromium's DevTools "
            f"websocket (DevToolsActivePort / 'DevTools listening on'){self._stderr_tail()}"
        )

    def _stderr_text(self) -> str:
        if self._log is None or self._log.closed:
            return ""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def _stderr_devtools_url(self) -> str | None:
        for line in self._stderr_text().splitlines():
            if line.startswith("DevTools listening on ws://"):
                return line.split(" on ", 1)[1].strip()
        return None

    def _stderr_tail(self, lines: int = 15) -> str:
        tail = self._stderr_text().strip().splitlines()[-lines:]
        return ("\nchromium stderr:\n  " + "\n  ".join(tail)) if tail else ""

    def close(self) -> None:
        """Close the connection, kill the browser's process group, remove the profile."""
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.send(json.dumps({"id": next(self._ids), "method": "Browser.close"}))
            with contextlib.suppress(Exception):
                self._ws.close()
            self._ws = None
        if self.process is not None:
            self._end_process(self.process)
            self.process = None
        if self.profile is not None:
            _end_strays(self.profile)
        if self._log is not None:
            path = Path(self._log.name)
            self._log.close()
            path.unlink(missing_ok=True)
            self._log = None
        if self.profile is not None:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None

    @staticmethod
    def _end_process(process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=3)  # Browser.close lets it exit cleanly
        # the group is the browser's own (start_new_session): its renderers, zygote, GPU
        # process; TERM the browser if it is still up, then KILL whatever is left of the group
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if sig == signal.SIGTERM and process.poll() is not None:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        deadline = time.monotonic() + 2  # let the killed group go before the profile does
        while _group_running(process.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

    # --- the protocol -------------------------------------------------------------------

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one command and wait for its result; events that arrive meanwhile are
        dispatched to their pages."""
        message_id = self._post(method, params, session)
        limit = self.timeout if timeout is None else timeout
        found: dict[str, Any] = {}

        def answered(message: dict[str, Any]) -> bool:
            if message.get("id") == message_id:
                found.update(message)
                return True
            return False

        self._pump_until(answered, limit, f"the answer to {method}")
        if "error" in found:
            error = found["error"]
            raise BrowserError(f"{method} failed: {error.get('message')} {error.get('data', '')}")
        return found.get("result", {})

    def _post(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        if self._ws is None:
            raise BrowserError("the browser is not running (use `with Browser() as b:`)")
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        try:
            self._ws.send(json.dumps(message))
        except ConnectionClosed as e:
            raise BrowserError(
                f"the browser closed the connection: {e}{self._stderr_tail()}"
            ) from e
        return message_id

    def _pump_until(
        self, done: Callable[[dict[str, Any]], bool] | None, timeout: float, what: str
    ) -> None:
        """Read and dispatch messages until ``done(message)`` (or, with ``done`` None, until
        none is waiting); a ``BrowserError`` after ``timeout`` seconds."""
        assert self._ws is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = 0.0 if done is None else deadline - time.monotonic()
            if done is not None and remaining <= 0:
                raise BrowserError(f"timed out after {timeout:g}s waiting for {what}")
            try:
                raw = self._ws.recv(timeout=remaining)
            except TimeoutError:
                if done is None:
                    return
                continue
            except ConnectionClosed as e:
                raise BrowserError(
                    f"the browser closed the connection while waiting for {what}: {e}"
                    f"{self._stderr_tail()}"
                ) from e
            message = json.loads(raw)
            if "method" in message:
                self._dispatch(message)
            if done is not None and done(message):
                return

    def _dispatch(self, event: dict[str, Any]) -> None:
        page = self._pages.get(event.get("sessionId", ""))
        if page is not None:
            page._on_event(event["method"], event.get("params", {}))
        elif event["method"] == "Target.detachedFromTarget":
            page = self._pages.get(event["params"].get("sessionId", ""))
            if page is not None:
                page.crashed = page.crashed or "the page's target went away"

    def pump(self, seconds: float = 0.0) -> None:
        """Dispatch the events already waiting, then any that arrive for ``seconds`` more."""
        if seconds > 0:
            with contextlib.suppress(BrowserError):
                self._pump_until(lambda _m: False, seconds, "events")
        self._pump_until(None, 0, "events")

    # --- pages --------------------------------------------------------------------------

    def new_page(self) -> Page:
        """A new blank tab, attached, with Page, Runtime, Log and Network on and the network off."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, target, session)
        self._pages[session] = page
        page._setup()
        return page

    def open(
        self, path: str | os.PathLike[str], *, timeout: float | None = None, idle: float = 0.1
    ) -> Page:
        """A new page showing ``path`` (a file on disk or a file:// URL), after its load event
        and once no request is in flight."""
        page = self.new_page()
        page.goto(path, timeout=timeout, idle=idle)
        return page


class Page:
    """One tab. Its ``errors`` and ``failed_requests`` fill as events arrive (reading them
    dispatches what is waiting)."""

    def __init__(self, browser: Browser, target_id: str, session_id: str) -> None:
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self.url = "about:blank"
        self.console: list[tuple[str, str]] = []  # (type, text) of every console call
        self.crashed: str | None = None
        self._errors: list[PageError] = []
        self._failed: list[FailedRequest] = []
        self._requests: dict[str, dict[str, str]] = {}  # in flight: requestId → url, type
        self._loads = 0
        self._closed = False

    def send(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        """A command to this page's session (see ``Browser.send``)."""
        if self._closed:
            raise BrowserError("the page is closed")
        return self.browser.send(method, params, session=self.session_id, **kw)

    def _setup(self) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
        self.send("Network.setBlockedURLs", {"urls": list(BLOCKED_URLS)})
        self.send("Network.setCacheDisabled", {"cacheDisabled": True})

    # --- events -------------------------------------------------------------------------

    def _on_event(self, method: str, params: dict[str, Any]) -> None:
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, params)

    def _console(self, p: dict[str, Any]) -> None:
        text = " ".join(_remote_text(arg) for arg in p.get("args", []))
        self.console.append((p.get("type", ""), text))
        if p.get("type") in ("error", "assert"):
            frame = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            self._errors.append(
                PageError("console", text, frame[0].get("url", ""), _line(frame[0]))
            )

    def _exception(self, p: dict[str, Any]) -> None:
        d = p.get("exceptionDetails", {})
        exc = d.get("exception") or {}
        text = exc.get("description") or d.get("text", "exception")
        self._errors.append(PageError("exception", text, d.get("url", ""), _line(d)))

    def _log_entry(self, p: dict[str, Any]) -> None:
        e = p.get("entry", {})
        if e.get("level") == "error":
            self._errors.append(PageError("log", e.get("text", ""), e.get("url", ""), _line(e)))

    def _request(self, p: dict[str, Any]) -> None:
        url = p.get("request", {}).get("url", "")
        self._requests[p["requestId"]] = {"url": url, "type": p.get("type", "")}

    def _response(self, p: dict[str, Any]) -> None:
        response = p.get("response", {})
        status = int(response.get("status") or 0)
        url = response.get("url", "")
        if status >= 400 and not url.startswith(OFFLINE_SCHEMES):
            self._fail(FailedRequest(url, f"HTTP {status}", None, p.get("type", "")))

    def _finished(self, p: dict[str, Any]) -> None:
        self._requests.pop(p.get("requestId", ""), None)

    def _failed_request(self, p: dict[str, Any]) -> None:
        request = self._requests.pop(p.get("requestId", ""), {})
        if p.get("canceled") and not p.get("blockedReason"):
            return
        self._fail(
            FailedRequest(
                request.get("url", ""),
                p.get("errorText") or "net::ERR_BLOCKED_BY_CLIENT",
                p.get("blockedReason"),
                p.get("type", "") or request.get("type", ""),
            )
        )

    def _fail(self, failed: FailedRequest) -> None:
        self._failed.append(failed)
        blocked = f" (blocked: {failed.blocked_reason})" if failed.blocked_reason else ""
        why = failed.error + blocked
        self._errors.append(PageError("request", why, failed.url))

    def _dialog(self, p: dict[str, Any]) -> None:
        # an alert() would hold the page (and every eval) until it is answered
        self._errors.append(PageError("dialog", f"{p.get('type')}: {p.get('message', '')}"))
        self.browser._post("Page.handleJavaScriptDialog", {"accept": False}, self.session_id)

    def _load(self, _p: dict[str, Any]) -> None:
        self._loads += 1

    def _crash(self, _p: dict[str, Any]) -> None:
        self.crashed = "the page's renderer crashed"

    # --- what the tests read ------------------------------------------------------------

    @property
    def errors(self) -> list[PageError]:
        """Console errors, uncaught exceptions, error log entries, failed requests, dialogs."""
        self.browser.pump()
        return list(self._errors)

    @property
    def failed_requests(self) -> list[FailedRequest]:
        self.browser.pump()
        return list(self._failed)

    def goto(
        self, path: str | os.PathLike[str], *, timeout: float | None = None, idle: float = 0.1
    ) -> None:
        """Navigate to ``path`` and wait for the load event, then for ``idle`` seconds with no
        request in flight."""
        url = file_url(path)
        limit = self.browser.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        loads = self._loads
        result = self.send("Page.navigate", {"url": url}, timeout=limit)
        if result.get("errorText"):
            raise BrowserError(f"could not open {url}: {result['errorText']}")
        self.url = url
        self._wait(lambda: self._loads > loads, deadline, limit, f"the load event of {url}")
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < idle:
            self._wait(lambda: True, deadline, limit, f"the requests of {url} to settle", 0.02)
            if self._requests:
                quiet_since = time.monotonic()

    def _wait(
        self,
        ready: Callable[[], bool],
        deadline: float,
        limit: float,
        what: str,
        step: float = 0.05,
    ) -> None:
        while True:
            if self.crashed:
                raise BrowserError(f"{self.crashed} while waiting for {what}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pending = ", ".join(r["url"] for r in self._requests.values())
                raise BrowserError(
                    f"timed out after {limit:g}s waiting for {what}"
                    + (f" (in flight: {pending})" if pending else "")
                )
            self.browser.pump(min(step, remaining))
            if ready():
                return

    def eval(self, expression: str, *, timeout: float | None = None) -> Any:
        """The value of a JS expression (promises awaited), as JSON-able Python; ``JSError``
        if it throws."""
        limit = self.browser.timeout if timeout is None else timeout
        result = self.send(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": True,
                "awaitPromise": True,
                "timeout": int(limit * 1000),
            },
            timeout=limit,
        )
        details = result.get("exceptionDetails")
        if details:
            exc = details.get("exception") or {}
            text = exc.get("description") or exc.get("value") or details.get("text")
            raise JSError(f"{expression!r} threw: {text}")
        value = result.get("result", {})
        if value.get("type") == "undefined":
            return None
        if "unserializableValue" in value:  # NaN, Infinity, -0, bigints
            return float(value["unserializableValue"].rstrip("n"))
        return value.get("value")

    def wait_for(
        self, expression: str, *, timeout: float | None = None, interval: float = 0.05
    ) -> Any:
        """Evaluate ``expression`` until it is truthy and return its value."""
        limit = self.browser.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            value = self.eval(expression, timeout=max(deadline - time.monotonic(), 0.1))
            if value:
                return value
            if time.monotonic() >= deadline:
                raise BrowserError(f"timed out after {limit:g}s waiting for {expression!r}")
            self.browser.pump(interval)

    def set_viewport(self, width: int, height: int) -> None:
        """Lay the page out in a ``width`` × ``height`` CSS-pixel viewport (device metrics
        emulation, scale 1)."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self, path: str | os.PathLike[str] | None = None, *,
                   full: bool = True) -> bytes:
        """A PNG of the whole page (beyond the viewport; ``full=False``: the viewport at the
        top of the page only), written to ``path`` if given."""
        metrics = self.send("Page.getLayoutMetrics")
        size = (metrics.get("cssContentSize") or metrics["contentSize"]) if full else {
            "width": metrics["cssLayoutViewport"]["clientWidth"],
            "height": metrics["cssLayoutViewport"]["clientHeight"]}
        width, height = max(1, int(size["width"] + 0.999)), max(1, int(size["height"] + 0.999))
        result = self.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "fromSurface": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
            timeout=max(self.browser.timeout, 30.0),
        )
        data = base64.b64decode(result["data"])
        png_size(data)  # a ValueError if it is not a PNG
        if path is not None:
            Path(path).write_bytes(data)
        return data

    def close(self) -> None:
        if self._closed:
            return
        with contextlib.suppress(BrowserError):
            self.browser.send("Target.closeTarget", {"targetId": self.target_id})
        self._closed = True
        self.browser._pages.pop(self.session_id, None)

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies, which only wait for their
    reaper, do not count). Linux's /proc; elsewhere, False."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def _end_strays(profile: Path) -> None:
    """KILL what the browser started outside its process group (its crashpad handlers set
    up their own sessions), found by the profile path on their command lines. Linux's /proc."""
    for pid in _processes_using(profile):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _processes_using(profile: Path) -> list[int]:
    """The live processes with ``profile`` (or a path in it) on their command line."""
    needles = (f"{profile}\0".encode(), f"{profile}/".encode())
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError, ValueError):
            text = cmdline.read_bytes() + b"\0"
            pid = int(cmdline.parent.name)
            if pid != os.getpid() and any(n in text for n in needles):
                found.append(pid)
    return found


def _remote_text(arg: dict[str, Any]) -> str:
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else json.dumps(value)
    return str(arg.get("description") or arg.get("unserializableValue") or arg.get("type", ""))


def _line(d: dict[str, Any]) -> int | None:
    line = d.get("lineNumber")
    return None if line is None else int(line) + 1  # CDP lines are 0-based


_HANDLERS: dict[str, Callable[[Page, dict[str, Any]], None]] = {
    "Runtime.consoleAPICalled": Page._console,
    "Runtime.exceptionThrown": Page._exception,
    "Log.entryAdded": Page._log_entry,
    "Network.requestWillBeSent": Page._request,
    "Network.responseReceived": Page._response,
    "Network.loadingFinished": Page._finished,
    "Network.loadingFailed": Page._failed_request,
    "Page.javascriptDialogOpening": Page._dialog,
    "Page.loadEventFired": Page._load,
    "Inspector.targetCrashed": Page._crash,
}
