"""The memory is private whatever the umask suzent starts under (issue 24, item 1): real processes started under
umask 022 (the usual one) and 000 run every command that writes, then every folder and file they left in the home
(and in a dry-run clone kept outside it) must grant its group and others nothing. The process is the point: the
umask is the process's, and LanceDB (Rust), filelock and shutil create files of their own."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from claude_code_session import Transcript, payload
from serve_process import ready, stderr_of, stop

from conftest import HASH_ENV, REPO, cli_env, open_entries

NOW = "2026-06-10T12:00"
PAST = "2026-06-09"




def suzent(home: Path, umask: int, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """``python -m suzent_cli --now NOW ARGS`` as a new process started under ``umask``, hash embedder."""
    return subprocess.run([sys.executable, "-m", "suzent_cli", "--now", NOW, *args], input=stdin or "",
                          capture_output=True, text=True, cwd=REPO, env=cli_env(home, **HASH_ENV, **env),
                          preexec_fn=lambda: os.umask(umask), timeout=300)


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, (r.args, r.stdout, r.stderr)
    return r


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask022", "umask000"])
def test_every_folder_and_file_a_command_leaves_is_private_whatever_the_umask(tmp_path, umask):
    home, clone = tmp_path / "home", tmp_path / "clone"
    ok(suzent(home, umask, "init"))
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    ok(suzent(home, umask, "capture", "--date", PAST, "--fact", "[personal] Lives in Lisbon",
              "--fact", "[preference] Prefers green tea in the morning"))
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"user": "I switched to coffee last week. My sister is called Ana.",
                                "assistant": "Noted."}), encoding="utf-8")
    ok(suzent(home, umask, "capture", "--turn-from", str(turn), "--extractor", "offline", "--date", PAST))
    t = Transcript(tmp_path / "session.jsonl")
    t.turn("Remember that I work at Initech as a data engineer.")
    ok(suzent(home, umask, "capture", "--from", "claude-code", stdin=payload(t.path)))  # positions in .state
    ok(suzent(home, umask, "index"))
    ok(suzent(home, umask, "recall", "tea"))  # the recall log
    ok(suzent(home, umask, "dream", "--force", "--engine", "offline"))
    ok(suzent(home, umask, "forget", "Lives in Lisbon"))  # tombstones.jsonl: the forgotten text itself
    ok(suzent(home, umask, "run", "--engine", "offline"))
    ok(suzent(home, umask, "index", "--rebuild"))  # backups/index-*
    missing = payload(tmp_path / "missing.jsonl", session="gone")  # stays spooled (after the run, which fails on it)
    ok(suzent(home, umask, "capture", "--from", "claude-code", stdin=missing))
    r = suzent(home, umask, "dry-run", "--force", "--engine", "offline", "--keep", str(clone))
    assert r.returncode in (0, 4), r.stderr  # ran or idle: the clone is made either way
    errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "suzent_cli", "--home", str(home), "serve", "--port", "0"],
                              stdout=subprocess.DEVNULL, stderr=errlog, env=cli_env(home, **HASH_ENV), cwd=REPO,
                              preexec_fn=lambda: os.umask(umask))
    server.errlog = errlog  # read by serve_process.stderr_of
    try:
        ready(home, server)
        t.turn("Also remember that my cat is called Miso.")  # captured by the server, through the hooks' fast path
        ok(suzent(home, umask, "capture", "--from", "claude-code", stdin=payload(t.path)))
    finally:
        assert stop(server) == 0, stderr_of(server)
    (home / "config.toml").write_text("not = [toml\n", encoding="utf-8")  # settings cannot be resolved:
    r = ok(suzent(home, umask, "capture", "--from", "claude-code", stdin=payload(t.path, session="late")))
    assert list((home / "spool").glob("*.json")), r.stderr  # ... the payload is kept in the fallback <home>/spool/

    written = {p.relative_to(home).parts[0] for p in home.rglob("*")}
    assert {"backups", "server", "spool", "notebook", "memory", "sandbox"} <= written
    assert list((home / "notebook" / ".state").glob("tombstones.jsonl"))
    assert list((home / "notebook" / ".state" / "spool").rglob("*.json"))  # waiting, or given up in failed/
    assert open_entries(home, clone) == []
