"""Shared fixtures and helpers: a temp suzent home, settings for it, a small deterministic embedder, facts written
straight into a daily log, and the CLI run in this process (:func:`invoke`) or as a real one (:func:`run_cli`)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import io
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np
import pytest

from suzent_cli.archive import Fact, append_entry, parse_fact_line
from suzent_cli.config import resolve_settings
from suzent_cli.errors import EmbeddingFailed
from suzent_cli.index.embed import HashEmbedder

REPO = Path(__file__).resolve().parent.parent


def load_script(relpath: str, name: str):
    """Load a script of the repository (``benchmarks/*.py``, ``scripts/*.py``: not packages) as module ``name``.

    The module is registered in ``sys.modules`` before it runs: dataclasses look their module up while the class is
    built. ``benchmarks/`` is put on ``sys.path`` for scripts that import a sibling (locomo.py imports locomo_e2e).
    Each call loads the file afresh.
    """
    import importlib.util

    if str(REPO / "benchmarks") not in sys.path:
        sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, REPO / relpath)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def open_entries(*roots: Path) -> list[str]:
    """Every folder and file under ``roots`` (the roots included; symlinks not followed) that grants its group or
    others any permission bit, as ``"0644 path"`` (the privacy tests: nothing of the memory may be open)."""
    import stat

    found = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for path in [folder] + [os.path.join(folder, n) for n in dirs + files]:
                st = os.lstat(path)
                if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                    found.append(f"{stat.S_IMODE(st.st_mode):04o} {path}")
    return sorted(set(found))


INTEGRATION = Path(__file__).resolve().parent / "integration"


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: runs real processes (tests/integration/); `-m 'not integration'` "
                                       "leaves the in-process suite")


def pytest_collection_modifyitems(items):
    """Every test under tests/integration/ is marked ``integration`` (`make test` runs them all)."""
    for item in items:
        if INTEGRATION in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting texts embedded; ``fail_on`` makes encode raise when a text contains it."""

    def __init__(self, dim: int = 64, fail_on: str | None = None):
        super().__init__(dim)
        self.calls = 0
        self.texts = 0
        self.fail_on = fail_on

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise EmbeddingFailed(f"simulated failure on {self.fail_on!r}")
        self.calls += 1
        self.texts += len(texts)
        return super().encode(texts)


# lancedb's Rust logger reads its level once, at its first import in a process. suzent sets it to "error" before it
# imports lancedb (store._lancedb); a test that imports lancedb itself first would leave the whole pytest worker at
# "warn", and lance's warnings would then land in whichever CLI test's stderr runs next in that worker (an order
# that pytest-xdist changes from run to run). The tests of the setting itself use monkeypatch.
os.environ.setdefault("LANCEDB_LOG", "error")

# No test starts a server by accident (a hook or suzent mcp that finds none would): every process a test runs
# inherits this, and cli_env keeps it. Only tests/test_autostart.py turns it on, for the homes it stops itself.
AUTOSTART_OFF = {"SUZENT_SERVE_AUTOSTART": "0"}
# Every CLI run of a test captures the person's facts (capture.scope = global) unless it says otherwise: the tests
# run from the repository's directory, whose project would otherwise scope each technical fact to it and hide it
# from a hook whose payload names another cwd. The scope tests (tests/test_scope_*.py) pass SUZENT_SCOPE=None
# (the default, auto) or a mode of their own.
SCOPE_GLOBAL = {"SUZENT_SCOPE": "global"}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test ever reads the real ~/.suzent, an API key, or a user's config, or leaves a server behind."""
    for key in list(os.environ):
        if key.startswith("SUZENT_") or key.startswith("ANTHROPIC_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    for key, value in (AUTOSTART_OFF | SCOPE_GLOBAL).items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "suzent-home"


@pytest.fixture
def settings(home):
    return resolve_settings(home=home, today="2026-06-10", env={})


@pytest.fixture
def embedder():
    return CountingEmbedder()


# The hash embedder for CLI runs: no model load, same vectors every run. Add a clock with ``HASH_ENV | {...}``.
HASH_ENV = {"SUZENT_EMBEDDER": "hash:64"}


def settings_at(home: Path, now: str = "2026-06-20T12:00", *, env: dict | None = None, **dream):
    """Settings of ``home`` at the instant ``now`` (ISO ``YYYY-MM-DDTHH:MM``), resolved from ``env`` only (default
    none: the test's own environment never leaks in). ``dream`` keywords, if any, replace the raw ``[dream]`` table;
    an upper-case one is a TypeError (a variable meant for ``env``)."""
    if any(key.isupper() for key in dream):
        raise TypeError(f"settings_at: pass environment variables as env={{...}}, not {sorted(dream)}")
    s = resolve_settings(home=home, now=now, env=env or {})
    return dataclasses.replace(s, dream=dream) if dream else s


def log(settings, day: str | dt.date, *facts: str | Fact, time: str = "09:00", session: str = "sess0001") -> None:
    """Append one entry (``## HH:MM — session``) with ``facts`` to the daily log of ``day`` (ISO date or date), as
    capture writes it. A fact is a log line without its dash (``"[category] content `tag tag`"``; no ``[category]``
    means ``general``) or a :class:`Fact`."""
    parsed = []
    for f in facts:
        if isinstance(f, Fact):
            parsed.append(f)
            continue
        category, content, tags = parse_fact_line("- " + f) or parse_fact_line("- [general] " + f)
        parsed.append(Fact(content=content, category=category, tags=tags))
    day = day if isinstance(day, dt.date) else dt.date.fromisoformat(day)
    append_entry(settings.paths.archive_dir, day, time, session, parsed, timeout=5)


def cli_env(home: Path | None, **extra: str | None) -> dict:
    """The environment of a CLI run: this one without ``SUZENT_*``/``ANTHROPIC_*``, then ``SUZENT_HOME`` (unless
    ``home`` is None), ``NO_COLOR=1``, ``COLUMNS=120``, :data:`AUTOSTART_OFF`, :data:`SCOPE_GLOBAL`, then ``extra``
    (a None value removes the variable)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(NO_COLOR="1", COLUMNS="120", **AUTOSTART_OFF, **SCOPE_GLOBAL)
    if home is not None:
        env["SUZENT_HOME"] = str(home)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def run_cli(home: Path, *args: str, input: str | bytes | None = None, env_extra: dict | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess:
    """Run ``python -m suzent_cli ARGS`` as a real subprocess against ``home``. Use it only where the process is the
    point (hard exits, signals, concurrency, import weight, the README as a newcomer runs it); else :func:`invoke`."""
    text = not isinstance(input, bytes)
    return subprocess.run([sys.executable, "-m", "suzent_cli", *args], input=input, capture_output=True, text=text,
                          env=cli_env(home, **(env_extra or {})), timeout=timeout, cwd=REPO)


# Warning filters of a fresh interpreter (python -W default is not set): what a real run prints on stderr.
_FRESH_WARNING_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                          ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                          ("ignore", ResourceWarning, None))


class _HardExit(SystemExit):
    """``os._exit(code)`` inside :func:`invoke`: ends the command with ``code`` instead of the test process."""


def _hard_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    raise _HardExit(code)


@contextlib.contextmanager
def _fd_capture(fd: int):
    """Bytes written straight to file descriptor ``fd`` (C and Rust libraries bypass ``sys.stdout``) while inside;
    the list yielded receives them on exit."""
    got: list[bytes] = []
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        try:
            yield got
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            got.append(tmp.read())


@contextlib.contextmanager
def _fresh_consoles():
    """Every module-level rich Console of suzent as a new process would build it under the current environment
    (``NO_COLOR``, ``COLUMNS`` and colour detection are read when a Console is made, and ours were made at import)."""
    from rich.console import Console

    keys = ("_color_system", "no_color", "_width", "_height", "is_interactive", "_force_terminal")
    found = {id(c): c for name, module in list(sys.modules.items()) if name.startswith("suzent_cli") and module
             for c in list(vars(module).values()) if isinstance(c, Console) and c._file is None}  # on sys.stdout/err
    consoles = list(found.values())
    saved = [{k: getattr(c, k) for k in keys} for c in consoles]
    for c in consoles:
        fresh = Console(file=c.file, stderr=c.stderr)
        for k in keys:
            setattr(c, k, getattr(fresh, k))
    try:
        yield
    finally:
        for c, state in zip(consoles, saved, strict=False):
            for k, v in state.items():
                setattr(c, k, v)


def _as_text(data: bytes) -> str:
    """``data`` as ``subprocess.run(text=True)`` would give it: UTF-8, universal newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def invoke(home: Path | None, *args: str, input: str | bytes | None = None, env_extra: dict | None = None,
           timeout: float | None = None, entry=None) -> subprocess.CompletedProcess:
    """Run ``suzent ARGS`` in this process against ``home``, as :func:`run_cli` would in a new one: same result
    shape (``returncode``; ``stdout``/``stderr`` as text, or bytes when ``input`` is bytes), same environment
    (``SUZENT_*``/``ANTHROPIC_*`` removed, then ``SUZENT_HOME``, ``NO_COLOR``, ``COLUMNS=120``, ``env_extra``),
    cwd the repository, stdin fed ``input`` (empty when None), the warning filters of a fresh interpreter, output
    written to the file descriptors by native libraries included, an uncaught exception exit 1 with its traceback
    on stderr, and ``os._exit`` ending the command rather than the tests. Everything it changes (environment, cwd,
    streams, consoles) is restored on return. ``timeout`` is accepted for drop-in use and ignored.

    Not a process: threads a command leaves running keep running, and what a library caches stays cached (the
    point: lancedb and the model load once). Keep :func:`run_cli` where the process is the point. ``entry``: the
    function run instead of :func:`suzent_cli.cli.app.main` (e.g. the process entry point,
    :func:`suzent_cli.cli.fasthook.main`)."""
    from suzent_cli.cli.app import main

    main = entry or main

    argv = [str(a) for a in args]
    env = cli_env(home, **(env_extra or {}))
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    out, err = io.BytesIO(), io.BytesIO()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_env, saved_cwd, saved_exit = dict(os.environ), os.getcwd(), os._exit
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(REPO)
        os._exit = _hard_exit
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n")
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", newline="\n",
                                      write_through=True)
        with _fd_capture(1) as fd_out, _fd_capture(2) as fd_err, _fresh_consoles(), \
                warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_FRESH_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")
            try:
                code = main(argv)
            except _HardExit as exc:
                code = exc.code
            except Exception:  # noqa: BLE001 - what the interpreter does with an uncaught exception: traceback, exit 1
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue() + fd_out[0], err.getvalue() + fd_err[0]
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os._exit = saved_exit
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    if isinstance(input, bytes):
        return subprocess.CompletedProcess(["suzent", *argv], code, stdout, stderr)
    return subprocess.CompletedProcess(["suzent", *argv], code, _as_text(stdout), _as_text(stderr))


@pytest.fixture
def cli(home):
    """``cli(*args, input=None, env_extra=None)``: :func:`invoke` against the test's ``home``."""
    return lambda *args, **kw: invoke(home, *args, **kw)


# --- testsb ---
@pytest.fixture(autouse=True)
def _fsync_is_a_check(monkeypatch):
    """``os.fsync`` only checks its descriptor (``os.fstat``: a closed or bad one still raises) instead of waiting
    for the disk, in this process. The suite never cuts the power, so no assertion can observe the flush; a
    process killed mid-write (the kill tests) loses nothing the page cache holds. It is most of the time of
    exporting thousands of facts (one fsynced append each, ~10 ms apiece on a busy disk). A test that injects a
    failing fsync patches ``os.fsync`` again on top of this."""
    monkeypatch.setattr(os, "fsync", lambda fd: os.fstat(fd) and None)


def drain_pty(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer has gone (read on ``master``, then closed):
    Linux reports the end as EIO, other systems as an empty read."""
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks)


def indexed_home(tmp_path: Path, rows: list[str], other_project: list[str] = (),
                 other_scope: str = "github.com/acme/other"):
    """``(settings, HashEmbedder(64))`` of a fresh home under ``tmp_path / "home"`` (today 2026-06-10) whose capture
    buffer holds ``rows`` (day 2026-05-01, session "a", the person's scope) and ``other_project`` (day 2026-05-02,
    session "b", tagged with ``other_scope``), indexed with the hash embedder: the recall steps' test bed."""
    from suzent_cli.capture import write_facts
    from suzent_cli.index.api import run_index
    from suzent_cli.scope import scope_tag

    home = tmp_path / "home"
    home.mkdir()
    s = resolve_settings(home=home, today="2026-06-10", env={})
    write_facts(s, [Fact(r) for r in rows], day=dt.date(2026, 5, 1), time="10:00", session="a")
    if other_project:
        write_facts(s, [Fact(r, tags=(scope_tag(other_scope),)) for r in other_project], day=dt.date(2026, 5, 2),
                    time="10:00", session="b")
    emb = HashEmbedder(64)
    run_index(s, embedder=emb)
    return s, emb
