"""Regenerate completions/ (bash, zsh, fish) and man/ (suzent.1 + one page per subcommand, e.g. suzent-config-show.1)
from the typer app; every page's EXIT STATUS is suzent_cli.exit_codes' table.

Run by `make docs`; tests/test_docs.py fails when the committed files are stale.
"""

from __future__ import annotations

import os
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
    """The one exit-code table (suzent_cli.exit_codes), as man-page rows."""
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
        lines += [".SH FILES", ".TP", ".B ~/.suzent/config.toml", "optional configuration, every key documented in README.md; "
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
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    written = generate(target)
    print(f"wrote {len(written)} files under {target}")
