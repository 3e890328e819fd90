"""The server starts itself: a hook, ``suzent mcp`` or a CLI command that finds no server for its home calls
:func:`ensure`, which starts one, detached, the way Gradle, Bazel or ``gpg-agent`` start their daemons. The call
that started it still answers by the cold path (:func:`ensure` never waits for the server); the following ones
are warm. The auto-started server (``suzent serve --auto``) runs the watcher but not the chain, and exits after
``serve.idle_minutes`` without a request.

Invariant (held here): **one server per home, and an auto-start never forks twice within its back-off.** The one
server per home is ``serve.lock`` (:mod:`suzent_cli.server.serve`: a second server exits 3 at once); this module
decides whether to fork at all:

* under ``<home>/server/autostart.lock`` (``fcntl.flock``, held for the decision and the fork, never for the
  server's start), so two callers at once cannot both spawn;
* from ``<home>/server/autostart.json``, the record of the last spawn or server: ``{"pid", "at" (epoch seconds),
  "why", "auto", "failures", "listening" (epoch seconds or null), "ready" (epoch seconds or null: its start-up
  ended, the model loaded or given up on), "ended" (epoch seconds or null), "exit" (code or null), "error" (one
  line or null: why an auto-started server could not start)}``. A spawn less than :data:`STARTING` seconds old whose
  process is alive is "starting": nothing is done.
  A last server that is gone without a clean exit (``ended`` unset, or an exit code other than 0/130/143) is a
  failure, whether it died starting or after it served (a model that crashes the process at its preload is a
  crash loop too): the next spawn waits until ``at`` + :func:`backoff` (30 s × 2^(failures-1), at most an hour;
  :func:`next_start`). One such death is let through at once: a server that had finished starting (``ready``:
  it served and its preload ended) and then was killed (SIGKILL, the OOM killer) is restarted by the next caller
  without a back-off; a second death in a row, before a minute of serving, backs off as above.
  A server that has served for :data:`STABLE` seconds (any server of the home) resets the count
  (:func:`note_listening`, then :func:`note_stable`; not at once, so a process that dies soon after it serves,
  a model crashing it as it loads, backs off exponentially too); one that stops cleanly records it
  (:func:`note_exit`); one that cannot start records why (:func:`note_failed`; ``suzent status`` shows it with
  the back-off, :func:`describe`). A server a person started (not ``--auto``) that is killed after
  it served is no failed start: the next caller starts one at once.

Off (:func:`enabled`): ``SUZENT_SERVE_AUTOSTART`` (a true/false word) > ``[serve] autostart`` in
``<home>/config.toml`` > off when ``CI`` is set (to anything but ``""``, ``0`` or ``false``: CI machines must not
leave daemons behind) > on. A home that does not exist yet is never started (``suzent init`` or a first capture
makes it). The setting is declared in :data:`suzent_cli.config.SETTINGS` (``serve.autostart``); this module reads
it without the configuration module (``tests/test_autostart.py`` checks both agree).

Crash and concurrency: the record is replaced atomically (temp file, rename), without fsync: a record lost to a
power cut costs at most one extra spawn, which ``serve.lock`` makes harmless. A caller killed while it holds the
lock releases it (the kernel drops a dead process's ``flock``). A server's output goes to
``<home>/server/serve.log`` (0600, appended; moved to ``serve.log.1`` past :data:`LOG_CAP` bytes at a spawn).

Standard library only at import (the hooks' fast path, :mod:`suzent_cli.cli.fasthook`, calls it before the CLI
framework loads; ``filelock`` costs that path ~50 ms, so the locks here are ``fcntl.flock`` directly, the same
call ``filelock`` makes on Unix).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from suzent_cli.server import paths

ENV = "SUZENT_SERVE_AUTOSTART"  # = the env of serve.autostart in suzent_cli.config.SETTINGS (the test checks)
BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
              "0": False, "false": False, "no": False, "off": False}  # = suzent_cli.config.BOOL_WORDS
CI_ENV = "CI"
LOCK = "autostart.lock"
RECORD = "autostart.json"
LOG = "serve.log"
LOG_CAP = 1 << 20  # bytes of serve.log before a spawn moves it to serve.log.1
STARTING = 30.0  # seconds a spawned process is given to take serve.lock before it counts as failed
BACKOFF = 30.0  # seconds after the first failed start; doubles with each further one
BACKOFF_CAP = 3600.0
DECIDE_WAIT = 0.5  # seconds a caller waits for another caller's decision (held for milliseconds: a hook cannot wait)
STABLE = 60.0  # seconds a server serves before its start counts as a success (the failures reset)
CLEAN_EXITS = (0, 130, 143)  # SIGTERM or stop, Ctrl-C, SIGTERM during start-up


# --- on or off ------------------------------------------------------------------------------------------------

def parse_bool(text: object) -> bool | None:
    """A true/false word of :data:`BOOL_WORDS` (case and spaces ignored) as a bool; None for anything else."""
    return BOOL_WORDS.get(str(text).strip().lower())


def under_ci(env: Any) -> bool:
    """Whether ``CI`` is set to a value other than ``""``, ``0`` or ``false`` (what CI services export)."""
    value = (env.get(CI_ENV) or "").strip().lower()
    return value not in ("", "0", "false")


def setting(home: Path | str, env: Any = None) -> tuple[bool | None, str]:
    """``serve.autostart`` as :func:`suzent_cli.config.resolve_settings` resolves it, without the configuration
    module: ``(value, origin)`` where value is True/False, or None when it is not set (or not a true/false value,
    then origin says why) and origin is ``env:SUZENT_SERVE_AUTOSTART``, ``file``, ``default`` or a problem.
    Reads ``<home>/config.toml`` (``tomllib``) only when the variable is not set. Never raises."""
    env = os.environ if env is None else env
    raw = env.get(ENV)
    if raw:  # an empty variable counts as unset, as for every setting
        value = parse_bool(raw)
        return (value, f"env:{ENV}") if value is not None else (None, f"{ENV}={raw!r} is not true or false")
    path = Path(home) / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "default"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if "autostart" not in text:  # the common case: no need to parse the file
        return None, "default"
    import tomllib

    try:
        table = tomllib.loads(text).get("serve", {})
    except tomllib.TOMLDecodeError:
        return None, f"{path} is not valid TOML"
    value = table.get("autostart") if isinstance(table, dict) else None
    if value is None:
        return None, "default"
    if not isinstance(value, bool):
        return None, f"{path}: [serve] autostart must be true or false, got {value!r}"
    return value, "file"


def enabled(home: Path | str, env: Any = None) -> tuple[bool, str]:
    """Whether auto-start is on for ``home``, and why in words (``"serve.autostart = false in config.toml"``,
    ``"CI=true is set; …"``, ``"default"``…). Order: the variable, the file, CI, on. A value that is not true/false (or an
    unreadable config.toml) is off, saying why: a server that cannot read its configuration would not start
    anyway. Never raises."""
    env = os.environ if env is None else env
    value, origin = setting(home, env)
    if value is not None:
        where = f"{ENV}={env.get(ENV)}" if origin.startswith("env:") else f"serve.autostart = {str(value).lower()} in config.toml"
        return value, where
    if origin != "default":
        return False, origin
    if under_ci(env):
        return False, f"{CI_ENV}={env.get(CI_ENV)} is set; {ENV}=1 or serve.autostart = true starts it anyway"
    return True, "default"


# --- the record -----------------------------------------------------------------------------------------------

def record_path(home: Path | str) -> Path:
    """``<home>/server/autostart.json``."""
    return paths.run_dir(home) / RECORD


def log_path(home: Path | str) -> Path:
    """``<home>/server/serve.log``: what auto-started servers print."""
    return paths.run_dir(home) / LOG


def read_record(home: Path | str) -> dict[str, Any]:
    """The last spawn's record (module docstring), ``{}`` when there is none or it is not a JSON object."""
    try:
        data = json.loads(record_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(home: Path, record: dict[str, Any]) -> None:
    """Replace the record atomically (a 0600 temp file renamed over it; no fsync, see the module docstring)."""
    path = record_path(home)
    tmp = path.with_name(f".{RECORD}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def backoff(failures: int) -> float:
    """Seconds to wait after the last spawn before the next one, after ``failures`` failed starts in a row:
    0 for none, then 30, 60, 120… at most :data:`BACKOFF_CAP`."""
    if failures <= 0:
        return 0.0
    return min(BACKOFF_CAP, BACKOFF * 2 ** min(failures - 1, 20))


def _failed(record: dict[str, Any]) -> bool:
    """Whether the recorded server ended without a clean exit (it is gone: the caller checked). A server a person
    started (``suzent serve`` without ``--auto``) that served and was killed is theirs to restart, no failed start:
    the next caller starts one at once."""
    if record.get("auto") is False and record.get("listening") is not None:
        return False
    return record.get("ended") is None or record.get("exit") not in CLEAN_EXITS


def failures_now(record: dict[str, Any]) -> int:
    """Failed starts in a row, counting the recorded spawn when its server is gone without a clean exit (call
    it only when no server runs)."""
    failures = int(_number(record.get("failures")))
    return failures + 1 if record.get("pid") and _failed(record) else failures


def next_start(record: dict[str, Any]) -> tuple[int, float]:
    """``(failed starts in a row, epoch seconds before which no server is spawned)`` for the recorded server, gone
    (call it only when no server runs): :func:`failures_now`, and ``at`` + :func:`backoff` of them, less one when
    the recorded server had finished starting (``ready``) before it died: a server killed after its start-up is
    restarted at once, a second death in a row backs off (module docstring)."""
    failures = failures_now(record)
    free = 1 if record.get("ready") is not None and _failed(record) else 0
    return failures, _number(record.get("at")) + backoff(failures - free)


def last_failure(home: Path | str, record: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The recorded server's failure when no server runs now: ``{"pid", "failures" (failed starts in a row,
    this one counted), "exit" (code or None: killed, crashed or never recorded), "error" (one line), "retry_at"
    (epoch seconds before which auto-start spawns none; None: the next caller starts one), "log" (serve.log's
    path)}``; None when the last server stopped cleanly, still runs or is starting (``serve.lock`` held, or a
    live spawn not yet holding it), or there is no record. ``record``: the record already read. Never raises."""
    home = Path(home)
    record = read_record(home) if record is None else record
    pid = record.get("pid")
    if not pid or not _failed(record):
        return None
    if record.get("ended") is None and alive(pid):
        return None  # still running, or a spawn that has not taken the lock yet
    if lock_held(paths.lock_path(home)) is not False:
        return None  # a server runs (or is starting) now: its failed predecessor is history
    failures, until = next_start(record)
    error = record.get("error")
    if not isinstance(error, str) or not error:
        error = ("it ended without a clean exit after it served (killed or crashed)" if record.get("listening")
                 else "it ended before it served (killed or crashed while starting)")
    return {"pid": pid, "failures": failures, "exit": record.get("exit"), "error": error,
            "retry_at": until if until > time.time() else None, "log": str(log_path(home))}


def alive(pid: Any) -> bool:
    """Whether ``pid`` names a live process of ours (a zombie is dead; ``/proc`` where there is one)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: the pid was reused
        return False
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[-1].split()[:1]
        return state != [b"Z"]
    except OSError:
        return True


# --- the locks ------------------------------------------------------------------------------------------------

def lock_held(path: Path) -> bool | None:
    """Whether another process holds the ``flock`` of ``path`` (``serve.lock``: a server runs or is starting):
    a probe that never waits and never creates the file; None when it cannot be probed. The stdlib twin of
    :func:`suzent_cli.server.runtime.is_running` for this module's light path."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # closing drops the probe's lock
    return False


@contextlib.contextmanager
def _decision(home: Path, wait: float = DECIDE_WAIT):
    """Hold ``<home>/server/autostart.lock`` (made 0600; the folder 0700 when made here); yields False when another
    caller kept it for ``wait`` seconds."""
    import fcntl

    run = paths.run_dir(home)
    with contextlib.suppress(FileExistsError):
        os.mkdir(run, 0o700)
    fd = os.open(run / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.02)
        yield True
    finally:
        os.close(fd)


# --- ensure ---------------------------------------------------------------------------------------------------

def ensure(home: Path | str, *, why: str, env: Any = None) -> str:
    """Start ``home``'s server when none runs and auto-start is on; never waits for it, never raises.

    ``why``: who asks, recorded as the server's ``started_by`` (``"hook recall"``, ``"suzent mcp"``, ``"suzent
    recall"``). ``env``: the environment to read the setting from and to start the server with (default
    ``os.environ``). Returns what it did, one line: ``"running"``, ``"starting: …"`` (a spawn under way, or a
    server holds ``serve.lock`` without answering yet), ``"started pid N"``, ``"off: <reason>"``, ``"backing off
    until <UTC time> (N failed starts; see <serve.log>)"``, ``"spawn failed: <reason>"``.

    Cost when a server answers: one connect on its socket. When auto-start is off: the variable (or a read of
    ``config.toml``). Otherwise a lock, a JSON read, a lock probe and, for a spawn, one ``fork``+``exec``."""
    try:
        return _ensure(Path(home), why, os.environ if env is None else env)
    except Exception as exc:  # noqa: BLE001 - a hook or a command must never fail because its server did not start
        return f"spawn failed: {type(exc).__name__}: {exc}"


def _answers(home: Path) -> bool:
    from suzent_cli.server.client import connect

    return connect(home, timeout=1.0) is not None


def _ensure(home: Path, why: str, env: Any) -> str:
    on, reason = enabled(home, env)
    if not on:
        return f"off: {reason}"
    if not home.is_dir():
        return f"off: no home at {home} yet"
    if _answers(home):
        return "running"
    with _decision(home) as decided:
        if not decided:
            return "starting: another process is starting the server"
        if _answers(home):
            return "running"
        held = lock_held(paths.lock_path(home))
        if held:
            return "starting: a server holds serve.lock and does not answer yet"
        if held is None:
            return f"off: cannot probe {paths.lock_path(home)}"
        record, now = read_record(home), time.time()
        pid, at = record.get("pid"), _number(record.get("at"))
        if pid and record.get("ended") is None and alive(pid) and now - at < STARTING:
            return f"starting: pid {pid}, spawned {now - at:.0f} s ago"
        failures, until = next_start(record)
        if pid and now < until:
            return (f"backing off until {time.strftime('%H:%M:%S', time.gmtime(until))} UTC ({failures} failed "
                    f"start{'s' if failures != 1 else ''}; see {log_path(home)})")
        child = _spawn(home, why, env)
        _write_record(home, {"pid": child, "at": now, "why": why, "auto": True, "failures": failures,
                             "listening": None, "ready": None, "ended": None, "exit": None, "error": None})
        return f"started pid {child}"


def command(home: Path, why: str) -> list[str]:
    """The auto-started server's command line: this Python, ``-m suzent_cli --home HOME serve --auto``."""
    return [sys.executable, "-m", "suzent_cli", "--home", str(home), "serve", "--auto", "--started-by", why]


