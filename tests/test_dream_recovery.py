"""The dream finishes what it starts and loses no batch to a network outage (issue 13 §6), and a wrong-typed
setting never stops a capture: follow-ups resumed after a kill at the ledger entry, a backfill folded exactly once
however it interleaves with a dream, transient engine errors backed off instead of counted, a lenient config
resolver for capture. Real files, in-process runners; the kill at the ledger entry runs a real process in
tests/integration/test_dream_recovery_process.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from conftest import invoke, log, settings_at
from suzent_cli.archive import Fact, parse_fact_line
from suzent_cli.config import resolve_settings
from suzent_cli.errors import ConfigInvalid

D = dt.date.fromisoformat


# --- config: a wrong-typed setting capture does not need is a warning for capture, a refusal elsewhere -------
@pytest.mark.parametrize("toml, names", [
    ("[index]\nembedder = 5\n", "[index] embedder"),
    ("[index]\ncontext_window = \"wide\"\n", "[index] context_window"),
    ("index = 3\n", "[index] must be a table"),
    ("[claude]\nmodel = 5\napi_key = [1]\n", "[claude] model"),
    ("[capture]\nextractor = 1\n", "[capture] extractor"),
    ("user_id = 7\n", "user_id"),
    ("dream = 3\n", "[dream] must be a table"),
    ("lock_timeout = \"soon\"\n", "lock_timeout"),
])
def test_wrong_typed_settings_capture_does_not_need_are_recorded_when_lenient(tmp_path, toml, names):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigInvalid, match=names.replace("[", r"\[").replace("]", r"\]")):
        resolve_settings(home=tmp_path, env={})  # strict (every command but capture/config): refused as before
    s = resolve_settings(home=tmp_path, env={}, lenient=True)
    assert any(names in e for e in s.config_errors), s.config_errors
    assert s.paths.archive_dir == tmp_path / "sandbox/shared/memory/archive" and s.lock_timeout > 0


@pytest.mark.parametrize("toml", ["[paths]\nmemory_dir = 5\n", "paths = 1\n", "today = 5\n"])
def test_what_capture_needs_stays_fatal_even_when_lenient(tmp_path, toml):
    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigInvalid):
        resolve_settings(home=tmp_path, env={}, lenient=True)


def test_a_wrong_typed_embedder_warns_capture_and_refuses_index(home):
    home.mkdir()
    (home / "config.toml").write_text("[index]\nembedder = 5\n")
    proc = invoke(home, "capture", "--fact", "[personal] Lives in Lisbon")
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "embedder must be a string" in proc.stderr and "Traceback" not in proc.stderr
    assert "Lives in Lisbon" in next((home / "sandbox/shared/memory/archive").glob("*.md")).read_text()
    proc = invoke(home, "index")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: ") and "embedder must be a string" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- helpers ---------------------------------------------------------------------------------------------
def rules_runner(settings, follow_ups=(), **config):
    """The rules engine; ``follow_ups`` () owes none, None the standard ones (reconcile, promote)."""
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.runner import DreamRunner

    return DreamRunner(settings, DreamConfig(**config), engine="rules",
                       follow_ups=None if follow_ups is None else list(follow_ups))


def backfill(settings, day: str, fact: str):
    """``suzent capture --date day --fact fact`` in-process (records the late line)."""
    from suzent_cli.capture import write_facts

    category, content, tags = parse_fact_line("- " + fact)
    return write_facts(settings, [Fact(content=content, category=category, tags=tags)], day=D(day), time="10:00",
                       refresh=False)


# --- 2. a backfill is folded exactly once, however it interleaves with a dream ---------------------------------
def test_a_backfill_landing_while_a_dream_reads_is_folded_exactly_once(home, monkeypatch):
    """A second backfill to a consolidated day lands after the dream read the late-line records and before it read
    that day's log. The dream must either fold it with its own record or not at all (it then waits for the next
    run) — never fold it under the first record and leave its own record for the next run to fold again."""
    from suzent_cli.dream import runner as runner_mod
    from suzent_cli.errors import LockTimeout
    from suzent_cli.vault.state import read_late_lines, read_superseded

    s = settings_at(home)
    for day in ("2026-06-01", "2026-06-02", "2026-06-03"):
        log(s, day, f"[technical] Read about {day}")
    assert rules_runner(s).tick(force=True).watermark_after == D("2026-06-03")
    backfill(s, "2026-06-02", "[preference] Likes jazz")                       # record R1
    impatient = dataclasses.replace(s, lock_timeout=0)
    late_log, landed = s.paths.log_path(D("2026-06-02")), []
    real = runner_mod.read_text

    def read_text(path, *args, **kwargs):
        if Path(path) == late_log and not landed:
            landed.append("tried")
            try:  # a person's second backfill to the same day, at the worst moment
                backfill(impatient, "2026-06-02", "[preference] Likes green tea")      # record R2
                landed.append("during the dream")
            except LockTimeout:
                landed.append("blocked")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner_mod, "read_text", read_text)
    first = rules_runner(s).tick(force=True)
    monkeypatch.setattr(runner_mod, "read_text", real)
    assert first.outcome == "ingested", first.error
    if "blocked" in landed:  # the dream holds the capture out while it reads: the person's capture goes in after
        backfill(s, "2026-06-02", "[preference] Likes green tea")
    second = rules_runner(s).tick(force=True)
    assert second.outcome in ("ingested", "idle", "linted"), second.error
    page = (s.paths.vault_dir / "3_Personal/Preferences.md").read_text()
    assert "Likes green tea (confirmed 1x" in page and "confirmed 2x" not in page, page
    assert not any("green tea" in line for line in read_superseded(s.paths.state_dir))  # its log row stays
    assert read_late_lines(s.paths.state_dir) == []


# --- 1. a re-run completes the follow-ups of the last productive run ---------------------------------------------
def indexed_backlog(home: Path):
    from conftest import CountingEmbedder
    from suzent_cli.index.api import run_index

    s = dataclasses.replace(settings_at(home), embedder="hash:64")
    for i, day in enumerate(["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05"]):
        log(s, day, "[preference] Likes green tea", "[personal] Lives in Berlin", f"[technical] Read chapter {i}")
    run_index(s, embedder=CountingEmbedder())
    return s


def end_state(s) -> dict:
    from suzent_cli.index.store import ReadStore
    from suzent_cli.vault import ledger
    from suzent_cli.vault.dream_state import load_state
    from suzent_cli.vault.state import read_superseded, read_tombstones

    store = ReadStore.open_existing(s.paths.index_dir)
    state = load_state(s.paths.state_dir)
    memory = s.paths.memory_dir / "MEMORY.md"
    return {"rows": sorted((r["source"], r["locator"], r["content"]) for r in store.rows()),
            "superseded": read_superseded(s.paths.state_dir), "tombstones": read_tombstones(s.paths.state_dir),
            "memory_md": memory.read_text() if memory.is_file() else None,
            "watermark": ledger.watermark(ledger.read_ledger(s.paths.vault_dir)),
            "pending": state.followups_pending, "in_flight": state.in_flight,
            "pages": {p.relative_to(s.paths.vault_dir).as_posix(): p.read_text()
                      for p in sorted(s.paths.vault_dir.rglob("*.md")) if ".state" not in p.parts}}


def test_a_failed_follow_up_stays_pending_and_the_next_tick_retries_it(home):
    from suzent_cli.dream.runner import StepResult
    from suzent_cli.vault.dream_state import load_state

    s = settings_at(home)
    log(s, "2026-06-01", "[personal] Lives in Berlin")
    calls = []

    def failing(settings, result, embedder=None):
        calls.append("fail")
        return StepResult("reconcile", False, error="index busy")

    def working(name):
        return lambda settings, result, embedder=None: calls.append(name) or StepResult(name, True, {"summary": "ok"})

    first = rules_runner(s, follow_ups=[("reconcile", failing), ("promote", working("promote"))]).tick(force=True)
    assert first.outcome == "ingested" and [st.ok for st in first.steps] == [False, True]
    assert load_state(s.paths.state_dir).followups_pending["steps"] == ["reconcile"]
    second = rules_runner(s, follow_ups=[("reconcile", working("reconcile")), ("promote", working("promote"))],
                          lint_enabled=False).tick()
    assert second.outcome == "idle" and [st.name for st in second.steps] == ["reconcile"]
    assert calls == ["fail", "promote", "reconcile"] and load_state(s.paths.state_dir).followups_pending is None


# --- 3. an unreachable engine backs off; only real failures count toward the skip -------------------------------
def closed_port_url() -> str:
    """A loopback URL nothing listens on (connection refused at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def claude_runner(settings, **config):
    """The claude engine against ``settings``' base URL, without SDK retries (each attempt is one request)."""
    from suzent_cli.config import DreamConfig
    from suzent_cli.dream.claude_agent import ClaudeEngine
    from suzent_cli.dream.runner import DreamRunner

    return DreamRunner(settings, DreamConfig(**config), engine="claude", follow_ups=[],
                       engine_factory=lambda name: ClaudeEngine.from_settings(settings, max_retries=0))


def claude_settings(home: Path, url: str, now: str = "2026-06-20T12:00"):
    return settings_at(home, now, env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url})


