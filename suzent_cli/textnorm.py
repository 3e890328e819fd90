"""Text hygiene shared by every tier: input repair, one-line folding and the tombstone normalization."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize(text: str) -> str:
    """The tombstone key of a text: lowercase, whitespace collapsed to single spaces (compat with suzent)."""
    return " ".join(text.lower().split())


def fold_line(text: str) -> str:
    """Fold any run of whitespace (newlines included) to one space, so text can never span two lines."""
    return " ".join(text.split())


def strip_control(text: str) -> str:
    """``text`` without NUL and other control characters (tab, newline and CR kept)."""
    return _CONTROL.sub("", text)


def repair(data: bytes | str) -> tuple[str, list[str]]:
    """Decode ``data`` as UTF-8 and drop NUL and other control characters (tab/newline/CR kept).

    Returns ``(text, warnings)``; each warning is a one-line description of what was repaired. Never raises.
    """
    warnings: list[str] = []
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            warnings.append("replaced invalid UTF-8 byte sequence(s) with U+FFFD")
    else:
        text = data
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates, e.g. from surrogateescape'd argv
            text = text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
            text = text.encode("utf-8", errors="replace").decode("utf-8")
            warnings.append("replaced invalid UTF-8 byte sequence(s) with U+FFFD")
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is an encoding artefact, not content
    nuls = text.count("\x00")
    if nuls:
        warnings.append(f"removed {nuls} NUL byte(s)")
    cleaned = _CONTROL.sub("", text)
    others = len(text) - len(cleaned) - nuls
    if others:
        warnings.append(f"removed {others} control character(s)")
    return cleaned, warnings
