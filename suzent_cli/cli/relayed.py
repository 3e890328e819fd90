"""The server's side of a relayed CLI command: ``suzent ARGV`` run inside ``suzent serve`` on its warm state, printing
what the same command line prints in the client's own process (:mod:`suzent_cli.cli.relay` is the client's side).

Byte-for-byte equality with the cold path holds by construction: :func:`run` calls the very entry point a process
runs (:func:`suzent_cli.cli.app.main`), in the request's worker thread, with everything a process would take from
its surroundings replaced, for this context only, by the client's:

* **settings** resolve from the client's environment (:func:`suzent_cli.cli.app.request_environ`: the root callback
  reads :func:`~suzent_cli.cli.app.environ`, never ``os.environ``, and so do the ``SUZENT_DEBUG`` checks);
* **output**: ``sys.stdout``/``sys.stderr`` are, once per server, replaced by streams that write to the current
  request's buffers (:class:`_CurrentStream`; outside a request, the server's own streams), so ``print(...,
  file=sys.stderr)``, ``typer.echo`` and :func:`~suzent_cli.cli.render.emit_json` land there; the buffers report
  the client's terminal-ness and encoding; ``sys.stdin`` reads as empty (no relayed command reads it);
* **rich**: :data:`suzent_cli.cli.render.out`/``err`` are the request's consoles
  (:func:`~suzent_cli.cli.render.request_console`: the client's environment, terminal-ness and terminal size);
* **the embedder**: the server shares one per model (:func:`suzent_cli.server.warm.share_process_embedders`), so
  ``load_embedder`` in a relayed ``recall`` or ``index`` returns the warm model, never a second one.

What the process's surroundings hold that a thread cannot have of its own is compared instead: when the client's
suzent version is not the server's, or its ``HOME``, ``TZ``, ``XDG_RUNTIME_DIR`` or ``TMPDIR`` differ from the server's (:data:`PROCESS_ENV`: ``~`` expansion,
local time, the socket folder, temporary files), nothing runs and the answer says so (the client then runs the
command itself). The working directory is never changed: the client refuses to relay a command line with a path the
server would resolve differently (:mod:`suzent_cli.cli.relay`).

Limits, by design: what native libraries write straight to file descriptor 1 or 2 goes to the server's; a Python
warning shown once per process is shown by the first relayed command only; a live progress display arrives whole at
the end (its frames are timing-dependent in any process).

Signals: the command runs in a worker thread, where :class:`suzent_cli.signals.Signals` installs nothing (Python
delivers signals to the main thread only); a client that is interrupted leaves the command to finish here.
"""

from __future__ import annotations

import base64
import io
import os
import sys
import threading
import traceback
from contextvars import ContextVar
from typing import Any

from suzent_cli.errors import InputInvalid

PROCESS_ENV = ("HOME", "TZ", "XDG_RUNTIME_DIR", "TMPDIR")  # read from the process, not per thread: must be equal
# The server's own values of PROCESS_ENV, taken when it starts (snapshot_process_env): an index write points TMPDIR
# at <index>/.tmp for lance while it runs (suzent_cli.index.store.temp_dir), and a client must not be declined for
# that. None: compare with os.environ as it is (a process that never snapshotted: the tests' in-process runs).
_started_env: dict[str, str | None] | None = None
MAX_ARGS = 10_000

_streams: ContextVar[tuple[Any, Any, Any] | None] = ContextVar("suzent_request_streams", default=None)
_install_lock = threading.Lock()


