"""The revisit queue: a deterministic frontmatter scan by the runner, handed to the engine with each batch.

Order: content pages whose ``stale_after`` has passed, soonest first; then ``3_Personal/`` pages with no
``stale_after`` at all (pages written before the lifecycle existed: without this branch the dream would never
visit them, so the field would never be written). Wiki and project pages without an expiry are not queued:
having none is correct for them. Pages are to be re-confirmed against the logs being ingested, or left for
review — never deleted. Unreadable pages and pages with broken frontmatter are skipped.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from suzent_cli.errors import DreamFailed
from suzent_cli.vault import content_pages
from suzent_cli.vault.claims import is_personal
from suzent_cli.vault.pages import meta_date, read_page


def revisit_queue(vault_dir: Path, today: dt.date, limit: int = 50) -> tuple[str, ...]:
    """Vault-relative paths to revisit (module doc), at most ``limit``."""
    expired: list[tuple[dt.date, str]] = []
    undated: list[str] = []
    for path in content_pages(vault_dir):
        rel = path.relative_to(vault_dir).as_posix()
        try:
            meta = read_page(path).meta
        except (DreamFailed, OSError):
            continue
        stale = meta_date(meta.get("stale_after"))
        if stale is not None and stale < today:
            expired.append((stale, rel))
        elif "stale_after" not in meta and is_personal(rel):
            undated.append(rel)
    return tuple([rel for _, rel in sorted(expired)] + undated)[:limit]
