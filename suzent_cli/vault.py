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


def utf8_name(path: Path | str) -> bool:
    """True when ``path`` encodes as UTF-8. A file name that is not valid UTF-8 (bytes such as ``b"\\xff"``) reaches
    Python as lone surrogates (``surrogateescape``): it cannot be written to a page, a state file, the index or
    the terminal, so every walker of the vault skips it (:func:`content_pages`, :func:`skipped_warning`)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """``name`` printable whatever it holds: undecodable bytes as ``\\xNN`` (for warnings)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def skipped_warning(skipped: list[str]) -> str:
    """The one warning line for vault files skipped because their names are not valid UTF-8 ("" for none)."""
    if not skipped:
        return ""
    return (f"skipped {len(skipped)} vault file(s) whose name is not valid UTF-8 (e.g. {shown_name(skipped[0])}): "
            "rename them to read them")


def is_content_page(vault_dir: Path, path: Path) -> bool:
    """True for a vault ``.md`` page the indexer reads: not under a hidden folder (``.state``, Obsidian's
    ``.trash`` and ``.obsidian``, …), not hidden itself, not a root schema/index/log.md, a name that is valid
    UTF-8 (:func:`utf8_name`)."""
    rel = path.relative_to(vault_dir)
    if path.suffix.lower() != ".md" or any(part.startswith(".") for part in rel.parts) or not utf8_name(rel):
        return False
    return not (len(rel.parts) == 1 and rel.name.lower() in ROOT_FILES)


def content_pages(vault_dir: Path, skipped: list[str] | None = None) -> list[Path]:
    """All content pages of the vault, sorted by vault-relative POSIX path (missing vault → empty). ``skipped``
    (optional) receives the vault-relative names of the files left out because their names are not valid UTF-8
    (for :func:`skipped_warning`)."""
    if not vault_dir.is_dir():
        return []
    files = [p for p in vault_dir.rglob("*") if p.is_file()]
    if skipped is not None:
        skipped += [p.relative_to(vault_dir).as_posix() for p in files if not utf8_name(p.relative_to(vault_dir))]
    pages = [p for p in files if is_content_page(vault_dir, p)]
    return sorted(pages, key=lambda p: p.relative_to(vault_dir).as_posix())
