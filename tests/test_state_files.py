"""No state file can crash, wedge or mislead (issue 13 §4): every reader of ``notebook/.state/`` validates what it
reads; a bad record is quarantined with one warning (``.state/quarantine/``) and the rest goes on. Also the
transcript's bad timestamps and bytes, and vault file names that are not UTF-8. In-process where possible."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from conftest import invoke, settings_at
from suzent_cli.archive import Fact, append_entry
from suzent_cli.config import DreamConfig
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import content_pages
from suzent_cli.vault.state import read_confirmations, read_late_lines

D = dt.date.fromisoformat


def log_fact(settings, day: str, content: str, category: str = "personal", time: str = "09:00") -> None:
    append_entry(settings.paths.archive_dir, D(day), time, "sess0001", [Fact(content=content, category=category)],
                 timeout=5)


def runner(settings, **config):
    return DreamRunner(settings, DreamConfig(**config), engine="rules", follow_ups=[])


def quarantined(settings, name: str) -> list[dict]:
    path = settings.paths.state_dir / "quarantine" / (name if name.endswith(".jsonl") else name + ".jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


def consolidated(settings) -> None:
    """A vault whose watermark is 2026-06-05 (one productive dream)."""
    log_fact(settings, "2026-06-05", "Lives in Berlin")
    assert runner(settings).tick(force=True).outcome == "ingested"


def write_lines(path: Path, *records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")


# --- late_lines.jsonl ----------------------------------------------------------------------------------------------
BAD_LATE = [
    '{"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01", "from_line": 1e400}',
    {"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01", "from_line": -3},
    {"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01", "from_line": "1"},
    {"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01"},
    {"ts": 5, "day": "2026-06-01", "from_line": 1},
    {"ts": "2026-06-19T00:00:00+00:00", "day": ["2026-06-01"], "from_line": 1},
    [1, 2],
    '{"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01", "from_line": NaN}',
    '{"ts": "2026-06-19T00:00:00+00:00", "day": "2026-06-01", "from',
]


@pytest.mark.parametrize("bad", BAD_LATE, ids=range(len(BAD_LATE)))
def test_a_bad_late_line_record_is_quarantined_and_the_good_one_folded(home, bad):
    s = settings_at(home)
    consolidated(s)
    log_fact(s, "2026-06-01", "Wants to learn Rust", "goal")
    good = {"ts": "2026-06-19T00:00:01+00:00", "day": "2026-06-01", "from_line": 1}
    write_lines(s.paths.state_dir / "late_lines.jsonl", bad, good)
    assert runner(s).decision(force=True).late == ((D("2026-06-01"), 1),)  # the read-only view skips it
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested", result
    assert "- Wants to learn Rust" in (s.paths.vault_dir / "3_Personal/Goals.md").read_text()
    assert [w for w in result.warnings if "late_lines.jsonl" in w and "quarantine" in w], result.warnings
    assert len(quarantined(s, "late_lines.jsonl")) == 1
    assert read_late_lines(s.paths.state_dir) == []  # the good one folded, the bad one moved away


def test_a_late_line_record_for_a_log_moved_away_is_quarantined_not_fatal(home):
    s = settings_at(home)
    consolidated(s)
    log_fact(s, "2026-06-01", "Wants to learn Rust", "goal")
    proc = invoke(home, "capture", "--date", "2026-06-02", "--fact", "[goal] Wants to run a marathon",
                   env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    assert proc.returncode == 0, proc.stderr
    s.paths.log_path(D("2026-06-02")).rename(home / "moved-away.md")
    write_lines(s.paths.state_dir / "late_lines.jsonl",
                *[json.loads(x) for x in (s.paths.state_dir / "late_lines.jsonl").read_text().splitlines()],
                {"ts": "2026-06-19T00:00:01+00:00", "day": "2026-06-01", "from_line": 1})
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested"
    assert [w for w in result.warnings if "2026-06-02 is gone" in w]
    assert "- Wants to learn Rust" in (s.paths.vault_dir / "3_Personal/Goals.md").read_text()
    assert [q["reason"] for q in quarantined(s, "late_lines.jsonl")] == ["the daily log of 2026-06-02 is gone"]
    again = runner(s).tick(force=True)
    assert again.outcome in ("idle", "linted") and not again.warnings


def test_run_with_a_late_line_for_a_deleted_log_exits_0_with_one_warning(home):
    s = settings_at(home)
    consolidated(s)
    write_lines(s.paths.state_dir / "late_lines.jsonl",
                {"ts": "2026-06-19T00:00:01+00:00", "day": "2026-06-02", "from_line": 1})
    proc = invoke(home, "dream", "--force", env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "late_lines.jsonl" in ln]
    assert len(lines) == 1 and "2026-06-02 is gone" in lines[0], (proc.stdout, proc.stderr)
    again = invoke(home, "dream", "--force", env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
    assert again.returncode in (0, 4) and "late_lines" not in again.stdout + again.stderr


# --- confirmations.jsonl -------------------------------------------------------------------------------------------
def confirmation(**over) -> dict:
    return {"ts": "2026-06-07T10:00:00+00:00", "day": "2026-06-07", "time": "10:00", "content": "Reads before bed",
            "category": "preference", "matched": "Reads before bed", "source": "archive:2026-06-01.md",
            "locator": 5, "score": 1.0, "session": "s"} | over


BAD_CONFIRMATIONS = [
    {"content": 5, "category": ["x"]},
    confirmation(content=5, category=["x"]),
    confirmation(content=""),
    confirmation(category=None),
    confirmation(day="someday"),
    confirmation(ts=12),
    confirmation(score="high"),
    '{"ts": "2026-06-07T10:00:00+00:00", "day": "2026-06-07", "content": "x", "category": "goal", "score": NaN}',
    "[]",
    "\x00\x00\x00",
]


@pytest.mark.parametrize("bad", BAD_CONFIRMATIONS, ids=range(len(BAD_CONFIRMATIONS)))
def test_a_bad_confirmation_is_quarantined_and_creates_no_page(home, bad):
    s = settings_at(home)
    log_fact(s, "2026-06-05", "Lives in Berlin")
    write_lines(s.paths.state_dir / "confirmations.jsonl", bad, confirmation())
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.confirmations == 1
    pages = {p.relative_to(s.paths.vault_dir).as_posix() for p in content_pages(s.paths.vault_dir)}
    assert pages == {"3_Personal/Profile.md", "3_Personal/Preferences.md"}, pages
    assert "Reads before bed" in (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert [w for w in result.warnings if "confirmations.jsonl" in w and "quarantine" in w], result.warnings
    assert len(quarantined(s, "confirmations.jsonl")) == 1
    assert read_confirmations(s.paths.state_dir) == []


def test_status_counts_only_good_records_and_moves_nothing(home):
    from suzent_cli.status import status

    s = settings_at(home)
    write_lines(s.paths.state_dir / "confirmations.jsonl", {"content": 5}, confirmation())
    write_lines(s.paths.state_dir / "late_lines.jsonl", {"day": "2026-06-01", "from_line": 1e300})
    assert read_confirmations(s.paths.state_dir) == [None, confirmation()]
    report = status(s, DreamConfig(), with_index=False)
    assert (report["queues"]["confirmations"], report["queues"]["late_lines"]) == (1, 0)
    assert not (s.paths.state_dir / "quarantine").exists()


# --- dream_state.json ----------------------------------------------------------------------------------------------
BAD_DREAM_STATE = [
    ('{"version": 1, "failures": [1]}', "failures"),
    ('{"version": 1, "failures": {"2026-06-05": "2"}}', "failures"),
    ('{"version": 1, "failures": {"2026-06-05": 1e400}}', "failures"),
    ('{"version": 1, "failures": {"2026-06-05": 100000000000000000000000000000}}', "failures"),
    ('{"version": 1, "failures": {"2026-06-05": NaN}}', "failures"),
    ('{"version": 1, "failures": {"not a day": 1}}', "failures"),
    ('{"version": 1, "logs_read": [1]}', "logs_read"),
    ('{"version": 1, "logs_read": {"2026-06-05": -1}}', "logs_read"),
    ('{"version": 1, "last_attempt": 5}', "last_attempt"),
    ('{"version": 1, "last_attempt": "9999-12-31T23:59:59-05:00"}', "last_attempt"),
    ('{"version": 1, "last_lint_attempt": "9999-12-31T00:00:00+00:00"}', "last_lint_attempt"),
    ('{"version": 1, "in_flight": {"snapshot": {"3_Personal/Profile.md": [1]}, "end": 5}}', "in_flight"),
    ('{"version": 1, "last_ingest": [1, 2]}', "last_ingest"),
]


@pytest.mark.parametrize("text,field", BAD_DREAM_STATE, ids=[t for t, _ in BAD_DREAM_STATE])
def test_a_bad_dream_state_field_is_quarantined_and_the_dream_folds(home, text, field):
    from suzent_cli.status import status

    s = settings_at(home)
    log_fact(s, "2026-06-05", "Lives in Berlin")
    path = s.paths.state_dir / "dream_state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report = status(s, DreamConfig(), with_index=False)  # read-only: warns, moves nothing
    assert [w for w in report["warnings"] if field in w] and path.read_text() == text
    idle = runner(s, min_facts=5, max_wait_hours=0).tick()  # an idle tick cleans the file too: it warns once
    assert idle.outcome == "idle", idle
    assert len([w for w in idle.warnings if "dream_state.json" in w and field in w]) == 1, idle.warnings
    assert not runner(s, min_facts=5, max_wait_hours=0).tick().warnings
    assert runner(s, min_facts=1).decision().action == "ingest"  # not wedged by a time in the future
    result = runner(s, min_facts=1).tick()
    assert result.outcome == "ingested", result  # never a silent skip of the batch
    assert "- Lives in Berlin" in (s.paths.vault_dir / "3_Personal/Profile.md").read_text()
    assert [q["record"] for q in quarantined(s, "dream_state.json")] == [text]
    json.loads(path.read_text())  # rewritten clean
    assert not runner(s, min_facts=1).tick().warnings


# --- Claude Code: claude_code.json and the transcript -----------------------------------------------------------------
def drain_one(settings, transcript, **kw) -> dict:
    from test_claude_code import payload

    from suzent_cli.hooks import spool

    spool.spool(settings, json.loads(payload(transcript, **kw)))
    return spool.drain(settings)


@pytest.mark.parametrize("bad", [{"offset": -5}, {"offset": 10**30}, {"offset": "12"}, {"last_uuid": ["x"]},
                                 {"last_ts": 5}, "a string", {"transcript": {"p": 1}}],
                         ids=["negative", "huge", "string", "uuid-list", "ts-int", "not-object", "transcript-dict"])
def test_a_bad_session_position_is_quarantined_and_the_session_goes_on(tmp_path, settings, bad):
    """Each bad record of ``claude_code.json`` is moved to the quarantine with one warning; the session captures
    its next turn (the bad one's session starts afresh: a turn may be captured twice, never lost)."""
    from test_claude_code import SID, Transcript, facts

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    assert drain_one(settings, t.path)["turns"] == 1
    path = settings.paths.state_dir / "claude_code.json"
    data = json.loads(path.read_text())
    data[SID] = (data[SID] | bad) if isinstance(bad, dict) else bad
    data["other-session"] = {"last_uuid": ["y"]}  # a bad record of another session: quarantined too
    path.write_text(json.dumps(data))
    t.turn("I prefer green tea in the morning.")
    report = drain_one(settings, t.path)
    assert report["drained"] == 1 and report["failed"] == 0, report
    assert "- [preference] I prefer green tea in the morning." in facts(settings.paths.home)
    assert len([w for w in report["warnings"] if "claude_code.json" in w and "quarantine" in w]) == 1, report
    assert len(quarantined(settings, "claude_code.json")) == 2
    t.turn("I live in Porto.")
    again = drain_one(settings, t.path)
    assert again["turns"] == 1 and not again["warnings"], again


def test_an_offset_beyond_the_end_of_the_transcript_falls_back_to_a_full_read(tmp_path, settings):
    from test_claude_code import SID, Transcript, facts

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    assert drain_one(settings, t.path)["turns"] == 1
    path = settings.paths.state_dir / "claude_code.json"
    path.write_text(json.dumps({SID: json.loads(path.read_text())[SID] | {"offset": 10**9}}))
    t.turn("I prefer green tea in the morning.")
    report = drain_one(settings, t.path)
    assert (report["drained"], report["turns"]) == (1, 1) and not report["warnings"], report
    assert len(facts(settings.paths.home)) == 2


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", "99999-01-01T00:00:00Z",
                                   "2999-01-01T00:00:00Z", "1e20", 1e20])
