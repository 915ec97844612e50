"""A warm process for stage commands: what every stage imports, imported once.

A stage command (``python -m stages <name> …``, what dvc.yaml runs) spends most of a light
stage's second importing pandas, pyarrow, pydantic and releval's models. The flow starts one
worker (``python -m stages.worker SOCKET PARENT_PID``) and names its Unix socket in
``RELEVAL_STAGE_WORKER``; ``python -m stages`` then hands its arguments, working directory,
environment and standard streams (the descriptors themselves, ``SCM_RIGHTS``) to the
worker (:func:`hand_over`), which forks: the child runs ``stages.common.main`` as the
command would, on the caller's streams, and the caller exits with its status. DVC still
runs the command, hashes its deps and outs and writes dvc.lock: a stage run through the
worker is the same code on the same inputs in the same directory. Without the variable, or
when no worker answers, the command runs the stage itself.

The worker imports the stage modules that start no thread (a fork copies one thread only;
it refuses to serve if any import started one) and serves one request at a time, as DVC
runs one stage at a time. A signal the caller gets (Ctrl-C, DVC stopping it) goes to the
child.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import struct
import sys

ENV = "RELEVAL_STAGE_WORKER"
_LENGTH = struct.Struct("!I")  # the request's length, sent with the three descriptors
_STATUS = struct.Struct("!ii")  # (child pid, 0) when forked, then (exit status, 1)
_PATIENCE = 2.0  # seconds between looks at whether the flow is still there
_FORK_UNSAFE = ("candidates", "autojudge")  # their dense encoders start thread pools


def hand_over(address: str, argv: list[str]) -> int | None:
    """Run ``python -m stages ARGV`` in the worker at ``address``: the stage's exit status,
    or None when no worker answers or it ends before forking (the caller then runs the
    stage itself). A worker still importing answers once it is done."""
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(address)
        socket.send_fds(conn, [_LENGTH.pack(len(request))], [0, 1, 2])
        conn.sendall(request)
    except OSError:
        return None
    with conn:
        child = None

        def forward(signum, _frame):
            if child:
                os.kill(child, signum)

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, forward)
        while True:
            try:
                reply = conn.recv(_STATUS.size, socket.MSG_WAITALL)
            except OSError:
                reply = b""
            if len(reply) < _STATUS.size and child is None:
                return None  # no stage started there
            if len(reply) < _STATUS.size:
                print("internal error: the stage worker ended before the stage did",
                      file=sys.stderr)
                return 1
            value, final = _STATUS.unpack(reply)
            if final:
                return value
            child = value


def _run_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the command (streams, directory, environment, argv) and
    run the stage; never returns."""
    status = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["stages", *request["argv"]]
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        from stages.common import main

        try:
            main(request["argv"][0], request["argv"][1:])
            status = 0
        except SystemExit as exit_:
            code = exit_.code
            status = code if isinstance(code, int) else 0 if code is None else 1
            if not isinstance(code, int | None):
                print(code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream; the status still goes back
                pass
        os._exit(status)


_LAZY = ("pyarrow.dataset", "pydantic.root_model", "pandas.core.arrays.arrow.extension_types",
         "pandas.core.methods.to_dict", "pandas.core.reshape.reshape", "pandas.io.formats.csvs",
         "narwhals.stable.v1._namespace", "narwhals._pandas_like.namespace",
         "narwhals._pandas_like.dataframe", "narwhals._interchange.dataframe")  # imported on
# first use by reading parquet, the documents' root models, to_dict, stack, to_csv, altair


def _preload() -> None:
    """Import ``stages.common``, every stage module that starts no thread, every document
    model and what the stages' libraries import on first use (``_LAZY``, where present),
    initialise numba's compiler and parse the project's params.yaml once."""
    import contextlib
    import importlib
    import pkgutil
    import threading

    import releval.documents
    import stages

    importlib.import_module("stages.common")
    for package, left_out in ((stages, (*_FORK_UNSAFE, "__main__", "table", "worker")),
                              (releval.documents, ())):
        for module in pkgutil.iter_modules(package.__path__):
            if module.name not in left_out:
                importlib.import_module(f"{package.__name__}.{module.name}")
    for name in _LAZY:
        with contextlib.suppress(ImportError):  # another version of the library
            importlib.import_module(name)
    import numba  # its compiler initialised once: the metrics' loops load from their cache

    numba.njit(lambda x: x + 1)(1)
    with contextlib.suppress(Exception):  # pydantic's first validation, done once; a
        from releval.params import load_params  # missing or bad file is the stages' to say

        load_params("params.yaml")
    if threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
        raise SystemExit(f"stage worker: importing the stages started a thread ({names}); "
                         "stages run alone")


def serve(address: str, parent: int) -> None:
    """Listen at ``address`` and run each request in a forked child, one at a time; end when
    process ``parent`` (the flow that started the worker) is no longer its parent: a flow
    killed outright leaves no worker behind. The socket listens before the imports: a
    command that comes meanwhile waits for them rather than importing beside them."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(8)
    _preload()
    gc.collect()
    gc.freeze()  # the imports' objects out of the children's collections (and their pages)
    server.settimeout(_PATIENCE)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the flow's end: say what ran
    served = 0
    try:
        while os.getppid() == parent:
            served += _serve_one(server)
    finally:
        print(f"stage worker: ran {served} stage command(s)", file=sys.stderr, flush=True)


def _serve_one(server: socket.socket) -> int:
    """Run the next request, if one comes within the patience: 1 when one ran, else 0."""
    try:
        conn, _ = server.accept()
    except TimeoutError:
        return 0
    conn.settimeout(None)
    with conn:
        header, fds, _flags, _ = socket.recv_fds(conn, _LENGTH.size, 3)
        if len(fds) != 3 or len(header) != _LENGTH.size:
            for fd in fds:
                os.close(fd)
            return 0
        message = conn.recv(_LENGTH.unpack(header)[0], socket.MSG_WAITALL)
        pid = os.fork()
        if pid == 0:
            server.close()
            conn.close()
            _run_child(json.loads(message), fds)
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(_STATUS.pack(pid, 0))
        except OSError:
            pass
        _, wait_status = os.waitpid(pid, 0)
        try:
            code = os.waitstatus_to_exitcode(wait_status)  # -N: killed by signal N
            conn.sendall(_STATUS.pack(code if code >= 0 else 128 - code, 1))
        except OSError:
            pass
        return 1


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
