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
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from suzent_cli.errors import ConfigInvalid

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
    ``config_errors`` lists unknown config.toml keys and, when resolved ``lenient``, wrong-typed values of settings
    a capture does not need: every command but ``capture`` refuses to run with one (capture warns and still
    writes: a typo in another stage's table never costs a fact).
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
    now: dt.datetime | None = None
    dream: Mapping[str, object] = field(default_factory=dict)
    config_errors: tuple[str, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict)

    @property
    def clock(self) -> dt.datetime:
        """The current instant (aware, UTC): ``--now``/``SUZENT_NOW`` when set, else the real clock."""
        return self.now if self.now is not None else dt.datetime.now(dt.timezone.utc)

    @property
    def claude_configured(self) -> bool:
        return bool(self.anthropic_api_key)


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(text: str, what: str = "date") -> dt.date:
    """Parse ``YYYY-MM-DD`` (exactly that form); raises :class:`ConfigInvalid` naming ``what`` otherwise."""
    value = str(text).strip()
    try:
        if not _ISO_DATE.match(value):
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ConfigInvalid(f"{what} must be a date YYYY-MM-DD, got {text!r}") from None


def parse_instant(text: str, what: str = "time") -> dt.datetime:
    """Parse an ISO 8601 instant (``2026-06-10T12:00`` or with ``Z``/offset); naive means UTC. Returns an aware
    UTC datetime; raises :class:`ConfigInvalid` naming ``what`` otherwise."""
    value = str(text).strip()
    try:
        if not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
            raise ValueError
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigInvalid(f"{what} must be an ISO time YYYY-MM-DDTHH:MM[:SS][Z], got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc)


def _load_file(path: Path) -> dict:
    """The parsed ``config.toml`` at ``path``; ``{}`` when there is none. Raises :class:`ConfigInvalid` for a path
    that exists but is not a readable TOML file (a directory is not "no config": its settings would be ignored)."""
    if not path.exists() and not path.is_symlink():
        return {}
    if not path.is_file():
        raise ConfigInvalid(f"{path}: not a regular file (a directory or a dangling link?); move it aside")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigInvalid(f"{path}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise ConfigInvalid(f"{path}: cannot read ({exc.strerror})") from None


# What a capture needs from config.toml: where the tiers are and which day it is. A wrong value of anything else
# (an index, extractor, claude or dream setting, the lock timeout, which has a safe default) must not cost a fact.
CAPTURE_NEEDS = frozenset({"home", "memory_dir", "vault_dir", "index_dir", "now", "today", "paths"})


class _Resolver:
    """Applies flag > env > file > default to one setting at a time, recording where each value came from.

    ``lenient``: a wrong-typed value (or table) of a setting not in :data:`CAPTURE_NEEDS` is recorded in
    ``problems`` and its default used, instead of raising :class:`ConfigInvalid`."""

    def __init__(self, env: Mapping[str, str], cfg: dict, cfg_path: Path, lenient: bool = False):
        self.env, self.cfg, self.cfg_path, self.lenient = env, cfg, cfg_path, lenient
        self.origins: dict[str, str] = {}
        self.problems: list[str] = []

    def _refuse(self, name: str, message: str) -> None:
        """Raise ``message``, or (lenient, ``name`` not needed by capture) record it once and return."""
        if not self.lenient or name in CAPTURE_NEEDS:
            raise ConfigInvalid(message)
        if message not in self.problems:
            self.problems.append(message)

    def table(self, name: str) -> dict:
        value = self.cfg.get(name, {})
        if not isinstance(value, dict):
            self._refuse(name, f"{self.cfg_path}: [{name}] must be a table, got {type(value).__name__}")
            return {}
        return value

    def pick(self, name: str, flag, env_keys: tuple[str, ...], section: str | None, key: str, default, kind=str):
        if flag not in (None, ""):
            self.origins[name] = "flag"
            return flag
        for env_key in env_keys:
            if self.env.get(env_key):
                self.origins[name] = f"env:{env_key}"
                return self.env[env_key]
        table = self.table(section) if section else self.cfg
        if key in table:
            value = table[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                where = f"[{section}] {key}" if section else key
                self._refuse(name, f"{self.cfg_path}: {where} must be a "
                                   f"{kind.__name__ if isinstance(kind, type) else 'number'}, got {value!r}")
                self.origins[name] = "default"
                return default
            self.origins[name] = "file"
            return value
        self.origins[name] = "default"
        return default


# What config.toml may hold; a typo is an error rather than a setting silently ignored. [dream] is checked by
# suzent_cli.dream.config.
KNOWN_KEYS: dict[str | None, tuple[str, ...]] = {
    None: ("today", "now", "lock_timeout", "user_id", "paths", "index", "capture", "claude", "dream"),
    "paths": ("memory_dir", "vault_dir", "index_dir"),
    "index": ("embedder", "context_window"),
    "capture": ("extractor",),
    "claude": ("model", "api_key", "base_url"),
}


def unknown_keys(cfg: dict, cfg_path: Path) -> list[str]:
    """One message per key or table of config.toml that suzent does not know (a typo, most likely)."""
    problems = [f"{cfg_path}: unknown key or table {key!r} (known: {', '.join(KNOWN_KEYS[None])})"
                for key in cfg if key not in KNOWN_KEYS[None]]
    known = dict(KNOWN_KEYS)
    if isinstance(cfg.get("dream"), dict) and cfg["dream"]:
        from suzent_cli.dream.config import dream_keys  # noqa: PLC0415 - light; only when the file has a [dream] table

        known["dream"] = dream_keys()
    for table, keys in known.items():
        if table is not None and isinstance(cfg.get(table), dict):
            problems += [f"{cfg_path}: unknown key {table}.{key} (known: {', '.join(keys)})"
                         for key in cfg[table] if key not in keys]
    return problems


def context_window_of(settings: "Settings") -> int:
    """``index.context_window`` as a validated int 0..8. Raises :class:`ConfigInvalid`.

    Validated on use, not at start-up, so a bad index setting can never stop a capture from being written."""
    try:
        window = int(settings.context_window)
        if str(window) != str(settings.context_window).strip() or not 0 <= window <= 8:
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigInvalid(f"index.context_window must be a whole number 0..8, got {settings.context_window!r}") from None
    return window


def resolve_settings(
    *,
    home: str | Path | None = None,
    memory_dir: str | Path | None = None,
    vault_dir: str | Path | None = None,
    index_dir: str | Path | None = None,
    today: str | None = None,
    now: str | None = None,
    embedder: str | None = None,
    extractor: str | None = None,
    env: Mapping[str, str] | None = None,
    lenient: bool = False,
) -> Settings:
    """Resolve the effective :class:`Settings` from flags, ``env`` (default ``os.environ``) and config.toml.

    Clock: ``now`` (``--now``/``SUZENT_NOW``, ISO time) fixes the current instant for time-based rules (the dream's
    gate); ``today`` defaults to its date. ``[dream]`` is kept raw and validated by the dream (see
    :func:`suzent_cli.dream.config.dream_config`).

    Home: ``home`` flag > ``SUZENT_HOME`` > ``SUZENT_DATA_DIR`` > ``~/.suzent``. Relative paths in config.toml and
    path variables are relative to the home. Only what every command needs (paths, today, lock timeout) is
    validated here; the extractor and index settings are validated by the stage that uses them, so a bad one can
    never stop a capture. Raises :class:`ConfigInvalid` with a one-line message.

    ``lenient`` (``capture`` and ``config``): a wrong-typed value of a setting a capture does not need (anything
    but the paths and the clock, see :data:`CAPTURE_NEEDS`) goes to ``config_errors`` with its default in its place,
    so capture warns and writes; every other command resolves strictly and refuses with the same message.
    """
    env = os.environ if env is None else env
    boot = _Resolver(env, {}, Path("config.toml"))
    home_raw = boot.pick("home", home, ("SUZENT_HOME", "SUZENT_DATA_DIR"), None, "home", "~/.suzent")
    home_path = Path(home_raw).expanduser().absolute()
    if home_path.exists() and not home_path.is_dir():
        raise ConfigInvalid(f"home {home_path} exists and is not a directory")
    cfg_path = home_path / "config.toml"
    cfg = _load_file(cfg_path)
    r = _Resolver(env, cfg, cfg_path, lenient)
    r.origins.update(boot.origins)

    def path_of(name: str, flag, env_key: str, default_rel: str) -> Path:
        raw = r.pick(name, flag, (env_key,), "paths", name, default_rel)
        if not str(raw).strip():
            raise ConfigInvalid(f"{name} is empty")
        p = Path(raw).expanduser()
        return (p if p.is_absolute() else home_path / p).absolute()

    paths = Paths(
        home=home_path,
        memory_dir=path_of("memory_dir", memory_dir, "SUZENT_MEMORY_DIR", "sandbox/shared/memory"),
        vault_dir=path_of("vault_dir", vault_dir, "SUZENT_VAULT_DIR", "notebook"),
        index_dir=path_of("index_dir", index_dir, "SUZENT_INDEX_DIR", "memory"),
    )
    now_raw = r.pick("now", now, ("SUZENT_NOW",), None, "now", None)
    now_what = {"flag": "--now", "file": f"{cfg_path}: now"}.get(r.origins["now"], r.origins["now"].removeprefix("env:"))
    now_value = parse_instant(now_raw, now_what) if now_raw else None
    today_raw = r.pick("today", today, ("SUZENT_TODAY",), None, "today", None)
    today_what = {"flag": "--today", "file": f"{cfg_path}: today"}.get(r.origins["today"],
                                                                      r.origins["today"].removeprefix("env:"))
    today_value = (parse_date(today_raw, today_what) if today_raw
                   else (now_value or dt.datetime.now(dt.timezone.utc)).date())
    lock_timeout = r.pick("lock_timeout", None, ("SUZENT_LOCK_TIMEOUT",), None, "lock_timeout", 30.0, (int, float))
    try:
        lock_timeout = float(lock_timeout)
        if not 0 <= lock_timeout <= 86400:
            raise ValueError
    except (TypeError, ValueError):
        r._refuse("lock_timeout", f"lock_timeout must be a number of seconds 0..86400, got {lock_timeout!r}")
        lock_timeout = 30.0
    return Settings(
        paths=paths,
        today=today_value,
        embedder=str(r.pick("embedder", embedder, ("SUZENT_EMBEDDER",), "index", "embedder", DEFAULT_EMBEDDER)),
        extractor=str(r.pick("extractor", extractor, ("SUZENT_EXTRACTOR",), "capture", "extractor", "auto")),
        user_id=str(r.pick("user_id", None, ("SUZENT_USER_ID",), None, "user_id", "default-user")),
        claude_model=str(r.pick("claude_model", None, ("SUZENT_CLAUDE_MODEL",), "claude", "model", DEFAULT_CLAUDE_MODEL)),
        anthropic_api_key=r.pick("anthropic_api_key", None, ("ANTHROPIC_API_KEY",), "claude", "api_key", None),
        anthropic_base_url=r.pick("anthropic_base_url", None, ("ANTHROPIC_BASE_URL",), "claude", "base_url", None),
        lock_timeout=lock_timeout,
        context_window=r.pick("context_window", None, ("SUZENT_CONTEXT_WINDOW",), "index", "context_window",
                              DEFAULT_CONTEXT_WINDOW, int),
        now=now_value,
        dream=dict(r.table("dream")),
        config_errors=tuple(r.problems + unknown_keys(cfg, cfg_path)),
        origins=r.origins,
    )
