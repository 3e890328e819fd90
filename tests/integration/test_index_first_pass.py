"""A first ``suzent index`` whose commit fails for want of room leaves a table folder without a manifest; the next
``suzent index`` builds the index (issue 24, item 6: it used to fail with "Table 'archival_memories' was not found"
until a manual ``--rebuild``).

A real process, since the failure is the point: it runs under ``RLIMIT_FSIZE`` (SIGXFSZ ignored), so lance's first
write fails inside lance (EFBIG), exactly where a full disk fails it (ENOSPC): the same step of lance's commit,
leaving the same ``_versions/`` and ``_transactions/`` folders. (A 4 kB tmpfs gives the real ENOSPC and the same
folders, but needs root and mount.) The second pass runs in-process."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys

import pytest

from conftest import REPO, cli_env, invoke
from suzent_cli.index.store import TABLE


def _small_files_only() -> None:  # in the child, before exec: files may not grow past 200 bytes
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an ignored signal stays ignored across exec: writes get EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE and SIGXFSZ (POSIX)")
def test_index_after_a_first_pass_that_could_not_commit_builds_the_index(home):
    assert invoke(home, "--today", "2026-06-10", "capture", "--fact", "kayak trip in June").returncode == 0
    failed = subprocess.run([sys.executable, "-m", "suzent_cli", "index", "--model", "hash"], capture_output=True,
                            text=True, env=cli_env(home), cwd=REPO, timeout=180, preexec_fn=_small_files_only)
    table = home / "memory" / f"{TABLE}.lance"
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert (table / "_versions").is_dir() and not list((table / "_versions").glob("*.manifest"))  # the folder

    again = invoke(home, "index", "--model", "hash")
    assert again.returncode == 0 and "not found" not in again.stderr, again.stderr
    assert list((table / "_versions").glob("*.manifest"))
    hits = json.loads(invoke(home, "recall", "kayak", "--model", "hash", "--json").stdout)["hits"]
    assert [h["content"] for h in hits] == ["kayak trip in June"]