@pytest.mark.parametrize("status", [429, 500, 529, "refused"])
def test_transient_engine_errors_back_off_and_never_skip_the_batch(home, status):
    from fake_anthropic import NO_RETRY_WAIT, SERVER_ERROR, running, text_reply, tool_use_reply

    from suzent_cli.config import DreamConfig
    from suzent_cli.status import status as dream_status
    from suzent_cli.vault import ledger
    from suzent_cli.vault.dream_state import load_state

    log(settings_at(home), "2026-06-01", "[preference] Likes tea")
    body = {"type": "error", "error": {"type": "rate_limit_error" if status == 429 else "overloaded_error",
                                       "message": "busy"}} if status != 500 else SERVER_ERROR
    with running([(status if status != "refused" else 500, body, NO_RETRY_WAIT)]) as api:
        url = closed_port_url() if status == "refused" else api.url
        s = claude_settings(home, url)
        waits = []
        for _ in range(5):  # more than max_retries (3) forced attempts: none of them counts
            result = claude_runner(s).tick(force=True)
            assert result.outcome == "unproductive" and result.retry_after, result.to_json()
            assert "unreachable" in result.error and "not counted" in result.error
            waits.append(dt.datetime.fromisoformat(result.retry_after) - s.clock)
        state = load_state(s.paths.state_dir)
        assert state.failures == {} and state.engine_backoff["attempts"] == 5
        assert waits == [dt.timedelta(minutes=m) for m in (5, 10, 20, 40, 80)]  # doubling, from the same clock
        assert ledger.watermark(ledger.read_ledger(s.paths.vault_dir)) is None  # never skipped
        # not forced: the gate waits, and says why and until when (status shows the same reason)
        idle = claude_runner(s).tick()
        assert idle.outcome == "idle" and "claude engine unreachable since 2026-06-20T12:00:00+00:00" in idle.summary
        assert "retrying after 2026-06-20T13:20" in idle.summary
        shown = dream_status(s, DreamConfig(engine="claude"), with_index=False)
        assert "unreachable since" in shown["next_tick"]["reason"] and shown["engine_backoff"]["attempts"] == 5
    # the network is back after the retry time: the batch is folded and the backoff cleared
    page = "---\ntype: personal\nstatus: active\n---\n# Preferences\n\n## Claims\n\n- Likes tea · source: 2026-06-01.md:5\n"
    with running([(200, tool_use_reply(("write_file", {"path": "3_Personal/Preferences.md", "content": page}))),
                  (200, text_reply("Folded 1 fact."))]) as api:
        later = claude_settings(home, api.url, now="2026-06-20T13:21")
        assert claude_runner(later, min_facts=1, min_hours=0).tick().outcome == "ingested"
        state = load_state(s.paths.state_dir)
        assert state.engine_backoff is None and state.failures == {} and state.in_flight is None


