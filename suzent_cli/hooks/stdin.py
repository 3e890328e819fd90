"""A hook's stdin, read by one rule everywhere: all of it within a time limit and a size cap, or nothing when it
stays open; and whether it is a terminal. Stdlib only, so the hooks' fast path (:mod:`suzent_cli.cli.fasthook`)
reads it before anything heavy is imported; :mod:`.spool` re-exports both.

The cap, :data:`MAX_PAYLOAD_BYTES`, is also the largest payload the server takes
(:mod:`suzent_cli.server.protocol`): a Claude Code hook payload is a few hundred bytes of JSON naming the session
and its transcript (a ``UserPromptSubmit`` payload carries the prompt too), so anything larger is not one.
"""

from __future__ import annotations

import io
import sys
import threading
from typing import BinaryIO

MAX_PAYLOAD_BYTES = 1_000_000


class PayloadTooLarge(ValueError):
    """stdin holds more than the cap: reading stopped there (the rest was never read); its message is the warning's
    first part."""


def read_stdin(limit: float, stdin: BinaryIO | None = None, *, cap: int = MAX_PAYLOAD_BYTES) -> bytes | None:
    """All of stdin (``stdin``, default the process's) within ``limit`` seconds: its bytes, or None when it is
    still open after that. At most ``cap + 1`` bytes are ever read (one read of that size, in a daemon thread), so
    a huge payload costs neither time nor memory. Bytes already in memory (:class:`io.BytesIO`: a payload the fast
    path read and handed on) are read at once, whatever ``limit`` is left. Raises :class:`PayloadTooLarge` when
    there were more than ``cap`` bytes."""
    stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    if isinstance(stream, io.BytesIO):
        return _capped(stream.read(cap + 1), cap)
    box: dict = {}

    def read() -> None:
        try:
            box["data"] = stream.read(cap + 1)
        except (OSError, ValueError) as exc:
            box["error"] = exc

    reader = threading.Thread(target=read, name="suzent-stdin", daemon=True)
    reader.start()
    reader.join(max(0.0, limit))
    if reader.is_alive():
        return None
    return _capped(box.get("data") or b"", cap)


def _capped(data: bytes, cap: int) -> bytes:
    if len(data) > cap:
        raise PayloadTooLarge(f"the hook payload is over {cap:,} bytes, so not a Claude Code hook payload; "
                              "ignored without reading the rest")
    return data


def is_tty(stdin: BinaryIO | None = None) -> bool:
    stream = stdin if stdin is not None else sys.stdin
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