def test_a_turn_with_a_timestamp_out_of_range_is_captured_now_and_the_session_moves_on(tmp_path, settings, stamp):
    from test_claude_code import Transcript, facts

    t = Transcript(tmp_path / "s.jsonl")
    t.user("My cat is named Pixel.")
    lines = t.path.read_text().splitlines()
    lines[-1] = json.dumps(json.loads(lines[-1]) | {"timestamp": stamp})
    t.path.write_text("\n".join(lines) + "\n")
    t.assistant("Nice.")
    t.turn("I prefer green tea in the morning.")
    report = drain_one(settings, t.path)
    assert (report["drained"], report["failed"], report["turns"]) == (1, 0, 2), report
    assert "- [personal] My cat is named Pixel." in facts(settings.paths.home, settings.today.isoformat())
    assert "- [preference] I prefer green tea in the morning." in facts(settings.paths.home)
    if not isinstance(stamp, float) and stamp != "1e20":  # a number or a non-date is no timestamp at all
        assert len([w for w in report["warnings"] if "out of range" in w]) == 1, report
    assert not [p for p in settings.paths.archive_dir.glob("*.md") if p.stem > "2027"]


def test_an_invalid_utf8_turn_is_captured_with_replacement_and_one_warning(tmp_path, settings):
    from test_claude_code import Transcript, facts

    t = Transcript(tmp_path / "s.jsonl")
    t.user("My cat is named PIXEL.")
    raw = t.path.read_bytes().replace(b"PIXEL", b"Pi\xffxel")
    t.path.write_bytes(raw)
    t.assistant("Nice.")
    t.turn("I prefer green tea in the morning.")
    report = drain_one(settings, t.path)
    assert (report["drained"], report["turns"]) == (1, 2), report
    assert "- [personal] My cat is named Pi\ufffdxel." in facts(settings.paths.home)
    assert len([w for w in report["warnings"] if "UTF-8" in w]) == 1, report


