"""suzent sync (issue 26 §2): real git (bare remotes in tmp_path), two and three homes, real processes where the
process is the point (kill -9, a capture during a sync, two syncs at once)."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, invoke, run_cli
from suzent_cli.archive import Fact, append_entry
from suzent_cli.config import resolve_settings
from suzent_cli.copies import log_copy_day, page_copy_of
from suzent_cli.dreamer import may_dream
from suzent_cli.sync import SyncBusy, SyncFailed, sync, travellers
from suzent_cli.sync.merge import merge_appended, merge_records, split_blocks

DAY = "2026-06-01"


def _settings(home: Path, now: str = f"{DAY}T12:00", **env: str):
    return resolve_settings(home=home, now=now, env={k.upper(): v for k, v in env.items()})


def _capture(home: Path, *facts: str, day: str = DAY, time: str = "09:00", session: str = "s1") -> None:
    s = _settings(home)
    append_entry(s.paths.archive_dir, dt.date.fromisoformat(day), time, session,
                 [Fact(content=f, category="preference").clean() for f in facts], timeout=5)


def _log(home: Path, day: str = DAY) -> str:
    return (_settings(home).paths.archive_dir / f"{day}.md").read_text(encoding="utf-8")


def _facts(home: Path, day: str = DAY) -> Counter:
    return Counter(line for line in _log(home, day).splitlines() if line.startswith("- ["))


@pytest.fixture
def remote(tmp_path) -> str:
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return str(path)


def _sync(home: Path, remote: str | None = None, now: str = f"{DAY}T12:00", **kw):
    return sync(_settings(home, now), remote=remote, **kw)


# --- the merges, as pure functions -----------------------------------------------------------------------------

def test_merge_appended_keeps_every_entry_once_and_the_first_side_in_place():
    head = f"# Daily Log - {DAY}\n"
    a1, a2 = "\n## 09:00 — a\n\n- [x] one\n", "\n## 10:00 — a\n\n- [x] two\n"
    b1 = "\n## 09:30 — b\n\n- [x] three\n"
    first, second = head + a1 + a2, head + a1 + b1
    merged = merge_appended(first, second)
    assert merged == first + b1  # the first side untouched, the other's new entry after it
    assert merge_appended(merged, second) == merged  # idempotent: nothing twice
    assert merge_appended(second, first) == second + a2
    twice = head + a1 + a1  # a side that holds an entry twice keeps it twice
    assert merge_appended(head + a1, twice) == twice
    assert split_blocks(merged)[0] + "".join(split_blocks(merged)[1]) == merged


def test_a_preamble_with_junk_becomes_an_entry_of_its_own_and_is_never_duplicated_by_a_later_merge():
    """A conflict copy (or a hand edit) with lines before its first heading: glued onto the log's last entry, that
    entry differed from the same entry on the other machine, and the next merge kept both (a duplicated fact)."""
    from suzent_cli.archive import parse_log
    from suzent_cli.sync.merge import PREAMBLE_HEADING

    head = f"# Daily Log - {DAY}\n"
    log = head + "\n## 10:00 — a\n\n- [fact] D\n" + "\n## 11:00 — b\n\n- [fact] E\n"
    copy = "junk before the header\n" + head + "\n## 10:00 — a\n\n- [fact] D\n"
    folded = merge_appended(log, copy)
    assert folded == log + f"\n{PREAMBLE_HEADING}\n\njunk before the header\n"  # every line kept, the header once
    for merged in (merge_appended(log, folded), merge_appended(folded, log), merge_appended(folded, copy),
                   merge_appended(merge_appended(log, "junk before the header\n"), log)):
        assert merged.count("- [fact] E") == 1 and merged.count("junk before the header") == 1, merged
    assert [f.content for f in parse_log(folded, dt.date.fromisoformat(DAY))] == ["D", "E"]


def test_merge_records_is_a_three_way_merge_of_record_sets():
    base = '{"a":1}\n{"b":2}\n'
    ours = '{"a":1}\n{"b":2}\n{"c":3}\n'
    theirs = '{"b":2}\n{"d":4}\n'  # theirs removed a (a dream truncated it) and added d
    assert merge_records(base, ours, theirs) == '{"b":2}\n{"c":3}\n{"d":4}\n'
    assert merge_records("", ours, ours) == ours


@pytest.mark.parametrize("name, day", [
    (f"{DAY}.sync-conflict-20260601-101500-ABCD123.md", DAY),
    (f"{DAY} (conflicted copy).md", DAY),
    (f"{DAY} (Ana's conflicted copy {DAY}).md", DAY),
    (f"{DAY} 2.md", DAY),
    (f"{DAY}-LAPTOP.md", DAY),
    (f"{DAY}.md", None),
    ("notes.md", None),
])
def test_conflict_copy_names_of_every_tool(name, day):
    assert log_copy_day(name) == day


def test_page_copies_are_only_the_unambiguous_shapes():
    assert page_copy_of("Profile.sync-conflict-20260601-101500-ABCD.md") == "Profile.md"
    assert page_copy_of("Profile (conflicted copy).md") == "Profile.md"
    assert page_copy_of("Sprint 2.md") is None  # a person's own name for a page


def test_every_state_file_says_whether_it_travels():
    from suzent_cli.vault.state import CATALOGUE, SYNC_POLICY, travelling

    assert set(SYNC_POLICY) == {r.name for r in CATALOGUE}
    assert set(SYNC_POLICY.values()) <= {"travels", "local"}
    assert set(travelling()) == {"tombstones.jsonl", "confirmations.jsonl"}


def test_only_the_travelling_files_are_copied(tmp_path):
    home = tmp_path / "a"
    _capture(home, "Likes tea")
    s = _settings(home)
    for name in ("late_lines.jsonl", "recall_log.jsonl", "dream_state.json", "tombstones.jsonl"):
        (s.paths.state_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (s.paths.state_dir / name).write_text("{}\n")
    (s.paths.vault_dir / "3_Personal").mkdir(parents=True)
    (s.paths.vault_dir / "3_Personal" / "Profile.md").write_text("# Profile\n")
    (s.paths.vault_dir / "3_Personal" / "Profile (conflicted copy).md").write_text("# Profile?\n")
    rels = {t.rel for t in travellers(s)}
    assert f"archive/{DAY}.md" in rels and "vault/3_Personal/Profile.md" in rels
    assert "vault/.state/tombstones.jsonl" in rels
    assert not any("late_lines" in r or "recall_log" in r or "dream_state" in r or "conflicted" in r for r in rels)


# --- two and three machines ------------------------------------------------------------------------------------

def test_two_machines_one_day_no_line_lost_or_duplicated(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", time="09:00", session="a1")
    _capture(b, "Likes coffee", time="09:05", session="b1")
    first = _sync(a, remote)
    assert first.pushed and first.dreams  # the first machine claims the dream
    _sync(b, remote)
    _capture(a, "Likes jazz", time="10:00", session="a2")
    _capture(b, "Likes rock", time="10:01", session="b2")
    dreamer_before = _log(a)
    _sync(a)
    _sync(b)
    _sync(a)
    assert _log(a) == _log(b)
    assert _facts(a) == Counter({f"- [preference] Likes {w}": 1 for w in ("tea", "coffee", "jazz", "rock")})
    assert _log(a).startswith(dreamer_before)  # the dreaming machine's lines never moved
    assert may_dream(a)[0] and not may_dream(b)[0]


def test_three_machines_converge(tmp_path, remote):
    homes = [tmp_path / n for n in "abc"]
    for i, h in enumerate(homes):
        _capture(h, f"Fact {i} of day one", time=f"09:0{i}", session=f"m{i}")
        _sync(h, remote)
    for rnd in range(2):
        for i, h in enumerate(homes):
            _capture(h, f"Fact {i} round {rnd}", time=f"1{rnd}:0{i}", session=f"m{i}")
            _sync(h)
    for h in homes:
        _sync(h)
    logs = {_log(h) for h in homes}
    assert len(logs) == 1
    assert all(n == 1 for n in _facts(homes[0]).values()) and len(_facts(homes[0])) == 9


def test_lines_arriving_in_a_past_day_are_late_lines_on_the_dreamer(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", day="2026-05-30")
    _sync(a, remote, now=f"{DAY}T08:00")
    _sync(b, now=f"{DAY}T08:01", remote=remote)
    _capture(b, "Backfilled fact", day="2026-05-30", time="23:00", session="b")
    _sync(b, now=f"{DAY}T08:02")
    report = _sync(a, now=f"{DAY}T08:03")
    assert "2026-05-30" in report.late_days
    assert not (_settings(b).paths.state_dir / "late_lines.jsonl").exists()  # b does not dream: it records none
    late = (_settings(a).paths.state_dir / "late_lines.jsonl").read_text().splitlines()
    record = json.loads(late[-1])
    assert record["day"] == "2026-05-30"
    lines = _log(a, "2026-05-30").splitlines()
    assert "Backfilled fact" in "\n".join(lines[record["from_line"] - 1:])


def test_a_person_edit_and_another_machines_change_to_one_page_are_both_kept(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    page = Path("3_Personal/Preferences.md")
    body = "---\ntype: personal\n---\n# Preferences\n\n## Claims\n\n- Likes tea\n- Likes jazz\n\n## Notes\n\nmine\n"
    for h in (a,):
        p = _settings(h).paths.vault_dir / page
        p.parent.mkdir(parents=True)
        p.write_text(body)
    _sync(a, remote)
    _sync(b, remote)
    pa, pb = (_settings(h).paths.vault_dir / page for h in (a, b))
    assert pb.read_text() == body
    pa.write_text(body.replace("- Likes jazz\n", "- Likes jazz\n- Likes rock (confirmed 2x)\n"))  # the dream, on a
    pb.write_text(body.replace("mine\n", "mine, and a person's note\n"))  # a person, on b
    _sync(a)
    _sync(b)
    _sync(a)
    for p in (pa, pb):
        assert "Likes rock (confirmed 2x)" in p.read_text() and "a person's note" in p.read_text()


def test_a_forget_is_total_on_every_machine_even_over_a_later_capture(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    env = {"SUZENT_EMBEDDER": "hash", "SUZENT_NO_SERVER": "1"}
    _capture(a, "Lives in Berlin", session="a")
    _sync(a, remote)
    _sync(b, remote)
    for h in (a, b):
        assert invoke(h, "index", env_extra=env).returncode == 0
    assert invoke(a, "forget", "Lives in Berlin", env_extra=env).returncode == 0
    _capture(b, "Lives in Berlin", time="11:00", session="b")  # b captures the same words later
    assert invoke(b, "index", env_extra=env).returncode == 0
    assert "Berlin" in invoke(b, "recall", "Berlin", "--json", env_extra=env).stdout
    _sync(a)
    report = _sync(b)
    assert report.tombstones_received == 1 and report.indexed
    for h in (a, b):
        got = invoke(h, "recall", "Berlin", "--json", env_extra=env)
        assert got.returncode in (0, 1) and "Lives in Berlin" not in got.stdout
    assert _facts(b)["- [preference] Lives in Berlin"] == 2  # the logs keep both lines: hidden, not removed


def test_a_confirmation_from_another_machine_is_restamped_on_the_dreamer(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea")
    _sync(a, remote)
    _sync(b, remote)
    state = _settings(b).paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    record = {"ts": "2026-06-01T09:00:00+00:00", "day": DAY, "time": "09:00", "content": "Likes tea",
              "category": "preference", "matched": "- Likes tea"}
    (state / "confirmations.jsonl").write_text(json.dumps(record) + "\n")
    _sync(b, now=f"{DAY}T12:00")
    _sync(a, now=f"{DAY}T12:30")
    got = [json.loads(x) for x in (_settings(a).paths.state_dir / "confirmations.jsonl").read_text().splitlines()]
    assert got == [{**record, "said_ts": record["ts"], "ts": "2026-06-01T12:30:00+00:00"}]


# --- folder-sync conflict copies ---------------------------------------------------------------------------------

@pytest.mark.parametrize("copy_name", [
    f"{DAY}.sync-conflict-20260601-101500-ABCD123.md", f"{DAY} (Ana's conflicted copy {DAY}).md",
    f"{DAY} 2.md", f"{DAY}-LAPTOP.md"])
def test_a_log_conflict_copy_is_folded_back_losslessly(tmp_path, copy_name):
    home = tmp_path / "h"
    _capture(home, "Likes tea", session="a")
    s = _settings(home, now="2026-06-02T08:00")
    log = s.paths.archive_dir / f"{DAY}.md"
    copy = s.paths.archive_dir / copy_name
    copy.write_text(log.read_text() + "\n## 09:30 — b\n\n- [preference] Likes coffee\n")
    _capture(home, "Likes jazz", time="10:00", session="a")
    done = invoke(home, "--now", "2026-06-02T08:00", "sync", "--fold-conflicts", "--json")
    assert done.returncode == 0, done.stderr
    assert _facts(home) == Counter({f"- [preference] Likes {w}": 1 for w in ("tea", "jazz", "coffee")})
    assert not copy.exists()
    assert (home / "backups" / "conflicts" / copy_name).is_file()
    late = json.loads((s.paths.state_dir / "late_lines.jsonl").read_text().splitlines()[-1])
    assert late["day"] == DAY  # a past day: the dream folds the line
    folded = json.loads(done.stdout)["conflicts_folded"]
    assert folded[0]["lines_added"] > 0


def test_a_conflict_copy_written_0644_by_the_folder_sync_tool_is_private_once_moved_aside(tmp_path):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    archive_dir = _settings(home).paths.archive_dir
    copy = archive_dir / f"{DAY} (conflicted copy).md"
    copy.write_text(f"# Daily Log - {DAY}\n\n## 10:00 — x\n\n- [fact] Only in the copy\n")
    os.chmod(copy, 0o644)
    done = invoke(home, "sync", "--fold-conflicts")
    assert done.returncode == 0, done.stderr
    moved = home / "backups" / "conflicts" / copy.name
    assert (moved.stat().st_mode & 0o777) == 0o600
    done = invoke(home, "verify")
    assert "backups/conflicts" not in done.stdout + done.stderr


def test_a_page_conflict_copy_is_never_indexed_and_moved_aside(tmp_path):
    from suzent_cli.index.sources import discover

    home = tmp_path / "h"
    s = _settings(home)
    d = s.paths.vault_dir / "3_Personal"
    d.mkdir(parents=True)
    (d / "Profile.md").write_text("# Profile\n\n- Lives in Berlin\n")
    (d / "Profile.sync-conflict-20260601-101500-ABCD.md").write_text("# Profile\n\n- Lives in Bonn\n")
    assert [x.path.name for x in discover(s.paths) if "Profile" in x.path.name] == ["Profile.md"]
    done = invoke(home, "sync", "--fold-conflicts")
    assert done.returncode == 0 and "compare it with Profile.md" in done.stderr
    assert (home / "backups" / "conflicts" / "Profile.sync-conflict-20260601-101500-ABCD.md").is_file()


# --- faults --------------------------------------------------------------------------------------------------

def test_an_unreachable_remote_is_one_line_and_keeps_the_local_commit(tmp_path):
    home = tmp_path / "h"
    assert invoke(home, "--now", f"{DAY}T09:00", "capture", "--fact", "[preference] Likes tea").returncode == 0
    url = "https://someone:s3cret-token@127.0.0.1:9/memory.git"
    done = invoke(home, "sync", "--remote", url)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot reach the remote") and "s3cret" not in done.stderr
    assert "Traceback" not in done.stderr
    head = subprocess.run(["git", "-C", str(home / "sync" / "repo"), "log", "--oneline"], capture_output=True,
                          text=True).stdout
    assert head.strip()  # the local commit is kept
    assert _facts(home)["- [preference] Likes tea"] == 1


@pytest.mark.parametrize("url", ["-oProxyCommand=touch /tmp/x", "ext::sh -c touch% /tmp/pwned", " "])
def test_a_bad_remote_url_is_bad_input(tmp_path, url):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    done = invoke(home, "sync", "--remote", url)
    assert done.returncode == 2 and done.stderr.startswith("Error: ") and len(done.stderr.splitlines()) == 1


def test_an_empty_remote_flag_is_bad_input_even_with_a_remembered_remote(tmp_path, remote):
    # `--remote ""` (an unset shell variable: --remote "$URL") synced with the remembered remote and exited 0
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    _sync(home, remote)
    done = invoke(home, "sync", "--remote", "")
    assert done.returncode == 2 and "the remote is empty" in done.stderr, done.stderr


def test_a_one_off_sync_remote_setting_never_replaces_the_remembered_remote(tmp_path, remote):
    # SUZENT_SYNC_REMOTE=/backup.git for one sync silently became the remote of every later sync
    backup = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(backup)], check=True)
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    _sync(home, remote)
    _capture(home, "Likes coffee", time="10:00")
    report = sync(_settings(home, suzent_sync_remote=str(backup)), index=False)
    assert report.remote == str(backup) and report.pushed
    _capture(home, "Likes cocoa", time="11:00")
    assert _sync(home).remote == remote
    shown = subprocess.run(["git", "-C", remote, "show", f"main:archive/{DAY}.md"], capture_output=True, text=True)
    assert "Likes cocoa" in shown.stdout


def test_a_remote_hook_that_refuses_the_push_loses_nothing(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    hook = Path(remote) / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'quota exceeded' >&2\nexit 1\n")
    hook.chmod(0o755)
    _capture(b, "Likes coffee", session="b")
    done = invoke(b, "sync", "--remote", remote)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("Error: the remote refused the push")
    assert _facts(b) == Counter({"- [preference] Likes tea": 1, "- [preference] Likes coffee": 1})
    hook.unlink()
    _sync(b)
    _sync(a)
    assert _facts(a) == _facts(b)


def test_a_push_refused_because_the_remote_moved_is_merged_again(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    _sync(b, remote)
    _capture(a, "Likes jazz", time="10:00", session="a")
    _capture(b, "Likes rock", time="10:01", session="b")
    moved = []

    def meanwhile(point: str) -> None:
        if point == "pushing" and not moved:
            moved.append(_sync(a))  # the other machine pushes between our merge and our push

    report = _sync(b, pause=meanwhile)
    assert report.pushed and moved
    _sync(a)
    assert _log(a) == _log(b) and all(n == 1 for n in _facts(a).values()) and len(_facts(a)) == 3


def test_two_syncs_at_once_on_one_home_the_second_refuses(tmp_path, remote):
    from suzent_cli.files import file_lock

    home = tmp_path / "h"
    _capture(home, "Likes tea")
    (home / "sync").mkdir(parents=True)
    lock = file_lock(home / "sync" / "sync.lock", timeout=1)
    lock.acquire()
    try:
        with pytest.raises(SyncBusy):
            _sync(home, remote)
        done = invoke(home, "sync", "--remote", remote)
        assert done.returncode == 3 and "another suzent sync" in done.stderr
    finally:
        lock.release()
    assert _sync(home, remote).pushed


KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from suzent_cli.config import resolve_settings
    from suzent_cli.sync import sync
    home, remote, point = sys.argv[1:4]
    def pause(p):
        if p == point:
            os.kill(os.getpid(), signal.SIGKILL)
    sync(resolve_settings(home=home, now="2026-06-01T12:00", env={}), remote=remote, pause=pause, index=False)
""")


