"""A mem0 export: the JSON of ``Memory.get_all()`` / ``MemoryClient.get_all()``.

Format (mem0's docs, https://docs.mem0.ai/cookbooks/essentials/exporting-memories, and ``mem0/memory/main.py``'s
``get_all``): ``{"results": [{"id", "memory", "hash", "metadata", "categories", "user_id", "agent_id",
"created_at", "updated_at"}, ...]}`` (v1.1), or a bare list of those records (v1.0). Only ``memory`` is required.

Read as: one memory per record; locator = the record's 1-based index. The date and time are ``created_at``'s
(UTC). The category is ``metadata.category``, else ``metadata.type``, else the first of ``categories``, else
``general``. The scope: ``metadata.project`` (or ``project``) when present (a path, a key or a name:
:func:`suzent_cli.transfer.resolve_project`), with the person's categories staying the person's
(:func:`suzent_cli.scope.scope_for`, mode auto); without one, the person's.
"""

from __future__ import annotations

from pathlib import Path

import suzent_cli.transfer as transfer
from suzent_cli.errors import InputInvalid
from suzent_cli.transfer import Memory, ReadContext, instant, loads_noting, read_text_file, resolve_project


def records(path: Path, ctx: ReadContext) -> list:
    """The records of a mem0 export file (bad UTF-8, control bytes and lone surrogate escapes repaired, each with a
    warning in ``ctx``). Raises InputInvalid (naming the file) for a file that is too large, not JSON, or not one of
    the two shapes."""
    if path.is_dir():
        raise InputInvalid(f"{path}: a mem0 export is a JSON file, not a folder")
    size = path.stat().st_size
    if size > transfer.MAX_FILE_BYTES:
        raise InputInvalid(f"{path}: {size} bytes, over the import limit of {transfer.MAX_FILE_BYTES} bytes")
    try:
        data = loads_noting(read_text_file(path, ctx), str(path), ctx)
    except (ValueError, RecursionError) as exc:
        raise InputInvalid(f"{path}: not JSON ({str(exc).splitlines()[0][:120]})") from None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return data["results"]
    if isinstance(data, list):
        return data
    raise InputInvalid(f"{path}: not a mem0 export (expected {{\"results\": [...]}} or a list of memories)")


def _category(record: dict) -> str:
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    for value in (meta.get("category"), meta.get("type")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    cats = record.get("categories")
    if isinstance(cats, list) and cats and isinstance(cats[0], str) and cats[0].strip():
        return cats[0].strip()
    return "general"


def read(path: Path, ctx: ReadContext) -> list[Memory]:
    from suzent_cli.scope import scope_for

    out: list[Memory] = []
    file = path.resolve()
    for i, record in enumerate(records(path, ctx), start=1):
        where = f"{path}: record {i}"
        if not isinstance(record, dict) or not isinstance(record.get("memory"), str):
            raise InputInvalid(f"{where}: not a mem0 memory (an object with a \"memory\" string)")
        if not record["memory"].strip():
            ctx.skip("empty memories")
            continue
        day, time = instant(record.get("created_at"), where)
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        project = meta.get("project") or record.get("project")
        key = resolve_project(project, ctx) if isinstance(project, str) else ""
        category = _category(record)
        out.append(Memory(record["memory"], category, scope_for(category, key or None), file, str(i),
                          day=day, time=time))
    return out