def child_env(env: Any) -> dict[str, str]:
    """The server's environment: ``env``, with the folder this ``suzent_cli`` was imported from first on
    ``PYTHONPATH`` when it is a source checkout (not ``site-packages``), so the server runs the caller's code
    whatever its working folder (the home)."""
    child = dict(env)
    root = str(Path(__file__).resolve().parents[2])
    if Path(root).name not in ("site-packages", "dist-packages"):
        rest = [p for p in child.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
        child["PYTHONPATH"] = os.pathsep.join([root, *rest])
    return child


def _spawn(home: Path, why: str, env: Any) -> int:
    """Fork the server detached (its own session, stdin from /dev/null, output appended to serve.log, cwd the
    home, no inherited descriptors, :func:`child_env`) and return its pid; a thread reaps it should it end while
    this process lives (``suzent mcp``), so a dead server is never taken for a live zombie. OSError when it cannot
    be started."""
    import subprocess
    import threading

    log = log_path(home)
    with contextlib.suppress(OSError):
        if log.stat().st_size > LOG_CAP:
            os.replace(log, log.with_name(LOG + ".1"))
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} suzent: starting the server "
                     f"({why})\n".encode())
        proc = subprocess.Popen(command(home, why), stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                close_fds=True, start_new_session=True, cwd=str(home), env=child_env(env))
    finally:
        os.close(fd)
    threading.Thread(target=proc.wait, name="suzent-autostart-reaper", daemon=True).start()
    return proc.pid