@pytest.mark.parametrize("point", ["committed", "merging", "pushing", "merged", "writing"])
def test_a_sync_killed_at_any_point_loses_nothing_and_the_next_one_finishes(tmp_path, remote, point):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    p = _settings(a).paths.vault_dir / "2_Wiki" / "Tools.md"
    p.parent.mkdir(parents=True)
    p.write_text("# Tools\n\n- vim\n")
    _sync(a, remote)
    _sync(b, remote)
    _capture(a, "Likes jazz", time="10:00", session="a")
    p.write_text("# Tools\n\n- vim\n- git\n")
    _sync(a)
    _capture(b, "Likes rock", time="10:01", session="b")
    killed = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(b), remote, point], cwd=REPO,
                            capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert _facts(b)["- [preference] Likes rock"] == 1  # nothing of b's lost by the kill
    _sync(b)
    _sync(a)
    assert _log(a) == _log(b)
    assert _facts(a) == Counter({f"- [preference] Likes {w}": 1 for w in ("tea", "jazz", "rock")})
    assert (_settings(b).paths.vault_dir / "2_Wiki" / "Tools.md").read_text() == "# Tools\n\n- vim\n- git\n"
    assert not (b / "sync" / "writeback.json").exists()


CAPTURE_LOOP = textwrap.dedent("""
    import sys
    from suzent_cli.cli.app import main
    home, n = sys.argv[1], int(sys.argv[2])
    for i in range(n):
        assert main(["--home", home, "--now", "2026-06-01T12:00", "capture", "--fact",
                     f"[general] concurrent fact {i}", "--session", "cap"]) == 0
""")