def test_the_hook_cli_with_a_year_99999_turn_exits_0_with_one_warning_line(tmp_path, home):
    from test_claude_code import Transcript, facts, hook, payload

    t = Transcript(tmp_path / "s.jsonl")
    t.user("My cat is named Pixel.")
    lines = t.path.read_text().splitlines()
    lines[-1] = json.dumps(json.loads(lines[-1]) | {"timestamp": "9999-12-31T23:59:59-05:00"})
    t.path.write_text("\n".join(lines) + "\n")
    t.assistant("Nice.")
    t.turn("I prefer green tea in the morning.")
    proc = hook(home, payload(t.path))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if "out of range" in ln]) == 1, proc.stderr
    assert len(facts(home)) == 2


# --- vault file names that are not UTF-8 -------------------------------------------------------------------------
def bad_name_page(settings) -> Path:
    """``notebook/2_Wiki/\\xff\\xfe.md`` created from raw bytes, as another tool could."""
    from suzent_cli.vault import bootstrap

    bootstrap(settings.paths.vault_dir)
    raw = os.fsencode(settings.paths.vault_dir / "2_Wiki") + b"/\xff\xfe.md"
    with open(raw, "wb") as fh:
        fh.write(b"# Odd\n\nLinks to [[Profile]].\n")
    return Path(os.fsdecode(raw))