def test_a_real_failure_counts_and_clears_the_backoff(home):
    from fake_anthropic import running

    from suzent_cli.vault.dream_state import load_state

    log(settings_at(home), "2026-06-01", "[preference] Likes tea")
    s = claude_settings(home, closed_port_url())
    assert claude_runner(s).tick(force=True).retry_after
    bad = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad request"}}
    with running([(400, bad)]) as api:
        result = claude_runner(claude_settings(home, api.url)).tick(force=True)
    assert result.outcome == "unproductive" and result.retry_after is None and result.failures == 1
    assert "request failed" in result.error
    state = load_state(s.paths.state_dir)
    assert state.failures == {"2026-06-01": 1} and state.engine_backoff is None


def test_transient_classifies_the_sdk_errors():
    import anthropic
    try:
        import httpx2 as httpx  # the HTTP client this SDK version is built on
    except ImportError:
        import httpx

    from suzent_cli.claude import transient

    request = httpx.Request("POST", "http://127.0.0.1/v1/messages")

    def status_error(code: int):
        return anthropic.APIStatusError("x", response=httpx.Response(code, request=request), body=None)

    assert all(transient(status_error(c)) for c in (429, 500, 502, 503, 529))
    assert not any(transient(status_error(c)) for c in (400, 401, 403, 404, 408, 413))
    assert transient(anthropic.APIConnectionError(request=request))
    try:
        raise anthropic.APITimeoutError(request=request) from httpx.ConnectTimeout("connect")
    except anthropic.APITimeoutError as exc:
        assert transient(exc)
    try:
        raise anthropic.APITimeoutError(request=request) from httpx.ReadTimeout("read")
    except anthropic.APITimeoutError as exc:
        assert not transient(exc)  # the model (or the run's deadline) was too slow: a real failure
