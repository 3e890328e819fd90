"""``suzent config show`` and ``suzent config path``: the effective configuration and where each value came from."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import typer

from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out

config_app = typer.Typer(
    name="config",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Show the effective configuration (<home>/config.toml, environment, flags, defaults).\n\n"
         "Example: suzent config show --json",
)
app.add_typer(config_app, name="config")


def _origin(raw: str | None, config_file) -> str:
    """``default``, ``flag``, ``env:NAME`` or ``file:<config path>``."""
    if raw == "file":
        return f"file:{config_file}"
    return raw or "default"


def _masked_url(url: str | None) -> str | None:
    """``url`` without any ``user:password@`` part (a base URL may carry credentials)."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit  # noqa: PLC0415

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc="***@" + host + (f":{parts.port}" if parts.port else "")))


def _dream_settings(settings) -> tuple[dict[str, tuple[Any, str]], list[str]]:
    """Each ``[dream]`` knob as ``(value, origin)`` in :func:`suzent_cli.dream.config.dream_config`'s terms (its
    defaults, then the ``[dream]`` table); problems (an unknown key, a bad value) are collected, not raised."""
    from suzent_cli.dream.config import DreamConfig, dream_config  # noqa: PLC0415
    from suzent_cli.errors import ConfigInvalid  # noqa: PLC0415

    raw = dict(settings.dream)
    problems: list[str] = []
    defaults = DreamConfig()
    values: dict[str, tuple[Any, str]] = {}
    for f in dataclasses.fields(DreamConfig):
        if f.name not in raw:
            values[f.name] = (getattr(defaults, f.name), "default")
            continue
        try:  # one key at a time, so one bad value does not hide the others
            value = getattr(dream_config(dataclasses.replace(settings, dream={f.name: raw[f.name]})), f.name)
        except ConfigInvalid as exc:
            problems.append(str(exc))
            value = raw[f.name]
        values[f.name] = (value, "file")
    for name in raw:
        if name not in values:
            try:
                dream_config(dataclasses.replace(settings, dream={name: raw[name]}))
            except ConfigInvalid as exc:
                problems.append(str(exc))
    return values, problems


def effective_config(settings) -> dict[str, Any]:
    """Every effective setting with its value and origin, as ``config show --json`` prints it::

        {"config_file": str, "exists": bool, "settings": {key: {"value": …, "origin": …}}, "problems": [str]}

    ``key`` is spelled as in config.toml (``index.embedder``, ``dream.min_facts``; ``home`` is the directory that
    holds the file). ``origin`` is ``default``, ``file:<config path>``, ``env:NAME`` or ``flag``. The API key is never
    shown: its value is ``"set"`` or null. ``problems`` lists values the stage using them would refuse.
    """
    from suzent_cli.config import EXTRACTORS, context_window_of  # noqa: PLC0415
    from suzent_cli.errors import ConfigInvalid  # noqa: PLC0415

    cfg = settings.paths.config_file
    o = settings.origins
    p = settings.paths
    values: dict[str, tuple[Any, str | None]] = {
        "home": (str(p.home), o.get("home")),
        "paths.memory_dir": (str(p.memory_dir), o.get("memory_dir")),
        "paths.vault_dir": (str(p.vault_dir), o.get("vault_dir")),
        "paths.index_dir": (str(p.index_dir), o.get("index_dir")),
        "today": (settings.today.isoformat(), o.get("today")),
        "now": (settings.now.isoformat(timespec="seconds") if settings.now else None, o.get("now")),
        "lock_timeout": (settings.lock_timeout, o.get("lock_timeout")),
        "user_id": (settings.user_id, o.get("user_id")),
        "index.embedder": (settings.embedder, o.get("embedder")),
        "index.context_window": (settings.context_window, o.get("context_window")),
        "capture.extractor": (settings.extractor, o.get("extractor")),
        "claude.model": (settings.claude_model, o.get("claude_model")),
        "claude.api_key": ("set" if settings.anthropic_api_key else None, o.get("anthropic_api_key")),
        "claude.base_url": (_masked_url(settings.anthropic_base_url), o.get("anthropic_base_url")),
    }
    problems = list(settings.config_errors)
    try:
        context_window_of(settings)
    except ConfigInvalid as exc:
        problems.append(str(exc))
    if str(settings.extractor).strip().lower() not in EXTRACTORS:
        problems.append(f"capture.extractor must be one of {', '.join(EXTRACTORS)}, got {settings.extractor!r}")
    dream, dream_problems = _dream_settings(settings)
    problems += dream_problems
    for name, (value, origin) in dream.items():
        values[f"dream.{name}"] = (value, origin)
    return {
        "config_file": str(cfg),
        "exists": cfg.is_file(),
        "settings": {key: {"value": value, "origin": _origin(origin, cfg)} for key, (value, origin) in values.items()},
        "problems": problems,
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _display(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@config_app.command("show")
def show_cmd(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON: "
             "{config_file, exists, settings: {key: {value, origin}}, problems}.")) -> None:
    """Print every effective setting with its value and origin (default, file, env or flag).

    Origins read default, file:<path of config.toml>, env:NAME or flag. The API key is never printed, only
    whether it is set.

    On a terminal a table; piped, one `key = value  # origin` line per setting. Exit 2 (after printing) when
    a value is one the stage using it would refuse.

    Example: suzent config show --json
    """
    from suzent_cli.errors import ConfigInvalid  # noqa: PLC0415

    data = effective_config(settings_of(ctx))
    if json_out:
        emit_json(data)
    elif out.is_terminal:
        from rich.table import Table  # noqa: PLC0415

        table = Table(title=escape(f"{data['config_file']} ({'exists' if data['exists'] else 'missing: all defaults'})"),
                      show_header=True, header_style="bold", expand=False)
        for col in ("key", "value", "origin"):
            table.add_column(col, overflow="fold")
        for key, item in data["settings"].items():
            table.add_row(escape(key), escape(_display(item["value"])), escape(item["origin"]))
        out.print(table)
    else:
        lines = [f"# config file: {data['config_file']} ({'exists' if data['exists'] else 'missing'})"]
        for key, item in data["settings"].items():
            value = item["value"]
            if value is None or key == "claude.api_key":  # a comment: never a value to paste into config.toml
                lines.append(f"# {key} = ({'set, not shown' if value else 'not set'})  # {item['origin']}")
            else:
                lines.append(f"{key} = {_toml_value(value)}  # {item['origin']}")
        typer.echo("\n".join(lines))
    if data["problems"]:
        more = f" (and {len(data['problems']) - 1} more)" if len(data["problems"]) > 1 else ""
        raise ConfigInvalid(data["problems"][0] + more)


@config_app.command("path")
def path_cmd(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON: {config_file, exists}.")) -> None:
    """Print the path of config.toml (<home>/config.toml; it may not exist yet: `suzent init` writes a commented one).

    Example: ${EDITOR:-vi} "$(suzent config path)"
    """
    cfg = settings_of(ctx).paths.config_file
    if json_out:
        emit_json({"config_file": str(cfg), "exists": cfg.is_file()})
    else:
        typer.echo(str(cfg))