@pytest.mark.parametrize("journal", ['{"before": "deadbeef", "after": "cafebabe"}', '{"before": 5, "after": [1]}',
                                     '{"before": "-q", "after": null}'])
def test_a_sync_journal_naming_no_commit_is_set_aside_not_a_failure_for_ever(tmp_path, remote, journal):
    # a hand-edited journal, or one a folder-sync tool brought from another machine: every sync failed on it
    # ("git reset failed"), a non-string value was a traceback, "-q" reached git as an option
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    _sync(home, remote)
    (home / "sync" / "writeback.json").write_text(journal)
    _capture(home, "Likes coffee", time="10:00")
    done = invoke(home, "sync")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "set aside" in done.stdout + done.stderr
    assert not (home / "sync" / "writeback.json").exists()
    shown = subprocess.run(["git", "-C", remote, "show", f"main:archive/{DAY}.md"], capture_output=True, text=True)
    assert "Likes tea" in shown.stdout and "Likes coffee" in shown.stdout


def test_a_machine_file_that_is_not_an_id_is_one_error_line(tmp_path, remote):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    _sync(home, remote)
    (home / "sync" / "machine").write_bytes(b"\xff\x00\n../x")
    done = invoke(home, "sync")
    assert done.returncode == 2 and done.stderr.startswith("Error: ") and "not a machine id" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def test_a_damaged_staging_repository_says_how_to_rebuild_it_and_the_rebuild_loses_nothing(tmp_path, remote):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    _sync(home, remote)
    staging = home / "sync" / "repo"
    (staging / ".git" / "HEAD").write_text("garbage\n")
    _capture(home, "Likes coffee", time="10:00")
    done = invoke(home, "sync")
    assert done.returncode == 1 and "move it aside" in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    staging.rename(home / "sync" / "repo.damaged")
    assert _sync(home, remote).pushed
    shown = subprocess.run(["git", "-C", remote, "show", f"main:archive/{DAY}.md"], capture_output=True, text=True)
    assert shown.stdout.count("Likes tea") == 1 and shown.stdout.count("Likes coffee") == 1


