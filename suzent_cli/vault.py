"""Tier 2, the knowledge base: an Obsidian-style markdown vault (``notebook/``).

This module knows the vault's layout: its zones, its root files and which files are content pages. The
dream (a later stage) writes pages; ``log.md`` is runner-owned; ``.state/`` holds runner state.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .files import write_if_absent

ZONES = (
    "0_Inbox", "1_Projects", "2_Wiki/Concepts", "2_Wiki/Literature", "2_Wiki/Syntheses", "2_Wiki/Entities",
    "3_Personal", "4_Assets", "5_Archives",
)
ROOT_FILES = ("schema.md", "index.md", "log.md")
INDEX_SEED = "# Notebook Index\n\nOne line per page: `[[path]]` — what it holds.\n"
LOG_SEED = "# Notebook Log\n\n"


def bootstrap(vault_dir: Path) -> list[Path]:
    """Create the vault's zones, ``.state/`` and root files where missing; never overwrite. Returns what was created."""
    created: list[Path] = []
    for rel in (*ZONES, ".state"):
        d = vault_dir / rel
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            created.append(d)
    schema = resources.files("suzent_cli").joinpath("data/schema.md").read_text(encoding="utf-8")
    for name, text in (("schema.md", schema), ("index.md", INDEX_SEED), ("log.md", LOG_SEED)):
        if write_if_absent(vault_dir / name, text):
            created.append(vault_dir / name)
    return created


def is_content_page(vault_dir: Path, path: Path) -> bool:
    """True for a vault ``.md`` page the indexer reads: not under a hidden folder (``.state``, Obsidian's
    ``.trash`` and ``.obsidian``, …), not hidden itself, not a root schema/index/log.md."""
    rel = path.relative_to(vault_dir)
    if path.suffix.lower() != ".md" or any(part.startswith(".") for part in rel.parts):
        return False
    return not (len(rel.parts) == 1 and rel.name.lower() in ROOT_FILES)


def content_pages(vault_dir: Path) -> list[Path]:
    """All content pages of the vault, sorted by vault-relative POSIX path (missing vault → empty)."""
    if not vault_dir.is_dir():
        return []
    pages = [p for p in vault_dir.rglob("*") if p.is_file() and is_content_page(vault_dir, p)]
    return sorted(pages, key=lambda p: p.relative_to(vault_dir).as_posix())
