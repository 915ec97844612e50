"""Vega-Lite specs drawn to SVG by vl-convert, in a helper process started ahead.

vl-convert's JavaScript runtime takes about 0.4 s to start in a process, holding the GIL,
before its first drawing. :func:`start` forks a helper that starts it at once, while this
process goes on reading and rendering; :func:`draw` then sends each spec to the helper over
a socket pair and reads its SVG back. A process running other threads starts no helper (a
fork copies one thread only); without a helper (none started, or it has ended or not
answered within ``PATIENCE`` seconds: then it is stopped), :func:`draw` draws here. The
helper ends when this process closes its end (its exit).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import threading

import altair as alt
import vl_convert as vlc


def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes, as vl-convert names it (None: its default)."""
    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return wanted if wanted in vlc.get_vegalite_versions() else None


VL_VERSION = _vl_version()
_SIZE = struct.Struct("!Q")
PATIENCE = 30.0  # seconds for one drawing (the first includes the runtime's start)
_HELPER: list[tuple[socket.socket, int]] = []  # our end of the helper's socket pair, its pid


def here(spec: dict) -> str:
    """``spec`` drawn in this process."""
    return vlc.vegalite_to_svg(spec, **({"vl_version": VL_VERSION} if VL_VERSION else {}))


def _send(conn: socket.socket, data: bytes) -> None:
    conn.sendall(_SIZE.pack(len(data)) + data)


def _receive(conn: socket.socket) -> bytes:
    head = conn.recv(_SIZE.size, socket.MSG_WAITALL)
    if len(head) < _SIZE.size:
        raise EOFError("the drawing helper's socket closed")
    return conn.recv(_SIZE.unpack(head)[0], socket.MSG_WAITALL)


def _serve(conn: socket.socket) -> None:
    """In the helper: start the runtime, then draw each request until the socket closes;
    a spec vl-convert rejects is answered with its error ("!" + message)."""
    here({"mark": "point", "data": {"values": []}})
    while True:
        try:
            spec = json.loads(_receive(conn))
        except (EOFError, OSError):
            return
        try:
            _send(conn, b"+" + here(spec).encode())
        except Exception as exc:  # noqa: BLE001 - the caller raises it
            _send(conn, b"!" + f"{type(exc).__name__}: {exc}".encode())


def start() -> None:
    """Fork the helper (once per process, when no other thread runs); it starts
    vl-convert's runtime meanwhile."""
    if _HELPER or threading.active_count() > 1:
        return
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            ours.close()
            _serve(theirs)
        except BaseException:  # noqa: BLE001 - the caller draws by itself
            status = 1
        finally:
            os._exit(status)
    theirs.close()
    ours.settimeout(PATIENCE)
    _HELPER.append((ours, pid))


def draw(spec: dict) -> str:
    """``spec`` as SVG: by the helper when one was started and still answers, else here."""
    if _HELPER:
        conn, pid = _HELPER[0]
        try:
            _send(conn, json.dumps(spec).encode())
            reply = _receive(conn)
        except (EOFError, OSError):  # ended, or no answer in time (TimeoutError)
            _HELPER.clear()
            conn.close()
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        else:
            if reply[:1] == b"!":
                raise ValueError(f"vl-convert: {reply[1:].decode()}")
            return reply[1:].decode()
    return here(spec)
