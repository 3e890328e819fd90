"""A local API request's work stops when its client has gone.

A hook asks the server with a deadline; when it gives up (its own time bound passed, or Claude Code killed it) it
closes the socket, and the work done for it should stop too rather than run on for nobody (issue 24: a capture
reading a 2 GB transcript line for a hook that had long exited). :class:`WatchDisconnect` wraps the local API's ASGI
app: for each HTTP request it makes a flag, visible to the operation (which runs in a worker thread, with the
request's context) through :func:`client_gone`, and set when the client disconnects (uvicorn reports it as an
``http.disconnect`` message once the request body has been read). The operations that can run long pass it on
(:meth:`suzent_cli.server.ops.LocalBackend.hook_capture` → the capture's ``stop``), which ask it between chunks of
the transcript and between turns. Outside a request (an in-process backend) nothing is ever gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

_gone: ContextVar[threading.Event | None] = ContextVar("suzent_client_gone", default=None)


def client_gone() -> Callable[[], bool]:
    """A callable that returns True once the client of the local API request being served (in this context) has
    disconnected; always False outside a request. Take it in the operation's own thread (a worker thread started
    later does not inherit the request's context) and pass it on."""
    flag = _gone.get()
    return flag.is_set if flag is not None else _never


def _never() -> bool:
    return False


class WatchDisconnect:
    """ASGI middleware: each HTTP request gets a "client gone" flag (:func:`client_gone`), set when the request's
    ``receive`` reports ``http.disconnect``. Once the app has read the whole body, a task keeps waiting on
    ``receive`` for that message (the app's own later ``receive`` calls get what it got); the task ends with the
    request. Other scopes (lifespan, websocket) pass through untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        flag = threading.Event()
        token = _gone.set(flag)
        watcher: asyncio.Task | None = None

        async def watch() -> dict:
            message = await receive()
            if message.get("type") == "http.disconnect":
                flag.set()
            return message

        async def relay() -> dict:
            nonlocal watcher
            if watcher is not None:  # the body is read: what the watcher waits for is the app's next message
                return await asyncio.shield(watcher)
            message = await receive()
            if message.get("type") == "http.disconnect":
                flag.set()
            elif message.get("type") == "http.request" and not message.get("more_body"):
                watcher = asyncio.ensure_future(watch())
            return message

        try:
            await self.app(scope, relay, send)
        finally:
            _gone.reset(token)
            if watcher is not None and not watcher.done():
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
