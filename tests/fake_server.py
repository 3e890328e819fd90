"""A small stand-in for ``suzent serve``'s local API, for the client's and the hooks' tests: HTTP/1.1 over a Unix
socket (stdlib ``socketserver`` + ``http.server``), ``POST /v1/<op>`` with a JSON object → the answer of a Python
function ``answer(op, args)``.

``answer`` returns a dict (sent with 200), raises a :class:`~suzent_cli.errors.SuzentError` (sent as
``protocol.error_json`` with 400), or returns one of the sentinels :data:`CLOSE` (the connection is closed
without an answer, as a server killed mid-request) or :class:`Raw` (status and bytes as given). Every request is
recorded in ``calls`` as ``(op, args)``.

As a script (``python tests/fake_server.py HOME [OUTPUT]``) it serves HOME's socket
(:func:`suzent_cli.server.paths.socket_path`) until killed, answering ``hook_recall`` and ``hook_session_start``
with ``{"output": OUTPUT, "warning": None}`` and ``hook_capture`` with an empty report; it prints ``ready`` once
it listens.
"""

from __future__ import annotations

import json
import os
import socketserver
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

CLOSE = object()


@dataclass
class Raw:
    status: int
    body: bytes


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class FakeServer:
    """Serves ``answer`` on the Unix socket ``path`` in a background thread (:meth:`start`/:meth:`stop`, or as a
    context manager)."""

    def __init__(self, path: Path | str, answer: Callable[[str, dict], Any], *, probe: Any = None):
        self.path, self.answer = Path(path), answer
        self.calls: list[tuple[str, dict]] = []
        # POST /v1/server (the relay's liveness probe, suzent status): answered {"pid": …} as the real server's
        # event loop does and counted in ``probes``, not ``calls``; ``probe=CLOSE`` plays a wedged server
        self.probe, self.probes = probe, 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                from suzent_cli.errors import SuzentError
                from suzent_cli.server import protocol

                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                op = self.path.removeprefix(protocol.API_PREFIX)
                args = json.loads(body or b"{}")
                if op == protocol.SERVER_ROUTE:
                    fake.probes += 1
                    result = fake.probe if fake.probe is not None else {"pid": os.getpid()}
                else:
                    fake.calls.append((op, args))
                    try:
                        result = fake.answer(op, args)
                    except SuzentError as exc:
                        result = Raw(400, json.dumps(protocol.error_json(exc)).encode())
                if result is CLOSE:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if not isinstance(result, Raw):
                    result = Raw(200, json.dumps(result).encode())
                self.send_response(result.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(result.body)))
                self.end_headers()
                self.wfile.write(result.body)

        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self.path.unlink()
        self.server = _Server(str(self.path), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.path.exists():
            self.path.unlink()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def hook_answers(output: str | None) -> Callable[[str, dict], Any]:
    """Answers for the hook ops: recall and SessionStart print ``output``; capture reports nothing captured."""

    def answer(op: str, args: dict) -> dict:
        if op in ("hook_recall", "hook_session_start"):
            return {"output": output, "warning": None}
        if op == "hook_capture":
            return {"report": {"drained": 1, "failed": 0, "turns": 0, "facts": 0, "errors": [], "warnings": []},
                    "warnings": []}
        raise AssertionError(f"unexpected op {op}")

    return answer


if __name__ == "__main__":
    from suzent_cli.server.paths import socket_path

    server = FakeServer(socket_path(sys.argv[1]), hook_answers(sys.argv[2] if len(sys.argv) > 2 else None))
    server.start()
    print("ready", flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()
        os._exit(0)