def test_a_vault_name_that_is_not_utf8_is_skipped_with_one_warning_by_dream_lint_index_and_status(home, embedder):
    from suzent_cli.index.api import run_index
    from suzent_cli.promote import promote
    from suzent_cli.status import status

    s = settings_at(home)
    bad = bad_name_page(s)
    log_fact(s, "2026-06-05", "Lives in Berlin")
    assert bad not in content_pages(s.paths.vault_dir)
    result = runner(s).tick(force=True)
    assert result.outcome == "ingested" and result.error is None, result
    assert len([w for w in result.warnings if "not valid UTF-8" in w and "\\xff\\xfe" in w]) == 1, result.warnings
    json.loads((s.paths.state_dir / "dream_state.json").read_text(encoding="utf-8"))
    lint = runner(s).lint_now()
    assert lint.outcome == "linted" and lint.error is None, lint
    report = run_index(s, embedder=embedder)
    assert not report.errors and [w for w in report.warnings if "not valid UTF-8" in w], report
    again = run_index(s, embedder=embedder, full=True)
    assert not again.errors
    promote(s)
    report = status(s, DreamConfig(), with_index=False)
    assert len([w for w in report["warnings"] if "not valid UTF-8" in w]) == 1, report["warnings"]
    json.dumps(report, ensure_ascii=False).encode("utf-8")
    assert bad.is_file()  # never touched


