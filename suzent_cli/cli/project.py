"""``suzent project``: the project a directory belongs to, and why (:mod:`suzent_cli.scope`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, out


@app.command("project")
def project_cmd(
    ctx: typer.Context,
    path: Optional[Path] = typer.Argument(None, metavar="[PATH]", help="A directory (default: the current one)."),
    list_: bool = typer.Option(False, "--list", help="List the projects with captured facts instead: key, name "
                                                     "(what --project NAME takes) and how many facts."),
    json_out: bool = options.json_out("Print JSON: key, name, why, root (--list: a list of key, name, facts)."),
) -> None:
    """Show the project key of a directory and why: its git remote, else its repository, else the directory.

    Every clone of a repository shares the key of its origin remote (github.com/o/r); every worktree and subfolder
    of a repository without one shares its repository's. Reads only; runs git.

    Example: suzent project ~/src/tax-client --json

    Example: suzent project --list
    """
    from rich.markup import escape

    if list_:
        from suzent_cli.errors import InputInvalid

        if path is not None:
            raise InputInvalid("--list lists every project: give no PATH")
        _list(settings_of(ctx), json_out)
        return
    from suzent_cli.cli.app import environ
    from suzent_cli.cli.capture_run import working_dir
    from suzent_cli.scope import identify

    if path is not None and not path.is_dir():
        from suzent_cli.errors import InputInvalid

        # a typo (~/src/tax-clinet) would otherwise show a key of its own, dir:<the typo>, with exit 0
        raise InputInvalid(f"{path} is not a directory (give a folder of the project, or none for the current one)")
    found = identify(path if path is not None else (working_dir(environ()) or Path.cwd()))
    if json_out:
        emit_json(found.as_dict())
        return
    for label, value in (("key", found.key), ("name", found.name), ("why", found.why), ("root", str(found.root))):
        out.print(f"{label:5} {escape(value)}")


def _list(settings, json_out: bool) -> None:
    """The known projects (:func:`suzent_cli.projects.known_projects`): one line each, or JSON."""
    from rich.markup import escape

    from suzent_cli.projects import known_projects
    from suzent_cli.scope import key_name

    known = known_projects(settings)
    rows = [{"key": key, "name": key_name(key), "facts": n} for key, n in known.items()]
    if json_out:
        emit_json({"projects": rows})
        return
    if not rows:
        out.print("no project has captured facts yet (facts about the person are recalled everywhere)")
        return
    for row in rows:
        out.print(f"{row['facts']:6}  {escape(row['name'])}  {escape(row['key'])}")
