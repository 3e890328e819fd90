"""The one Anthropic Messages API client of suzent, and the one mapping of the SDK's errors to suzent's.

Three stages call the API: the claude fact extractor (:mod:`suzent_cli.capture.extract.claude`), the claude dream
engine (:mod:`suzent_cli.dream.claude_agent`) and the claude promote engine (:mod:`suzent_cli.promote`). Each builds
its client with :func:`connect` (or :func:`from_settings`) and sends each request through :meth:`Claude.create`:

* no API key, or no ``anthropic`` package: :class:`~suzent_cli.errors.ClaudeUnavailable` (exit 2), worded once by
  :func:`missing_key` (the caller names itself and the offline alternative);
* a request that fails (API or network error, timeout): :class:`ClaudeRequestFailed`, which says whether the API
  could not be reached or would not serve now (:func:`transient`) and whether the request timed out. Each stage
  turns it into its own error (the extractor falls back to offline, the dream backs off or counts a failure).

``anthropic`` is imported only when a client is built (or an SDK error classified), so importing this module costs
nothing. ``base_url`` is always passed explicitly (the settings' ``anthropic_base_url``, which
``ANTHROPIC_BASE_URL`` or ``[claude] base_url`` set; else the public API), so the SDK never reads an environment
variable or a profile behind the settings' back. Notes on the SDK (anthropic 2.x, API version 2026-10-21):
sampling parameters (``temperature``, ``top_p``, ``top_k``) were removed and the API answers 400 to them, so none
is sent; the SDK sends the key as ``Authorization: Bearer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from suzent_cli.errors import ClaudeUnavailable, SuzentError, describe, missing_key

if TYPE_CHECKING:
    from suzent_cli.config import Settings

API_URL = "https://api.anthropic.com"
DETAIL_LIMIT = 200  # characters of the SDK error quoted in a message


def require_key(settings: Settings, user: str, instead: str) -> None:
    """Raise :func:`missing_key`'s :class:`ClaudeUnavailable` when ``settings`` hold no API key; checked before
    any work, without importing ``anthropic``."""
    if not settings.claude_configured:
        raise missing_key(user, instead)


class ClaudeRequestFailed(SuzentError):
    """A Messages API request failed: an API or network error, or a timeout. ``detail`` is the SDK error on one
    line (``"APIStatusError: Error code: 500 - …"``); ``transient`` says the API could not be reached or would not
    serve now (:func:`transient`); ``timed_out`` says the request (or its connection) timed out."""

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


@dataclass(frozen=True)
class Claude:
    """A ready Messages API client: the SDK client (``sdk``, an ``anthropic.Anthropic``) and the ``model`` every
    request uses. Build it with :func:`connect` or :func:`from_settings`."""

    sdk: Any
    model: str

    def create(self, *, timeout: float | None = None, max_retries: int | None = None, **request: Any) -> Any:
        """One ``messages.create`` call with ``model`` and ``request`` (``max_tokens``, ``messages``, ``system``,
        ``tools``…); ``timeout`` (seconds) and ``max_retries`` override the client's for this call. Returns the
        SDK's ``Message``. Raises :class:`ClaudeRequestFailed` for any SDK error (the SDK retried the transient
        ones first)."""
        import anthropic  # already loaded: the client was built

        client = self.sdk
        overrides = {k: v for k, v in (("timeout", timeout), ("max_retries", max_retries)) if v is not None}
        if overrides:
            client = client.with_options(**overrides)
        try:
            return client.messages.create(model=self.model, **request)
        except anthropic.AnthropicError as exc:
            raise ClaudeRequestFailed(describe(exc, DETAIL_LIMIT), transient=transient(exc),
                                      timed_out=isinstance(exc, anthropic.APITimeoutError)) from exc


def connect(api_key: str | None, *, model: str, base_url: str | None = None, timeout: float = 60.0,
            max_retries: int = 2, user: str = "claude", instead: str = "an offline engine") -> Claude:
    """The client for ``model`` at ``base_url`` (default: the public API), with a per-request ``timeout``
    (seconds) and the SDK's ``max_retries`` for transient failures. ``user`` and ``instead`` word the error
    (:func:`missing_key`). Raises :class:`ClaudeUnavailable` without ``api_key`` or without the ``anthropic``
    package."""
    if not api_key:
        raise missing_key(user, instead)
    try:
        import anthropic  # only a claude stage pays for this import
    except ImportError as exc:
        raise ClaudeUnavailable(f"{user} needs the anthropic package ({exc}); install it, or use {instead}") from None
    sdk = anthropic.Anthropic(api_key=api_key, base_url=base_url or API_URL, timeout=timeout,
                              max_retries=max_retries)
    return Claude(sdk, model)


def from_settings(settings: Settings, *, timeout: float = 60.0, max_retries: int = 2, user: str = "claude",
                  instead: str = "an offline engine") -> Claude:
    """:func:`connect` with the settings' ``anthropic_api_key``, ``anthropic_base_url`` and ``claude_model``
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, ``SUZENT_CLAUDE_MODEL`` or the ``[claude]`` table). Raises
    :class:`ClaudeUnavailable`."""
    return connect(settings.anthropic_api_key, model=settings.claude_model, base_url=settings.anthropic_base_url,
                   timeout=timeout, max_retries=max_retries, user=user, instead=instead)
