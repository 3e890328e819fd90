"""The Claude Code hooks' fast path: answer ``capture``/``recall --from claude-code`` through a running ``suzent
serve`` before the CLI framework (typer, rich, the command modules: about 0.2 s) is even imported.

:func:`main` is the process's entry point (the ``suzent`` script and ``python -m suzent_cli``); the app's own
:func:`suzent_cli.cli.app.main` calls :func:`attempt` too, for in-process callers. :func:`attempt` recognises
exactly the documented hook command lines (:func:`parse`)::

    suzent [--home H] capture --from claude-code [--timeout S] [--json] [--extractor X]
    suzent [--home H] recall  --from claude-code [--timeout S] [--mode M] [--limit N]

(options after the command in any order, ``--opt V`` or ``--opt=V``, each once). Anything else — another command,
another root option (``--now``, ``--vault-dir``: settings the server was not started with), ``--model``, a bad
value, ``--help`` — goes down the normal path untouched.

For a hook line, the process's one deadline starts first (:func:`suzent_cli.cli.watchdog.arm`: ``--timeout``,
default capture 10 s, recall 2 s, counted from here, with the watchdog that ends the process when it passes), then
the payload is read (:func:`suzent_cli.hooks.stdin.read_stdin`, the hooks' rule: within the time bound, at most
:data:`~suzent_cli.hooks.stdin.MAX_PAYLOAD_BYTES`; over that, one warning and nothing else), before anything heavy
is imported. With a server listening it is sent over the socket (:mod:`suzent_cli.server.client`); its answer is
printed in the same format the cold path prints (Claude Code's ``hookSpecificOutput`` JSON for recall and
SessionStart, the drain report for ``capture --json``), every warning as one ``suzent: …`` line on stderr, exit 0.
The round trip gets what is left of the deadline. The recall hook's mode is ``hybrid`` through the server (the
model is warm there); an explicit ``--mode`` wins. A ``SessionStart`` payload gets the session briefing
(``hook_session_start``). Without a server the home's server is started for the next hook
(:func:`suzent_cli.server.autostart.ensure`: detached, never waited for; off with ``serve.autostart``) and the same
bytes go to the normal path (``sys.stdin`` is replaced by a buffer holding them).

When the server fails (it dies mid-request, answers garbage, or fails a capture), the SAME stdin bytes are handed
to the normal path (``sys.stdin`` is replaced by a buffer holding them), which does the work in-process: capture is
idempotent per session (each session's captured position, :mod:`suzent_cli.hooks.capture`), so a turn the server
captured before it died is recorded once. When the server does not answer in time, recall prints nothing (one
warning, as the cold path does), and capture keeps a copy of the payload in ``<home>/spool/`` for the next run
(the server may still finish it; a second drain of it captures nothing new). Nothing here ever exits non-zero.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path

from suzent_cli.privacy import private_umask

CAPTURE_TIMEOUT = 10.0  # = suzent_cli.hooks.claude_code.CAPTURE_TIMEOUT (tests/test_fasthook.py checks)
RECALL_TIMEOUT = 2.0  # = suzent_cli.hooks.recall.RECALL_TIMEOUT
RECALL_LIMIT = 5  # = suzent_cli.hooks.recall.RECALL_LIMIT
MODES = ("hybrid", "vector", "fts")
HOME_ENV = ("SUZENT_HOME", "SUZENT_DATA_DIR")  # = the home row of suzent_cli.config.SETTINGS (the test checks)
HOME_DEFAULT = "~/.suzent"
_OPTIONS = {"capture": {"--timeout": True, "--json": False, "--extractor": True},
            "recall": {"--timeout": True, "--mode": True, "--limit": True}}  # option -> takes a value


class HookLine:
    """A recognised hook command line: ``command`` (capture|recall), ``home`` (the ``--home`` flag or None),
    ``timeout`` (seconds), ``json_out``, ``extractor``, ``mode`` (None: not given), ``limit``. (A plain class:
    :mod:`dataclasses` alone costs this path a tenth of its import time.)"""

    __slots__ = ("command", "home", "timeout", "json_out", "extractor", "mode", "limit")

    def __init__(self, command: str, home: str | None = None, timeout: float = RECALL_TIMEOUT,
                 json_out: bool = False, extractor: str | None = None, mode: str | None = None,
                 limit: int = RECALL_LIMIT):
        self.command, self.home, self.timeout, self.json_out = command, home, timeout, json_out
        self.extractor, self.mode, self.limit = extractor, mode, limit

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookLine) and self._key() == other._key()

    def __repr__(self) -> str:
        return "HookLine(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


def resolve_home(flag: str | None, env=None) -> Path:
    """The home exactly as :func:`suzent_cli.config.resolve_home` resolves it (``--home`` > ``SUZENT_HOME`` >
    ``SUZENT_DATA_DIR`` > ``~/.suzent``; empty values skipped; expanded, absolute), without importing the
    configuration module (a fifth of this path's import time). ``tests/test_fasthook.py`` checks both agree."""
    env = os.environ if env is None else env
    for value in (flag, *(env.get(name) for name in HOME_ENV)):
        if value:
            return Path(value).expanduser().absolute()
    return Path(HOME_DEFAULT).expanduser().absolute()


def parse(argv: list[str]) -> HookLine | None:
    """The :class:`HookLine` of ``argv`` when it is exactly one of the hook forms in the module docstring with
    good values, else None (the normal path then parses it, and reports what is wrong)."""
    options = _options(argv)
    if options is None:
        return None
    command, seen = options
    if seen.get("--from") != "claude-code":
        return None
    default = CAPTURE_TIMEOUT if command == "capture" else RECALL_TIMEOUT
    timeout = _seconds(seen.get("--timeout"), default)
    limit = _whole(seen.get("--limit"), RECALL_LIMIT)
    mode = seen.get("--mode")
    if timeout is None or limit is None or (mode is not None and mode not in MODES):
        return None
    return HookLine(command, seen.get("--home"), timeout, "--json" in seen, seen.get("--extractor"), mode, limit)


def _options(argv: list[str]) -> tuple[str, dict[str, str]] | None:
    """``(command, {option: value})`` for ``[--home H] COMMAND [OPTION …]`` with COMMAND's allowed options (and
    ``--from``), each once, ``--opt V`` or ``--opt=V``; a flag's value is ``""``. None for anything else, a value
    that looks like an option included (click would read it differently: left to it)."""
    seen: dict[str, str] = {}
    command: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if command is None:
            allowed = {"--home": True}
            if arg in _OPTIONS:
                command, i = arg, i + 1
                continue
        else:
            allowed = {"--from": True, **_OPTIONS[command]}
        if name not in allowed or name in seen:
            return None
        if not allowed[name]:  # a flag
            if eq:
                return None
            seen[name], i = "", i + 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                return None
            value, i = argv[i + 1], i + 1
        if not value or value.startswith("-"):
            return None
        seen[name], i = value, i + 1
    return (command, seen) if command is not None else None


def _seconds(text: str | None, default: float) -> float | None:
    """As :func:`suzent_cli.cli.hooks.parse_timeout`, but a bad value is None (the normal path warns about it)."""
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value <= 86400 else None


def _whole(text: str | None, default: int) -> int | None:
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


# --- the attempt -------------------------------------------------------------------------------------------------

_handed_over = False  # True while main() runs the normal path: the app's main() must not try the server again


@private_umask  # everything this process creates is its user's alone (suzent_cli.privacy)
def main(argv: list[str] | None = None) -> int:
    """The ``suzent`` entry point: :func:`attempt` (a hook line), then a plain ``capture --fact`` line
    (:func:`suzent_cli.cli.capture_run.answer`, the same work and output without typer, no server needed), then
    :func:`suzent_cli.cli.relay.attempt` (another command line the home's running server can answer), then, when
    none answered, the app (:func:`suzent_cli.cli.app.main`, imported only then). Returns the exit code."""
    global _handed_over
    argv = list(sys.argv[1:] if argv is None else argv)
    code = attempt(argv, process=True)  # a hook line: its deadline and watchdog start here (docs/hooks.md)
    if code is None and "capture" in argv:  # a plain `capture --fact` line, answered without typer
        from suzent_cli.cli.capture_run import answer

        code = answer(argv)
    if code is not None:
        return code
    from suzent_cli.cli.relay import attempt as relay  # any other command line the running server can answer

    code = relay(argv)
    if code is not None:
        return code
    from suzent_cli.cli.app import main as app_main

    _handed_over = True
    try:
        return app_main(argv)
    finally:
        _handed_over = False


def attempt(argv: list[str], *, process: bool = False) -> int | None:
    """Answer the hook command line ``argv`` through the home's running server: the exit code (always 0) when it
    did (or when stdin held no usable payload: warned), None when the normal path must run (not a hook form, a
    terminal on stdin, no server, or the server failed: then ``sys.stdin`` holds the payload's bytes again).
    ``process``: this is the process's entry point, so the hook's deadline and watchdog are armed here
    (:func:`suzent_cli.cli.watchdog.arm`); an in-process caller uses the one already armed, if any. Never raises
    for a server's or payload's problem."""
    if _handed_over:
        return None
    line = parse(argv)
    if line is None:
        return None
    from suzent_cli.cli import watchdog

    capture = line.command == "capture"
    unread = (f"capture not finished in {line.timeout:g} s; no payload was read: its turns stay in the transcript "
              "for the session's next hook call") if capture else f"recall skipped: no answer within {line.timeout:g} s"
    dog = watchdog.arm(line.timeout, unread) if process else watchdog.current()
    from suzent_cli.hooks.stdin import PayloadTooLarge, is_tty, read_stdin

    if is_tty():
        return None  # the normal path explains what the hook reads
    _plain_output()
    what = "nothing captured" if capture else "no recall"
    nominal = dog.stdin_seconds if dog is not None else max(line.timeout, watchdog.STDIN_FLOOR)
    try:
        raw = read_stdin(dog.stdin_left() if dog is not None else nominal)
    except PayloadTooLarge as exc:
        _answered(dog)
        warn(f"{exc}; {what}")
        return 0
    if raw is None:
        _answered(dog)
        warn(f"no hook payload on stdin within {nominal:g} s; {what}")
        _hard_exit()
    home = resolve_home(line.home)
    if dog is not None and capture:  # read, not yet spooled: should the watchdog fire, it keeps a copy first
        dog.expect(f"capture not finished in {line.timeout:g} s", rescue=lambda: _keep(home, raw))
    elif dog is not None and event_of(raw) == "SessionStart":
        dog.expect(f"briefing skipped: no answer within {line.timeout:g} s")
    from suzent_cli.server.client import connect

    backend = connect(home, timeout=_left(dog, line))
    if backend is None:
        from suzent_cli.server.autostart import ensure

        ensure(home, why=f"hook {line.command}")  # the next hook finds it warm; never waits, never raises
        return replay(raw)  # no server: the cold path reads the same bytes
    if capture:
        return _capture(backend, line, home, raw, dog)
    return _recall(backend, line, raw, dog)


MIN_WAIT = 0.01  # seconds: the least a round trip is given (a socket timeout of 0 would mean "do not wait")


def _left(dog, line: HookLine) -> float:
    """Seconds left for the round trip: to the watchdog's deadline (or the whole ``--timeout`` without one)."""
    return max(MIN_WAIT, dog.left() if dog is not None else line.timeout)


def _answered(dog) -> None:
    if dog is not None:
        dog.answered()


def _capture(backend, line: HookLine, home, raw: bytes, dog=None) -> int | None:
    from suzent_cli.errors import SuzentError, describe
    from suzent_cli.server.client import ServerTimeout, ServerUnavailable

    backend.timeout = left = _left(dog, line)
    budget = max(MIN_WAIT, round(left - min(1.0, left / 4), 2))  # the server stops in time to answer by the deadline
    try:
        answer = backend.hook_capture(payload_b64=_b64(raw), timeout=budget, extractor=line.extractor)
    except ServerTimeout:
        _answered(dog)
        warn(f"the server did not finish the capture within {line.timeout:g} s; {_keep(home, raw)}")
        return 0
    except ServerUnavailable as exc:
        warn(f"{describe(exc)}; capturing here instead")
        return replay(raw)
    except SuzentError as exc:
        warn(f"the server could not capture ({describe(exc)}); capturing here instead")
        return replay(raw)
    _answered(dog)
    warnings = answer.get("warnings")
    for message in warnings if isinstance(warnings, list) else [warnings] if warnings else []:
        warn(message)
    report = answer.get("report")
    if line.json_out and isinstance(report, dict):
        sys.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
    return 0


def _recall(backend, line: HookLine, raw: bytes, dog=None) -> int | None:
    from suzent_cli.errors import SuzentError, describe
    from suzent_cli.server.client import ServerTimeout, ServerUnavailable

    backend.timeout = _left(dog, line)
    try:
        if event_of(raw) == "SessionStart":
            answer = backend.hook_session_start(payload_b64=_b64(raw))
        else:
            answer = backend.hook_recall(payload_b64=_b64(raw), mode=line.mode or "hybrid", limit=line.limit)
    except ServerTimeout:
        _answered(dog)
        warn(f"recall skipped: no answer within {line.timeout:g} s")
        return 0
    except ServerUnavailable as exc:
        warn(f"{describe(exc)}; recalling here instead")
        return replay(raw)
    except SuzentError as exc:
        _answered(dog)
        warn(f"recall skipped ({describe(exc)})")
        return 0
    _answered(dog)
    if answer.get("warning"):
        warn(answer["warning"])
    if answer.get("output"):
        sys.stdout.write(str(answer["output"]) + "\n")
    return 0


def event_of(raw: bytes) -> str | None:
    """The payload's ``hook_event_name`` (None when it is no JSON object or has none)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    name = data.get("hook_event_name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def replay(raw: bytes) -> None:
    """Put ``raw`` (the payload already read from stdin) back as ``sys.stdin`` for the normal path, which then
    reads exactly these bytes (``sys.stdin.buffer``; not a terminal). Returns None: "run the normal path"."""
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace")
    return None


def _keep(home, raw: bytes) -> str:
    """Keep a copy of a capture payload the server may not finish in ``<home>/spool/`` (the next hook call or
    ``suzent run`` drains it; draining a payload twice captures nothing twice). Returns the warning's tail."""
    from suzent_cli.hooks.spool import spool_without_settings

    try:
        return f"a copy of the payload is kept in {spool_without_settings(home, raw)} for the next run"
    except OSError as exc:
        return (f"the payload could not be kept ({exc.strerror or exc}); its turns stay in the transcript for the "
                "session's next hook call")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def warn(message: str) -> None:
    """One warning line on stderr, ``suzent: …`` (whitespace folded), as :func:`suzent_cli.cli.hooks.warn`."""
    try:
        sys.stderr.write(f"suzent: {' '.join(str(message).split())}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _plain_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # as the app's main(): a console that cannot encode a memory must not fail the hook
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass


def _hard_exit() -> None:
    """Leave now with 0 (a thread still blocked on stdin cannot be stopped)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)
