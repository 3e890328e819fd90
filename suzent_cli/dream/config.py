"""The dream's knobs: ``[dream]`` in config.toml, overridden by ``suzent dream`` flags, validated here.

Defaults are the original app's (compat reference §0): tick interval 1800 s, at least 24 h and 20 new facts
between runs, 14 days per batch, 3 retries before a batch is skipped, 600 s per engine run, lint every 7 days.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from suzent_cli.config import Settings
from suzent_cli.errors import ConfigInvalid

ENGINES = ("auto", "rules", "claude")


@dataclass(frozen=True)
class DreamConfig:
    """Validated dream settings. Times are seconds unless the name says hours or days."""

    interval_seconds: float = 1800.0
    min_hours: float = 24.0
    min_facts: int = 20
    max_days: int = 14
    max_retries: int = 3
    timeout_seconds: float = 600.0
    max_turns: int = 60
    lint_enabled: bool = True
    lint_min_days: float = 7.0
    engine: str = "auto"

    def engine_for(self, settings: Settings) -> str:
        """``rules`` or ``claude``: ``auto`` means claude when an API key is configured, else rules."""
        if self.engine != "auto":
            return self.engine
        return "claude" if settings.claude_configured else "rules"


_LIMITS: dict[str, tuple[float, float]] = {
    "interval_seconds": (1, 7 * 86400), "min_hours": (0, 24 * 365), "min_facts": (0, 10**9),
    "max_days": (1, 10**5), "max_retries": (1, 1000), "timeout_seconds": (1, 86400), "max_turns": (1, 10**4),
    "lint_min_days": (0, 3650),
}


FLAGS = {"interval_seconds": "--interval", "timeout_seconds": "--timeout", "lint_enabled": "--no-lint"}


def _coerce(name: str, kind: type, value: Any, label: str) -> Any:
    """``value`` as ``kind`` within its limits; ``label`` names it in the error (a flag or a config.toml key)."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ConfigInvalid(f"{label} must be true or false, got {value!r}")
    if kind is str:
        text = str(value).strip().lower()
        if text not in ENGINES:
            raise ConfigInvalid(f"{label} must be one of {', '.join(ENGINES)}, got {value!r}")
        return text
    try:
        if isinstance(value, bool):
            raise ValueError
        number = kind(value)
        if kind is int and isinstance(value, float) and value != int(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigInvalid(f"{label} must be a {'whole number' if kind is int else 'number'}, got {value!r}") from None
    low, high = _LIMITS[name]
    if not low <= number <= high:
        raise ConfigInvalid(f"{label} must be between {low:g} and {high:g}, got {value!r}")
    return number


def dream_keys() -> tuple[str, ...]:
    """The keys ``[dream]`` of config.toml may hold (the :class:`DreamConfig` fields)."""
    return tuple(f.name for f in fields(DreamConfig))


def dream_config(settings: Settings, **overrides: Any) -> DreamConfig:
    """``[dream]`` of config.toml with ``overrides`` (flags; None = not given) on top, validated.

    Raises :class:`ConfigInvalid` (one line, naming the key) for an unknown key or a bad value.
    """
    kinds = {f.name: (f.type if isinstance(f.type, type) else {"float": float, "int": int, "bool": bool,
                                                                 "str": str}[f.type]) for f in fields(DreamConfig)}
    config = DreamConfig()
    values: dict[str, Any] = {}
    for name, value in dict(settings.dream).items():
        if name not in kinds:
            raise ConfigInvalid(f"{settings.paths.config_file}: unknown key dream.{name} (known: {', '.join(kinds)})")
        values[name] = _coerce(name, kinds[name], value, f"{settings.paths.config_file}: dream.{name}")
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, kinds[name], value, FLAGS.get(name, "--" + name.replace("_", "-")))
    return replace(config, **values)


def check_engine(settings: Settings, config: DreamConfig) -> str:
    """The engine a run would use, checked now rather than when a run comes due: ``claude`` without an API key
    raises :class:`ConfigInvalid`."""
    name = config.engine_for(settings)
    if name == "claude" and not settings.claude_configured:
        raise ConfigInvalid("the claude dream engine needs ANTHROPIC_API_KEY; set it, or use --engine rules "
                            "(or dream.engine = \"rules\")")
    return name


def as_dict(config: DreamConfig) -> Mapping[str, Any]:
    return {f.name: getattr(config, f.name) for f in fields(config)}
