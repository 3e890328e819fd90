"""What may enter memory, and what may leave it towards an agent: the one screen every capture path goes through.

Capture (:mod:`suzent_cli.capture`) is the only writer of facts, and it applies this screen on every path (``capture
--fact``/``--facts-from``/``--turn-from``, the Claude Code hooks, MCP ``remember``, the server's API):

* **markup** (:mod:`.markup`): an HTML comment or verification-stamp-shaped text is removed from a fact, the rest
  kept, and a warning says so. Only ``suzent verify-fact`` writes a stamp.
* **secrets** (:mod:`.secrets`): a turn is redacted before any extractor reads it (a secret never reaches the
  Claude API either), and every fact again before it is written: ``[redacted: api key]`` where the value was.
* **planted instructions** (:mod:`.instructions`): a turn's fact that reads as one is not captured. A fact line given as
  is (a person's ``--fact``, an agent's ``remember``) is written, since nothing given is lost, but tagged
  :data:`~suzent_cli.guard.instructions.TAG`; every reader that passes memory on to an agent (MEMORY.md's generated zone,
  the dream's batch, the hooks, the session briefing) leaves out what :func:`planted` names, and recall shows it
  flagged.

Stdlib only at import: detect-secrets is imported only when a text holds a candidate for it.
"""

from __future__ import annotations

from suzent_cli.guard.instructions import TAG, planted, planted_reason
from suzent_cli.guard.markup import strip_markup
from suzent_cli.guard.secrets import describe, redact

__all__ = ["TAG", "Screened", "describe", "planted", "planted_reason", "redact", "screen", "strip_markup"]


class Screened:
    """One text after the screen: ``text`` as it may be stored; ``removed``: markup kinds cut from it (``"an HTML
    comment"``, ``"a verification stamp"``); ``secrets``: the kinds redacted (``"api key"``, …); ``planted``: why it
    reads as a planted instruction, or None. (A plain class: :mod:`dataclasses` costs the capture path 1-2 ms.)"""

    __slots__ = ("text", "removed", "secrets", "planted")

    def __init__(self, text: str, removed: tuple[str, ...] = (), secrets: tuple[str, ...] = (),
                 planted: str | None = None) -> None:
        self.text, self.removed, self.secrets, self.planted = text, removed, secrets, planted

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.secrets)


def screen(text: str) -> Screened:
    """Markup out, secrets redacted, then the planted check on what is left (:class:`Screened`), for one fact's
    text (one line: where markup was cut, whitespace is folded). Never raises; idempotent (screening a screened
    text changes nothing). A turn of several lines is redacted with :func:`redact` alone."""
    stripped, removed = strip_markup(text)
    redacted, kinds = redact(stripped)
    return Screened(redacted, tuple(removed), tuple(kinds), planted_reason(redacted))
