"""``suzent project``: the project a directory belongs to, and why (:mod:`suzent_cli.scope`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app
from suzent_cli.cli.render import emit_json, out


@app.command("project")
def project_cmd(
    path: Optional[Path] = typer.Argument(None, metavar="[PATH]", help="A directory (default: the current one)."),
    json_out: bool = options.json_out("Print JSON: key, name, why, root."),
) -> None:
    """Show the project key of a directory and why: its git remote, else its repository, else the directory.

    Every clone of a repository shares the key of its origin remote (github.com/o/r); every worktree and subfolder
    of a repository without one shares its repository's. Reads only; runs git.

    Example: suzent project ~/src/tax-client --json
    """
    from rich.markup import escape

    from suzent_cli.scope import identify

    found = identify(path if path is not None else Path.cwd())
    if json_out:
        emit_json(found.as_dict())
        return
    for label, value in (("key", found.key), ("name", found.name), ("why", found.why), ("root", str(found.root))):
        out.print(f"{label:5} {escape(value)}")
