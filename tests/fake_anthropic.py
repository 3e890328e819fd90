"""A scripted fake of the Anthropic Messages API: a loopback HTTP server, so the real ``anthropic`` client runs end
to end (request building, retries, response parsing) without the real API.

``FakeMessagesAPI(replies)`` records each request (path, headers, JSON body) and answers from its script; use it
through :func:`running` (a context manager that starts and stops the server). Reply builders: :func:`message`,
:func:`text_reply`, :func:`tool_use_reply`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
NO_RETRY_WAIT = {"retry-after-ms": "1"}  # the SDK honours it instead of its 0.5 s+ backoff


def message(content: list[dict], stop_reason: str, *, msg_id: str = "msg_01") -> dict:
    """A Messages API response body with ``content`` blocks and ``stop_reason``."""
    return {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 50, "output_tokens": 20}}


def text_reply(*texts: str) -> dict:
    """A final reply: one text block per ``texts`` item, ``stop_reason: end_turn``."""
    return message([{"type": "text", "text": t} for t in texts], "end_turn")


def tool_use_reply(*calls: tuple[str, dict], text: str | None = None, prefix: str = "toolu") -> dict:
    """A reply asking for tools: one ``tool_use`` block per ``(name, input)`` (ids ``<prefix>_1``, …), optionally
    preceded by a text block; ``stop_reason: tool_use``."""
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": f"{prefix}_{i}", "name": name, "input": args}
               for i, (name, args) in enumerate(calls, 1)]
    return message(blocks, "tool_use")


class FakeMessagesAPI:
    """Loopback server: records (path, headers, JSON body) of each request; answers from a script.

    ``replies`` (or :meth:`script`): each reply is ``(status, body)`` or ``(status, body, headers)``; the last one
    repeats. ``delay`` seconds are slept before each answer (to trigger client timeouts). ``gate``: called with
    each recorded request first; a reply it returns is sent instead of the script's (which is then not used up).
    """

    def __init__(self, replies: list[tuple] | None = None) -> None:
        self.requests: list[dict] = []
        self.replies: list[tuple] = list(replies or [(200, text_reply("done"))])
        self.delay = 0.0
        self.answered = 0  # requests answered from the script
        self.gate: Callable[[dict], tuple | None] | None = None  # a reply before the script's (None: the script's)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server API
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                api.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)})
                reply = api.gate(api.requests[-1]) if api.gate else None
                if reply is None:
                    api.answered += 1
                    reply = api.replies[min(api.answered, len(api.replies)) - 1]
                status, body, headers = (*reply, {})[:3]
                if api.delay:
                    time.sleep(api.delay)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    def script(self, *replies: tuple) -> None:
        self.replies = list(replies)

    @property
    def last(self) -> dict:
        return self.requests[-1]["body"]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def running(replies: list[tuple] | None = None) -> Iterator[FakeMessagesAPI]:
    """A started :class:`FakeMessagesAPI`, stopped on exit."""
    fake = FakeMessagesAPI(replies)
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.stop()