def test_a_capture_during_a_sync_is_kept(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    _capture(b, "Likes coffee", session="b")
    env = {**os.environ, "SUZENT_SERVE_AUTOSTART": "0", "SUZENT_NO_SERVER": "1", "PYTHONPATH": str(REPO)}
    n = 40
    loop = subprocess.Popen([sys.executable, "-c", CAPTURE_LOOP, str(b), str(n)], cwd=REPO, env=env)
    try:
        for _ in range(3):
            done = run_cli(b, "--now", f"{DAY}T12:00", "sync", "--remote", remote, "--json")
            assert done.returncode == 0, done.stderr
            _sync(a)
    finally:
        assert loop.wait(timeout=120) == 0
    _sync(b)
    _sync(a)
    for h in (a, b):
        facts = _facts(h)
        assert all(facts[f"- [general] concurrent fact {i}"] == 1 for i in range(n))
        assert all(v == 1 for v in facts.values()) and len(facts) == n + 2
    assert _log(a) == _log(b)


def test_the_non_dreaming_machine_skips_the_dream_with_a_note(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea")
    _sync(a, remote)
    _sync(b, remote)
    done = invoke(b, "--now", "2026-06-03T12:00", "dream", "--force", "--json")
    assert done.returncode == 4 and "another machine dreams" in done.stdout
    with pytest.raises(SyncFailed):
        _sync(b, "file:///nonexistent/remote.git")


def test_status_reports_conflict_copies(tmp_path):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    log = _settings(home).paths.archive_dir / f"{DAY}.md"
    (log.parent / f"{DAY} (conflicted copy).md").write_text(log.read_text())
    done = invoke(home, "status", "--json", env_extra={"SUZENT_NO_SERVER": "1"})
    assert "folder-sync conflict copy" in done.stdout and "--fold-conflicts" in done.stdout


def test_a_remote_page_is_never_written_through_a_symlink_that_leaves_the_vault(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea")
    page = _settings(a).paths.vault_dir / "2_Wiki" / "Tools.md"
    page.parent.mkdir(parents=True)
    page.write_text("# Tools\n")
    _sync(a, remote)
    outside = tmp_path / "outside"
    outside.mkdir()
    vault_b = _settings(b).paths.vault_dir
    vault_b.mkdir(parents=True)
    (vault_b / "2_Wiki").symlink_to(outside)  # b's 2_Wiki is a link out of the vault
    report = _sync(b, remote)
    assert not list(outside.iterdir())
    assert any("symlink" in w for w in report.warnings)


def test_a_file_linked_from_outside_the_tiers_never_travels(tmp_path):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    secret = tmp_path / "secret.md"
    secret.write_text("# not memory\n")
    vault = _settings(home).paths.vault_dir
    vault.mkdir(parents=True, exist_ok=True)
    (vault / "Linked.md").symlink_to(secret)
    (vault / "2_Wiki").mkdir()
    (vault / "2_Wiki" / "out").symlink_to(tmp_path, target_is_directory=True)
    rels = {t.rel for t in travellers(_settings(home))}
    assert not any("Linked" in r or "/out/" in r for r in rels), rels


def test_tiers_outside_the_home_travel_and_the_json_says_what_happened(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    elsewhere = tmp_path / "elsewhere-memory"
    env_a = {"SUZENT_MEMORY_DIR": str(elsewhere)}
    s = resolve_settings(home=a, now=f"{DAY}T09:00", env=env_a)
    append_entry(s.paths.archive_dir, dt.date.fromisoformat(DAY), "09:00", "a", [Fact("Likes tea").clean()], timeout=5)
    done = invoke(a, "--now", f"{DAY}T10:00", "sync", "--remote", remote, "--json", env_extra=env_a)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["pushed"] and got["lines_sent"] > 0 and got["commits"] and got["remote"] == remote
    assert {"files_merged", "conflicts_folded", "lines_received", "written", "indexed", "dreams"} <= set(got)
    done = invoke(b, "--now", f"{DAY}T10:05", "sync", "--remote", remote, "--json")
    assert json.loads(done.stdout)["lines_received"] > 0
    assert "Likes tea" in _log(b)
    assert (b / "sync").stat().st_mode & 0o077 == 0


def test_claims_sources_stay_true_on_both_machines_and_late_lines_are_dreamed(tmp_path, remote):
    import re

    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Uses vim for editing", time="09:00", session="a1")
    _capture(b, "Uses tmux for terminals", time="09:30", session="b1")
    _sync(a, remote, now="2026-06-02T08:00")
    assert invoke(a, "--now", "2026-06-02T09:00", "dream", "--force", "--engine", "offline").returncode == 0
    _sync(b, remote, now="2026-06-02T10:00")  # b's line arrives in a day a has dreamed: after a's lines
    report = _sync(a, now="2026-06-02T11:00")
    assert DAY in report.late_days
    assert invoke(a, "--now", "2026-06-02T12:00", "dream", "--force", "--engine", "offline").returncode == 0
    _sync(a, now="2026-06-02T13:00")
    _sync(b, now="2026-06-02T14:00")
    assert _log(a) == _log(b)
    for home in (a, b):
        vault = _settings(home).paths.vault_dir
        sources = []
        for page in vault.rglob("*.md"):
            sources += re.findall(r"^- (.*?)\s*·.*source: (\d{4}-\d{2}-\d{2})\.md:(\d+)", page.read_text(), re.M)
        assert {s[0].split(" (")[0] for s in sources} >= {"Uses vim for editing", "Uses tmux for terminals"}, sources
        for claim, day, line in sources:
            text = _log(home, day).splitlines()[int(line) - 1]
            assert claim.split(" (")[0] in text, (claim, day, line, text)


def test_sync_dream_yes_takes_the_dream_over(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea")
    _sync(a, remote)
    _sync(b, remote)
    assert may_dream(a)[0] and not may_dream(b)[0]
    late = _settings(b).paths.state_dir / "late_lines.jsonl"
    late.parent.mkdir(parents=True, exist_ok=True)
    late.write_text('{"ts": "2026-06-01T09:00:00+00:00", "day": "2026-05-01", "from_line": 3}\n')
    report = sync(resolve_settings(home=b, now=f"{DAY}T12:00", env={"SUZENT_SYNC_DREAM": "yes"}))
    assert report.dreams and not late.exists()  # what it recorded as a non-dreamer is not folded again
    assert list((b / "backups" / "sync").glob("late_lines.jsonl.*"))
    _sync(a)
    assert may_dream(b)[0] and not may_dream(a)[0]
    done = invoke(a, "sync", env_extra={"SUZENT_SYNC_DREAM": "sometimes"})
    assert done.returncode == 2 and done.stderr.startswith("Error:")


def test_bytes_that_are_not_utf8_travel_exactly_and_never_multiply(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    _sync(b, remote)
    log_b = _settings(b).paths.archive_dir / f"{DAY}.md"
    with open(log_b, "ab") as fh:  # a person's editor (or another tool) left bytes that are not UTF-8
        fh.write(b"\n## 10:00 \xe2\x80\x94 b\n\n- [preference] Likes caf\xe9 au lait\n")
    for _ in range(3):
        _sync(b)
        _sync(a)
    raw_a = (_settings(a).paths.archive_dir / f"{DAY}.md").read_bytes()
    assert raw_a == log_b.read_bytes()
    assert raw_a.count(b"caf\xe9") == 1


def _push_code_repository(tmp_path, remote: str, branch: str) -> None:
    """Push a one-file code repository on ``branch`` to ``remote``: a remote that is not a suzent memory."""
    other = tmp_path / "project"
    subprocess.run(["git", "init", "-q", "-b", branch, str(other)], check=True)
    (other / "main.py").write_text("print('hi')\n")
    git = ["git", "-C", str(other), "-c", "user.name=x", "-c", "user.email=x@x"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "code"], check=True)
    subprocess.run([*git, "push", "-q", remote, branch], check=True)


def test_a_remote_that_is_not_a_suzent_memory_is_refused(tmp_path, remote):
    _push_code_repository(tmp_path, remote, "main")
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    done = invoke(home, "sync", "--remote", remote)
    assert done.returncode == 2 and "not a suzent memory" in done.stderr
    listed = subprocess.run(["git", "-C", remote, "ls-tree", "-r", "--name-only", "main"], capture_output=True,
                            text=True).stdout
    assert listed.split() == ["main.py"]  # nothing of the memory was pushed into it


def test_a_code_repository_without_a_main_branch_is_never_pushed_into(tmp_path, remote):
    # a project's repository on `master` named by mistake: the first push would have put the whole memory (in clear)
    # into it as a new branch main
    _push_code_repository(tmp_path, remote, "master")
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    done = invoke(home, "sync", "--remote", remote)
    assert done.returncode == 2 and "not a suzent memory" in done.stderr, done.stderr
    heads = subprocess.run(["git", "-C", remote, "for-each-ref", "--format=%(refname)"], capture_output=True,
                           text=True).stdout.split()
    assert heads == ["refs/heads/master"]  # no branch main was pushed


def test_the_index_is_brought_up_to_date_by_the_running_server_when_one_answers(tmp_path, remote):
    from fake_server import FakeServer

    from suzent_cli.server import paths as server_paths

    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    assert invoke(b, "index", env_extra={"SUZENT_EMBEDDER": "hash", "SUZENT_NO_SERVER": "1"}).returncode == 0

    def answer(op, args):
        return {"ran": True, "exit": 0, "stdout_b64": "", "stderr_b64": ""} if op == "cli" else {}

    fake = FakeServer(server_paths.socket_path(b), answer).start()
    try:
        report = _sync(b, remote)
    finally:
        fake.stop()
    assert report.index_via == "server" and report.indexed
    sent = [args["argv"] for op, args in fake.calls if op == "cli"]
    assert len(sent) == 1 and sent[0][-1] == "index" and sent[0][:2] == ["--home", str(b)]


def test_a_machine_that_dreamed_alone_joins_and_the_dreamers_watermark_stays(tmp_path, remote):
    from suzent_cli.vault.ledger import read_ledger, watermark

    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", day="2026-05-20", session="a")
    _capture(b, "Likes coffee", day="2026-05-30", session="b")
    for h in (a, b):  # each dreams alone first: b's watermark is later than a's
        assert invoke(h, "--now", "2026-05-31T09:00", "dream", "--force", "--engine", "offline").returncode == 0
    _sync(a, remote, now="2026-05-31T10:00")
    report = _sync(b, remote, now="2026-05-31T10:05")
    assert any("log.md" in w for w in report.warnings)
    _sync(a, now="2026-05-31T10:10")
    for h in (a, b):
        assert watermark(read_ledger(_settings(h).paths.vault_dir)) == dt.date(2026, 5, 20)  # a dreams
    assert list((b / "backups" / "sync").glob("log.md.*"))  # b's own ledger kept aside
    assert _facts(a, "2026-05-30") == _facts(b, "2026-05-30")


def test_a_claim_forgotten_on_one_machine_while_the_dreamer_confirmed_it_stays_gone(tmp_path, remote):
    a, b = tmp_path / "a", tmp_path / "b"
    page = Path("3_Personal/Profile.md")
    claim = "- Lives in Berlin (confirmed 1x, last 2026-06-01) · source: 2026-06-01.md:5\n"
    body = "---\ntype: personal\n---\n# Profile\n\n## Claims\n\n" + claim + "- Has a cat\n"
    _capture(a, "Lives in Berlin", session="a")
    pa = _settings(a).paths.vault_dir / page
    pa.parent.mkdir(parents=True)
    pa.write_text(body)
    _sync(a, remote)
    _sync(b, remote)
    assert invoke(b, "forget", "Lives in Berlin", env_extra={"SUZENT_NO_SERVER": "1"}).returncode == 0
    pb = _settings(b).paths.vault_dir / page
    assert "Berlin" not in pb.read_text()
    pa.write_text(body.replace("confirmed 1x", "confirmed 2x"))  # the dreamer bumps the same claim meanwhile
    _sync(a)
    _sync(b)
    _sync(a)
    for p in (pa, pb):
        assert "Berlin" not in p.read_text() and "Has a cat" in p.read_text()


def test_an_unreachable_remote_still_folds_and_says_so_in_json(tmp_path):
    home = tmp_path / "h"
    _capture(home, "Likes tea")
    log = _settings(home).paths.archive_dir / f"{DAY}.md"
    (log.parent / f"{DAY} 2.md").write_text(log.read_text() + "\n## 11:00 — x\n\n- [preference] Likes rain\n")
    done = invoke(home, "sync", "--remote", str(tmp_path / "nowhere.git"), "--json")
    assert done.returncode == 1
    got = json.loads(done.stdout)
    assert got["error"].startswith("cannot reach the remote") and got["conflicts_folded"]
    assert _facts(home)["- [preference] Likes rain"] == 1


@pytest.fixture
def umask077():
    """The umask both entry points run under (privacy.private_umask): in-process calls make private folders too."""
    old = os.umask(0o077)
    yield
    os.umask(old)


def test_verify_is_green_on_a_machine_whose_lines_the_merge_moved(tmp_path, remote, umask077):
    env = {"SUZENT_EMBEDDER": "hash", "SUZENT_NO_SERVER": "1"}
    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea", session="a")
    _sync(a, remote)
    _sync(b, remote)
    _capture(b, "Likes rock", time="10:01", session="b")
    assert invoke(b, "index", env_extra=env).returncode == 0  # b's log is sealed with its line where it is
    _capture(a, "Likes jazz", time="10:00", session="a")
    _sync(a)
    report = _sync(b)
    assert report.moved and report.verified, report.warnings  # b's line moved after a's: resealed
    done = invoke(b, "verify", "--json", env_extra=env)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("role", [b"{not json", b"[1, 2]", b'{"dreamer": 7, "me": "x"}', b"\xff\xfe", None])
def test_a_synced_home_whose_role_cache_is_junk_or_gone_does_not_dream_until_the_next_sync(tmp_path, remote, role):
    """The trial: a junk `sync/role.json` read as "may dream", so a machine that is not the dreamer could fold logs
    into pages the dreamer also folds. Missing or unreadable, it now means "not until the next sync says so"."""
    from suzent_cli.dreamer import ROLE_FILE, sync_dir

    a, b = tmp_path / "a", tmp_path / "b"
    _capture(a, "Likes tea")
    _sync(a, remote)
    _sync(b, remote)
    assert may_dream(a)[0] and not may_dream(b)[0]
    cache = sync_dir(a) / ROLE_FILE
    if role is None:
        cache.unlink()
    else:
        cache.write_bytes(role)
    allowed, why = may_dream(a)
    assert not allowed and "does not dream until the next suzent sync" in why
    _sync(a)  # the next sync records the role again
    assert may_dream(a)[0]
    assert may_dream(tmp_path / "never-synced")[0]  # a home that never synced dreams as before
