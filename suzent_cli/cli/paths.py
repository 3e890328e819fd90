"""``suzent paths``: where every tier lives and where each setting came from."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, out


@app.command("paths")
def paths_cmd(ctx: typer.Context, json_out: bool = options.json_out("Print JSON.")) -> None:
    """Print where every tier lives and where each setting came from.

    Example: SUZENT_HOME=/tmp/mem suzent paths --json
    """
    s = settings_of(ctx)
    data = {"home": s.paths.home, "memory_dir": s.paths.memory_dir, "archive_dir": s.paths.archive_dir,
            "vault_dir": s.paths.vault_dir, "state_dir": s.paths.state_dir, "index_dir": s.paths.index_dir,
            "config_file": s.paths.config_file, "today": s.today.isoformat(), "embedder": s.embedder,
            "extractor": s.extractor}
    if json_out:
        emit_json({k: str(v) for k, v in data.items()} | {"origins": dict(s.origins)})
        return
    for k, v in data.items():
        origin = s.origins.get(k, "")
        out.print(f"{k:12} {v}" + (f"  ({origin})" if origin else ""))
