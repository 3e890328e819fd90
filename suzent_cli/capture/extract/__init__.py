"""Fact extraction for ``capture --turn-from``: a conversation turn in, durable facts out.

Two extractors share one interface, ``extract(turn, known) -> list[Fact]``:

* ``offline`` (:mod:`.offline`): deterministic, no model, no network. Keeps the user's durable statements verbatim.
* ``claude`` (:mod:`.claude`): the Anthropic Messages API with a tool schema for structured output; the prompt
  carries up to 10 nearest known facts and says that a fact which changes a known one must still be emitted.

``auto`` picks claude when an API key or a local ``claude.base_url`` (a model server on this machine, which
needs no key: docs/local-models.md) is configured, else offline.
"""

from __future__ import annotations

from typing import Protocol

from suzent_cli.archive import Fact
from suzent_cli.capture.extract.turns import Message, Turn
from suzent_cli.config import ENGINES, Settings, canonical_engine
from suzent_cli.errors import ExtractorUnavailable

__all__ = ["Extractor", "Fact", "Message", "Turn", "choose_extractor", "resolve_extractor_name"]


class Extractor(Protocol):
    name: str
    reads: tuple[str, ...] | None  # the roles of the messages it reads; None: all (bounded by capture.max_turn_chars)

    def extract(self, turn: Turn, known: list[str]) -> list[Fact]:
        """Facts worth keeping from ``turn``. ``known``: up to 10 nearest facts already in memory (may be empty)."""
        ...


def resolve_extractor_name(settings: Settings, requested: str | None = None) -> str:
    """``offline`` or ``claude`` for ``requested`` (default: settings.extractor); ``auto`` → claude iff a key or a
    local base_url is set (:attr:`~suzent_cli.config.Settings.claude_configured`)."""
    given = requested or settings.extractor
    name = canonical_engine(given)
    if name == "auto":
        return "claude" if settings.claude_configured else "offline"
    if name is None:
        raise ExtractorUnavailable(f"unknown extractor {given!r}: use {', '.join(ENGINES[:-1])} or {ENGINES[-1]}")
    return name


def choose_extractor(settings: Settings, requested: str | None = None) -> Extractor:
    """Instantiate the extractor; raises :class:`ExtractorUnavailable` (e.g. claude without ANTHROPIC_API_KEY for a
    remote server)."""
    name = resolve_extractor_name(settings, requested)
    if name == "claude":
        from suzent_cli.capture.extract.claude import ClaudeExtractor  # imports anthropic

        return ClaudeExtractor.from_settings(settings)
    from suzent_cli.capture.extract.offline import OfflineExtractor

    return OfflineExtractor()
