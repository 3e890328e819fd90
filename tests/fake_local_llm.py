"""A scripted fake of a local model server speaking the Anthropic Messages API, as Ollama (0.14 and later,
``/v1/messages``) and llama.cpp's ``llama-server`` do: a real HTTP server on 127.0.0.1 in a thread, so the real
``anthropic`` client runs end to end (:mod:`fake_anthropic` underneath: canned turns, tool_use blocks, ``delay``).

What makes it a *local* server rather than the API:

* ``flavour="ollama"`` answers ``/v1/messages`` only (any other path: Go's ``404 page not found``) and serves
  only its ``models``: a request for any other model is answered as Ollama does,
  HTTP 404 ``{"type": "error", "error": {"type": "not_found_error", "message": "model 'x' not found"}}``, without
  using up a scripted turn. ``no_tools`` models answer a request carrying ``tools`` with Ollama's HTTP 400
  ``invalid_request_error`` "… does not support tools".
* ``flavour="llama.cpp"`` serves whatever model it loaded, whatever name is asked for (llama-server ignores it).
  Its errors are OpenAI-shaped: :data:`LLAMACPP_LOADING` (HTTP 503 while the model loads) and
  :data:`LLAMACPP_NO_JINJA` (tools without ``--jinja``).
* It asks for no API key: the request's auth headers are recorded (``requests[i]["headers"]``), never checked.

The error bodies are the servers' shapes as their sources and issue threads show them (ollama
``middleware/anthropic.go``, llama.cpp ``tools/server/utils.hpp`` ``format_error_response``); no real server ran
here (no network, no model hub).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fake_anthropic import FakeMessagesAPI, message, text_reply, tool_use_reply

__all__ = ["FakeLocalLLM", "LLAMACPP_LOADING", "LLAMACPP_NO_JINJA", "OLLAMA_RUNNER_DIED", "local_server",
           "message", "ollama_error", "text_reply", "tool_use_reply"]

MODEL = "qwen3:8b"


def ollama_error(kind: str, text: str) -> dict:
    """An error body of Ollama's ``/v1/messages`` (the Messages API's own shape)."""
    return {"type": "error", "error": {"type": kind, "message": text}}


LLAMACPP_LOADING = (503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
LLAMACPP_NO_JINJA = (500, {"error": {"code": 500, "message": "tools param requires --jinja flag",
                                     "type": "server_error"}})
OLLAMA_RUNNER_DIED = (500, ollama_error("api_error", "llama runner process has terminated: signal: killed"))


class FakeLocalLLM(FakeMessagesAPI):
    """A :class:`~fake_anthropic.FakeMessagesAPI` that behaves as a local server (module docstring)."""

    def __init__(self, replies: list[tuple] | None = None, *, flavour: str = "ollama",
                 models: tuple[str, ...] = (MODEL,), no_tools: tuple[str, ...] = ()) -> None:
        super().__init__(replies)
        self.flavour, self.models, self.no_tools = flavour, models, no_tools
        self.gate = self._as_ollama if flavour == "ollama" else None

    def _as_ollama(self, request: dict) -> tuple | None:
        if request["path"] != "/v1/messages":  # Go's mux: a plain-text 404 (sent here as a JSON string)
            return 404, "404 page not found"
        model = str(request["body"].get("model"))
        if model not in self.models:
            return 404, ollama_error("not_found_error", f"model '{model}' not found")
        if model in self.no_tools and request["body"].get("tools"):
            return 400, ollama_error("invalid_request_error",
                                     f"registry.ollama.ai/library/{model} does not support tools")
        return None


@contextlib.contextmanager
def local_server(replies: list[tuple] | None = None, **options) -> Iterator[FakeLocalLLM]:
    """A started :class:`FakeLocalLLM` (``options``: flavour, models, no_tools), stopped on exit."""
    fake = FakeLocalLLM(replies, **options)
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.stop()
