"""``suzent init``: create the data directory layout idempotently, never overwriting a file, and make an older
home that other users can read private (:mod:`suzent_cli.privacy`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from suzent_cli import privacy, vault
from suzent_cli.config import Settings, config_template
from suzent_cli.files import write_if_absent

CONFIG_SEED = config_template()
"""The commented ``config.toml`` ``init`` writes, generated from the settings table."""


def init_home(settings: Settings) -> list[Path]:
    """Create home, memory dir (``archive/``), vault (zones, root files, ``.state/``), index dir and a commented
    ``config.toml``. Idempotent: existing files are left byte-identical. Returns the paths created. (Their modes
    come from the process umask, private under the CLI's entry points; :func:`init` also fixes an open home.)"""
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


@dataclass
class InitResult:
    """What ``suzent init`` did: ``created`` (paths), ``exposed``: the roots that were open to other users
    (``[(root, permission bits)]``, :func:`suzent_cli.privacy.exposure`, before the fix), ``fixed``: what
    :func:`suzent_cli.privacy.make_private` changed under them (None when nothing was open)."""

    created: list[Path]
    exposed: list[tuple[Path, int]]
    fixed: privacy.Fixed | None

    def warning(self) -> str | None:
        """The one warning line about an open home (None when it was private)."""
        return privacy.exposure_warning(self.exposed, fixing=True) if self.exposed else None

    def private_json(self) -> dict:
        """``{"exposed": [{"path", "mode"}], "fixed": {folders, files, left, more_left} | None}``."""
        return {"exposed": privacy.exposure_json(self.exposed),
                "fixed": self.fixed.to_json() if self.fixed is not None else None}


def init(settings: Settings) -> InitResult:
    """:func:`init_home`, then the privacy check: each root (home, tier folders outside it) open to the group or
    others has the group and other bits of every folder and file of ours under it removed
    (:func:`suzent_cli.privacy.make_private`; symlinks never followed). A root already private is not walked: it
    guards what lies under it. Raises OSError when the layout cannot be made; a mode it cannot change is reported
    in ``fixed.left``, never raised. Running it again changes nothing."""
    created = init_home(settings)
    exposed = privacy.exposure(settings.paths)
    fixed = privacy.make_private(settings.paths, [root for root, _ in exposed]) if exposed else None
    return InitResult(created, exposed, fixed)
