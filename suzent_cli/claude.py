"""The one Anthropic Messages API client of suzent, and the one mapping of the SDK's errors to suzent's.

Three stages call the API: the claude fact extractor (:mod:`suzent_cli.capture.extract.claude`), the claude dream
engine (:mod:`suzent_cli.dream.claude_agent`) and the claude promote engine (:mod:`suzent_cli.promote`). Each builds
its client with :func:`connect` (or :func:`from_settings`) and sends each request through :meth:`Claude.create`:

* no API key for a remote server, or no ``anthropic`` package: :class:`~suzent_cli.errors.ClaudeUnavailable`
  (exit 2), worded once by :func:`missing_key` (the caller names itself and the offline alternative). A *local*
  server (:func:`is_local`: ``localhost``, a loopback address; Ollama, llama.cpp's ``llama-server``) needs no key;
* a request that fails (API or network error, timeout): :class:`ClaudeRequestFailed`, which says whether the API
  could not be reached or would not serve now (:func:`transient`) and whether the request timed out. At a local
  server its ``detail`` starts with what to do (:func:`local_hint`: start the server, pull the model, pick a model
  with tool use). Each stage turns it into its own error (the extractor falls back to offline, the dream backs off
  or counts a failure).

Time bounds (:func:`bounds`): the ``claude.timeout`` and ``claude.max_retries`` settings, else each stage's
default at the public API, else :data:`LOCAL_TIMEOUT` and :data:`LOCAL_RETRIES` at a local server, where a CPU-bound
model may take minutes per answer. At a local server suzent retries by itself (:meth:`Claude.create`): only an
answer that says "busy or loading, ask again" (429, 5xx, 529), after :data:`LOCAL_BACKOFF` seconds or the server's
``Retry-After``; never a request that timed out (the server is still computing it: a retry would queue a second
copy behind the first) and never a refused connection (nothing listens: the stage falls back now).


``anthropic`` is imported only when a client is built (or an SDK error classified), so importing this module costs
nothing. ``base_url`` is always passed explicitly (the settings' ``anthropic_base_url``, which
``ANTHROPIC_BASE_URL`` or ``[claude] base_url`` set; else the public API), so the SDK never reads an environment
variable or a profile behind the settings' back. Notes on the SDK (anthropic 2.x, API version 2026-10-21):
sampling parameters (``temperature``, ``top_p``, ``top_k``) were removed and the API answers 400 to them, so none
is sent; the SDK sends the key as ``Authorization: Bearer``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from suzent_cli.config import check_value, is_local_url, masked_url, setting
from suzent_cli.errors import ClaudeUnavailable, ConfigInvalid, SuzentError, describe, missing_key

if TYPE_CHECKING:
    from suzent_cli.config import Settings

is_local = is_local_url  # the one test of "a local server" lives with the settings

API_URL = "https://api.anthropic.com"
DETAIL_LIMIT = 200  # characters of the SDK error quoted in a message
LOCAL_TIMEOUT = 600.0  # seconds per request at a local server: a CPU-bound 7-8B model reads a dream prompt for minutes
LOCAL_RETRIES = 2  # retries at a local server, only of a "busy or loading" answer (module docstring)
LOCAL_BACKOFF = (2.0, 5.0, 10.0)  # seconds before retry 1, 2, 3+ at a local server (a loading model takes a while)
RETRY_AFTER_CAP = 30.0  # seconds: the most a server's Retry-After is honoured for
LOCAL_KEY = "local-no-key"  # sent to a local server when no key is set (the SDK wants one; Ollama ignores it)


def require_key(settings: Settings, user: str, instead: str) -> None:
    """Raise :func:`missing_key`'s :class:`ClaudeUnavailable` when ``settings`` hold no API key and the endpoint is
    not local (:func:`is_local`); checked before any work, without importing ``anthropic``."""
    if not settings.claude_usable:
        raise missing_key(user, instead, remote=masked_url(settings.anthropic_base_url))


def bounds(settings: Settings, timeout: float, max_retries: int,
           warnings: list[str] | None = None) -> tuple[float, int]:
    """``(seconds per request, retries)`` for a stage whose defaults at the public API are ``timeout`` and
    ``max_retries``: ``claude.timeout``/``claude.max_retries`` when set, else :data:`LOCAL_TIMEOUT` (the larger of
    it and ``timeout``) and :data:`LOCAL_RETRIES` at a local server, else the stage's. A set value out of its
    range raises :class:`~suzent_cli.errors.ConfigInvalid`; with ``warnings`` (the extractor's: a bad value never
    stops a capture) it is added there instead and the default used."""
    local = is_local(settings.anthropic_base_url)
    if local:
        timeout, max_retries = max(timeout, LOCAL_TIMEOUT), LOCAL_RETRIES
    chosen = []
    for key, value, default in (("claude.timeout", settings.claude_timeout, timeout),
                                ("claude.max_retries", settings.claude_max_retries, max_retries)):
        try:
            chosen.append(default if value is None else check_value(setting(key), value, key))
        except ConfigInvalid as exc:
            if warnings is None:
                raise
            warnings.append(f"{exc}; using {default:g}")
            chosen.append(default)
    return float(chosen[0]), int(chosen[1])


def endpoint(settings: Settings) -> dict[str, Any]:
    """Which Messages API server the claude stages would use, for ``suzent status`` (never the key)::

        {"url": str (without credentials), "local": bool, "model": str, "key": "set"|"not needed"|"missing",
         "usable": bool, "timeout": seconds|None, "max_retries": int|None, "problem": str|None}

    ``timeout``/``max_retries`` are the extractor's (the dream's request timeout is at least 300 s); None when a
    set value is out of range (``problem`` says which)."""
    url = settings.anthropic_base_url or API_URL
    local = is_local(settings.anthropic_base_url)
    key = "set" if settings.anthropic_api_key else "not needed" if local else "missing"
    problem = None
    try:
        timeout, retries = bounds(settings, 60.0, 2)
    except ConfigInvalid as exc:
        timeout, retries, problem = None, None, str(exc)
    return {"url": masked_url(url), "local": local, "model": settings.claude_model, "key": key,
            "usable": key != "missing" and problem is None, "timeout": timeout, "max_retries": retries,
            "problem": problem}


class ClaudeRequestFailed(SuzentError):
    """A Messages API request failed: an API or network error, or a timeout. ``detail`` is the SDK error on one
    line (``"APIStatusError: Error code: 500 - …"``; at a local server first what to do, :func:`local_hint`);
    ``transient`` says the API could not be reached or would not serve now (:func:`transient`); ``timed_out``
    says the request (or its connection) timed out."""

    def __init__(self, detail: str, *, transient: bool = False, timed_out: bool = False) -> None:
        super().__init__(f"claude request failed ({detail})")
        self.detail = detail
        self.transient = transient
        self.timed_out = timed_out


def transient(exc: BaseException) -> bool:
    """Whether an ``anthropic`` SDK error says the API could not be reached or will not serve now, as opposed to
    refusing this request: a connection error or a connect/pool timeout, HTTP 429, or any 5xx (529 overloaded
    included). A read timeout (the model or the job's deadline was too slow), a 4xx other than 429, or a response
    the SDK cannot parse is a real failure."""
    import anthropic  # only called with an SDK error in hand

    if isinstance(exc, anthropic.APITimeoutError):
        return type(exc.__cause__).__name__ in ("ConnectTimeout", "PoolTimeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return True
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def server_message(body: Any) -> str:
    """The error text of an error body in the shapes local servers send: the Messages API's (and Ollama's
    ``/v1/messages``) ``{"type": "error", "error": {"type", "message"}}``, llama.cpp's OpenAI-style
    ``{"error": {"code", "message", "type"}}``, Ollama's native ``{"error": "…"}``; else the body as text."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            kind, text = error.get("type"), error.get("message")
            if isinstance(text, str) and text.strip():
                return " ".join(text.split()) + (f" [{kind}]" if isinstance(kind, str) and kind else "")
        elif isinstance(error, str) and error.strip():
            return " ".join(error.split())
    return " ".join(str(body).split()) if body not in (None, "") else "no details"


