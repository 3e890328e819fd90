"""Output helpers: rich on a terminal, plain text when piped, JSON with ``--json``. ``NO_COLOR`` is honoured."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def emit_json(data: Any, *, compact: bool = False) -> None:
    """Print ``data`` as JSON on stdout (stable keys, UTF-8): indented, or with ``compact`` on one line (JSON
    Lines, for commands that print one document per pass or tick)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=None if compact else 2, default=str) + "\n")
    sys.stdout.flush()


def escape(text: str) -> str:
    """``text`` with rich markup neutralised (paths and user content may contain ``[…]``)."""
    from rich.markup import escape as _escape  # noqa: PLC0415

    return _escape(text)


def warn(message: str) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(message)}", markup=True)


def clip(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters for a table cell (JSON output always carries the whole text)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
