"""A hook's stdin, read by one rule everywhere: all of it within a time limit, or nothing when it stays open; and
whether it is a terminal. Stdlib only, so the hooks' fast path (:mod:`suzent_cli.cli.fasthook`) reads it before
anything heavy is imported; :mod:`.spool` re-exports both."""

from __future__ import annotations

import sys
import threading
from typing import BinaryIO


def read_stdin(limit: float, stdin: BinaryIO | None = None) -> bytes | None:
    """All of stdin within ``limit`` seconds (None: still open after it)."""
    stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    box: dict = {}

    def read() -> None:
        try:
            box["data"] = stream.read()
        except (OSError, ValueError) as exc:
            box["error"] = exc

    reader = threading.Thread(target=read, name="suzent-stdin", daemon=True)
    reader.start()
    reader.join(limit)
    if reader.is_alive():
        return None
    return box.get("data") or b""


def is_tty(stdin: BinaryIO | None = None) -> bool:
    stream = stdin if stdin is not None else sys.stdin
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
