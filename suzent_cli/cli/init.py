"""``suzent init``: the data directory layout."""

from __future__ import annotations

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out, plural, warn


@app.command("init")
def init_cmd(ctx: typer.Context, json_out: bool = options.json_out("Print a JSON summary.")) -> None:
    """Create the data directory layout (idempotent; never overwrites a file), private to you.

    Folders are made 0700 and files 0600. A home (or a memory, vault or index folder outside it) that other users
    can read, such as one made before this rule under umask 022, gets one warning and is made private: the group
    and other permission bits of every folder and file of yours under it are removed (symlinks are not followed).

    Example: suzent --home ~/.suzent init
    """
    from suzent_cli.init import init  # the vault package: not loaded by every command's start-up

    settings = settings_of(ctx)
    result = init(settings)
    if json_out:
        warning = result.warning()
        emit_json({"home": str(settings.paths.home), "created": [str(p) for p in result.created],
                   "private": result.private_json(), "warnings": [warning] if warning else []})
        return
    if warning := result.warning():
        warn(warning)
    out.print(escape(f"suzent home {settings.paths.home}: {len(result.created)} created, no existing file rewritten"))
    for p in result.created:
        out.print(escape(f"  + {p}"))
    fixed = result.fixed
    if fixed is not None:
        out.print(escape(f"made private: {plural(fixed.folders, 'folder')} and {plural(fixed.files, 'file')} "
                         "(group and other permission bits removed)"))
        if fixed.left:
            more = f" and {fixed.more_left} more" if fixed.more_left else ""
            warn("not made private: " + "; ".join(f"{p} ({why})" for p, why in fixed.left) + more)