def test_the_claude_engines_tools_skip_names_that_are_not_utf8(home):
    from suzent_cli.dream.vault_tools import VaultTools

    s = settings_at(home)
    bad_name_page(s)
    bad_dir = os.fsencode(s.paths.vault_dir / "2_Wiki") + b"/\xfe"
    os.mkdir(bad_dir)
    with open(bad_dir + b"/Ok.md", "wb") as fh:
        fh.write(b"# Ok\n\nLinks to [[Profile]].\n")
    (s.paths.vault_dir / "2_Wiki" / "Fine.md").write_text("# Fine\n\nLinks to [[Profile]].\n")
    tools = VaultTools(s.paths.vault_dir)
    for name, args in (("list_files", {}), ("search", {"query": "Profile"})):
        text, failed = tools.call(name, args)
        assert not failed and "Fine.md" in text, text
        text.encode("utf-8")  # no lone surrogate reaches the API request
        assert "Ok.md" not in text and "\\x" not in text, text
    text, failed = tools.call("read_file", {"path": "2_Wiki/\udcff\udcfe.md"})
    assert failed and "UTF-8" in text, text


def test_dream_and_lint_cli_with_a_name_that_is_not_utf8_print_no_traceback(home):
    s = settings_at(home)
    bad_name_page(s)
    log_fact(s, "2026-06-05", "Lives in Berlin")
    for args in (["dream", "--force"], ["lint"]):
        proc = invoke(home, *args, env_extra={"SUZENT_NOW": "2026-06-20T12:00"})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert len([ln for ln in proc.stderr.splitlines() if "not valid UTF-8" in ln]) == 1, (args, proc.stderr)


# --- superseded.txt, recall_log.jsonl, memory_md.json, spool files, .dream.lock.holder -------------------------------
@pytest.mark.parametrize("bad", ["- [personal] Lives\x00in Berlin", "- [personal] " + "x" * 70000, "\x00" * 50,
                                 "not a fact line at all"], ids=["nul", "huge", "nuls", "prose"])
def test_a_bad_superseded_line_is_quarantined_and_the_good_one_retired(home, embedder, bad):
    from suzent_cli.reconcile import reconcile
    from suzent_cli.vault.state import SUPERSEDED, read_superseded

    s = settings_at(home)
    log_fact(s, "2026-06-05", "Lives in Berlin")
    path = s.paths.state_dir / SUPERSEDED
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(bad + "\n- [personal] Lives in Berlin\n", encoding="utf-8")
    assert read_superseded(s.paths.state_dir) == ["- [personal] Lives in Berlin"]  # read-only: skipped, kept
    assert bad in path.read_text(encoding="utf-8")
    report = reconcile(s, embedder=embedder)
    assert report.lines_retired == 1 and not report.errors, report
    assert len([w for w in report.warnings if SUPERSEDED in w and "quarantine" in w]) == 1, report.warnings
    assert [q["record"] for q in quarantined(s, SUPERSEDED)] == [bad]
    assert path.read_text(encoding="utf-8") == ""


