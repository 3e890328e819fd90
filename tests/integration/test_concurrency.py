"""Concurrent captures from many processes lose and tear nothing."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO, cli_env, run_cli
from suzent_cli import archive

WORKER = r"""
import sys
from suzent_cli.archive import Fact
from suzent_cli.capture import write_facts
from suzent_cli.config import resolve_settings
settings = resolve_settings(home=sys.argv[1], today="2026-06-10", env={})
worker = sys.argv[2]
for i in range(int(sys.argv[3])):
    facts = [Fact(f"w{worker} entry {i} fact {j} " + "x" * (i * 37 % 300)) for j in range(3)]
    write_facts(settings, facts, time="12:00", session=f"w{worker}-{i}")
"""


def test_parallel_processes_never_interleave_or_lose_lines(home):
    workers, entries = 10, 40
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(home), str(w), str(entries)], cwd=REPO,
                              env=cli_env(home)) for w in range(workers)]
    cli = [subprocess.Popen([sys.executable, "-m", "suzent_cli", "--today", "2026-06-10", "capture", "--fact",
                             f"cli fact {k}", "--fact", f"cli second {k}", "--session", f"cli-{k}", "--time", "12:00"],
                            cwd=REPO, env=cli_env(home)) for k in range(4)]
    assert all(p.wait(timeout=300) == 0 for p in procs + cli)
    path = home / "sandbox" / "shared" / "memory" / "archive" / "2026-06-10.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Daily Log - 2026-06-10\n") and text.count("# Daily Log") == 1
    facts = archive.read_log(path)
    assert len(facts) == workers * entries * 3 + 4 * 2
    # Each entry's facts are contiguous, complete and under their own heading.
    for f in facts:
        m = re.match(r"w(\d+) entry (\d+) fact (\d)( x+)?$", f.content)
        if m:
            assert f.session == f"w{m.group(1)}-{m.group(2)}"
        else:
            assert re.fullmatch(r"cli (fact|second) \d", f.content) and f.session.startswith("cli-")
    blocks = text.split("\n## ")[1:]
    assert len(blocks) == workers * entries + 4
    for block in blocks:
        heading, blank, *lines, tail = block.split("\n")
        assert blank == "" and tail == "" and lines and all(line.startswith("- [general] ") for line in lines)


def test_capture_while_index_lock_is_held_does_not_wait(home, tmp_path):
    from filelock import FileLock

    index_lock = home / "memory" / ".indexer.lock"
    index_lock.parent.mkdir(parents=True)
    with FileLock(str(index_lock)):
        r = run_cli(home, "capture", "--fact", "written while the indexer runs", env_extra={"SUZENT_LOCK_TIMEOUT": "1"})
    assert r.returncode == 0, r.stderr
