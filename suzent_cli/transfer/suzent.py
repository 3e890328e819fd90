"""suzent's own export (``suzent export --format jsonl``): the round trip.

Format: :mod:`suzent_cli.transfer.export` (one JSON object per line). Read as: one memory per record whose
``status`` is ``current`` (a vault claim) or ``unfolded`` (a daily-log fact the dream has not folded yet); locator =
the 1-based line. A ``superseded`` claim is not imported (it would come back as a current fact; the export file
keeps it). Text, category and scope as recorded; the date is the claim's ``since`` (the day of its ``source:``),
else its ``last``, or the log fact's ``day`` and ``time``; the record's ``tags`` are kept. Memories are written in
the order of their ``source`` (the original log's day and line), so each fact gets the neighbours it had, which
the index reads as its context.
"""

from __future__ import annotations

import re
from pathlib import Path

from suzent_cli.errors import InputInvalid
from suzent_cli.transfer import Memory, ReadContext, instant, loads_noting, read_text_file

IMPORTED = ("current", "unfolded")
_SOURCE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md:(\d+)$")


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    from suzent_cli.scope import without_scope_tags

    if path.is_dir():
        raise InputInvalid(f"{path}: a suzent export is a .jsonl file, not a folder")
    file = path.resolve()
    out: list[Memory] = []
    order: list[tuple[str, int, int]] = []
    for number, line in enumerate(read_text_file(path, ctx).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = loads_noting(line, where, ctx)
        except (ValueError, RecursionError):
            raise InputInvalid(f"{where}: not JSON (a suzent export has one JSON object per line)") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise InputInvalid(f"{where}: not a suzent export record (an object with a \"text\" string)")
        if record.get("status") not in IMPORTED:
            ctx.skip(f"{record.get('status') or 'unknown'} records")
            continue
        scope = record.get("scope") or ""
        if not isinstance(scope, str):
            raise InputInvalid(f"{where}: scope is not a string")
        day, time = instant(record.get("day") or record.get("since") or record.get("last"), where)
        if record.get("time") and day is not None:
            time = str(record["time"])[:5]
        tags = record.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InputInvalid(f"{where}: tags is not a list of strings")
        category = record.get("category") if isinstance(record.get("category"), str) else "general"
        m = _SOURCE.match(str(record.get("source") or ""))
        order.append((m.group(1) if m else "9999-99-99", int(m.group(2)) if m else 0, number))
        out.append(Memory(record["text"], category or "general", scope, file, str(number), day=day, time=time,
                          tags=tuple(t for t in without_scope_tags(tags) if " " not in t)))
    # In the order the facts had in the original logs (the record's source: day and line), so each fact is written
    # after the same neighbours, which recall reads as its context.
    return [m for _, m in sorted(zip(order, out, strict=True), key=lambda pair: pair[0])]
