"""The CLI uses a running server: a command line whose answer is the same either way is sent to the home's ``suzent
serve``, which runs it on its warm state (the model loaded, the index open) and sends back what it printed.

:func:`attempt` is called by the process's entry point (:func:`suzent_cli.cli.fasthook.main`) before the CLI
framework (typer, rich, the command modules) is imported, and imports none of it. When ``argv`` is relayable
(:func:`parse`) and the home's server answers (:func:`suzent_cli.server.client.connect`), it sends the command line
with the client's environment, terminal-ness, terminal size and stream encodings to the local API's ``cli`` op,
writes the returned stdout and stderr bytes to this process's streams and returns the exit code. The server runs
the very same entry point (:func:`suzent_cli.cli.app.main`) under those surroundings (:mod:`suzent_cli.cli.relayed`),
so a relayed command prints what the cold one prints, byte for byte, and exits with the same code.

Relayable (:data:`COMMANDS`; anything else, an unknown option, ``--help``/``--version``/``-h`` included, goes the
cold way): ``recall`` (not ``--from``, ``--model``), ``status``, ``index`` (not ``--model``), ``capture --fact``
(with ``--session``, ``--date``, ``--time``, ``--index``, ``--json``; nothing that reads stdin or a file),
``forget``, ``paths``, ``verify`` (``--repair``, ``--json``; a write only with ``--repair``, whose reindex then
runs in the server, so two index writers never race); root options ``--home`` (made absolute here: the server
never changes directory), ``--memory-dir``, ``--vault-dir``, ``--index-dir`` (relative to the home, as
everywhere), ``--now``. Never: ``serve``, ``mcp``, ``init``, the hooks (:mod:`suzent_cli.cli.fasthook` has
them), anything that prompts or reads stdin. ``SUZENT_HOME``/``SUZENT_DATA_DIR`` are sent absolute too.

``SUZENT_NO_SERVER=1`` (any value but empty or ``0``) forces the cold path; so does ``SUZENT_DEBUG`` (its
tracebacks are the process's).

Failures:

* no server (no socket, refused), one that does not answer a liveness probe within
  :data:`~suzent_cli.server.client.ALIVE_TIMEOUT` (stopped, wedged), an argument or environment variable holding
  bytes that are not UTF-8 (they cannot travel in the request's JSON; the cold path reads them as it always does),
  or a server that declines (an older server without the op, another suzent version, a
  client ``HOME``/``TZ`` that differs from the server's): the cold path, nothing was run;
* the server fails or stops after the request was sent: a read-only command (``recall``, ``status``, ``paths``,
  ``forget --dry-run``, ``verify``) runs cold; a write (``capture``, ``index``, ``forget``, ``verify --repair``) is
  NOT redone, since it may have happened: one ``Error: the server stopped mid-request …; check with suzent
  status`` line, exit 1. No answer within :data:`RELAY_TIMEOUT` likewise.
* Ctrl-C here: ``Interrupted.``, exit 130. The server finishes the command (it runs in a worker thread, which no
  signal reaches); every write suzent makes is whole (a locked single append, an atomic commit or rename), so the
  memory is as after the command ran, or as before it.
"""

from __future__ import annotations

import base64
import os
import sys

from suzent_cli import __version__

NO_SERVER_ENV = "SUZENT_NO_SERVER"
RELAY_TIMEOUT = 6 * 3600.0  # seconds a relayed command may take (an index rebuild of a large home takes minutes)
HOME_ENV = ("SUZENT_HOME", "SUZENT_DATA_DIR")  # = fasthook.HOME_ENV: values sent absolute

