"""The capture fast path stays fast: capturing ready fact lines (and ``suzent --help``) loads no heavy module.

Each check runs the real CLI in a fresh interpreter (a module imported by an earlier test in this process would
hide a regression), then looks at what that process had imported when it exited.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AUTOSTART_OFF

HEAVY = ("torch", "sentence_transformers", "transformers", "lancedb", "pyarrow", "anthropic")
TODAY = "2026-11-29"

_PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('SUZENT-MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['suzent'] + json.loads(sys.argv[1])\n"
    "from suzent_cli.cli.app import main\n"
    "raise SystemExit(main())\n"
)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUZENT_")}
    env.update(SUZENT_HOME=str(home), SUZENT_TODAY=TODAY, **AUTOSTART_OFF)
    return env


def _run_probe(home: Path, args: list[str], stdin: str | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], env=_env(home), input=stdin,
                          capture_output=True, text=True, timeout=60)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("SUZENT-MODULES ")]
    assert lines, f"probe printed no module list (rc {proc.returncode}): {proc.stderr}"
    return proc, set(json.loads(lines[-1].split(" ", 1)[1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def _log(home: Path) -> Path:
    return home / "sandbox" / "shared" / "memory" / "archive" / f"{TODAY}.md"


def test_capture_fact_lines_imports_no_heavy_module(tmp_path):
    proc, modules = _run_probe(tmp_path, ["capture", "--fact", "[preference] Prefers green tea `drink`",
                                          "--fact", "Standup moved to 9:30"])
    assert proc.returncode == 0, proc.stderr
    assert "captured 2 fact(s)" in proc.stdout
    text = _log(tmp_path).read_text(encoding="utf-8")
    assert "- [preference] Prefers green tea `drink`" in text and "- [general] Standup moved to 9:30" in text
    assert _heavy(modules) == []


def test_capture_facts_from_stdin_json_imports_no_heavy_module(tmp_path):
    proc, modules = _run_probe(tmp_path, ["capture", "--facts-from", "-", "--json", "--session", "s1"],
                               stdin="- [work] Ships on Fridays\n[health] Allergic to peanuts `food`\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[: proc.stdout.rindex("}") + 1])["captured"] == 2
    assert _heavy(modules) == []


def test_help_imports_no_heavy_module(tmp_path):
    proc, modules = _run_probe(tmp_path, ["--help"])
    assert proc.returncode == 0, proc.stderr
    assert "capture" in proc.stdout
    assert _heavy(modules) == []


def test_capture_does_not_import_pydantic(tmp_path):
    """typer coerces option values through pydantic unless suzent_cli.cli.app keeps plain options plain; pydantic
    is ~0.1 s of a ~0.25 s capture budget."""
    proc, modules = _run_probe(tmp_path, ["capture", "--fact", "[preference] Likes tea", "--time", "10:15"])
    assert proc.returncode == 0, proc.stderr
    assert "## 10:15 \u2014 cli" in _log(tmp_path).read_text(encoding="utf-8")
    assert "pydantic" not in modules


def test_plain_options_keep_typer_errors(tmp_path):
    """The pass-through coercion changes nothing visible: bad values still fail the same way."""
    proc, _ = _run_probe(tmp_path, ["capture", "--fact", "x", "--time", "25:00"])
    assert proc.returncode != 0 and "HH:MM" in proc.stderr
    proc, _ = _run_probe(tmp_path, ["capture", "--fact"])
    assert proc.returncode == 2 and "requires an argument" in proc.stderr


def test_console_script_capture_imports_no_heavy_module(tmp_path):
    """The installed ``suzent`` console script itself, observed with ``python -X importtime``."""
    script = Path(sys.executable).parent / "suzent"
    if not script.is_file():
        pytest.skip("console script not installed next to the interpreter")
    proc = subprocess.run([sys.executable, "-X", "importtime", str(script), "capture", "--fact", "[personal] Lives in Lyon"],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "- [personal] Lives in Lyon" in _log(tmp_path).read_text(encoding="utf-8")
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "suzent_cli.cli.capture_run" in imported  # answered by the fast path (issue 25): no typer, no rich
    assert _heavy(imported) == []
    assert not {m.split(".")[0] for m in imported} & {"typer", "rich", "click", "pydantic"}


_ENTRY_PROBE = _PROBE.replace("from suzent_cli.cli.app import main", "from suzent_cli.cli.fasthook import main")


@pytest.mark.parametrize("args", [["capture", "--fact", "[preference] Prefers green tea `drink`", "--fact", "x:y"],
                                  ["--now", "2026-11-29T10:00", "capture", "--json", "--fact", "ok", "--session", "s 1"]])
def test_entry_point_capture_imports_neither_typer_nor_rich(tmp_path, args):
    """The process entry point answers a plain ``capture --fact`` line without the CLI framework or rich (issue 25:
    they were half of its start-up); what it prints is checked against the typer path in
    tests/test_capture_paths.py."""
    proc = subprocess.run([sys.executable, "-c", _ENTRY_PROBE, json.dumps(args)], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("SUZENT-MODULES ")]
    assert lines, proc.stderr
    modules = {m.split(".")[0] for m in json.loads(lines[-1].split(" ", 1)[1])}
    assert proc.returncode in (0, 2), proc.stderr
    assert "captured" in proc.stdout
    assert not modules & {"typer", "rich", "click", "pydantic", *HEAVY}