# --- what the server records ----------------------------------------------------------------------------------

def note_listening(home: Path | str, started_by: str, *, auto: bool) -> None:
    """Called by a server of ``home`` once it serves (``auto``: started with ``--auto``): the record names it and
    when it began to serve; its spawn's failure count stays until :func:`note_stable`. Never raises (a record it
    cannot write costs at most one back-off)."""
    home = Path(home)
    with contextlib.suppress(Exception), _decision(home, wait=10.0) as decided:
        if decided:
            record, now = read_record(home), time.time()
            ours = record.get("pid") == os.getpid()
            _write_record(home, {"pid": os.getpid(), "at": _number(record.get("at"), now) if ours else now,
                                 "why": started_by, "auto": auto,
                                 "failures": int(_number(record.get("failures"))) if ours else 0,
                                 "listening": now, "ready": None, "ended": None, "exit": None, "error": None})


def note_ready(home: Path | str) -> None:
    """Called by a server of ``home`` once its start-up has ended (it serves and its model preload ended, loaded
    or not): if it is killed from now on, the next caller restarts it at once (:func:`next_start`). Never
    raises."""
    home = Path(home)
    with contextlib.suppress(Exception), _decision(home, wait=10.0) as decided:
        record = read_record(home)
        if decided and record.get("pid") == os.getpid():
            _write_record(home, {**record, "ready": time.time()})


