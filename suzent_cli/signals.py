"""SIGINT/SIGTERM for the long-lived commands (``run``, ``loop``, ``serve``): the first signal is recorded (and,
for the server, asks every part to stop); a second one exits at once with 128+signal."""

from __future__ import annotations

import signal
import sys
import threading


class Signals:
    """SIGINT/SIGTERM handlers: the first signal only records itself (the command asks between stages, or
    :meth:`on_first` acts on it); a second one exits at once with 128+signal (finally blocks run, so locks are
    released; every append and page write suzent makes is a single write or an atomic rename, so none is left
    half-done).

    Use as a context manager: the handlers are installed on enter (only in the main thread, the one Python
    delivers signals to; elsewhere it is a no-op) and the old handlers come back on exit. Calling the object
    answers "has a signal come?"."""

    second_note = " (the stage in progress is cut short; what it wrote is whole)"

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, object] = {}

    def __call__(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        """The first signal's name (``"SIGTERM"``), or "" before any came."""
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def on_first(self) -> None:
        """Called once, in the signal handler, when the first signal comes. Nothing by default."""

    def _handle(self, signum, frame) -> None:
        if self.signum is not None:
            print(f"second {signal.Signals(signum).name}: exiting now with {128 + signum}{self.second_note}",
                  file=sys.stderr, flush=True)
            raise SystemExit(128 + signum)
        self.signum = signum
        self.on_first()

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()
