"""Claude Code hooks: ``capture --from claude-code`` (Stop/PreCompact/SessionEnd) and ``recall --from claude-code``
(UserPromptSubmit), with payloads and transcripts shaped as Claude Code writes them: string and block content,
thinking, tool_use / tool_result blocks, images, sidechain (subagent) entries, summary and meta lines, command
echo, a malformed line. The CLI paths run as real subprocesses.
"""

from __future__ import annotations

import errno
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, cli_env, run_cli
from suzent_cli.config import resolve_settings

DAY = "2026-06-01"
SID = "5c9e2b7a-3f41-4d8e-9b6a-0e1f2a3b4c5d"
HEAVY = ("torch", "sentence_transformers", "transformers", "lancedb", "pyarrow", "anthropic")


class Transcript:
    """Writes a Claude Code session transcript (JSON Lines), one record per call, like Claude Code does."""

    def __init__(self, path: Path, session: str = SID, copy_of: "Transcript | None" = None):
        self.path, self.session = path, session
        self.n, self.second, self.parent = (copy_of.n, copy_of.second, copy_of.parent) if copy_of else (0, 0, None)
        path.write_text(copy_of.path.read_text(encoding="utf-8") if copy_of else "", encoding="utf-8")

    def _ts(self) -> str:
        self.second += 1
        return f"{DAY}T{9 + self.second // 3600:02d}:{self.second // 60 % 60:02d}:{self.second % 60:02d}.{self.n % 1000:03d}Z"

    def raw(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def record(self, kind: str, content, *, sidechain: bool = False, **extra) -> str:
        self.n += 1
        uid = f"{self.session[:4]}-{self.n:05d}-uuid"
        message = {"role": kind, "content": content}
        if kind == "assistant":
            message = {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": content, "stop_reason": None, "usage": {"input_tokens": 4, "output_tokens": 9}}
        rec = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external", "cwd": "/work/proj",
               "sessionId": self.session, "version": "2.0.14", "gitBranch": "main", "type": kind,
               "message": message, "uuid": uid, "timestamp": self._ts(), **extra}
        if not sidechain:
            self.parent = uid
        self.raw(json.dumps(rec))
        return uid

    def user(self, text, **extra) -> str:
        return self.record("user", text, **extra)

    def assistant(self, *blocks, **extra) -> str:
        return self.record("assistant", [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks],
                           **extra)

    def tool_round(self, name: str = "Bash", result: str = "ok") -> None:
        """An assistant tool call and the user-role tool_result that continues the turn."""
        tid = f"toolu_{self.n:04d}"
        self.assistant({"type": "tool_use", "id": tid, "name": name, "input": {"command": "pytest -q"}})
        self.record("user", [{"tool_use_id": tid, "type": "tool_result", "content": result, "is_error": False}],
                    toolUseResult={"stdout": result, "stderr": "", "interrupted": False})

    def turn(self, said: str, answer: str = "Done.") -> None:
        self.user(said)
        self.assistant({"type": "thinking", "thinking": "let me think", "signature": "sig"})
        self.assistant("On it.", {"type": "tool_use", "id": f"toolu_x{self.n}", "name": "Read", "input": {}})
        self.record("user", [{"tool_use_id": f"toolu_x{self.n - 1}", "type": "tool_result", "content": "file body"}])
        self.assistant(answer)


def payload(transcript: Path, event: str = "Stop", session: str = SID, **extra) -> str:
    data = {"session_id": session, "transcript_path": str(transcript), "cwd": "/work/proj",
            "hook_event_name": event, "permission_mode": "default", **extra}
    if event == "Stop":
        data.setdefault("stop_hook_active", False)
    return json.dumps(data)


def hook(home: Path, stdin: str | bytes, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(home, "capture", "--from", "claude-code", *args, input=stdin,
                   env_extra={"SUZENT_TODAY": DAY, **(env or {})}, timeout=120)


def facts(home: Path, day: str = DAY) -> list[str]:
    log = home / "sandbox" / "shared" / "memory" / "archive" / f"{day}.md"
    return [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.startswith("- [")] if log.exists() else []


def state_dir(home: Path) -> Path:
    return home / "notebook" / ".state"


def spooled(home: Path) -> list[str]:
    d = state_dir(home) / "spool"
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def failed(home: Path) -> list[str]:
    d = state_dir(home) / "spool" / "failed"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


def noisy_session(path: Path) -> Transcript:
    """Two complete turns amid everything Claude Code writes that is not a turn, then an incomplete third."""
    t = Transcript(path)
    t.raw(json.dumps({"type": "summary", "summary": "Fixing the parser tests", "leafUuid": "old-leaf"}))
    t.user("Caveat: The messages below were generated by the user while running local commands. DO NOT respond "
           "to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
           isMeta=True)
    t.user("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>")
    t.user("<local-command-stdout>Set model to sonnet</local-command-stdout>")
    t.user("I live in Lisbon and I work as a nurse. Can you fix the failing parser test?")
    t.assistant({"type": "thinking", "thinking": "The user wants…", "signature": "EqQB"})
    t.assistant("Let me run the tests first.", {"type": "tool_use", "id": "toolu_01", "name": "Bash",
                                                 "input": {"command": "pytest -q"}})
    t.record("user", [{"tool_use_id": "toolu_01", "type": "tool_result", "content": "1 failed, 41 passed"}],
             toolUseResult={"stdout": "1 failed, 41 passed", "stderr": ""})
    t.assistant({"type": "tool_use", "id": "toolu_02", "name": "Task", "input": {"prompt": "find the bug"}})
    t.record("user", "Find the bug. My name is Sidekick and I live in Oslo.", sidechain=True)
    t.record("assistant", [{"type": "text", "text": "I prefer to grep first."}], sidechain=True)
    t.record("user", [{"tool_use_id": "toolu_02", "type": "tool_result",
                       "content": [{"type": "text", "text": "The bug is in tokenize()"}]}])
    t.assistant("Fixed: tokenize() dropped the last token. All 42 tests pass now.")
    t.raw('{"type": "user", "message": {"role": "user", "content": "truncated')  # a malformed line
    t.raw(json.dumps({"type": "system", "subtype": "informational", "content": "Auto-compact soon",
                      "uuid": "sys-1", "timestamp": f"{DAY}T09:03:00.000Z"}))
    t.user([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "text", "text": "Remember that my locker code is 4417. Here is the screenshot."}])
    t.assistant("Noted, 4417.")
    t.user("I prefer green tea in the morning. Also please rename the module.")
    t.assistant("Renaming.", {"type": "tool_use", "id": "toolu_03", "name": "Edit", "input": {}})
    t.record("user", [{"tool_use_id": "toolu_03", "type": "tool_result", "content": "edited"}])
    return t


# --- transcript parsing (in-process) ---------------------------------------------------------------------

def test_turn_assembly_reads_only_what_was_said(tmp_path):
    from suzent_cli.hooks.transcript import parse_turns

    t = noisy_session(tmp_path / "s.jsonl")
    turns = parse_turns(t.path.read_text(encoding="utf-8"))
    assert [turn.user.text for turn in turns] == [
        "I live in Lisbon and I work as a nurse. Can you fix the failing parser test?",
        "[image]\nRemember that my locker code is 4417. Here is the screenshot.",
        "I prefer green tea in the morning. Also please rename the module."]
    first = turns[0].assistant_text()
    assert first == ("Let me run the tests first.\nused tool Bash\nused tool Task\n"
                     "Fixed: tokenize() dropped the last token. All 42 tests pass now.")
    assert "Sidekick" not in json.dumps([tt.as_input() for tt in turns]) and "thinking" not in first
    assert [tt.closed for tt in turns] == [True, True, False]
    assert not turns[2].complete(partial=False, final=False)  # waits for the tool result's answer
    assert turns[2].complete(partial=False, final=True)  # SessionEnd: the session adds nothing more
    assert json.loads(turns[1].as_input()) == [
        {"role": "user", "content": "[image]\nRemember that my locker code is 4417. Here is the screenshot."},
        {"role": "assistant", "content": "Noted, 4417."}]


# --- capture --------------------------------------------------------------------------------------------

def test_capture_hook_captures_new_complete_turns_once(tmp_path, home):
    t = noisy_session(tmp_path / "session.jsonl")
    r = hook(home, payload(t.path), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    report = json.loads(r.stdout)
    assert report["turns"] == 2 and report["drained"] == 1 and report["left"] == 0
    assert facts(home) == ["- [personal] I live in Lisbon and I work as a nurse.",
                           "- [general] My locker code is 4417."]
    log = (home / "sandbox" / "shared" / "memory" / "archive" / f"{DAY}.md").read_text(encoding="utf-8")
    assert "## 09:00 \u2014 5c9e2b7a" in log and "Sidekick" not in log and "Oslo" not in log
    assert spooled(home) == []

    # The incomplete third turn is not captured until it is answered; the same payload again adds nothing.
    again = hook(home, payload(t.path))
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""
    assert len(facts(home)) == 2

    t.assistant("Renamed parser.py to tokenizer.py.")
    t.turn("My cat is named Pixel.", "Nice name.")
    grown = hook(home, payload(t.path), "--json")
    assert json.loads(grown.stdout)["turns"] == 2
    assert facts(home)[2:] == ["- [preference] I prefer green tea in the morning.",
                               "- [personal] My cat is named Pixel."]
    state = json.loads((state_dir(home) / "claude_code.json").read_text(encoding="utf-8"))[SID]
    assert state["last_uuid"] == f"{SID[:4]}-{t.n:05d}-uuid" and state["transcript"] == str(t.path)


def test_session_end_captures_the_last_turn_as_it_is(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    t.user("I use neovim with the gruvbox theme.")
    assert hook(home, payload(t.path)).returncode == 0
    assert facts(home) == []  # no answer yet: left for the next hook
    assert hook(home, payload(t.path, "SessionEnd", reason="prompt_input_exit")).returncode == 0
    assert facts(home) == ["- [technical] I use neovim with the gruvbox theme."]


def test_an_unterminated_last_line_holds_back_the_turn_before_it(tmp_path, home):
    """A crash mid-write leaves half a JSON line at the end: the turn before it waits until the line is complete
    (it may be the next user message, which would close that turn) or SessionEnd comes."""
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    t.turn("I prefer green tea in the morning.")
    half = json.dumps({"type": "user", "message": {"role": "user", "content": "My locker code is 4417."},
                       "uuid": "late-uuid", "timestamp": f"{DAY}T10:00:00.000Z", "sessionId": SID})
    with t.path.open("a", encoding="utf-8") as fh:
        fh.write(half[:40])  # no newline: still being written
    assert hook(home, payload(t.path)).returncode == 0
    assert facts(home) == ["- [personal] My cat is named Pixel."]
    with t.path.open("a", encoding="utf-8") as fh:
        fh.write(half[40:] + "\n")
    assert hook(home, payload(t.path)).returncode == 0  # complete now: it closes the held-back turn
    assert facts(home)[1:] == ["- [preference] I prefer green tea in the morning."]

    other = Transcript(tmp_path / "o.jsonl", session="bbbb2222-0000")
    other.turn("My dog is named Rex.")
    with other.path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "assistant", "message": {"role": "assistant", "content": "trun')  # and then a crash
    assert hook(home, payload(other.path, session=other.session)).returncode == 0 and len(facts(home)) == 2
    assert hook(home, payload(other.path, "SessionEnd", session=other.session)).returncode == 0
    assert facts(home)[2:] == ["- [personal] My dog is named Rex."]


def test_two_hooks_of_one_session_at_once_capture_each_turn_once(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    for i in range(30):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    cmd = [sys.executable, "-m", "suzent_cli", "capture", "--from", "claude-code"]
    env = cli_env(home, SUZENT_TODAY=DAY)
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=REPO) for _ in range(2)]
    outs = [p.communicate(payload(t.path).encode(), timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    got = facts(home)
    assert sorted(got) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(30))
    assert spooled(home) == []


def test_a_capture_past_its_timeout_stays_spooled_and_the_next_run_drains_it(tmp_path, home):
    t = Transcript(tmp_path / "s.jsonl")
    for i in range(5):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    started = time.monotonic()
    r = hook(home, payload(t.path), "--timeout", "0.01")
    assert r.returncode == 0 and time.monotonic() - started < 15
    assert "not finished in 0.01 s; spooled for the next run" in r.stderr and len(r.stderr.splitlines()) == 1
    assert len(spooled(home)) == 1 and facts(home) == []

    t.turn("Remember that my code word for step 5 is kiwi5.")
    r = hook(home, payload(t.path), "--json")  # drains the old payload first, then its own
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout)["drained"] == 2 and spooled(home) == []
    assert sorted(facts(home)) == sorted(f"- [general] My code word for step {i} is kiwi{i}." for i in range(6))


def test_a_capture_killed_mid_way_loses_no_turn(tmp_path, home):
    """The worker is abandoned (os._exit) while capturing: the turns done are recorded, the rest stay spooled.
    A kill between a turn's append and its record may capture that one turn twice, never lose it."""
    t = Transcript(tmp_path / "s.jsonl")
    n = 400
    for i in range(n):
        t.turn(f"Remember that my code word for step {i} is kiwi{i}.")
    r = hook(home, payload(t.path), "--timeout", "0.4")
    assert r.returncode == 0 and "spooled for the next run" in r.stderr, r.stderr
    first = len(facts(home))
    assert first < n and len(spooled(home)) == 1
    r = hook(home, payload(t.path), "--timeout", "60")
    assert r.returncode == 0 and r.stderr == "" and spooled(home) == []
    got = facts(home)
    want = {f"- [general] My code word for step {i} is kiwi{i}." for i in range(n)}
    assert set(got) == want and len(got) - n <= 1


def test_missing_transcript_ends_in_failed_after_three_attempts(tmp_path, home):
    gone = payload(tmp_path / "deleted.jsonl", session="dead0000-aaaa-bbbb-cccc-000000000000")
    warnings = []
    for _ in range(3):
        r = hook(home, gone)
        assert r.returncode == 0 and r.stdout == ""
        warnings.append(r.stderr)
    assert "transcript not found" in warnings[0] and "attempt 1 of 3" in warnings[0]
    assert "gave up after 3 attempts" in warnings[2]
    gave_up = [n for n in failed(home) if n.endswith(".json")]
    assert len(gave_up) == 1 and ".a" not in gave_up[0] and gave_up[0].replace(".json", ".error.txt") in failed(home)
    assert len(spooled(home)) == 2  # the later payloads: attempts 2 and 1
    # A healthy session is still captured in the same run: one bad payload never wedges the spool.
    t = Transcript(tmp_path / "ok.jsonl")
    t.turn("My cat is named Pixel.")
    r = hook(home, payload(t.path))
    assert r.returncode == 0 and facts(home) == ["- [personal] My cat is named Pixel."]
    # Retry, as the README says: move it back into spool/ once the cause is fixed; it gets fresh attempts.
    (tmp_path / "deleted.jsonl").write_text((tmp_path / "ok.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    spool_folder = state_dir(home) / "spool"
    (spool_folder / "failed" / gave_up[0]).rename(spool_folder / gave_up[0])
    r = hook(home, payload(t.path), "--json")
    report = json.loads(r.stdout)  # the moved-back payload, the one left with attempt 2, and this call's own
    assert r.returncode == 0 and r.stderr == "" and (report["drained"], report["failed"]) == (3, 0)
    assert spooled(home) == []


@pytest.mark.parametrize("stdin", ["not json at all", "[1, 2]", '{"session_id": "abc"}', ""])
def test_malformed_payload_is_a_warning_and_exit_0_and_kept(home, stdin):
    r = hook(home, stdin)
    assert r.returncode == 0 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "malformed Claude Code hook payload" in r.stderr
    kept = [n for n in failed(home) if n.endswith(".raw")]
    assert len(kept) == 1
    assert (state_dir(home) / "spool" / "failed" / kept[0]).read_bytes() == stdin.encode()


def test_hook_mode_never_fails_the_agent_but_a_wrong_source_is_an_error(tmp_path, home):
    home.mkdir(parents=True)
    (home / "config.toml").write_text("this is = not [toml\n", encoding="utf-8")
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    r = hook(home, payload(t.path))
    assert r.returncode == 0 and "not valid TOML" in r.stderr and len(r.stderr.splitlines()) == 1
    r = run_cli(home, "recall", "--from", "claude-code", input=json.dumps({"prompt": "what is my cat called?"}))
    assert r.returncode == 0 and r.stdout == ""
    bad = run_cli(tmp_path / "other", "capture", "--from", "cursor", input=payload(t.path))
    assert bad.returncode == 2 and "--from accepts only claude-code" in bad.stderr


def test_resumed_session_does_not_recapture_the_copied_history(tmp_path, settings):
    """``claude --resume`` may start a new session id whose transcript copies the old one's entries."""
    from suzent_cli.hooks import spool

    old = Transcript(tmp_path / "old.jsonl", session="aaaa1111-0000-0000-0000-000000000000")
    old.turn("My cat is named Pixel.")
    spool.spool(settings, json.loads(payload(old.path, session=old.session)))
    assert spool.drain(settings)["turns"] == 1
    new = Transcript(tmp_path / "new.jsonl", session="bbbb2222-0000", copy_of=old)
    new.turn("I prefer green tea in the morning.")
    spool.spool(settings, json.loads(payload(new.path, session=new.session)))
    assert spool.drain(settings)["turns"] == 1
    assert facts(settings.paths.home) == ["- [personal] My cat is named Pixel.",
                                          "- [preference] I prefer green tea in the morning."]


def test_rewritten_transcript_falls_back_to_timestamps_with_a_warning(tmp_path, settings):
    from suzent_cli.hooks import spool

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    spool.spool(settings, json.loads(payload(t.path)))
    assert spool.drain(settings)["turns"] == 1
    kept = t.path.read_text(encoding="utf-8").replace(f"{SID[:4]}-", "zzzz-")  # every uuid changes
    t.path.write_text(kept, encoding="utf-8")
    t.turn("I prefer green tea in the morning.")
    spool.spool(settings, json.loads(payload(t.path)))
    report = spool.drain(settings)
    assert report["turns"] == 1 and report["drained"] == 1
    assert any("no longer in s.jsonl" in w for w in report["warnings"])
    assert len(facts(settings.paths.home)) == 2


def test_spool_api_for_suzent_run(tmp_path, settings):
    from suzent_cli.hooks import spool

    assert spool.pending(settings) == 0
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    spool.spool(settings, json.loads(payload(t.path)))
    spool.spool(settings, json.loads(payload(tmp_path / "missing.jsonl", session="ffff0000")))
    assert spool.pending(settings) == 2
    blocked = spool.drain(settings, extractor="claude")  # no API key: a configuration problem, not the payloads'
    assert blocked["left"] == 2 and blocked["failed"] == 0 and "ANTHROPIC_API_KEY" in blocked["errors"][0]
    assert spool.pending(settings) == 2 and all(spool.attempts_of(p) == 0 for p in spool.waiting(settings))
    waiting = spool.drain(settings, deadline=time.monotonic() - 1)  # past deadline: nothing started
    assert waiting == {"drained": 0, "left": 2, "failed": 0, "errors": [], "turns": 0, "facts": 0, "warnings": []}
    report = spool.drain(settings, deadline=time.monotonic() + 60)
    assert (report["drained"], report["left"], report["failed"], report["turns"], report["facts"]) == (1, 1, 1, 1, 1)
    assert "attempt 1 of 3" in report["errors"][0]


# --- when the spool cannot be written ---------------------------------------------------------------------

def _full_disk(monkeypatch, *folders: Path) -> None:
    """Every spool write under ``folders`` fails as on a full disk (in-process: root ignores chmod)."""
    from suzent_cli.hooks import spool

    real = spool._write

    def write(path: Path, data: bytes) -> None:
        if any(path.is_relative_to(f) for f in folders):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(spool, "_write", write)


def _run_hook(settings, text: str) -> int:
    from suzent_cli.hooks.claude_code import run_capture

    return run_capture(settings, timeout=60, stdin=io.BytesIO(text.encode()))


def test_spool_falls_back_to_home_when_the_state_spool_cannot_be_written(tmp_path, settings, monkeypatch):
    from suzent_cli.hooks import spool

    _full_disk(monkeypatch, settings.paths.state_dir)
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    notes: list[str] = []
    path = spool.spool(settings, json.loads(payload(t.path)), notes)
    assert path.parent == settings.paths.home / "spool" and path.is_file()
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(payload(t.path))  # the same format
    assert "No space left on device" in notes[0] and str(settings.paths.home / "spool") in notes[0]
    assert spool.pending(settings) == 1 and spool.waiting(settings) == [path]
    monkeypatch.undo()
    report = spool.drain(settings)
    assert (report["drained"], report["turns"], report["left"]) == (1, 1, 0) and not path.exists()
    assert facts(settings.paths.home) == ["- [personal] My cat is named Pixel."]


def test_a_fallback_payload_whose_capture_fails_stays_there_and_a_later_drain_captures_it(tmp_path, settings,
                                                                                          monkeypatch, capsys):
    from suzent_cli.hooks import capture, claude_code, spool  # noqa: F401 - claude_code binds the real capture first

    _full_disk(monkeypatch, settings.paths.state_dir)

    def broken(*args, **kwargs):
        raise RuntimeError("extractor exploded")

    monkeypatch.setattr(capture, "capture_payload", broken)
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    assert _run_hook(settings, payload(t.path)) == 0
    err = capsys.readouterr().err
    assert f"spooled the hook payload in {settings.paths.home / 'spool'} instead" in err
    assert "extractor exploded (attempt 1 of 3; kept for the next run)" in err
    assert "without a safety copy" not in err and "not spooled" not in err
    kept = spool.waiting(settings)
    assert len(kept) == 1 and kept[0].parent == settings.paths.home / "spool" and spool.attempts_of(kept[0]) == 1
    monkeypatch.undo()
    report = spool.drain(settings)  # what `suzent run` or the next hook call does
    assert (report["drained"], report["turns"]) == (1, 1) and spool.pending(settings) == 0
    assert facts(settings.paths.home) == ["- [personal] My cat is named Pixel."]


def test_a_fallback_payload_that_keeps_failing_moves_to_the_fallbacks_failed_folder(tmp_path, settings, monkeypatch):
    from suzent_cli.hooks import spool

    _full_disk(monkeypatch, settings.paths.state_dir)
    spool.spool(settings, json.loads(payload(tmp_path / "deleted.jsonl")))
    for _ in range(3):
        report = spool.drain(settings)
    assert "gave up after 3 attempts" in report["errors"][0] and spool.pending(settings) == 0
    gone = settings.paths.home / "spool" / "failed"
    assert sorted(p.suffix for p in gone.iterdir()) == [".json", ".txt"] and spool.given_up(settings) == 1


def test_when_nothing_can_be_spooled_every_message_is_true(tmp_path, settings, monkeypatch, capsys):
    from suzent_cli.hooks import capture, claude_code

    _full_disk(monkeypatch, settings.paths.state_dir, settings.paths.home / "spool")
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")

    # Spooled nowhere, captured directly: the capture works, so only the spool problem is reported.
    assert _run_hook(settings, payload(t.path)) == 0
    err = capsys.readouterr().err
    assert "could not spool the hook payload (cannot write" in err and "without a safety copy" in err
    assert len(err.splitlines()) == 1 and facts(settings.paths.home) == ["- [personal] My cat is named Pixel."]

    # Spooled nowhere and the capture fails: no "stays spooled", but what recovers the turns.
    def broken(*args, **kwargs):
        raise RuntimeError("extractor exploded")

    monkeypatch.setattr(claude_code, "capture_payload", broken)
    monkeypatch.setattr(capture, "capture_payload", broken)
    t.turn("I prefer green tea in the morning.")
    assert _run_hook(settings, payload(t.path)) == 0
    err = capsys.readouterr().err
    assert "spooled for" not in err and "stays spooled" not in err
    assert ("capture failed (RuntimeError: extractor exploded); the payload was not spooled: its turns stay in the "
            "transcript, and the session's next hook call captures everything after the last recorded position") in err
    assert not list((settings.paths.home / "spool").glob("*.json"))

    # …which is true: the session's next hook call captures it (and the turn after it).
    monkeypatch.undo()
    t.turn("My locker code is 4417.")
    assert _run_hook(settings, payload(t.path)) == 0
    assert facts(settings.paths.home)[1:] == ["- [preference] I prefer green tea in the morning.",
                                              "- [general] My locker code is 4417."]


def test_a_session_end_that_cannot_be_spooled_says_how_to_capture_it_by_hand(tmp_path, settings, monkeypatch,
                                                                             capsys):
    from suzent_cli.hooks import capture, claude_code

    _full_disk(monkeypatch, settings.paths.state_dir, settings.paths.home / "spool")

    def broken(*args, **kwargs):
        raise RuntimeError("extractor exploded")

    monkeypatch.setattr(claude_code, "capture_payload", broken)
    monkeypatch.setattr(capture, "capture_payload", broken)
    t = Transcript(tmp_path / "it's here.jsonl")
    t.turn("My cat is named Pixel.")
    assert _run_hook(settings, payload(t.path, "SessionEnd", reason="logout")) == 0
    err = capsys.readouterr().err
    assert "this was the session's last hook (SessionEnd)" in err and "stays spooled" not in err
    command = err.split("capture them with: ", 1)[1].strip()
    monkeypatch.undo()
    env = cli_env(settings.paths.home, SUZENT_TODAY=DAY)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert facts(settings.paths.home) == ["- [personal] My cat is named Pixel."]


def test_an_unusable_payload_is_kept_in_the_fallback_when_the_state_spool_is_full(settings, monkeypatch, capsys):
    _full_disk(monkeypatch, settings.paths.state_dir)
    assert _run_hook(settings, "not json at all") == 0
    err = capsys.readouterr().err
    kept = list((settings.paths.home / "spool" / "failed").glob("*.raw"))
    assert len(kept) == 1 and f"kept in {kept[0]}" in err and kept[0].read_bytes() == b"not json at all"
    assert kept[0].with_suffix(".error.txt").is_file()


# --- when the configuration is broken ---------------------------------------------------------------------

def test_capture_hook_home_is_resolved_without_the_config(tmp_path):
    from suzent_cli.cli.app import capture_hook_home

    hook_argv = ["capture", "--from", "claude-code"]
    assert capture_hook_home(["--home", "/a", *hook_argv], {"SUZENT_HOME": "/b"}) == Path("/a")
    assert capture_hook_home(["--today", "2026-01-01", "--home=/a", "capture", "--from=claude-code"], {}) == Path("/a")
    assert capture_hook_home(hook_argv, {"SUZENT_HOME": "/b", "SUZENT_DATA_DIR": "/c"}) == Path("/b")
    assert capture_hook_home(hook_argv, {"SUZENT_HOME": "", "SUZENT_DATA_DIR": "/c"}) == Path("/c")
    assert capture_hook_home(hook_argv, {}) == Path("~/.suzent").expanduser().absolute()
    assert capture_hook_home(["recall", "--from", "claude-code"], {}) is None
    assert capture_hook_home(["capture", "--fact", "[x] y"], {}) is None
    assert capture_hook_home(["--home", "capture", "run", "--from", "claude-code"], {}) is None  # `run` is the command


def test_rescue_unread_payload_spools_into_home_and_a_working_config_drains_it(tmp_path, home, monkeypatch):
    from suzent_cli.cli.app import capture_hook_home
    from suzent_cli.hooks import spool

    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    hook_home = capture_hook_home(["--home", str(home), "capture", "--from", "claude-code"], {})
    tail = spool.rescue_unread_payload(hook_home, stdin=io.BytesIO(payload(t.path).encode()))
    kept = list((home / "spool").glob("*.json"))
    assert len(kept) == 1 and tail == (f"; the hook payload is kept in {kept[0]}: the next hook call or "
                                       "`suzent run` captures it once this is fixed")
    assert spool.rescue_unread_payload(hook_home, stdin=io.BytesIO(b"")) == ""  # already read by the capture
    assert spool.rescue_unread_payload(capture_hook_home(["recall", "--from", "claude-code"], {}),
                                       stdin=io.BytesIO(b"{}")) == ""
    bad = spool.rescue_unread_payload(hook_home, stdin=io.BytesIO(b"not json"))
    assert "not a usable payload, kept in" in bad and len(list((home / "spool" / "failed").glob("*.raw"))) == 1

    settings = resolve_settings(home=home, today=DAY, env={})
    report = spool.drain(settings)
    assert (report["drained"], report["turns"]) == (1, 1) and not kept[0].exists()
    assert facts(home) == ["- [personal] My cat is named Pixel."]


def test_a_capture_hook_with_an_invalid_config_keeps_its_payload_for_later(tmp_path, home):
    home.mkdir(parents=True)
    subprocess.run(["sh", "-c", f"printf 'not toml ==' > '{home / 'config.toml'}'"], check=True)
    t = Transcript(tmp_path / "s.jsonl")
    t.turn("My cat is named Pixel.")
    r = hook(home, payload(t.path, "SessionEnd", reason="logout"))
    assert r.returncode == 0 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "not valid TOML" in r.stderr and "the hook payload is kept in" in r.stderr
    kept = list((home / "spool").glob("*.json"))
    assert len(kept) == 1 and facts(home) == []

    (home / "config.toml").unlink()  # fixed; the next hook call of any session drains the kept payload first
    other = Transcript(tmp_path / "other.jsonl", session="bbbb2222-0000")
    other.turn("I prefer green tea in the morning.")
    r = hook(home, payload(other.path, session=other.session), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout)["drained"] == 2 and not kept[0].exists()
    assert sorted(facts(home)) == ["- [personal] My cat is named Pixel.",
                                   "- [preference] I prefer green tea in the morning."]


def test_a_session_lock_that_cannot_be_created_stops_the_drain_without_counting_attempts(tmp_path, settings,
                                                                                         monkeypatch):
    from suzent_cli.hooks import spool

    for session in ("aaaa1111", "bbbb2222"):
        spool.spool(settings, json.loads(payload(tmp_path / "s.jsonl", session=session)))

    def read_only(path, timeout):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(spool, "locked", read_only)
    report = spool.drain(settings)
    assert report["failed"] == 0 and report["left"] == 2 and len(report["errors"]) == 1
    assert "cannot lock" in report["errors"][0] and "Permission denied" in report["errors"][0]
    assert [spool.attempts_of(p) for p in spool.waiting(settings)] == [0, 0]


def test_hooks_import_light_and_capture_fact_does_not_import_them(tmp_path):
    probe = ("import sys, suzent_cli.hooks.spool, suzent_cli.hooks.claude_code, suzent_cli.hooks.transcript,"
             " suzent_cli.hooks.capture, suzent_cli.hooks.recall\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "suzent_cli", "capture", "--fact", "[x] y"],
                       capture_output=True, text=True, cwd=REPO, env=cli_env(tmp_path / "h"), timeout=60)
    assert r.returncode == 0, r.stderr
    imported = {ln.rsplit("|", 1)[1].strip() for ln in r.stderr.splitlines() if ln.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] in HEAVY or m.startswith("suzent_cli.hooks")}


# --- recall ---------------------------------------------------------------------------------------------

def prompt(text: str) -> str:
    return json.dumps({"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/work/proj",
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text})


@pytest.fixture(scope="module")
def indexed_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("recall") / "home"
    env = {"SUZENT_EMBEDDER": "hash:64"}
    r = run_cli(home, "--today", DAY, "capture", "--fact", "[preference] Prefers green tea in the morning",
                "--fact", "[personal] Lives in Lisbon", "--fact", "[technical] Uses neovim as editor with the gruvbox theme", env_extra=env)
    assert r.returncode == 0, r.stderr
    r = run_cli(home, "index", env_extra=env)
    assert r.returncode == 0, r.stderr
    return home


def test_recall_hook_prints_hook_specific_output(indexed_home):
    r = run_cli(indexed_home, "recall", "--from", "claude-code", "--timeout", "60",
                input=prompt("What tea should I make for the morning?"), env_extra={"SUZENT_EMBEDDER": "hash:64"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)  # exactly one JSON object
    assert list(out) == ["hookSpecificOutput"] and out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert out["hookSpecificOutput"]["additionalContext"] == (
        f"Relevant memories (suzent):\n- [preference] Prefers green tea in the morning ({DAY})")


def test_recall_context_in_process(indexed_home):
    from suzent_cli.hooks.recall import recall_context

    settings = resolve_settings(home=indexed_home, today=DAY, env={"SUZENT_EMBEDDER": "hash:64"})
    assert recall_context(settings, prompt("ok").encode()) is None  # too short to recall for
    assert recall_context(settings, prompt("refactor the tokenizer module please").encode()) is None  # no hit
    text = json.loads(recall_context(settings, prompt("which editor and theme do I use in Lisbon?").encode()))
    context = text["hookSpecificOutput"]["additionalContext"]
    assert "- [technical] Uses neovim as editor with the gruvbox theme" in context and "- [personal] Lives in Lisbon" in context
    assert "tea" not in context


def test_recall_hook_without_index_prints_nothing(home):
    r = run_cli(home, "recall", "--from", "claude-code", input=prompt("What tea should I make for the morning?"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_recall_hook_is_time_bounded_and_never_fails(indexed_home):
    started = time.monotonic()
    r = run_cli(indexed_home, "recall", "--from", "claude-code", "--timeout", "0.001",
                input=prompt("What tea should I make for the morning?"))
    assert time.monotonic() - started < 3
    assert r.returncode == 0 and r.stdout == "" and "recall skipped: no answer within 0.001 s" in r.stderr
    r = run_cli(indexed_home, "recall", "--from", "claude-code", input="{broken")
    assert r.returncode == 0 and r.stdout == "" and len(r.stderr.splitlines()) == 1


PAGE = """---
title: Preferences
type: entity
---
# Preferences

## Claims

- I prefer pytest over unittest (confirmed 67x, last 2026-11-29) · source: 2026-11-29.md:9
- Lived in Madrid (confirmed 1x, last 2025-01-04) (until 2026-06-01) · source: 2025-01-04.md:7
"""


def test_recall_hook_formats_vault_hits_like_log_hits(tmp_path):
    home = tmp_path / "home"
    page = home / "notebook" / "3_Personal" / "Preferences.md"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE, encoding="utf-8")
    env = {"SUZENT_EMBEDDER": "hash:64"}
    assert run_cli(home, "--today", DAY, "capture", "--fact", "[preference] Prefers pytest fixtures",
                   env_extra=env).returncode == 0
    assert run_cli(home, "index", env_extra=env).returncode == 0
    r = run_cli(home, "recall", "--from", "claude-code", "--timeout", "60", env_extra=env,
                input=prompt("Should the new tests use pytest, or stay on unittest? And Madrid?"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"].splitlines()
    assert lines[0] == "Relevant memories (suzent):"
    assert "- [Preferences] I prefer pytest over unittest (confirmed 67x) (2026-11-29)" in lines
    assert "- [Preferences] Lived in Madrid (until 2026-06-01) (2025-01-04)" in lines  # no longer true: says so
    assert f"- [preference] Prefers pytest fixtures ({DAY})" in lines
    assert not any("source:" in ln or "- -" in ln or "[notebook]" in ln for ln in lines)


def test_hit_line_of_a_multi_line_vault_chunk():
    from suzent_cli.hooks.recall import HIT_CLIP, hit_line
    from suzent_cli.recall import Hit

    def hit(content: str, **kw) -> Hit:
        base = dict(id="x", content=content, score=1.0, source="notebook:2_Projects/Suzent.md",
                    source_type="notebook", source_file="2_Projects/Suzent.md", locator=0, date=None, session=None,
                    category="notebook", tags=[], importance=0.5)
        return Hit(**{**base, **kw})

    chunk = ("Suzent is a memory tool.\n\n* Written in Python (confirmed 2x, last 2026-05-02)\n"
             "  - [ ] nested task: add a release script\n- Uses LanceDB for search (confirmed 1x, last 2026-05-01)")
    assert hit_line(hit(chunk)) == ("- [Suzent] Suzent is a memory tool; Written in Python (confirmed 2x); nested "
                                    "task: add a release script; Uses LanceDB for search (2026-05-02)")
    # The lines sharing a word with the prompt come first, dated by their claim.
    assert hit_line(hit(chunk), ["lancedb"]).startswith("- [Suzent] Uses LanceDB for search; Suzent is a memory tool;")
    assert hit_line(hit(chunk), ["lancedb"]).endswith("(2026-05-01)")
    long = hit("- " + "word " * 200 + "(confirmed 3x, last 2026-01-02)")
    line = hit_line(long)
    assert line.startswith("- [Suzent] word word") and line.endswith("… (2026-01-02)")
    assert len(line) <= len("- [Suzent] ") + HIT_CLIP + len(" (2026-01-02)")
    # A daily-log fact is unchanged.
    log = hit("I prefer tea", source_type="archive_log", category="preference", source_file="2026-06-01.md",
              date="2026-06-01")
    assert hit_line(log) == "- [preference] I prefer tea (2026-06-01)"
