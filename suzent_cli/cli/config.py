"""``suzent config show`` and ``suzent config path``: the effective configuration and where each value came from."""

from __future__ import annotations

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
    from suzent_cli.config import effective_config, toml_literal
    from suzent_cli.errors import ConfigInvalid

    data = effective_config(settings_of(ctx))
    if json_out:
        emit_json(data)
    elif out.is_terminal:
        from rich.table import Table

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
                lines.append(f"{key} = {toml_literal(value)}  # {item['origin']}")
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