VALUE, FLAG, PATH = "value", "flag", "path"  # an option takes a value | is a flag | takes a path (sent absolute)
ROOT = {"--home": PATH, "--memory-dir": VALUE, "--vault-dir": VALUE, "--index-dir": VALUE, "--now": VALUE}
# command -> (its options, how many positional arguments it takes)
COMMANDS: dict[str, tuple[dict[str, str], int]] = {
    "recall": ({"--mode": VALUE, "--limit": VALUE, "-n": VALUE, "--json": FLAG, "--explain": FLAG}, 1),
    "status": ({"--json": FLAG, "--no-index": FLAG}, 0),
    "index": ({"--full": FLAG, "--rebuild": FLAG, "--json": FLAG}, 0),
    "capture": ({"--fact": VALUE, "--session": VALUE, "--date": VALUE, "--time": VALUE, "--index": FLAG,
                 "--json": FLAG}, 0),
    "forget": ({"--id": VALUE, "--dry-run": FLAG, "--json": FLAG}, 1),
    "paths": ({"--json": FLAG}, 0),
    "verify": ({"--repair": FLAG, "--json": FLAG}, 0),  # not --reseal (a person's act, run cold)
}
READ_ONLY = ("recall", "status", "paths")  # and forget --dry-run: safe to run again cold after a failure


# The commands that start the home's server when none runs (suzent_cli.server.autostart, off with
# serve.autostart): the ones that would have used it. Not status and paths: looking must not change what is seen.
AUTOSTARTS = frozenset({"recall", "index", "capture", "forget"})


class Line:
    """A relayable command line: ``command``, ``argv`` (as sent: ``--home`` absolute), ``home`` (the ``--home``
    value or None) and ``writes`` (True: the command may change memory, so it is never run twice)."""

    __slots__ = ("command", "argv", "home", "writes")

    def __init__(self, command: str, argv: list[str], home: str | None, writes: bool) -> None:
        self.command, self.argv, self.home, self.writes = command, argv, home, writes

    def __repr__(self) -> str:
        return f"Line({self.command!r}, {self.argv!r}, home={self.home!r}, writes={self.writes})"


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path)) if path else path


def parse(argv: list[str]) -> Line | None:
    """The :class:`Line` of ``suzent ARGV`` when it is relayable (module docstring), else None. Options as click
    reads them: ``--opt V`` or ``--opt=V`` (a value is taken whatever it looks like, as click does), flags bare,
    ``--`` ends the options; a repeated option is passed on (click decides). ``capture`` needs a ``--fact``.
    Bad values are not checked here: the server's run reports them exactly as the cold run would."""
    sent: list[str] = []
    home: str | None = None
    command: str | None = None
    allowed, positional_left = ROOT, 0
    seen: set[str] = set()
    i, options_done = 0, False
    while i < len(argv):
        arg = argv[i]
        if command is None and not arg.startswith("-"):
            if arg not in COMMANDS:
                return None
            command = arg
            allowed, positional_left = COMMANDS[arg]
            sent.append(arg)
            i += 1
            continue
        if options_done or (command is not None and (arg == "-" or not arg.startswith("-"))):
            if positional_left <= 0:
                return None
            positional_left -= 1
            sent.append(arg)
            i += 1
            continue
        if command is not None and arg == "--":
            options_done = True
            sent.append(arg)
            i += 1
            continue
        name, eq, value = arg.partition("=")
        kind = allowed.get(name)
        if kind is None or (kind == FLAG and eq) or (eq and not name.startswith("--")):
            return None
        seen.add(name)
        if kind == FLAG:
            sent.append(arg)
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                return None  # click's "requires an argument": the cold run says it
            value, i = argv[i + 1], i + 1
        if name == "--home":
            home = value
        sent.append(f"{name}={_absolute(value) if kind == PATH else value}")
        i += 1
    if command is None or (command == "capture" and "--fact" not in seen):
        return None
    writes = command not in READ_ONLY and not (command == "forget" and "--dry-run" in seen) \
        and not (command == "verify" and "--repair" not in seen)
    return Line(command, sent, home, writes)


def disabled(env=None) -> bool:
    """True when the cold path is forced: ``SUZENT_NO_SERVER`` set (not empty, not ``0``) or ``SUZENT_DEBUG``."""
    env = os.environ if env is None else env
    return env.get(NO_SERVER_ENV, "") not in ("", "0") or bool(env.get("SUZENT_DEBUG"))


