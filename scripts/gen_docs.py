"""Regenerate completions/ (bash, zsh, fish), man/ (suzent.1 + one page per subcommand, e.g. suzent-config-show.1)
and docs/cli.md (every command's --help, the exit-code table) from the typer app; every man page's EXIT STATUS and
the table in docs/cli.md are suzent_cli.errors' table.

Run by `make docs`; tests/test_docs.py fails when the committed files are stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATE = "2026-11-29"  # fixed, so regeneration is byte-stable; bump on release


def completion(shell: str) -> str:
    env = dict(os.environ, _SUZENT_COMPLETE=f"source_{shell}")
    return subprocess.run([sys.executable, "-m", "suzent_cli"], env=env, capture_output=True, text=True,
                          check=True, cwd=REPO).stdout


def exit_status() -> list[tuple[str, str]]:
    """The one exit-code table (suzent_cli.errors), as man-page rows."""
    from suzent_cli.errors import EXIT_CODES

    return [(str(code), f"{name}: {meaning}") for code, name, meaning in EXIT_CODES]


ENVIRONMENT = [
    ("SUZENT_HOME, SUZENT_DATA_DIR", "the data directory (default ~/.suzent)"),
    ("SUZENT_MEMORY_DIR, SUZENT_VAULT_DIR, SUZENT_INDEX_DIR", "where each tier lives"),
    ("SUZENT_TODAY", "clock override YYYY-MM-DD for every date rule"),
    ("SUZENT_NOW", "clock override YYYY-MM-DDTHH:MM for time rules (the dream's gate)"),
    ("SUZENT_EMBEDDER, SUZENT_CONTEXT_WINDOW, SUZENT_EXTRACTOR, SUZENT_LOCK_TIMEOUT, SUZENT_USER_ID, "
     "SUZENT_CLAUDE_MODEL", "override config.toml (suzent config show prints each value and its origin)"),
    ("ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL", "enable the claude extractor, on any Anthropic-compatible server"),
    ("NO_COLOR", "plain output"),
    ("SUZENT_DEBUG", "show tracebacks instead of one-line errors"),
]


def _roff(text: str) -> str:
    out = text.replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in out.splitlines())


def _page(title: str, name: str, command, parent: str | None, version: str) -> str:
    """One man page (roff) for a typer/click command: name, synopsis, description, options, exit status."""
    import typer._click as click  # typer vendors click; its commands are not the PyPI click's

    ctx = click.Context(command, info_name=name)
    help_text = (command.help or "").strip()
    summary = help_text.splitlines()[0] if help_text else name
    lines = [f'.TH "{title.upper()}" "1" "{DATE}" "suzent {version}" "suzent manual"', ".SH NAME",
             f"{_roff(title)} \\- {_roff(summary)}", ".SH SYNOPSIS", f".B {_roff(name)}",
             _roff(" ".join(command.collect_usage_pieces(ctx))), ".SH DESCRIPTION"]
    for para in help_text.split("\n\n"):
        lines += [".PP", _roff(" ".join(para.split()))]
    subcommands = getattr(command, "commands", {})
    if subcommands:
        lines.append(".SH COMMANDS")
        for sub_name, sub in sorted(subcommands.items()):
            first = (sub.help or "").strip().splitlines()[0] if sub.help else ""
            lines += [".TP", f".B {_roff(sub_name)}", _roff(first), f"See \\fB{_roff(title)}\\-{_roff(sub_name)}\\fR(1)."]
    records = [p.get_help_record(ctx) for p in command.get_params(ctx)]
    if any(records):
        lines.append(".SH OPTIONS")
        for record in records:
            if record:
                lines += [".TP", f".B {_roff(record[0])}", _roff(record[1])]
    lines.append(".SH EXIT STATUS")
    for code, meaning in exit_status():
        lines += [".TP", f".B {code}", _roff(meaning)]
    if parent is None:
        lines.append(".SH ENVIRONMENT")
        for var, meaning in ENVIRONMENT:
            lines += [".TP", f".B {_roff(var)}", _roff(meaning)]
        lines += [".SH FILES", ".TP", ".B ~/.suzent/config.toml", "optional configuration, every key documented in docs/configuration.md; "
                  "\\fBsuzent config show\\fR prints the effective value of each and where it came from"]
    else:
        lines += [".SH SEE ALSO", "\\fBsuzent\\fR(1)"]
    return "\n".join(lines) + "\n"


def man_pages(target: Path) -> None:
    """Write ``suzent.1`` and ``suzent-<command>.1`` for every subcommand into ``target``."""
    import typer.main

    from suzent_cli import __version__
    from suzent_cli.cli.app import app

    root = typer.main.get_command(app)
    target.mkdir(parents=True, exist_ok=True)
    (target / "suzent.1").write_text(_page("suzent", "suzent", root, None, __version__), encoding="utf-8")

    def write(command, path: tuple[str, ...]) -> None:  # a group (suzent config) gets a page per subcommand too
        for name, sub in command.commands.items():
            names = (*path, name)
            text = _page("suzent-" + "-".join(names), "suzent " + " ".join(names), sub, "suzent", __version__)
            (target / f"suzent-{'-'.join(names)}.1").write_text(text, encoding="utf-8")
            if getattr(sub, "commands", None):
                write(sub, names)

    write(root, ())


_CODE_SPAN = re.compile(r"(`[^`]*`)")


def _md(text: str) -> str:
    """``text`` as Markdown prose: ``\\``, ``<``, ``>`` and ``*`` escaped outside `code spans`, so ``<home>`` or
    ``**/*.md`` in a help text shows as written instead of as HTML or emphasis."""
    parts = _CODE_SPAN.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = (parts[i].replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
                    .replace("*", "\\*"))
    return "".join(parts)


def _help_md(help_text: str) -> list[str]:
    """A command's help text as Markdown: one paragraph per help paragraph; an ``Example: CMD`` or
    ``Example (what): CMD`` paragraph becomes its label and a ``sh`` code block holding CMD."""
    out: list[str] = []
    for para in help_text.strip().split("\n\n"):
        para = " ".join(para.split())
        m = re.match(r"^(Example(?: \([^)]*\))?):\s+(.*)$", para)
        if m:
            out += [f"{_md(m.group(1))}:", "", "```sh", m.group(2), "```", ""]
        else:
            out += [_md(para), ""]
    return out


def _command_md(name: str, command) -> list[str]:
    """One command's section of docs/cli.md: usage, help text, subcommands, options (what --help prints)."""
    import typer._click as click  # typer vendors click; its commands are not the PyPI click's

    ctx = click.Context(command, info_name=name)
    out = [f"## `{name}`", "", "```", f"{name} {' '.join(command.collect_usage_pieces(ctx))}".rstrip(), "```", ""]
    out += _help_md(command.help or "")
    subcommands = getattr(command, "commands", {})
    if subcommands:
        out += ["Commands:", ""]
        for sub_name, sub in sorted(subcommands.items()):
            first = " ".join((sub.help or "").strip().split("\n\n")[0].split())
            anchor = f"{name} {sub_name}".replace(" ", "-")
            out.append(f"- [`{sub_name}`](#{anchor}): {_md(first)}")
        out.append("")
    records = [r for r in (p.get_help_record(ctx) for p in command.get_params(ctx)) if r]
    if records:
        out += ["Options:", ""]
        out += [f"- `{opts}`: {_md(' '.join(help_.split()))}" if help_ else f"- `{opts}`" for opts, help_ in records]
        out.append("")
    return out


CLI_INTRO = """\
# Command-line reference

Generated from the typer app by `make docs` (`scripts/gen_docs.py`): every command's `--help`, and the exit-code
table of `{codes}`. Do not edit by hand; `tests/test_docs.py` fails when this file is stale.

Global options come before the command (`suzent --home DIR capture …`). Settings and their environment variables
are in [configuration.md](configuration.md).

## Output

Every command takes `--json` and then prints exactly one JSON document on stdout (`loop`: one line per pass), its
outcome included (`dream` idle, exit `4`, prints its decision); warnings go to stderr. An error is one `Error: …`
line on stderr and no JSON, except where the summary says why (`retire-legacy --apply` refused, `dry-run` with
live data changed: the JSON first). On a terminal, tables and progress bars are drawn with rich; piped, the output
is plain text (`recall`: one tab-separated line per hit; `config show`: `key = value  # origin` lines; `dry-run`:
the patch byte for byte), and a non-empty `NO_COLOR` turns colour off everywhere.

## Exit codes

One table for every command (`{codes}`; every man page's EXIT STATUS is generated from it too):

| code | name | meaning |
|---|---|---|
"""

CLI_AFTER_CODES = """
Agent hooks (`capture --from claude-code`, `recall --from claude-code`) are the exception: they never fail their
agent, so any error becomes one `suzent: …` warning on stderr and exit `0` (what could not be captured stays in
`.state/spool/`). See [hooks.md](hooks.md). What to do about each code: [operations.md](operations.md#when-a-command-fails).
"""


def cli_reference() -> str:
    """docs/cli.md: the intro, the exit-code table, then the root command and every command and subcommand, in
    the order ``suzent --help`` lists them."""
    import typer.main

    from suzent_cli import errors as codes
    from suzent_cli.cli.app import app

    root = typer.main.get_command(app)
    lines = [CLI_INTRO.format(codes=Path(codes.__file__).resolve().relative_to(REPO).as_posix()).rstrip("\n")]
    lines += [f"| `{code}` | {name} | {meaning} |" for code, name, meaning in codes.EXIT_CODES]
    lines += [CLI_AFTER_CODES.rstrip("\n"), ""]
    lines += _command_md("suzent", root)

    def walk(command, path: tuple[str, ...]) -> None:
        for name, sub in command.commands.items():
            names = (*path, name)
            lines.extend(_command_md("suzent " + " ".join(names), sub))
            if getattr(sub, "commands", None):
                walk(sub, names)

    walk(root, ())
    return "\n".join(lines).rstrip("\n") + "\n"


def generate(out: Path) -> dict[str, str]:
    """All generated files as ``{relative path: text}``, written under ``out``."""
    files: dict[str, str] = {}
    names = {"bash": "suzent.bash", "zsh": "_suzent", "fish": "suzent.fish"}
    for shell, name in names.items():
        files[f"completions/{name}"] = completion(shell)
    with tempfile.TemporaryDirectory() as tmp:
        man_pages(Path(tmp))
        for page in sorted(Path(tmp).glob("*.1")):
            files[f"man/{page.name}"] = page.read_text(encoding="utf-8")
    files["docs/cli.md"] = cli_reference()
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    return files


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))  # document this checkout's code, not whichever suzent_cli is installed
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    written = generate(target)
    print(f"wrote {len(written)} files under {target}")