def local_hint(exc: BaseException, url: str, model: str, timeout: float | None = None) -> str:
    """One line saying what went wrong at the local server ``url`` and what to do, for an SDK error ``exc``: nothing
    listens (start it), model not found (pull it or set ``claude.model``), a model without tool use, no
    ``/v1/messages`` at all (a base URL ending in ``/v1``, an old server), still loading the model (503), no answer within ``timeout`` seconds (raise ``claude.timeout``), any other HTTP error with the
    server's own message. Ends with the SDK's error in parentheses."""
    import anthropic

    where = masked_url(url)
    sdk = describe(exc, 120)
    if isinstance(exc, anthropic.APITimeoutError):
        within = f" within {timeout:g} s" if timeout else ""
        return (f"the local model server at {where} gave no answer{within}: a slow model needs a larger "
                f"claude.timeout ({sdk})")
    if isinstance(exc, anthropic.APIConnectionError):
        return (f"no model server answers at {where}: start it (ollama serve, or llama-server --port N) or fix "
                f"claude.base_url ({sdk})")
    if isinstance(exc, anthropic.APIStatusError):
        status, text = exc.status_code, server_message(exc.body)
        low = text.lower()
        if _about_tools(low):
            fix = "start llama-server with --jinja" if "jinja" in low else "pick a model with tool use"
            return (f"model {model!r} at {where} cannot use tools (HTTP {status}: {text}); {fix} "
                    "(docs/local-models.md)")
        if status == 404 and ("model" in low or "not_found" in low):
            return (f"model {model!r} not found at the local server {where} (HTTP {status}: {text}); pull it "
                    "(ollama pull NAME) or set claude.model to a model it serves")
        if status in (404, 405):
            return (f"no Messages API at {where} (HTTP {status}: {text}); claude.base_url is the server's root, "
                    "without /v1 (e.g. http://localhost:11434), and the server must speak the Anthropic Messages "
                    "API (Ollama 0.14 or later, a recent llama-server)")
        if status == 503 or "loading" in low:
            return f"the local model server at {where} is still loading the model (HTTP {status}: {text}); try again"
        return f"the local model server at {where} answered HTTP {status}: {text}"
    return sdk


