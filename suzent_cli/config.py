"""Settings: every path and knob, resolved once at the CLI root and passed down.

Precedence, highest first: command-line flag > environment variable > ``<home>/config.toml`` > default.
The library never reads the environment or config itself; it takes a :class:`Settings`.

Layout (compatible with the original suzent data directory ``~/.suzent``)::

    <home>/sandbox/shared/memory/        memory dir: archive/YYYY-MM-DD.md, MEMORY.md, persona.md, user.md
    <home>/notebook/                     vault, with runner-owned state in notebook/.state/
    <home>/memory/                       LanceDB search index
"""

from __future__ import annotations

import datetime as dt
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .errors import ConfigInvalid

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
DEFAULT_CONTEXT_WINDOW = 2
DEFAULT_CLAUDE_MODEL = "claude-sonnet-5-5"
EXTRACTORS = ("auto", "offline", "claude")


@dataclass(frozen=True)
class Paths:
    """Where each tier lives. All absolute; nothing here is created on resolve."""

    home: Path
    memory_dir: Path
    vault_dir: Path
    index_dir: Path

    @property
    def archive_dir(self) -> Path:
        """Capture buffer: the daily logs ``YYYY-MM-DD.md``."""
        return self.memory_dir / "archive"

    @property
    def state_dir(self) -> Path:
        """Runner-owned state (tombstones, recall log, dream state): ``<vault>/.state``."""
        return self.vault_dir / ".state"

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    def log_path(self, day: dt.date) -> Path:
        """The daily log for ``day`` (UTC date)."""
        return self.archive_dir / f"{day.isoformat()}.md"


@dataclass(frozen=True)
class Settings:
    """Effective configuration of one invocation.

    ``origins`` maps each setting name to where its value came from: ``default``, ``file``, ``env`` or ``flag``.
    """

    paths: Paths
    today: dt.date
    embedder: str = DEFAULT_EMBEDDER
    extractor: str = "auto"
    user_id: str = "default-user"
    claude_model: str = DEFAULT_CLAUDE_MODEL
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    lock_timeout: float = 30.0
    context_window: int = 0
    origins: Mapping[str, str] = field(default_factory=dict)

    @property
    def claude_configured(self) -> bool:
        return bool(self.anthropic_api_key)


def parse_date(text: str, what: str = "date") -> dt.date:
    """Parse ``YYYY-MM-DD``; raises :class:`ConfigInvalid` with a one-line message otherwise."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ConfigInvalid(f"{what} must be YYYY-MM-DD, got {text!r}") from None


def _load_file(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigInvalid(f"{path}: not valid TOML ({exc})") from None


def _pick(name: str, flag, env_keys: tuple[str, ...], file_value, default, env: Mapping[str, str], origins: dict):
    if flag is not None:
        origins[name] = "flag"
        return flag
    for key in env_keys:
        if env.get(key):
            origins[name] = "env"
            return env[key]
    if file_value is not None:
        origins[name] = "file"
        return file_value
    origins[name] = "default"
    return default


def resolve_settings(
    *,
    home: str | Path | None = None,
    memory_dir: str | Path | None = None,
    vault_dir: str | Path | None = None,
    index_dir: str | Path | None = None,
    today: str | None = None,
    embedder: str | None = None,
    extractor: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve the effective :class:`Settings` from flags, ``env`` (default ``os.environ``) and config.toml.

    Home: ``home`` flag > ``SUZENT_HOME`` > ``SUZENT_DATA_DIR`` > ``~/.suzent``. Relative paths in config.toml are
    relative to the home. Raises :class:`ConfigInvalid` on an unreadable config file or a bad value.
    """
    env = os.environ if env is None else env
    origins: dict[str, str] = {}
    home_raw = _pick("home", home, ("SUZENT_HOME", "SUZENT_DATA_DIR"), None, "~/.suzent", env, origins)
    home_path = Path(home_raw).expanduser().absolute()
    cfg = _load_file(home_path / "config.toml")
    paths_cfg = cfg.get("paths", {})

    def path_of(name: str, flag, env_key: str, default_rel: str) -> Path:
        raw = _pick(name, flag, (env_key,), paths_cfg.get(name), default_rel, env, origins)
        p = Path(raw).expanduser()
        return (p if p.is_absolute() else home_path / p).absolute()

    paths = Paths(
        home=home_path,
        memory_dir=path_of("memory_dir", memory_dir, "SUZENT_MEMORY_DIR", "sandbox/shared/memory"),
        vault_dir=path_of("vault_dir", vault_dir, "SUZENT_VAULT_DIR", "notebook"),
        index_dir=path_of("index_dir", index_dir, "SUZENT_INDEX_DIR", "memory"),
    )
    today_raw = _pick("today", today, ("SUZENT_TODAY",), None, None, env, origins)
    today_value = parse_date(today_raw, "today") if today_raw else dt.datetime.now(dt.timezone.utc).date()
    index_cfg = cfg.get("index", {})
    capture_cfg = cfg.get("capture", {})
    claude_cfg = cfg.get("claude", {})
    extractor_value = _pick("extractor", extractor, ("SUZENT_EXTRACTOR",), capture_cfg.get("extractor"), "auto", env, origins)
    if extractor_value not in EXTRACTORS:
        raise ConfigInvalid(f"extractor must be one of {', '.join(EXTRACTORS)}, got {extractor_value!r}")
    lock_timeout = _pick("lock_timeout", None, ("SUZENT_LOCK_TIMEOUT",), cfg.get("lock_timeout"), 30.0, env, origins)
    try:
        lock_timeout = float(lock_timeout)
    except (TypeError, ValueError):
        raise ConfigInvalid(f"lock_timeout must be a number of seconds, got {lock_timeout!r}") from None
    window = _pick("context_window", None, ("SUZENT_CONTEXT_WINDOW",), index_cfg.get("context_window"), DEFAULT_CONTEXT_WINDOW, env, origins)
    try:
        window = int(window)
        if not 0 <= window <= 8:
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigInvalid(f"index.context_window must be a whole number 0..8, got {window!r}") from None
    return Settings(
        paths=paths,
        today=today_value,
        embedder=str(_pick("embedder", embedder, ("SUZENT_EMBEDDER",), index_cfg.get("embedder"), DEFAULT_EMBEDDER, env, origins)),
        extractor=extractor_value,
        user_id=str(_pick("user_id", None, ("SUZENT_USER_ID",), cfg.get("user_id"), "default-user", env, origins)),
        claude_model=str(_pick("claude_model", None, ("SUZENT_CLAUDE_MODEL",), claude_cfg.get("model"), DEFAULT_CLAUDE_MODEL, env, origins)),
        anthropic_api_key=_pick("anthropic_api_key", None, ("ANTHROPIC_API_KEY",), claude_cfg.get("api_key"), None, env, origins),
        anthropic_base_url=_pick("anthropic_base_url", None, ("ANTHROPIC_BASE_URL",), claude_cfg.get("base_url"), None, env, origins),
        lock_timeout=lock_timeout,
        context_window=window,
        origins=origins,
    )
