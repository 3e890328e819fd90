"""A hook process's one deadline, and the watchdog that holds it whatever the process is doing.

A Claude Code hook (``suzent capture|recall --from claude-code``) must never hold its agent: the time bound
(``--timeout S``; capture 10 s, recall 2 s) counts from the moment the process starts, and covers reading stdin,
importing the CLI and the search engine, asking a server, and the work. :func:`arm` takes that instant — the
process's entry point (:func:`suzent_cli.cli.fasthook.main`) calls it first thing for a hook command line, before
stdin is read or anything heavy imported — and the paths that follow (the fast path through a server, the cold path
in-process) read their deadline from it (:func:`current`) instead of starting a clock of their own.

The paths stop their own work at :attr:`Watchdog.deadline` and print their usual warning. The watchdog is what holds
the bound when they cannot: a daemon thread that, at :attr:`Watchdog.until` plus :data:`GRACE`, writes one warning
line (``suzent: <warning> (stopped by the watchdog)``), flushes, and ends the process with exit 0 through
:func:`os._exit`, whatever the main thread is doing — blocked in an import (typer, lancedb), in a read, in a call
to the server. ``until`` is the deadline, or :data:`STDIN_FLOOR` seconds after the start when that is later: a
payload on a closed pipe is read in microseconds, so a tiny ``--timeout`` still gets its payload read (and a
capture's spooled). Python runs that thread only while nothing holds the interpreter lock; the inputs are bounded
so that no call of ours holds it long (stdin capped, transcript lines capped), and for a native call that still
does, the process watchdog arms a native timer too (:func:`faulthandler.dump_traceback_later`, no interpreter
needed) that ends the process :data:`BACKSTOP` seconds later with exit 1 (Claude Code shows a non-blocking hook
error; the agent goes on).

What the warning says follows the hook's progress (:meth:`Watchdog.expect`); for a capture whose payload was read
but not yet spooled, a last action keeps a copy in ``<home>/spool/`` first (bounded by :data:`RESCUE_SECONDS`), so
nothing is lost. Once the hook has its answer (:meth:`Watchdog.answered`) the watchdog only ends a process whose
exit hangs, silently. Stdlib only: it is armed before anything else is imported.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

GRACE = 0.5  # seconds after `until` for the normal path's own warning and exit, before the watchdog's
STDIN_FLOOR = 1.0  # seconds stdin may take however small --timeout is (a closed pipe is read in microseconds)
BACKSTOP = 2.0  # seconds after the watchdog's moment when the native timer ends a process Python cannot run in
RESCUE_SECONDS = 1.0  # at most this long for the last action (keeping a capture payload)
MARK = "stopped by the watchdog"


class Watchdog:
    """The deadline of one hook run and the thread that ends the process at :attr:`until` + :data:`GRACE`
    (module docstring). ``seconds``: the hook's ``--timeout``; ``warning``: the line it prints when it fires (see
    :meth:`expect`); ``native``: also arm the native backstop (the process's watchdog only: it is process-wide).

    Attributes: ``seconds``; ``started``, ``deadline`` (``started + seconds``: the work stops here) and ``until``
    (the later of the deadline and ``started + STDIN_FLOOR``), all :func:`time.monotonic` instants."""

    def __init__(self, seconds: float, warning: str, *, native: bool = False) -> None:
        self.seconds = float(seconds)
        self.started = time.monotonic()
        self.deadline = self.started + self.seconds
        self.until = self.started + max(self.seconds, STDIN_FLOOR)
        self._warning = warning
        self._rescue: Callable[[], str] | None = None
        self._lock = threading.Lock()  # held while firing, and by answered(): never both warnings
        self._off = threading.Event()
        self._quiet = False
        self._native = None
        if native:
            self._native = open(os.devnull, "w")  # kept open: the native timer writes its dump there
            faulthandler.dump_traceback_later(self.until + GRACE + BACKSTOP - self.started, exit=True,
                                              file=self._native)
        threading.Thread(target=self._watch, name="suzent-watchdog", daemon=True).start()

    @property
    def stdin_seconds(self) -> float:
        """How long stdin may take from the start: ``max(seconds, STDIN_FLOOR)`` (for the warning's text)."""
        return max(self.seconds, STDIN_FLOOR)

    def left(self) -> float:
        """Seconds until :attr:`deadline` (≤ 0 once it has passed)."""
        return self.deadline - time.monotonic()

    def stdin_left(self) -> float:
        """Seconds stdin may still take: until :attr:`until` (≤ 0 once it has passed)."""
        return self.until - time.monotonic()

    def expect(self, warning: str, rescue: Callable[[], str] | None = None) -> None:
        """From now on, say ``warning`` if it fires, after running ``rescue()`` (bounded by
        :data:`RESCUE_SECONDS`; its text is appended after ``; ``). ``rescue`` None: nothing to keep."""
        with self._lock:
            self._warning, self._rescue = warning, rescue

    def answered(self) -> None:
        """The hook has its answer and prints it now: from here the watchdog says nothing (it still ends a process
        whose exit hangs, with 0). Waits while it is firing (which ends the process): never two warnings."""
        with self._lock:
            self._quiet, self._rescue = True, None

    def stand_down(self) -> None:
        """Stop watching (an in-process run that returns): the thread ends, the native timer is cancelled."""
        with self._lock:
            self._off.set()
        if self._native is not None:
            faulthandler.cancel_dump_traceback_later()

    def _watch(self) -> None:
        if self._off.wait(max(0.0, self.until + GRACE - time.monotonic())):
            return
        with self._lock:
            if self._off.is_set():
                return
            line = None if self._quiet else self._warning
            if line and self._rescue is not None:
                tail = _within(self._rescue, RESCUE_SECONDS)
                line = f"{line}; {tail or 'the payload could not be kept in time: its turns stay in the transcript'}"
            _leave(f"suzent: {' '.join(line.split())} ({MARK})\n" if line else None)


def _within(fn: Callable[[], str], seconds: float) -> str | None:
    """``fn()`` run in a daemon thread for at most ``seconds``: its text, or None (not done in time, or raised)."""
    box: dict = {}

    def run() -> None:
        try:
            box["out"] = fn()
        except BaseException:  # noqa: BLE001 - the watchdog's last action must not stop it
            pass

    worker = threading.Thread(target=run, name="suzent-watchdog-rescue", daemon=True)
    worker.start()
    worker.join(seconds)
    return box.get("out")


def _leave(line: str | None) -> None:
    """Write ``line`` on stderr (if any), flush both streams, and end the process with 0 at once."""
    for stream, text in ((sys.stderr, line), (sys.stdout, None), (sys.stderr, None)):
        try:
            if text:
                stream.write(text)
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


_current: Watchdog | None = None


def arm(seconds: float, warning: str) -> Watchdog:
    """The process's watchdog, armed now (with the native backstop) unless one already is: one deadline per hook
    process. Called by the process's entry point only; in-process callers use :func:`scoped`."""
    global _current
    if _current is None:
        _current = Watchdog(seconds, warning, native=True)
    return _current


def current() -> Watchdog | None:
    """The armed watchdog (None: none; e.g. a hook run in-process by tests)."""
    return _current


@contextmanager
def scoped(seconds: float, warning: str) -> Iterator[Watchdog]:
    """The watchdog for one hook command: the process's when :func:`arm` armed one (its deadline counts from the
    process's start; left armed at exit), else one armed now for this command and stood down when it returns or
    raises (a hook line the entry point did not recognise, e.g. with ``--now``; a hook run in-process)."""
    global _current
    if _current is not None:
        yield _current
        return
    dog = _current = Watchdog(seconds, warning)
    try:
        yield dog
    finally:
        dog.stand_down()
        if _current is dog:
            _current = None