def _about_tools(text: str) -> bool:
    """Whether a server's (lowercased) error text says the model or server cannot do tool use: Ollama's "… does
    not support tools", llama.cpp's "tools param requires --jinja flag"."""
    return "tool" in text and ("support" in text or "jinja" in text)


def _local_retry_wait(exc: BaseException, attempt: int) -> float | None:
    """Seconds to wait before retrying a request to a local server that failed with ``exc`` (``attempt`` retries
    done), or None when it must not be retried: only 429 and 5xx answers are (module docstring), and not one
    saying the model cannot use tools (that answer never changes)."""
    import anthropic

    if not isinstance(exc, anthropic.APIStatusError) or not (exc.status_code == 429 or exc.status_code >= 500):
        return None
    if _about_tools(server_message(exc.body).lower()):
        return None
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return min(RETRY_AFTER_CAP, max(0.0, float(headers.get(name)) * scale))
        except (TypeError, ValueError):
            continue
    return LOCAL_BACKOFF[min(attempt, len(LOCAL_BACKOFF) - 1)]


@dataclass(frozen=True)
class Claude:
    """A ready Messages API client: the SDK client (``sdk``, an ``anthropic.Anthropic``) and the ``model`` every
    request uses; ``url`` its server; ``local`` when that is a local one (suzent retries then, not the SDK:
    ``retries`` times). Build it with :func:`connect` or :func:`from_settings`."""

    sdk: Any
    model: str
    url: str = API_URL
    local: bool = False
    retries: int = 0

    def create(self, *, timeout: float | None = None, max_retries: int | None = None, **request: Any) -> Any:
        """One ``messages.create`` call with ``model`` and ``request`` (``max_tokens``, ``messages``, ``system``,
        ``tools``…); ``timeout`` (seconds) and ``max_retries`` override the client's for this call. Returns the
        SDK's ``Message``. Raises :class:`ClaudeRequestFailed` for any SDK error (transient ones retried first:
        by the SDK at a remote server, by :func:`_local_retry_wait`'s rule at a local one)."""
        import anthropic  # already loaded: the client was built

        client = self.sdk
        overrides = {k: v for k, v in (("timeout", timeout),
                                        ("max_retries", None if self.local else max_retries)) if v is not None}
        if overrides:
            client = client.with_options(**overrides)
        retries = (self.retries if max_retries is None else max_retries) if self.local else 0
        attempt = 0
        while True:
            try:
                return client.messages.create(model=self.model, **request)
            except anthropic.AnthropicError as exc:
                wait = _local_retry_wait(exc, attempt) if attempt < retries else None
                if wait is not None:
                    attempt += 1
                    time.sleep(wait)
                    continue
                if self.local:
                    seconds = timeout if timeout is not None else getattr(self.sdk, "timeout", None)
                    detail = local_hint(exc, self.url, self.model, seconds if isinstance(seconds, (int, float))
                                        else None)
                else:
                    detail = describe(exc, DETAIL_LIMIT)
                raise ClaudeRequestFailed(detail, transient=transient(exc),
                                          timed_out=isinstance(exc, anthropic.APITimeoutError)) from exc


