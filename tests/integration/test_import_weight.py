"""Import weight, in a fresh interpreter (a module imported by an earlier test in this process would hide a
regression): the Claude extractor and the Claude dream engine import ``anthropic`` only when they call the API.
The capture fast path has its own probes in test_capture_fast.py."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def test_ready_facts_and_importing_the_module_never_import_anthropic(tmp_path):
    code = ("import sys\n"
            "from suzent_cli.capture import parse_fact_lines, write_facts\n"
            "from suzent_cli.config import resolve_settings\n"
            f"s = resolve_settings(home={str(tmp_path)!r}, env={{}})\n"
            "write_facts(s, parse_fact_lines('[preference] Likes tea'), time='10:00')\n"
            "import suzent_cli.capture.extract.claude\n"
            "assert 'anthropic' not in sys.modules, 'anthropic imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_importing_the_engine_does_not_import_anthropic():
    code = ("import sys, suzent_cli.dream.claude_agent, suzent_cli.dream.vault_tools\n"
            "assert 'anthropic' not in sys.modules, 'anthropic imported'\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
