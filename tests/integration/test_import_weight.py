"""Import weight, in a fresh interpreter (a module imported by an earlier test in this process would hide a
regression): the Claude extractor and the Claude dream engine import ``anthropic`` only when they call the API.
The capture fast path has its own probes in test_capture_fast.py."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import AUTOSTART_OFF, REPO


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


def test_a_hook_answered_by_a_server_imports_no_framework_and_no_engine(tmp_path):
    """With a server answering on the home's socket (tests/fake_server.py), the recall and capture hooks are the
    fast path (suzent_cli.cli.fasthook): no CLI framework, no settings module, no search engine in the process."""
    import json

    home = tmp_path / "home"
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}})
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))},
           "SUZENT_HOME": str(home), "PYTHONPATH": str(REPO), **AUTOSTART_OFF}
    server = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_server.py"), str(home), output],
                              stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        assert server.stdout.readline().strip() == "ready"
        heavy = ("typer", "click", "rich", "pydantic", "mcp", "starlette", "uvicorn", "anyio", "lancedb", "pyarrow",
                 "torch", "sentence_transformers", "anthropic", "numpy", "filelock")
        payloads = {"recall": json.dumps({"session_id": "s", "transcript_path": "/t", "hook_event_name":
                                          "UserPromptSubmit", "prompt": "what tea do I like in the morning"}),
                    "capture": json.dumps({"session_id": "s", "transcript_path": "/t", "hook_event_name": "Stop"})}
        for command, data in payloads.items():
            r = subprocess.run([sys.executable, "-X", "importtime", "-m", "suzent_cli", command, "--from",
                                "claude-code"], input=data, capture_output=True, text=True, cwd=REPO, env=env,
                               timeout=60)
            assert r.returncode == 0, r.stderr
            assert r.stdout == (output + "\n" if command == "recall" else "")
            imported = {ln.rsplit("|", 1)[1].strip() for ln in r.stderr.splitlines() if ln.startswith("import time:")}
            assert imported, r.stderr
            bad = {m for m in imported if m.split(".")[0] in heavy or m in ("suzent_cli.config", "suzent_cli.cli.app")}
            assert not bad, (command, sorted(bad))
    finally:
        server.kill()
        server.wait(timeout=30)