def connect(api_key: str | None, *, model: str, base_url: str | None = None, timeout: float = 60.0,
            max_retries: int = 2, user: str = "claude", instead: str = "an offline engine") -> Claude:
    """The client for ``model`` at ``base_url`` (default: the public API), with a per-request ``timeout``
    (seconds) and ``max_retries`` for transient failures. ``user`` and ``instead`` word the error
    (:func:`missing_key`). A local ``base_url`` (:func:`is_local`) needs no ``api_key``. Raises
    :class:`ClaudeUnavailable` without ``api_key`` for a remote server, or without the ``anthropic`` package."""
    local = is_local(base_url)
    if not api_key and not local:
        raise missing_key(user, instead, remote=masked_url(base_url))
    try:
        import anthropic  # only a claude stage pays for this import
    except ImportError as exc:
        raise ClaudeUnavailable(f"{user} needs the anthropic package ({exc}); install it, or use {instead}") from None
    url = base_url or API_URL
    sdk = anthropic.Anthropic(api_key=api_key or LOCAL_KEY, base_url=url, timeout=timeout,
                              max_retries=0 if local else max_retries)
    return Claude(sdk, model, url=url, local=local, retries=max_retries if local else 0)


def from_settings(settings: Settings, *, timeout: float = 60.0, max_retries: int = 2, user: str = "claude",
                  instead: str = "an offline engine") -> Claude:
    """:func:`connect` with the settings' ``anthropic_api_key``, ``anthropic_base_url`` and ``claude_model``
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ``SUZENT_CLAUDE_MODEL`` or the ``[claude]`` table);
    ``timeout``/``max_retries``: the stage's defaults at the public API (:func:`bounds` decides). Raises
    :class:`ClaudeUnavailable`, :class:`~suzent_cli.errors.ConfigInvalid`."""
    timeout, max_retries = bounds(settings, timeout, max_retries)
    return connect(settings.anthropic_api_key, model=settings.claude_model, base_url=settings.anthropic_base_url,
                   timeout=timeout, max_retries=max_retries, user=user, instead=instead)