class _Buffer(io.TextIOWrapper):
    """A text stream into memory that reports ``tty`` as its ``isatty()`` (the client's stream is or is not a
    terminal) and encodes as the client's stream does (``encoding``; errors ``strict`` until the app reconfigures
    it, as a process's own stream)."""

    def __init__(self, tty: bool, encoding: str, errors: str = "strict") -> None:
        super().__init__(io.BytesIO(), encoding=encoding, errors=errors, write_through=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def data(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


class _CurrentStream:
    """``sys.stdout``/``sys.stderr``/``sys.stdin`` of the server once :func:`install_streams` ran: the current
    relayed request's stream in its context, the process's own everywhere else (every attribute delegated)."""

    def __init__(self, index: int, process: Any) -> None:
        self._index, self._process = index, process

    def current(self) -> Any:
        request = _streams.get()
        return self._process if request is None else request[self._index]

    def write(self, text: str) -> int:
        return self.current().write(text)

    def flush(self) -> None:
        self.current().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current(), name)


def snapshot_process_env() -> None:
    """Record this server process's :data:`PROCESS_ENV` values now, at its start, before any write moves one
    (:func:`suzent_cli.index.store.temp_dir` sets ``TMPDIR`` for the length of a write); :func:`run` compares a
    client's with these from then on."""
    global _started_env
    _started_env = {name: os.environ.get(name) for name in PROCESS_ENV}


def install_streams() -> None:
    """Make ``sys.stdout``/``sys.stderr``/``sys.stdin`` follow the current request (idempotent; for the server
    process: outside a request everything still goes to the process's own streams)."""
    with _install_lock:
        for index, name in enumerate(("stdout", "stderr", "stdin")):
            stream = getattr(sys, name)
            if not isinstance(stream, _CurrentStream):
                setattr(sys, name, _CurrentStream(index, stream))


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_ARGS or not all(isinstance(v, str) for v in value):
        raise InputInvalid(f"cli: {what} must be a list of strings")
    return value


def _size(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 100_000 for v in value)):
        return value[0], value[1]
    raise InputInvalid("cli: terminal_size must be [columns, lines] or null")


def _encoding(value: Any) -> str:
    import codecs

    if not isinstance(value, str):
        raise InputInvalid("cli: an encoding must be a string")
    try:
        return codecs.lookup(value).name
    except LookupError:
        raise InputInvalid(f"cli: unknown encoding {value!r}") from None


def run(argv: list[str], env: dict[str, str], stdout_tty: bool = False, stderr_tty: bool = False,
        terminal_size: list[int] | None = None, stdout_encoding: str = "utf-8",
        stderr_encoding: str = "utf-8", version: str | None = None) -> dict[str, Any]:
    """Run ``suzent ARGV`` here as the client's process would (module docstring) and return what it printed:
    ``{"ran": True, "exit": int, "stdout_b64": str, "stderr_b64": str}`` (the bytes as the client's streams would
    have received them, base64), or ``{"ran": False, "why": str}`` when the client's environment differs in a
    variable the process reads as a whole (:data:`PROCESS_ENV`): nothing ran.

    ``env``: the client's whole environment; ``stdout_tty``/``stderr_tty``: whether the client's streams are
    terminals; ``terminal_size``: ``[columns, lines]`` of the client's first standard stream that is a terminal
    (None: none is); the encodings: the client's streams'; ``version``: the client's suzent version (another
    than this server's declines: the answer would be another version's). An exception the app does not handle is printed as a
    traceback on the request's stderr with exit 1, as the interpreter would. Raises :class:`InputInvalid` for
    arguments of the wrong shape (nothing ran). Blocking: call it in a worker thread."""
    argv = _strings(argv, "argv")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise InputInvalid("cli: env must be an object of strings")
    size = _size(terminal_size)
    out_enc, err_enc = _encoding(stdout_encoding), _encoding(stderr_encoding)
    from suzent_cli import __version__

    if version is not None and version != __version__:
        return {"ran": False, "why": f"the client runs suzent {version}, the server {__version__}"}
    server = _started_env if _started_env is not None else {name: os.environ.get(name) for name in PROCESS_ENV}
    differs = [name for name in PROCESS_ENV if env.get(name) != server[name]]
    if differs:
        return {"ran": False, "why": f"the client's {', '.join(differs)} differs from the server's"}
    from suzent_cli.cli import app as app_module
    from suzent_cli.cli import render

    install_streams()
    stdout, stderr = _Buffer(bool(stdout_tty), out_enc), _Buffer(bool(stderr_tty), err_enc, "backslashreplace")
    stdin = _Buffer(False, "utf-8")
    consoles = (render.request_console(stdout, stderr=False, environ=env, terminal_size=size),
                render.request_console(stderr, stderr=True, environ=env, terminal_size=size))
    token = _streams.set((stdout, stderr, stdin))
    try:
        with app_module.request_environ(env), render.request_consoles(*consoles):
            try:
                code = app_module.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            except Exception:  # noqa: BLE001 - what the interpreter does with an uncaught exception
                traceback.print_exc()
                code = 1
    finally:
        _streams.reset(token)
    return {"ran": True, "exit": int(code), "stdout_b64": base64.b64encode(stdout.data()).decode("ascii"),
            "stderr_b64": base64.b64encode(stderr.data()).decode("ascii")}