def note_failed(home: Path | str, code: int, error: str) -> None:
    """Called by an auto-started server of ``home`` that cannot start (bad configuration, a taken port…) or fails
    outside its clean stop, with its exit ``code`` and the ``error`` on one line: ``suzent status`` shows it at
    once (:func:`last_failure`), before any caller tries again. Only the record of this process is written.
    Never raises."""
    home = Path(home)
    with contextlib.suppress(Exception), _decision(home, wait=5.0) as decided:
        record = read_record(home)
        if decided and record.get("pid") == os.getpid():
            _write_record(home, {**record, "ended": time.time(), "exit": code, "error": " ".join(error.split())[:500]})


def note_stable(home: Path | str) -> None:
    """Called by a server of ``home`` that has served for :data:`STABLE` seconds: no failed start any more.
    Never raises."""
    home = Path(home)
    with contextlib.suppress(Exception), _decision(home, wait=10.0) as decided:
        record = read_record(home)
        if decided and record.get("pid") == os.getpid() and record.get("failures"):
            _write_record(home, {**record, "failures": 0})


def note_exit(home: Path | str, code: int) -> None:
    """Called by a server of ``home`` that stops on its own terms (a signal, ``suzent serve stop``, the idle
    exit) with its exit ``code``: not a failed start (the count resets when ``code`` is a clean one). Never
    raises."""
    home = Path(home)
    with contextlib.suppress(Exception), _decision(home, wait=5.0) as decided:
        record = read_record(home)
        if decided and record.get("pid") == os.getpid():
            clean = code in CLEAN_EXITS
            _write_record(home, {**record, "ended": time.time(), "exit": code,
                                 "failures": 0 if clean else record.get("failures", 0)})


