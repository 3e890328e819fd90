"""``suzent init``: create the data directory layout idempotently, never overwriting a file."""

from __future__ import annotations

from pathlib import Path

from suzent_cli import vault
from suzent_cli.config import Settings, config_template
from suzent_cli.files import write_if_absent

CONFIG_SEED = config_template()
"""The commented ``config.toml`` ``init`` writes, generated from the settings table."""


def init_home(settings: Settings) -> list[Path]:
    """Create home, memory dir (``archive/``), vault (zones, root files, ``.state/``), index dir and a commented
    ``config.toml``. Idempotent: existing files are left byte-identical. Returns the paths created."""
    p = settings.paths
    created: list[Path] = []
    for d in (p.home, p.memory_dir, p.archive_dir, p.index_dir):
        if not d.is_dir():
            d.mkdir(parents=True, exist_ok=True)
            created.append(d)
    if write_if_absent(p.config_file, CONFIG_SEED):
        created.append(p.config_file)
    created += vault.bootstrap(p.vault_dir)
    return created
