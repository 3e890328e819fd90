"""SIGINT/SIGTERM for the long commands (``run``, ``loop``): the first signal is recorded and asked between stages;
a second one exits at once."""

from __future__ import annotations

import signal
import sys


class Signals:
    """SIGINT/SIGTERM handlers for the CLI: the first signal only records itself (the pass asks between stages);
    a second one exits at once with 128+signal (finally blocks run, so locks are released; every append and
    page write suzent makes is a single write or an atomic rename, so none is left half-done).

    Use as a context manager (the old handlers come back on exit); calling it answers "has a signal come?"."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, object] = {}

    def __call__(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def _handle(self, signum, frame) -> None:
        if self.signum is not None:
            print(f"second {signal.Signals(signum).name}: exiting now with {128 + signum} (the stage in progress is "
                  "cut short; what it wrote is whole)", file=sys.stderr, flush=True)
            raise SystemExit(128 + signum)
        self.signum = signum

    def __enter__(self) -> Signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