def _iso(value: Any) -> str | None:
    return (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(value)) if isinstance(value, (int, float))
            and not isinstance(value, bool) else None)


def describe(home: Path | str, env: Any = None) -> dict[str, Any]:
    """What ``suzent status`` shows about auto-start: ``{"enabled": bool, "reason": str, "last": {"pid", "at",
    "why", "failures", "listening", "ready", "ended", "exit", "error"} | None, "failed": {"pid", "failures", "exit",
    "error", "retry_at", "log"} | None, "log": str}`` with times as UTC ISO strings. ``last`` is the record as it
    is; ``failed`` is :func:`last_failure` (the last server is gone without a clean exit and none runs: why, how
    many failed starts in a row, and when auto-start will try again, None meaning the next caller starts one), so a
    failed start shows at once, not only when the next caller tries. Never raises."""
    on, reason = enabled(home, env)
    record = read_record(home)
    last = {**record, **{k: _iso(record.get(k)) for k in ("at", "listening", "ready", "ended")}} if record else None
    try:
        failed = last_failure(home, record)
    except Exception:  # noqa: BLE001 - status must not fail on a record it cannot judge
        failed = None
    if failed is not None:
        failed["retry_at"] = _iso(failed["retry_at"])
    return {"enabled": on, "reason": reason, "last": last, "failed": failed, "log": str(log_path(home))}