def test_deeply_nested_json_in_state_files_is_never_a_crash(home, settings):
    from suzent_cli.hooks import spool
    from suzent_cli.promote import promote, recall_snippets
    from suzent_cli.status import status
    from suzent_cli.vault.state import purge_recall_log

    s = settings_at(home)
    bomb = "[" * 100000 + "]" * 100000
    state = s.paths.state_dir
    write_lines(state / "recall_log.jsonl", bomb, {"ts": "x", "snippet": "Lives in Berlin", "query": "q"})
    write_lines(state / "memory_md.json", bomb)
    write_lines(state / "late_lines.jsonl", bomb)
    write_lines(state / "confirmations.jsonl", bomb)
    (state / "dream_state.json").write_text(bomb)
    assert recall_snippets(state) == ["Lives in Berlin"]
    assert purge_recall_log(state, "nothing", timeout=5) == 0
    promote(s)
    status(s, DreamConfig(), with_index=False)
    assert runner(s).tick(force=True).outcome in ("idle", "linted")
    name = "20260601T000000000000-abcd1234-0123abcd.json"
    (state / "spool").mkdir(parents=True, exist_ok=True)
    (state / "spool" / name).write_text(bomb)
    (state / "spool" / name.replace("0123abcd", "4567abcd")).mkdir()  # a directory under a payload's name
    report = spool.drain(s)
    assert report["failed"] == 2 and len(report["errors"]) == 2, report  # one attempt each, the drain went on


def test_a_lock_holder_note_of_the_wrong_shape_is_never_trusted(home):
    from filelock import FileLock

    from suzent_cli.dream.runner import DREAM_LOCK, HOLDER
    from suzent_cli.status import lock_state

    s = settings_at(home)
    state = s.paths.state_dir
    state.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(state / DREAM_LOCK))
    with lock:
        for note in ("[1, 2]", '{"held": false, "pid": "7"}', "[" * 100000, '{"pid": true, "since": 5}'):
            (state / HOLDER).write_text(note)
            assert lock_state(state / DREAM_LOCK, state / HOLDER) == {"held": True}, note
        (state / HOLDER).write_text('{"pid": 42, "since": "2026-06-20T12:00:00+00:00"}')
        assert lock_state(state / DREAM_LOCK, state / HOLDER)["pid"] == 42


# --- the catalogue of .state files -------------------------------------------------------------------------------

def test_the_catalogue_doc_table_is_the_catalogue():
    """The table in ``suzent_cli.vault.state``'s module doc (the one docs/FORMAT.md copies) is ``table()`` of the
    catalogue, so the two cannot drift; every row names its format, writer, reader and purpose."""
    from suzent_cli.vault import state

    assert state.table() in state.__doc__
    names = [row.name for row in state.CATALOGUE]
    assert len(names) == len(set(names))
    for row in state.CATALOGUE:
        assert row.format and row.writer and row.reader and row.purpose, row
        assert not row.lock or row.lock in names or "<" in row.lock or row.lock == "the file's own lock", row


def _literals(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a source file that is not a docstring, with its line."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_every_state_file_name_comes_from_the_catalogue():
    """No module but the catalogue spells a ``.state/`` file or lock name: each takes it from
    ``suzent_cli.vault.state`` (one place to rename a file, one list for the docs)."""
    from suzent_cli.vault import state

    root = Path(state.__file__).resolve().parents[2]
    names = {row.name for row in state.CATALOGUE if "." in row.name and "/" not in row.name}  # "spool" is a word too
    spelled = []
    for path in sorted(root.rglob("*.py")):
        if path == Path(state.__file__).resolve():
            continue
        for line, text in _literals(path):
            if text in names or text.endswith(tuple(f"/{n}" for n in names if n.startswith("."))):
                spelled.append(f"{path.relative_to(root)}:{line}: {text!r}")
    assert not spelled, "state file names spelled outside the catalogue:\n" + "\n".join(spelled)
