"""Regenerate completions/ (bash, zsh, fish) and man/ (suzent.1 + one page per subcommand) from the typer app.

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


def man_pages(target: Path) -> None:
    import click_man.core
    import typer.main

    from suzent_cli import __version__
    from suzent_cli.cli.app import app

    click_man.core.write_man_pages("suzent", typer.main.get_command(app), version=__version__,
                                   target_dir=str(target), date=DATE)


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
