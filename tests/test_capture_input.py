"""What is said is captured, and nothing else: fact-line input that used to crash or split, session ids, and a
failed append (a full disk) that must leave the daily log exactly as it was."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os

import pytest

from suzent_cli import archive, files
from suzent_cli.archive import Fact
from suzent_cli.capture import parse_fact, parse_fact_lines, write_facts

from conftest import run_cli


def _log(settings, day: dt.date | None = None):
    return settings.paths.archive_dir / f"{(day or settings.today).isoformat()}.md"


# --- a failed append leaves the log as it was (item 5) ---------------------------------------------------------

def _full_disk(monkeypatch, *, partial: bool = True, on: str = "write"):
    """Make the next append hit a full disk: the first ``os.write`` writes half its chunk (``partial``), then
    ``os.write`` (or ``os.fsync`` with ``on="fsync"``) raises ENOSPC. Returns the call log."""
    real_write = os.write
    calls: list[str] = []

    def write(fd, data):
        calls.append("write")
        if partial and calls.count("write") == 1:
            return real_write(fd, bytes(data[: max(1, len(data) // 2)]))
        if on == "write":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    def fsync(fd):
        calls.append("fsync")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "write", write)
    if on == "fsync":
        monkeypatch.setattr(files.os, "fsync", fsync)
    return calls


@pytest.mark.parametrize("on", ["write", "fsync"])
def test_a_full_disk_leaves_the_log_as_it_was_and_the_next_capture_is_clean(settings, monkeypatch, on):
    write_facts(settings, [Fact("Lives in Berlin", "personal")], time="09:00", refresh=False)
    before = _log(settings).read_bytes()
    with monkeypatch.context() as m:
        calls = _full_disk(m, on=on)
        with pytest.raises(OSError) as caught:
            write_facts(settings, [Fact("Works as a nurse in Porto", "personal")], time="10:00", refresh=False)
    assert caught.value.errno == errno.ENOSPC and calls
    assert _log(settings).read_bytes() == before  # no torn "- [personal] Works as a nu" left behind
    write_facts(settings, [Fact("Likes green tea", "preference")], time="11:00", refresh=False)
    text = _log(settings).read_text(encoding="utf-8")
    assert text == before.decode("utf-8") + "\n## 11:00 \u2014 cli\n\n- [preference] Likes green tea\n"
    assert [f.content for f in archive.read_log(_log(settings))] == ["Lives in Berlin", "Likes green tea"]


def test_a_failed_first_append_leaves_no_log_file(settings, monkeypatch):
    with monkeypatch.context() as m:
        _full_disk(m)
        with pytest.raises(OSError):
            write_facts(settings, [Fact("Lives in Berlin", "personal")], time="09:00", refresh=False)
    assert not _log(settings).exists()
    write_facts(settings, [Fact("Lives in Porto", "personal")], time="09:05", refresh=False)
    assert _log(settings).read_text(encoding="utf-8").startswith("# Daily Log - ")
    assert [f.content for f in archive.read_log(_log(settings))] == ["Lives in Porto"]


def test_a_rolled_back_late_append_records_no_late_line(settings, monkeypatch):
    past = settings.today - dt.timedelta(days=3)
    write_facts(settings, [Fact("Lives in Berlin", "personal")], day=past, time="09:00", refresh=False)
    late = settings.paths.state_dir / "late_lines.jsonl"
    records = late.read_text(encoding="utf-8").splitlines()
    assert len(records) == 1
    with monkeypatch.context() as m:
        _full_disk(m)
        with pytest.raises(OSError):
            write_facts(settings, [Fact("Works as a nurse", "personal")], day=past, time="10:00", refresh=False)
    assert late.read_text(encoding="utf-8").splitlines() == records  # nothing to fold: nothing was appended
    assert [f.content for f in archive.read_log(_log(settings, past))] == ["Lives in Berlin"]


def test_a_full_disk_is_one_line_error_from_the_cli(home):
    # A real ENOSPC cannot be produced portably in a subprocess; a log path that is a directory gives the same
    # OSError path through the CLI: one line, no traceback, nothing written.
    archive_dir = home / "sandbox" / "shared" / "memory" / "archive"
    (archive_dir / "2026-06-10.md").mkdir(parents=True)
    proc = run_cli(home, "capture", "--fact", "Lives in Berlin", env_extra={"SUZENT_TODAY": "2026-06-10"})
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
