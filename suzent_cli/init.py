"""``suzent init``: create the data directory layout idempotently, never overwriting a file."""

from __future__ import annotations

from pathlib import Path

from suzent_cli import vault
from suzent_cli.config import Settings
from suzent_cli.files import write_if_absent

CONFIG_SEED = """\
# suzent configuration. Every key is optional; the values shown are the defaults (today, now and the claude
# keys: examples). Precedence: command-line flag > environment variable > this file > default.
# Each key is documented in README.md, "Configuration"; `suzent config show` prints the effective value of every
# key and where it came from. Relative paths are relative to this file's directory (the suzent home).
# An unknown key is an error. Top-level keys must come before the first [table].

# today = "2026-06-01"                   # clock override YYYY-MM-DD for every date rule; default: the UTC date of now  (SUZENT_TODAY, --today)
# now = "2026-06-01T12:00"               # the instant for time rules (the dream's gate); default: the real clock  (SUZENT_NOW, --now)
# lock_timeout = 30.0                    # seconds to wait for a file lock, 0..86400  (SUZENT_LOCK_TIMEOUT)
# user_id = "default-user"               # the user_id column of every index row  (SUZENT_USER_ID)

# [paths]
# memory_dir = "sandbox/shared/memory"   # daily logs in archive/, MEMORY.md, persona.md, user.md  (SUZENT_MEMORY_DIR)
# vault_dir = "notebook"                 # the markdown vault; runner state in notebook/.state  (SUZENT_VAULT_DIR)
# index_dir = "memory"                   # the LanceDB search index  (SUZENT_INDEX_DIR)

# [index]
# embedder = "all-MiniLM-L6-v2"          # bundled model; hash[:DIM] (model-free); or a local sentence-transformers model dir  (SUZENT_EMBEDDER)
# context_window = 2                     # preceding facts indexed with each fact, 0..8  (SUZENT_CONTEXT_WINDOW)

# [capture]
# extractor = "auto"                     # auto | offline | claude  (auto: claude when an API key is set)  (SUZENT_EXTRACTOR)

# [claude]
# model = "claude-sonnet-5-5"            # extractor, dream engine and promote  (SUZENT_CLAUDE_MODEL)
# api_key = "sk-ant-..."                 # better kept in the environment  (ANTHROPIC_API_KEY)
# base_url = "https://api.anthropic.com" # any Anthropic-compatible server  (ANTHROPIC_BASE_URL)

# [dream]                                # `suzent dream` flags override these; there are no environment variables
# engine = "auto"                        # auto | rules | claude  (auto: claude when an API key is set)
# interval_seconds = 1800.0              # between passes of `suzent loop`
# min_hours = 24.0                       # hours since the last attempt before a run (unless far behind)
# min_facts = 20                         # new fact lines needed before a run (unless far behind)
# max_days = 14                          # days per batch; more pending than this = far behind
# max_retries = 3                        # failed attempts before a batch is skipped
# timeout_seconds = 600.0                # per engine run
# max_turns = 60                         # claude engine: API calls per run
# lint_enabled = true                    # lint from the gate when nothing is pending
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
