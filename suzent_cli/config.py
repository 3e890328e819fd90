"""Settings: every path and knob, declared once in :data:`SETTINGS`, resolved once at the CLI root and passed down.

Precedence, highest first: command-line flag > environment variable > ``<home>/config.toml`` > default.
The library never reads the environment or config itself; it takes a :class:`Settings`.

:data:`SETTINGS` is the one table of settings (one :class:`Setting` per key). Everything else about the settings is
generated from it: the resolver (:func:`resolve_settings`), the known-key check (:func:`unknown_keys`), the dream's
knobs (:class:`DreamConfig`, :func:`dream_config`), the ``config.toml`` template ``suzent init`` writes
(:func:`config_template`), ``suzent config show`` (:func:`effective_config`) and ``docs/configuration.md``
(``scripts/gen_docs.py``).

Layout (compatible with the original suzent data directory ``~/.suzent``)::

    <home>/sandbox/shared/memory/        memory dir: archive/YYYY-MM-DD.md, MEMORY.md, persona.md, user.md
    <home>/notebook/                     vault, with runner-owned state in notebook/.state/
    <home>/memory/                       LanceDB search index
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suzent_cli.errors import ConfigInvalid, missing_key

# --- the table --------------------------------------------------------------------------------------------------

ENGINES = ("auto", "offline", "claude")
"""The engine choices of the extractor, the dream and promote. ``offline`` needs no model and no network."""
ENGINE_ALIASES = {"rules": "offline"}
"""Old spellings still accepted (the dream called its offline engine ``rules``); they mean the canonical name."""
ENGINE_METAVAR = "|".join(ENGINES)
BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
"""How an environment variable spells a ``bool`` setting (case and spaces ignored)."""


@dataclass(frozen=True)
class Setting:
    """One setting: where it is read from, its type and default, and what it means.

    ``key`` is spelled as in config.toml (``lock_timeout``, ``paths.vault_dir``, ``dream.min_facts``); ``home`` is
    the one setting that is no key (it holds the file). ``kind`` drives parsing and checking:

    * ``path``: a path, relative to the home; ``clock``: an ISO date or instant; ``string``, ``secret`` (never
      shown), ``url`` (shown without credentials): text;
    * ``seconds``, ``number`` (float), ``whole`` (int): within ``limits``; ``bool``; ``choice``: one of ``choices``
      (or an alias of one, :data:`ENGINE_ALIASES`).

    ``check``: ``resolve`` (checked when the settings are resolved: every command needs it), ``use`` (checked by
    the stage that uses it, so a bad one never stops a capture; ``config show`` reports it) or ``dream``
    (``[dream]``, checked by :func:`dream_config`). ``flags``: the command-line flags, as documented
    (``--now`` is a root flag; ``dream --interval`` one of a subcommand). ``attr``: the :class:`Settings`,
    :class:`Paths` or :class:`DreamConfig` field (and the ``origins`` name); an earlier name of a key is still read
    (:data:`OLD_NAMES`). ``doc``: one line (template, docs); ``more``: the rest (docs only).
    ``type_doc``/``default_doc``/``example``: for the docs and the template.
    """

    key: str
    kind: str
    default: Any
    doc: str
    more: str = ""
    env: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    limits: tuple[float, float] | None = None
    choices: tuple[str, ...] = ()
    check: str = "resolve"
    attr: str = ""
    type_doc: str = ""
    default_doc: str = ""
    example: str = ""

    @property
    def table(self) -> str | None:
        """The config.toml table holding the key (``paths``, ``dream``…), None for a top-level key."""
        return self.key.split(".", 1)[0] if "." in self.key else None

    @property
    def name(self) -> str:
        """The key inside its table."""
        return self.key.rsplit(".", 1)[-1]

    @property
    def field(self) -> str:
        return self.attr or self.name

    @property
    def python_type(self) -> type:
        return {"whole": int, "number": float, "seconds": float, "bool": bool}.get(self.kind, str)

    def flag_label(self) -> str:
        """How an error names this setting when it came from a subcommand flag (``--max-days``)."""
        return self.flags[0].split()[-1] if self.flags else "--" + self.name.replace("_", "-")


SETTINGS: tuple[Setting, ...] = (
    Setting("home", "path", "~/.suzent", "The data directory (it holds config.toml, so it is no key).",
            env=("SUZENT_HOME", "SUZENT_DATA_DIR"), flags=("--home",)),
    Setting("now", "clock", None, "The clock, for every time and date rule; a date alone means its 00:00 UTC.",
            more="The instant of time rules (the dream's gate: `min_hours`, lint spacing); its date is *today* for "
            "every date rule (the day a capture is logged under, what \"before today\" means to the dream, stale "
            "decay).", env=("SUZENT_NOW",), flags=("--now",),
            type_doc='time `"YYYY-MM-DD[THH:MM[:SS][Z]]"` (no offset = UTC)', default_doc="the real clock",
            example='"2026-06-01T12:00"'),
    Setting("lock_timeout", "seconds", 30.0, "Seconds to wait for a file lock before giving up (exit 3).",
            env=("SUZENT_LOCK_TIMEOUT",), limits=(0, 86400)),
    Setting("user_id", "string", "default-user", "The user_id column of every index row.",
            more="The original app's column.", env=("SUZENT_USER_ID",), check="use"),
    Setting("paths.memory_dir", "path", "sandbox/shared/memory", "Daily logs in archive/, MEMORY.md, persona.md, "
            "user.md.", env=("SUZENT_MEMORY_DIR",), flags=("--memory-dir",)),
    Setting("paths.vault_dir", "path", "notebook", "The markdown vault; runner-owned state in its .state/.",
            env=("SUZENT_VAULT_DIR",), flags=("--vault-dir",)),
    Setting("paths.index_dir", "path", "memory", "The LanceDB search index.", env=("SUZENT_INDEX_DIR",),
            flags=("--index-dir",)),
    Setting("index.embedder", "string", "all-MiniLM-L6-v2", "The bundled model; hash[:DIM] (model-free); or a "
            "local sentence-transformers model dir.", more="Bundled models: docs/models.md (every weight file is "
            "sha256-checked at load; nothing is downloaded). `hash` is deterministic and model-free: vector recall "
            "matches words, not meanings. An index keeps the embedder it was built with.",
            env=("SUZENT_EMBEDDER",), flags=("index --model", "recall --model"), check="use"),
    Setting("index.context_window", "whole", 2, "Preceding facts of the same log indexed with each fact.",
            more="For recall's context run.", env=("SUZENT_CONTEXT_WINDOW",), limits=(0, 8), check="use",
            attr="context_window"),
    Setting("recall.rerank", "whole", 0, "Top candidates re-scored by their own text against the query; 0 = off.",
            more="Each recall then encodes that many facts with the model (about 0.5 s for 15 on one core with "
            "all-MiniLM-L6-v2); LoCoMo dev recall@5/@10 +0.6/+1.1 at 15 (BENCHMARKS.md, issue 16). Hybrid and "
            "vector modes only.", env=("SUZENT_RERANK",), limits=(0, 100), check="use", attr="rerank_top"),
    Setting("recall.subject_boost", "number", 0.4, "Relevance a row gains when its subject (its first word) is a "
            "name the query uses; 0 = off.", more="\"What do Melanie's kids like?\" lifts \"Melanie: …\" and "
            "\"Melanie's kids …\" rows, not rows that only mention Melanie. LoCoMo dev recall@5/@10 68.4/77.4 -> "
            "73.4/79.3 (BENCHMARKS.md, issue 27; tuned on its first four conversations, the last three gained "
            "+5.5/+2.3). Every mode.", env=("SUZENT_SUBJECT_BOOST",), limits=(0, 1), check="use",
            attr="subject_boost"),
    Setting("recall.when_boost", "number", 0.3, "Relevance a row that says when gains for a query that asks "
            "when; 0 = off.", more="\"When did Anna go camping?\" lifts \"Anna: we went camping last weekend\" "
            "above rows that only share the topic (a relative day or period, a weekday, a month, a year). Not for a "
            "query that names a date (that is the date boost). LoCoMo dev recall@5/@10 73.4/79.3 -> 74.3/80.2, "
            "temporal questions +3.6/+4.8 on the half never tuned on (BENCHMARKS.md, issue 27, second pass). Every "
            "mode.", env=("SUZENT_WHEN_BOOST",), limits=(0, 1), check="use", attr="when_boost"),
    Setting("recall.now_ranking", "bool", True, "A question about the present ranks rows about another person and "
            "one-off outings lower.", more="\"what is the name of the user's pet\": \"My brother has a cat named "
            "Pixie\" ×0.75, \"Visited Lisbon last week\" ×0.85 (docs/ranking.md, questions about now). Only a "
            "question that names the user (or a relation of the user's) and names no date or past.",
            env=("SUZENT_NOW_RANKING",), check="use", attr="now_ranking"),
    Setting("recall.now_slots", "bool", True, "A question about now ranks another numbered item, a named third "
            "party's row and a row matching it only through its neighbours lower.", more="\"when does milestone 2 "
            "land\": \"milestone 3 …\" ×0.5; \"where does the user live\": \"Marek Duda lives in …\" ×0.6, \"My "
            "climbing partner Joost …\" ×0.5; a row that shares neither words nor meaning with the question on its "
            "own ranks below every row that does (docs/ranking.md, questions about now: the slot). Off when "
            "recall.now_ranking is off.",
            env=("SUZENT_NOW_SLOTS",), check="use", attr="now_slots"),
    Setting("capture.extractor", "choice", "auto", "How facts are extracted from a turn; auto: claude when an API "
            "key or a local base_url is set, else offline.", more="Used by `capture --turn-from` and the hooks. offline: rules, no model.",
            env=("SUZENT_EXTRACTOR",), flags=("capture --extractor",), choices=ENGINES, check="use"),
    Setting("capture.max_turn_chars", "whole", 200_000, "Characters of a turn the extractor reads; a larger turn is "
            "cut to its newest part, with a warning.", more="Counted over the messages the extractor reads (offline: "
            "the user's; claude: all). The newest messages are kept whole and the oldest kept one may be cut at a "
            "sentence or line boundary; the older part is not extracted (the input itself is never changed). Used by "
            "`capture --turn-from`, the hooks and the server's `remember`; extraction time by turn size: "
            "`benchmarks/turn_size.py`.", env=("SUZENT_MAX_TURN_CHARS",), limits=(100, 100_000_000), check="use",
            attr="max_turn_chars", type_doc="whole number 100..100,000,000"),
    Setting("capture.scope", "choice", "auto", "Whose a captured fact is: auto, global or project.",
            more="auto: the person's categories (personal, preference, goal, interaction) are the person's, recalled "
            "in every project; every other fact belongs to the project it was captured in (its git remote, else its "
            "repository, else its directory; `suzent project`). global: every fact is the person's. project: every "
            "fact is the current project's. `capture --global` and `capture --project NAME` override it for one "
            "capture; a wrong value is warned about and read as auto (a capture is never refused over it). The "
            "scope is the fact line's `project:<key>` tag (docs/FORMAT.md).", env=("SUZENT_SCOPE",),
            flags=("capture --global", "capture --project"), choices=("auto", "global", "project"), check="use",
            attr="capture_scope"),
    Setting("claude.model", "string", "claude-sonnet-5-5", "The model of the claude extractor, dream engine and "
            "promote.", more="At a local server (Ollama, llama-server), one of its models, e.g. `qwen3:8b` "
            "(docs/local-models.md).", env=("SUZENT_CLAUDE_MODEL",), check="use", attr="claude_model"),
    Setting("claude.api_key", "secret", None, "Enables the claude extractor and engines; better kept in the "
            "environment.", more="Not needed when `base_url` is a local server (localhost or a loopback "
            "address).", env=("ANTHROPIC_API_KEY",), check="use", attr="anthropic_api_key",
            default_doc="not set", example='"sk-ant-..."'),
    Setting("claude.base_url", "url", None, "Any Anthropic-compatible server; a local one (Ollama, llama-server) "
            "needs no API key.", more="Local means `localhost` (or a name under it) or a loopback address "
            "(127.0.0.0/8, ::1): with one set, `auto` engines use it with no key, and the conversation never "
            "leaves the machine. A remote URL still needs `api_key`: without one a turn would be sent to a "
            "server nobody authenticated, and `auto` promises that no key means nothing leaves the machine. "
            "docs/local-models.md. `ANTHROPIC_BASE_URL` (also Claude Code's variable) is honoured, but only a "
            "local URL set for suzent (this key, `SUZENT_CLAUDE_BASE_URL`) turns `auto` engines on without a key.",
            env=("SUZENT_CLAUDE_BASE_URL", "ANTHROPIC_BASE_URL"),
            check="use", attr="anthropic_base_url", type_doc="URL", default_doc="not set (Anthropic's API)",
            example='"http://localhost:11434"'),
    Setting("claude.timeout", "seconds", None, "Seconds one model request may take.", more="Not set: 60 s for "
            "an extraction, 120 s for promote, 300 s for a dream call at Anthropic's API; 600 s each at a local "
            "server, where a CPU-bound model may read a long prompt for minutes. The dream's whole run is still "
            "bounded by `dream.timeout_seconds`.", env=("SUZENT_CLAUDE_TIMEOUT",), limits=(1, 86400),
            check="use", attr="claude_timeout", type_doc="seconds, 1..86400",
            default_doc="not set (the stage's; 600 at a local server)", example="600.0"),
    Setting("claude.max_retries", "whole", None, "Retries of a request the server could not serve now.",
            more="Not set: 2. At Anthropic's API the SDK retries connection errors, timeouts, 429 and 5xx. At a "
            "local server suzent retries only a \"busy or loading\" answer (429, 5xx), after 2, 5, 10 s or the "
            "server's Retry-After; never a request that timed out (the server is still computing it) nor a refused "
            "connection (the stage falls back at once).", env=("SUZENT_CLAUDE_MAX_RETRIES",), limits=(0, 10),
            check="use", attr="claude_max_retries", type_doc="whole number 0..10", default_doc="not set (2)",
            example="2"),
    Setting("serve.port", "whole", 8767, "The TCP port of suzent serve's MCP endpoint on 127.0.0.1; 0 = any free "
            "port.", more="The server binds 127.0.0.1 only, never another interface; MCP over HTTP also needs the "
            "bearer token in `<home>/server/token` (`suzent serve --print-config`).", env=("SUZENT_SERVE_PORT",),
            flags=("serve --port",), limits=(0, 65535), check="use", attr="serve_port"),
    Setting("serve.autostart", "bool", None, "Start the home's server (detached, no chain) when a hook, suzent mcp "
            "or a command finds none.", more="The call that starts it answers by the cold path; the next ones are "
            "warm. Off when the environment variable `CI` is set (not `0` or `false`), unless this key or the "
            "variable says otherwise. `suzent serve stop` ends the server; `suzent status` shows who started it. "
            "The variable takes `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.", env=("SUZENT_SERVE_AUTOSTART",),
            check="use", attr="serve_autostart", default_doc="on (off when `CI` is set)",
            example="true"),
    Setting("serve.idle_minutes", "number", 60.0, "An auto-started server exits after this many minutes without "
            "a request; 0 = never.", more="Requests on the local API (hooks, CLI, suzent mcp) and MCP over HTTP "
            "count; `suzent status` does not. A server you start with `suzent serve` runs until stopped unless "
            "given `--idle-exit MINUTES`.", env=("SUZENT_SERVE_IDLE_MINUTES",), flags=("serve --idle-exit",),
            limits=(0, 525600), check="use", attr="serve_idle_minutes", type_doc="minutes, 0..525600"),
    Setting("sync.remote", "url", None, "The git remote suzent sync pushes to and pulls from (any URL git "
            "accepts).", more="`suzent sync --remote URL` also remembers a URL, in the staging repository "
            "(`<home>/sync/repo`); this key or the variable wins over it. Shown without credentials.",
            env=("SUZENT_SYNC_REMOTE",), flags=("sync --remote",), check="use", attr="sync_remote",
            type_doc="URL", default_doc="not set (the one remembered by `sync --remote`)",
            example='"git@github.com:me/memory.git"'),
    Setting("sync.dream", "choice", "auto", "Whether this machine dreams for a synced home: auto claims the role "
            "when no machine holds it, yes takes it over, no never claims it.",
            more="One machine dreams (docs/sync.md): the others skip the dream with a note and get its pages by "
            "suzent sync.", env=("SUZENT_SYNC_DREAM",), choices=("auto", "yes", "no"), check="use",
            attr="sync_dream"),
    Setting("dream.interval_seconds", "seconds", 1800.0, "Between ticks: the default --interval of suzent loop.",
            flags=("dream --interval", "loop --interval"), limits=(1, 7 * 86400), check="dream"),
    Setting("dream.min_hours", "number", 24.0, "Hours since the last attempt before a run (unless far behind).",
            flags=("dream --min-hours",), limits=(0, 24 * 365), check="dream", type_doc="hours, 0..8760"),
    Setting("dream.min_facts", "whole", 20, "New fact lines needed before a run (unless far behind).",
            flags=("dream --min-facts",), limits=(0, 10**9), check="dream", type_doc="whole number ≥ 0"),
    Setting("dream.max_wait_hours", "number", 72.0, "Hours the oldest pending fact may wait: then any pending fact "
            "is enough for a run (min_hours still spaces attempts); 0 turns this off.",
            more="So a person who captures a few facts a day, never min_facts, is still consolidated: at the default a "
            "fact reaches the vault and MEMORY.md within about three days (plus one tick), in batches of about "
            "three days' logs, while a fact waiting is recalled from its daily log all along. The wait is counted "
            "from the heading of the oldest pending fact's entry (a late line: from when it was recorded).",
            flags=("dream --max-wait-hours",), limits=(0, 24 * 3650), check="dream", type_doc="hours, 0..87600"),
    Setting("dream.max_days", "whole", 14, "Daily logs per batch; more pending than this is far behind.",
            flags=("dream --max-days",), limits=(1, 10**5), check="dream"),
    Setting("dream.max_retries", "whole", 3, "Failed attempts before a batch is skipped.",
            flags=("dream --max-retries",), limits=(1, 1000), check="dream"),
    Setting("dream.timeout_seconds", "seconds", 600.0, "Per engine run; a timeout is a failed run.",
            more="Not set and `claude.base_url` a local server: 3600 (a local model answers a tool-use turn in "
            "tens of seconds to minutes).",
            flags=("dream --timeout", "lint --timeout"), limits=(1, 86400), check="dream"),
    Setting("dream.max_turns", "whole", 60, "Claude engine: API calls per run.", limits=(1, 10**4), check="dream"),
    Setting("dream.lint_enabled", "bool", True, "Lint from the gate when nothing is pending.",
            more="`suzent lint` always runs.", flags=("dream --no-lint",), check="dream"),
    Setting("dream.lint_min_days", "number", 7.0, "Days since the last lint entry in log.md before the gate lints "
            "again.", flags=("dream --lint-min-days",), limits=(0, 3650), check="dream", type_doc="days, 0..3650"),
    Setting("dream.engine", "choice", "auto", "auto: claude when an API key or a local base_url is set, else "
            "offline.",
            more="offline is the rules engine: no model, no network.",
            flags=("dream --engine", "lint --engine", "dry-run --engine", "run --engine", "loop --engine"),
            choices=ENGINES, check="dream"),
)

OLD_NAMES: dict[str, tuple[str, str, str]] = {"now": ("today", "SUZENT_TODAY", "--today")}
"""Earlier names still read, per key: ``(config key, environment variable, flag)``. ``today`` was a second clock
override that fixed only the date; ``now`` sets both, so ``today = "D"`` now means ``now = "D"`` (a date only)."""

TABLE_DOCS = {"dream": "`suzent dream` flags override these; there are no environment variables"}

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def setting(key: str) -> Setting:
    """The row of ``key`` (``paths.vault_dir``); KeyError for a key the table does not hold."""
    return BY_KEY[key]


def file_keys() -> tuple[Setting, ...]:
    """The rows config.toml may hold (all but ``home``)."""
    return tuple(s for s in SETTINGS if s.key != "home")


def _known_keys() -> dict[str | None, tuple[str, ...]]:
    known: dict[str | None, list[str]] = {None: []}
    for s in file_keys():
        if s.table is None:
            known[None].append(s.name)
        else:
            if s.table not in known:
                known[None].append(s.table)
                known[s.table] = []
            known[s.table].append(s.name)
    known[None] += [old for old, _, _ in OLD_NAMES.values()]
    return {table: tuple(keys) for table, keys in known.items()}


KNOWN_KEYS: dict[str | None, tuple[str, ...]] = _known_keys()
"""What config.toml may hold: ``{None: top-level keys and tables, table: its keys}``; a typo is an error rather
than a setting silently ignored."""

# What a capture needs from config.toml: where the tiers are and which day it is. A wrong value of anything else
# (an index, extractor, claude or dream setting, the lock timeout, which has a safe default) must not cost a fact.
CAPTURE_NEEDS = frozenset({"paths"} | {s.field for s in SETTINGS if s.kind in ("path", "clock")})

DEFAULT_EMBEDDER: str = setting("index.embedder").default
DEFAULT_CONTEXT_WINDOW: int = setting("index.context_window").default
DEFAULT_CLAUDE_MODEL: str = setting("claude.model").default


def _default(key: str) -> Any:
    return setting(key).default


# --- what is resolved -------------------------------------------------------------------------------------------

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
    """Effective configuration of one invocation. Defaults are :data:`SETTINGS`' (the table decides).

    ``today`` is the date of the clock (``now``, else the real clock when resolved). ``origins`` maps each
    setting's field name to where its value came from: ``default``, ``file``, ``env:NAME`` or ``flag``.
    ``config_errors`` lists unknown config.toml keys and, when resolved ``lenient``, wrong-typed values of settings
    a capture does not need: every command but ``capture`` refuses to run with one (capture warns and still
    writes: a typo in another stage's table never costs a fact). ``dream`` is the raw ``[dream]`` table
    (:func:`dream_config` validates it).
    """

    paths: Paths
    today: dt.date
    embedder: str = _default("index.embedder")
    extractor: str = _default("capture.extractor")
    max_turn_chars: int = _default("capture.max_turn_chars")
    capture_scope: str = _default("capture.scope")
    user_id: str = _default("user_id")
    claude_model: str = _default("claude.model")
    anthropic_api_key: str | None = _default("claude.api_key")
    anthropic_base_url: str | None = _default("claude.base_url")
    claude_timeout: float | None = _default("claude.timeout")
    claude_max_retries: int | None = _default("claude.max_retries")
    lock_timeout: float = _default("lock_timeout")
    context_window: int = _default("index.context_window")
    serve_port: int = _default("serve.port")
    serve_autostart: bool | None = _default("serve.autostart")
    serve_idle_minutes: float = _default("serve.idle_minutes")
    rerank_top: int = _default("recall.rerank")
    subject_boost: float = _default("recall.subject_boost")
    when_boost: float = _default("recall.when_boost")
    now_ranking: bool = _default("recall.now_ranking")
    now_slots: bool = _default("recall.now_slots")
    sync_remote: str | None = _default("sync.remote")
    sync_dream: str = _default("sync.dream")
    now: dt.datetime | None = _default("now")
    dream: Mapping[str, object] = field(default_factory=dict)
    config_errors: tuple[str, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict)

    @property
    def clock(self) -> dt.datetime:
        """The current instant (aware, UTC): ``--now``/``SUZENT_NOW`` when set, else the real clock."""
        return self.now if self.now is not None else dt.datetime.now(dt.UTC)

    @property
    def claude_usable(self) -> bool:
        """Whether the claude stages can run when asked for (``--engine claude``): an API key is set, or
        ``base_url`` is a local server (:func:`is_local_url`), which needs none."""
        return bool(self.anthropic_api_key) or is_local_url(self.anthropic_base_url)

    @property
    def claude_configured(self) -> bool:
        """Whether ``auto`` engines pick claude: an API key is set, or a local ``base_url`` was set for suzent
        (config.toml, ``SUZENT_CLAUDE_BASE_URL``, a flag). ``ANTHROPIC_BASE_URL`` alone is Claude Code's own
        variable too (a person's local proxy for Claude Code): it is honoured for a stage that runs, but never
        turns ``auto`` from the offline engine to a model on its own."""
        if self.anthropic_api_key:
            return True
        return is_local_url(self.anthropic_base_url) and self.origins.get("anthropic_base_url") != "env:ANTHROPIC_BASE_URL"


@dataclass(frozen=True)
class DreamConfig:
    """Validated dream settings (``[dream]`` rows of :data:`SETTINGS`, whose defaults these are: the original
    app's). Times are seconds unless the name says hours or days."""

    interval_seconds: float = _default("dream.interval_seconds")
    min_hours: float = _default("dream.min_hours")
    min_facts: int = _default("dream.min_facts")
    max_wait_hours: float = _default("dream.max_wait_hours")
    max_days: int = _default("dream.max_days")
    max_retries: int = _default("dream.max_retries")
    timeout_seconds: float = _default("dream.timeout_seconds")
    max_turns: int = _default("dream.max_turns")
    lint_enabled: bool = _default("dream.lint_enabled")
    lint_min_days: float = _default("dream.lint_min_days")
    engine: str = _default("dream.engine")

    def engine_for(self, settings: Settings) -> str:
        """``offline`` or ``claude``: ``auto`` means claude when an API key or a local base_url is configured
        (:attr:`Settings.claude_configured`), else offline."""
        name = canonical_engine(self.engine) or self.engine
        if name != "auto":
            return name
        return "claude" if settings.claude_configured else "offline"


DREAM_ROWS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.table == "dream")
"""The ``[dream]`` rows, in :class:`DreamConfig`'s field order (tests/test_config.py checks they match)."""


# --- parsing and checking one value -----------------------------------------------------------------------------

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
    """Parse an ISO 8601 instant (``2026-06-10T12:00`` or with ``Z``/offset) or a date alone (``2026-06-10``: its
    00:00); naive means UTC. Returns an aware UTC datetime; raises :class:`ConfigInvalid` naming ``what``."""
    value = str(text).strip()
    try:
        if _ISO_DATE.match(value):
            day = dt.date.fromisoformat(value)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
        if not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
            raise ValueError
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigInvalid(f"{what} must be an ISO time YYYY-MM-DD[THH:MM[:SS][Z]], got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def canonical_engine(name: object) -> str | None:
    """``name`` as one of :data:`ENGINES` (case and spaces ignored, an old alias mapped: ``rules`` → ``offline``);
    None when it is none of them."""
    text = str(name).strip().lower()
    text = ENGINE_ALIASES.get(text, text)
    return text if text in ENGINES else None


def _shown_limit(x: float) -> str:
    """A limit as a person types it: ``100000000`` (not ``1e+08``), ``0.5``, ``inf``."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def check_value(row: Setting, value: Any, label: str) -> Any:
    """``value`` as ``row`` wants it: the choice in its canonical spelling, a number of the row's type within its
    limits, a bool. ``label`` names it in the error (a flag, a config.toml key). Raises :class:`ConfigInvalid`."""
    if row.kind == "bool":
        if isinstance(value, bool):
            return value
        raise ConfigInvalid(f"{label} must be true or false, got {value!r}")
    if row.kind == "choice":  # the engine choices (aliases mapped), or another row's own words
        name = canonical_engine(value) if row.choices == ENGINES else (
            str(value).strip().lower() if str(value).strip().lower() in row.choices else None)
        if name is None or name not in row.choices:
            raise ConfigInvalid(f"{label} must be one of {', '.join(row.choices)}, got {value!r}")
        return name
    if row.kind not in ("whole", "number", "seconds"):
        return value
    kind = row.python_type
    try:
        if isinstance(value, bool):
            raise ValueError
        number = kind(str(value).strip()) if isinstance(value, str) else kind(value)
        if kind is int and isinstance(value, float) and value != int(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigInvalid(f"{label} must be a {'whole number' if kind is int else 'number'}, got {value!r}") from None
    low, high = row.limits or (float("-inf"), float("inf"))
    if not low <= number <= high:
        raise ConfigInvalid(f"{label} must be between {_shown_limit(low)} and {_shown_limit(high)}, got {value!r}")
    return number


def context_window_of(settings: Settings) -> int:
    """``index.context_window`` as a validated int 0..8. Raises :class:`ConfigInvalid`.

    Validated on use, not at start-up, so a bad index setting can never stop a capture from being written."""
    return check_value(setting("index.context_window"), settings.context_window, "index.context_window")


# --- resolving --------------------------------------------------------------------------------------------------

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


class _Resolver:
    """Applies flag > env > file > default to one row at a time, recording where each value came from.

    ``lenient``: a wrong-typed value (or table) of a setting not in :data:`CAPTURE_NEEDS` is recorded in
    ``problems`` and its default used, instead of raising :class:`ConfigInvalid`."""

    def __init__(self, env: Mapping[str, str], cfg: dict, cfg_path: Path, lenient: bool = False):
        self.env, self.cfg, self.cfg_path, self.lenient = env, cfg, cfg_path, lenient
        self.origins: dict[str, str] = {}
        self.problems: list[str] = []

    def refuse(self, name: str, message: str) -> None:
        """Raise ``message``, or (lenient, ``name`` not needed by capture) record it once and return."""
        if not self.lenient or name in CAPTURE_NEEDS:
            raise ConfigInvalid(message)
        if message not in self.problems:
            self.problems.append(message)

    def table(self, name: str) -> dict:
        value = self.cfg.get(name, {})
        if not isinstance(value, dict):
            self.refuse(name, f"{self.cfg_path}: [{name}] must be a table, got {type(value).__name__}")
            return {}
        return value

    def pick(self, row: Setting, flag: Any, old_flag: Any = None) -> tuple[Any, str, bool]:
        """``(raw value, label, by its old name)`` of ``row``: the flag, else its first non-empty variable, else its
        config.toml key, else its default; at each level the current name before the old one (:data:`OLD_NAMES`,
        ``old_flag`` its flag's value). ``label`` names the source in an error. A file value of the wrong type is
        refused (see :meth:`refuse`) and the default used."""
        name, old = row.field, OLD_NAMES.get(row.key)
        names = [(row.flags[0] if row.flags else name, row.env, row.name, False)]
        if old:
            names.append((old[2], (old[1],), old[0], True))
        for (flag_name, _, _, is_old), value in zip(names, (flag, old_flag), strict=False):
            if value not in (None, ""):
                self.origins[name] = "flag"
                return value, flag_name, is_old
        for _, env_keys, _, is_old in names:
            for env_key in env_keys:
                if self.env.get(env_key):
                    self.origins[name] = f"env:{env_key}"
                    return self.env[env_key], env_key, is_old
        table = self.table(row.table) if row.table else self.cfg
        for _, _, key, is_old in names:
            if key not in table:
                continue
            value = table[key]
            kind = ((int, float) if row.kind in ("seconds", "number") else int if row.kind == "whole"
                    else bool if row.kind == "bool" else str)
            if not isinstance(value, kind) or (isinstance(value, bool) and row.kind != "bool"):
                where = f"[{row.table}] {key}" if row.table else key
                wanted = {int: "a whole number", bool: "true or false", str: "a string"}.get(kind, "a number")
                self.refuse(name, f"{self.cfg_path}: {where} must be {wanted}, got {value!r}")
                self.origins[name] = "default"
                return row.default, name, False
            self.origins[name] = "file"
            return value, f"{self.cfg_path}: {key}", is_old
        self.origins[name] = "default"
        return row.default, name, False


def resolve_home(flag: str | Path | None = None, env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """The home and its origin: ``flag`` (``--home``) > ``SUZENT_HOME`` > ``SUZENT_DATA_DIR`` > ``~/.suzent``,
    expanded and absolute. Reads no config (the home holds it), so a hook whose config is broken still finds its
    home. Raises nothing; does not check that the home is a directory."""
    boot = _Resolver(os.environ if env is None else env, {}, Path("config.toml"))
    raw, _, _ = boot.pick(setting("home"), flag)
    return Path(raw).expanduser().absolute(), boot.origins["home"]


def resolve_settings(
    *,
    home: str | Path | None = None,
    memory_dir: str | Path | None = None,
    vault_dir: str | Path | None = None,
    index_dir: str | Path | None = None,
    now: str | None = None,
    today: str | None = None,
    embedder: str | None = None,
    extractor: str | None = None,
    env: Mapping[str, str] | None = None,
    lenient: bool = False,
) -> Settings:
    """Resolve the effective :class:`Settings` from flags, ``env`` (default ``os.environ``) and config.toml, each
    row of :data:`SETTINGS` by flag > env > file > default.

    Clock: ``now`` (``--now``/``SUZENT_NOW``/``now =``, an ISO time or a date) fixes the current instant, and
    ``today`` is its date. ``today`` (``--today``/``SUZENT_TODAY``/``today =``) is its old name: a date, read as
    ``now`` at that day's 00:00 UTC; ``now`` wins over it. ``[dream]`` is kept raw and validated by the dream
    (:func:`dream_config`).

    Home: :func:`resolve_home`. Relative paths in config.toml and path variables are relative to the home. Only
    what every command needs (paths, clock, lock timeout) is validated here; the extractor and index settings are
    validated by the stage that uses them, so a bad one can never stop a capture. Raises :class:`ConfigInvalid`
    with a one-line message.

    ``lenient`` (``capture`` and ``config``): a wrong-typed value of a setting a capture does not need (anything
    but the paths and the clock, see :data:`CAPTURE_NEEDS`) goes to ``config_errors`` with its default in its place,
    so capture warns and writes; every other command resolves strictly and refuses with the same message.
    """
    env = os.environ if env is None else env
    home_path, home_origin = resolve_home(home, env)
    if home_path.exists() and not home_path.is_dir():
        raise ConfigInvalid(f"home {home_path} exists and is not a directory")
    cfg_path = home_path / "config.toml"
    cfg = _load_file(cfg_path)
    r = _Resolver(env, cfg, cfg_path, lenient)
    r.origins["home"] = home_origin
    flags = {"memory_dir": memory_dir, "vault_dir": vault_dir, "index_dir": index_dir, "now": now,
             "embedder": embedder, "extractor": extractor}
    values: dict[str, Any] = {}
    for row in file_keys():
        if row.check == "dream":
            continue
        raw, label, by_old_name = r.pick(row, flags.get(row.field), today if row.key == "now" else None)
        values[row.field] = _resolved(r, row, raw, label, by_old_name, home_path)
    now_value = values.pop("now")
    paths = Paths(home=home_path, **{f: values.pop(f) for f in ("memory_dir", "vault_dir", "index_dir")})
    return Settings(
        paths=paths,
        today=(now_value or dt.datetime.now(dt.UTC)).date(),
        now=now_value,
        dream=dict(r.table("dream")),
        config_errors=tuple(r.problems + unknown_keys(cfg, cfg_path)),
        origins=r.origins,
        **values,
    )


def _resolved(r: _Resolver, row: Setting, raw: Any, label: str, by_old_name: bool, home: Path) -> Any:
    """One picked value as :class:`Settings` holds it: a path made absolute, the clock parsed (by its old name
    ``today``: a date only, as it always was), a ``resolve`` row checked; ``use`` rows are kept as given."""
    if row.kind == "path":
        if not str(raw).strip():
            raise ConfigInvalid(f"{row.name} is empty")
        p = Path(raw).expanduser()
        return (p if p.is_absolute() else home / p).absolute()
    if row.kind == "clock":
        if raw in (None, ""):
            return None
        if by_old_name:
            day = parse_date(raw, label)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
        return parse_instant(raw, label)
    if row.check == "resolve":
        try:
            return check_value(row, raw, row.key)
        except ConfigInvalid as exc:
            r.refuse(row.field, str(exc))
            return row.default
    if row.kind == "string":
        return str(raw)
    if row.kind == "bool" and isinstance(raw, str):  # from the environment: a word, kept as given when it is none
        return BOOL_WORDS.get(raw.strip().lower(), raw)
    return raw


def unknown_keys(cfg: dict, cfg_path: Path) -> list[str]:
    """One message per key or table of config.toml that :data:`KNOWN_KEYS` does not hold (a typo, most likely)."""
    problems = [f"{cfg_path}: unknown key or table {key!r} (known: {', '.join(KNOWN_KEYS[None])})"
                for key in cfg if key not in KNOWN_KEYS[None]]
    for table, keys in KNOWN_KEYS.items():
        if table is not None and isinstance(cfg.get(table), dict):
            problems += [f"{cfg_path}: unknown key {table}.{key} (known: {', '.join(keys)})"
                         for key in cfg[table] if key not in keys]
    return problems


# --- the dream's knobs ------------------------------------------------------------------------------------------

def dream_keys() -> tuple[str, ...]:
    """The keys ``[dream]`` of config.toml may hold (the :class:`DreamConfig` fields)."""
    return tuple(s.name for s in DREAM_ROWS)


def dream_config(settings: Settings, **overrides: Any) -> DreamConfig:
    """``[dream]`` of config.toml with ``overrides`` (flags, by field name; None = not given) on top, validated.

    Raises :class:`ConfigInvalid` (one line, naming the key or flag) for an unknown key or a bad value.
    """
    rows = {s.name: s for s in DREAM_ROWS}
    values: dict[str, Any] = {}
    for name, value in dict(settings.dream).items():
        if name not in rows:
            raise ConfigInvalid(f"{settings.paths.config_file}: unknown key dream.{name} (known: {', '.join(rows)})")
        values[name] = check_value(rows[name], value, f"{settings.paths.config_file}: dream.{name}")
    for name, value in overrides.items():
        if value is not None:
            values[name] = check_value(rows[name], value, rows[name].flag_label())
    return replace(dream_defaults(settings), **values)


LOCAL_DREAM_TIMEOUT = 3600.0
"""``dream.timeout_seconds`` when not set and the claude stages point at a local server (:func:`is_local_url`)."""


def dream_defaults(settings: Settings) -> DreamConfig:
    """The dream's defaults for ``settings``: the table's, but a run may take :data:`LOCAL_DREAM_TIMEOUT` seconds
    when ``claude.base_url`` is a local server (a slow local model; set ``dream.timeout_seconds`` to choose)."""
    if is_local_url(settings.anthropic_base_url):
        return DreamConfig(timeout_seconds=LOCAL_DREAM_TIMEOUT)
    return DreamConfig()


def check_engine(settings: Settings, config: DreamConfig) -> str:
    """The engine a run would use, checked now rather than when a run comes due: ``claude`` without an API key
    for a remote server, or with a ``claude.timeout``/``claude.max_retries`` out of range, raises
    :class:`ConfigInvalid`."""
    name = config.engine_for(settings)
    if name == "claude" and not settings.claude_usable:
        raise missing_key("the claude dream engine", '--engine offline (or dream.engine = "offline")',
                          remote=masked_url(settings.anthropic_base_url))
    if name == "claude":
        for key in ("claude.timeout", "claude.max_retries"):
            row = setting(key)
            if getattr(settings, row.field) is not None:
                check_value(row, getattr(settings, row.field), key)
    return name


# --- what the table generates for people: config show, the template, the docs ----------------------------------

def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal (``true``, ``30.0``, ``"notebook"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def is_local_url(url: str | None) -> bool:
    """Whether ``url`` names a server on this machine: an ``http``/``https`` URL whose host is ``localhost`` (or a
    name under ``.localhost``) or a loopback address (``127.0.0.0/8``, ``::1``). Such a server needs no API key
    (Ollama, llama-server). Not set, unparsable, or any other host (a LAN address included: the traffic leaves
    the machine): False."""
    if not url:
        return False
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(str(url).strip())
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def masked_url(url: str | None) -> str | None:
    """``url`` without any ``user:password@`` part (a base URL may carry credentials)."""
    return _masked_url(url)


def _masked_url(url: str | None) -> str | None:
    """``url`` without any ``user:password@`` part (a base URL may carry credentials)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc="***@" + host + (f":{parts.port}" if parts.port else "")))


def _shown(row: Setting, settings: Settings) -> Any:
    """The effective value of a non-dream ``row`` as ``config show`` prints it (a path as text, the API key as
    ``"set"``/None, a URL without credentials)."""
    if row.kind == "path":
        return str(getattr(settings.paths, row.field))
    value = getattr(settings, row.field)
    if row.kind == "clock":
        return value.isoformat(timespec="seconds") if value else None
    if row.kind == "secret":
        return "set" if value else None
    if row.kind == "url":
        return _masked_url(value)
    return value


def _dream_settings(settings: Settings) -> tuple[dict[str, tuple[Any, str]], list[str]]:
    """Each ``[dream]`` knob as ``(value, origin)`` in :func:`dream_config`'s terms (its defaults, then the
    ``[dream]`` table); problems (an unknown key, a bad value) are collected, not raised."""
    raw = dict(settings.dream)
    problems: list[str] = []
    values: dict[str, tuple[Any, str]] = {}
    defaults = dream_defaults(settings)
    for row in DREAM_ROWS:
        if row.name not in raw:
            values[row.name] = (getattr(defaults, row.name), "default")
            continue
        try:  # one key at a time, so one bad value does not hide the others
            value = getattr(dream_config(replace(settings, dream={row.name: raw[row.name]})), row.name)
        except ConfigInvalid as exc:
            problems.append(str(exc))
            value = raw[row.name]
        values[row.name] = (value, "file")
    for name in raw:
        if name not in values:
            try:
                dream_config(replace(settings, dream={name: raw[name]}))
            except ConfigInvalid as exc:
                problems.append(str(exc))
    return values, problems


def effective_config(settings: Settings) -> dict[str, Any]:
    """Every row of :data:`SETTINGS` with its effective value and origin, as ``config show --json`` prints it::

        {"config_file": str, "exists": bool, "settings": {key: {"value": …, "origin": …}}, "problems": [str]}

    ``key`` is spelled as in config.toml (``index.embedder``, ``dream.min_facts``; ``home`` is the directory that
    holds the file), in table order. ``origin`` is ``default``, ``file:<config path>``, ``env:NAME`` or ``flag``.
    The API key is never shown: its value is ``"set"`` or null. ``problems`` lists the config errors and the
    values the stage using them would refuse.
    """
    cfg = settings.paths.config_file
    problems = list(settings.config_errors)
    dream, dream_problems = _dream_settings(settings)
    values: dict[str, tuple[Any, str]] = {}
    for row in SETTINGS:
        if row.check == "dream":
            values[row.key] = dream[row.name]
            continue
        values[row.key] = (_shown(row, settings), settings.origins.get(row.field) or "default")
        if row.check == "use" and row.kind in ("whole", "number", "seconds", "choice", "bool") and (
                getattr(settings, row.field) is not None):
            try:
                check_value(row, getattr(settings, row.field), row.key)
            except ConfigInvalid as exc:
                problems.append(str(exc))
    problems += dream_problems
    return {
        "config_file": str(cfg),
        "exists": cfg.is_file(),
        "settings": {key: {"value": value, "origin": f"file:{cfg}" if origin == "file" else origin}
                     for key, (value, origin) in values.items()},
        "problems": problems,
    }


def type_doc(row: Setting) -> str:
    """The type of ``row`` in words (docs/configuration.md)."""
    if row.type_doc:
        return row.type_doc
    if row.kind == "choice":
        return ", ".join(f'`"{c}"`' for c in row.choices[:-1]) + f' or `"{row.choices[-1]}"`'
    if row.kind == "bool":
        return "`true` or `false`"
    if row.kind in ("whole", "seconds", "number") and row.limits:
        low, high = row.limits
        return f"{'whole number ' if row.kind == 'whole' else 'seconds, ' if row.kind == 'seconds' else ''}{low:g}..{high:g}"
    return {"path": "path", "secret": "string", "string": "string"}.get(row.kind, row.kind)


def default_doc(row: Setting) -> str:
    """The default of ``row``: a TOML literal in backticks, or words for one that is no literal."""
    return row.default_doc or f"`{toml_literal(row.default)}`"


def sources_doc(row: Setting) -> str:
    """Where else ``row`` can be set: ``SUZENT_X`` (`--flag`, `dream --flag`), and its old names."""
    env = ", ".join(f"`{e}`" for e in row.env)
    flags = ", ".join(f"`{f}`" for f in row.flags) or ("no flag" if row.table == "dream" else "")
    text = f"{env} ({flags})" if env and flags else env or f"({flags})"
    old = OLD_NAMES.get(row.key)
    return text + (f"; old name `{old[0]}` (`{old[1]}`, `{old[2]}`): a date" if old else "")


def config_template() -> str:
    """The commented ``config.toml`` ``suzent init`` writes: every key of :data:`SETTINGS` with its default (or an
    example), its one-line doc, its variable and root flag. Uncommented, it is a valid config of the defaults."""
    lines = [
        "# suzent configuration. Every key is optional; the values shown are the defaults (now and the claude keys:",
        "# examples). Precedence: command-line flag > environment variable > this file > default.",
        "# Each key is documented in docs/configuration.md; `suzent config show` prints the effective value of every",
        "# key and where it came from. Relative paths are relative to this file's directory (the suzent home).",
        "# An unknown key is an error. Top-level keys must come before the first [table].",
        "",
    ]
    table: str | None = None
    for row in file_keys():
        if row.table != table:
            table = row.table
            head = f"# [{table}]"
            lines += ["", head.ljust(40) + f" # {TABLE_DOCS[table]}" if table in TABLE_DOCS else head]
        value = row.example or toml_literal(row.default)
        choices = " | ".join(row.choices) + "; " if row.choices else ""
        where = ", ".join(row.env + tuple(f for f in row.flags if f.startswith("--")))
        lines.append(f"# {row.name} = {value}".ljust(40) + f" # {choices}{row.doc.rstrip('.')}"
                     + (f"  ({where})" if where else ""))
    return "\n".join(lines) + "\n"
