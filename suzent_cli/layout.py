"""``suzent init``: create the data directory layout idempotently, never overwriting a file."""

from __future__ import annotations

from pathlib import Path

from . import vault
from .config import Settings
from .files import write_if_absent

CONFIG_SEED = """\
# suzent configuration. Every key is optional; flags and environment variables override it.
# Relative paths are relative to this file's directory (the suzent home).

# [paths]
# memory_dir = "sandbox/shared/memory"   # daily logs in archive/, MEMORY.md, persona.md, user.md  (SUZENT_MEMORY_DIR)
# vault_dir  = "notebook"                # the markdown vault; runner state in notebook/.state    (SUZENT_VAULT_DIR)
# index_dir  = "memory"                  # the LanceDB search index                                 (SUZENT_INDEX_DIR)

# [index]
# embedder = "all-MiniLM-L6-v2"          # bundled model; or a path to a local sentence-transformers model (SUZENT_EMBEDDER)

# [capture]
# extractor = "auto"                     # auto | offline | claude  (auto: claude when an API key is set)  (SUZENT_EXTRACTOR)

# [claude]
# model = "claude-sonnet-5-5"            # ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read from the environment
#
# [dream]                                # `suzent dream` flags override these
# engine = "auto"                        # auto | rules | claude  (auto: claude when an API key is set)
# interval_seconds = 1800                # between ticks of `suzent dream --loop`
# min_hours = 24.0                       # hours since the last attempt before a run (unless far behind)
# min_facts = 20                         # new fact lines needed before a run (unless far behind)
# max_days = 14                          # days per batch; more pending than this = far behind
# max_retries = 3                        # failed attempts before a batch is skipped
# timeout_seconds = 600                  # per engine run
# max_turns = 60                         # claude engine: API calls per run
# lint_enabled = true
# lint_min_days = 7.0                    # days between lint passes
"""


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
