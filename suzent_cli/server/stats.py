"""What a running ``suzent serve`` knows about itself: request counts, the last error, the chain and the watcher.

One :class:`Stats` per process, shared by the HTTP apps (one event loop) and the chain and watcher threads, so
every method takes a lock. :meth:`Stats.snapshot` is the ``server`` block of ``/v1/status`` and of
``suzent status``. Stdlib only.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from typing import Any

from suzent_cli import errors


def now_iso() -> str:
    """The current UTC instant as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Stats:
    """Counters and states of one server process (thread-safe).

    ``mcp_url`` and ``socket`` are where the server listens (set once it has bound). ``chain`` and ``watcher`` are
    small dicts each thread keeps current through :meth:`set_chain` / :meth:`set_watcher` (``{"state": "off"}``
    until one starts)."""

    def __init__(self, *, mcp_url: str | None = None, socket: str | None = None) -> None:
        self.pid = os.getpid()
        self.started = now_iso()
        self._start = time.monotonic()
        self.mcp_url = mcp_url
        self.socket = socket
        self._lock = threading.Lock()
        self._requests: dict[str, int] = {}
        self._last_error: dict[str, str] | None = None
        self._chain: dict[str, Any] = {"state": "off"}
        self._watcher: dict[str, Any] = {"state": "off"}
        self._last_request = self._start  # monotonic: the idle exit counts from here

    def count(self, op: str, *, activity: bool = True) -> None:
        """One request for ``op`` (an operation name, or ``mcp`` for a request to the MCP endpoint); it is also
        activity (:meth:`touch`) unless ``activity`` is False (a relayed ``suzent status``: looking at a server
        keeps no server alive)."""
        with self._lock:
            self._requests[op] = self._requests.get(op, 0) + 1
            if activity:
                self._last_request = time.monotonic()

    def touch(self) -> None:
        """Activity without a new request (a request that ends): the idle time starts again."""
        with self._lock:
            self._last_request = time.monotonic()

    def idle_seconds(self) -> float:
        """Seconds since the last request began or ended (since the start when there was none): what the idle
        exit of ``suzent serve --auto`` (:func:`suzent_cli.server.serve.idle_thread`) measures. ``POST /v1/server``
        (``suzent status``) and the watcher's events are not requests: they keep no server alive."""
        with self._lock:
            return time.monotonic() - self._last_request

    def error(self, where: str, exc: BaseException | str) -> None:
        """Record the last error: ``where`` is the op, ``chain`` or ``watcher``; the message is one line."""
        message = exc if isinstance(exc, str) else errors.describe(exc)
        with self._lock:
            self._last_error = {"time": now_iso(), "op": where, "message": errors.one_line(message, 300)}

    def set_chain(self, **state: Any) -> None:
        """Update the chain's block (``state``: off|waiting|running|stopped; ``passes``, ``last_pass``, …)."""
        with self._lock:
            self._chain.update(state)

    def set_watcher(self, **state: Any) -> None:
        """Update the watcher's block (``state``: off|waiting|watching|stopped|failed; ``paths``, ``events``, …)."""
        with self._lock:
            self._watcher.update(state)

    def add_watch_event(self) -> None:
        """One batch of file changes handed to the index worker."""
        with self._lock:
            self._watcher["events"] = self._watcher.get("events", 0) + 1
            self._watcher["last_event"] = now_iso()

    def snapshot(self) -> dict[str, Any]:
        """``{"pid", "started" (UTC ISO), "uptime_s" (int seconds), "requests": {"total", "by_op": {op: n}}, "idle_s" (int seconds since the last request),
        "last_error": {"time", "op", "message"} | None, "mcp_url", "socket", "chain": {...}, "watcher": {...}}``."""
        with self._lock:
            by_op = dict(sorted(self._requests.items()))
            return {"pid": self.pid, "started": self.started, "uptime_s": int(time.monotonic() - self._start),
                    "requests": {"total": sum(by_op.values()), "by_op": by_op},
                    "idle_s": int(time.monotonic() - self._last_request),
                    "last_error": dict(self._last_error) if self._last_error else None,
                    "mcp_url": self.mcp_url, "socket": self.socket,
                    "chain": dict(self._chain), "watcher": dict(self._watcher)}