def sent_env(env=None) -> dict[str, str]:
    """The environment sent with a relayed command: this one, with the home variables made absolute here (a
    relative one names a folder under this process's working directory)."""
    env = dict(os.environ if env is None else env)
    for name in HOME_ENV:
        if env.get(name):
            env[name] = _absolute(env[name])
    return env


def terminal_size() -> list[int] | None:
    """``[columns, lines]`` of the first of stdin, stdout, stderr that is a terminal (the order rich asks them
    in), or None."""
    for fd in (0, 1, 2):
        try:
            size = os.get_terminal_size(fd)
        except (AttributeError, ValueError, OSError):
            continue
        return [size.columns, size.lines]
    return None


def _tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def attempt(argv: list[str]) -> int | None:
    """Run ``suzent ARGV`` through the home's running server (module docstring) and return its exit code, or None:
    run it here (not relayable, forced cold, no server, or the server declined or failed before anything could
    have run; or a read-only command whose run failed). Writes what the server's run printed to this process's
    stdout and stderr."""
    if disabled():
        return None
    line = parse(argv)
    if line is None:
        return None
    from suzent_cli.cli.fasthook import resolve_home
    from suzent_cli.server import paths

    home = resolve_home(line.home)
    backend = None
    if paths.untrusted_socket(paths.socket_path(home)) is None:  # the light check before the client's import
        from suzent_cli.server.client import alive, connect

        backend = connect(home, timeout=RELAY_TIMEOUT)
        if backend is not None and not alive(backend):
            return None  # a stopped or wedged server: this command runs here (and starts none: its lock is held)
    if backend is None:  # no server (or none we may talk to): this command runs here, and the next finds one warm
        if line.command in AUTOSTARTS:
            from suzent_cli.server.autostart import ensure

            ensure(home, why=f"suzent {line.command}")  # detached, never waited for, never raises
        return None
    request = {"argv": line.argv, "env": sent_env(), "stdout_tty": _tty(sys.stdout), "stderr_tty": _tty(sys.stderr),
               "terminal_size": terminal_size(),
               "stdout_encoding": getattr(sys.stdout, "encoding", None) or "utf-8",
               "stderr_encoding": getattr(sys.stderr, "encoding", None) or "utf-8", "version": __version__}
    try:
        answer = backend.call("cli", request)
    except KeyboardInterrupt:
        _write(sys.stderr, b"Interrupted.\n")
        return 130  # = errors.INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - sorted below: not sent (cold), read-only (cold), a write (an error)
        return _failed(line, exc)
    if answer.get("ran") is not True:
        return None  # declined: nothing ran
    try:
        out, err = base64.b64decode(answer["stdout_b64"]), base64.b64decode(answer["stderr_b64"])
        code = int(answer["exit"])
    except (KeyError, TypeError, ValueError) as exc:
        return _failed(line, exc)
    _write(sys.stdout, out)
    _write(sys.stderr, err)
    return code


def _failed(line: Line, exc: BaseException) -> int | None:
    """After a failed round trip: None (run it here) when the request cannot have run (the connection was refused,
    or the server refused the request as bad input: an older server without the op) or the command only reads;
    else one ``Error:`` line and exit 1 (a write may have happened: it is not redone)."""
    from suzent_cli.errors import InputInvalid, describe

    cause = exc.__cause__
    if (isinstance(cause, (ConnectionRefusedError, FileNotFoundError)) or isinstance(exc, InputInvalid)
            or not line.writes):
        return None
    _write(sys.stderr, (f"Error: the server stopped mid-request ({describe(exc)}); `suzent {line.command}` may or "
                        "may not have run: check with suzent status before running it again\n").encode("utf-8", "replace"))
    return 1  # = errors.FAILED


def _write(stream, data: bytes) -> None:
    """``data`` to ``stream``'s bytes (its buffer), flushed; a closed or broken stream is left alone, as the cold
    run's output would be lost there too."""
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            stream.write(data.decode(getattr(stream, "encoding", None) or "utf-8", "replace"))
            stream.flush()
    except (OSError, ValueError):
        pass
