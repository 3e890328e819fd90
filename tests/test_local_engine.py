"""A local model engine (issue 27 item 1): every claude stage pointed at a local server speaking the Messages API
(Ollama, llama-server) with no API key, against :mod:`fake_local_llm` (a real HTTP server on 127.0.0.1 driven by the
real ``anthropic`` client): extraction, a dream tick's update path, lint, the error shapes of those servers, the
offline fallback, the time bounds, and what status and config show say.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest
from fake_local_llm import (
    LLAMACPP_LOADING,
    LLAMACPP_NO_JINJA,
    MODEL,
    OLLAMA_RUNNER_DIED,
    local_server,
    text_reply,
    tool_use_reply,
)

from conftest import invoke
from suzent_cli import claude
from suzent_cli.archive import Fact, append_entry
from suzent_cli.capture import extract_and_write
from suzent_cli.capture.extract import resolve_extractor_name
from suzent_cli.config import (
    LOCAL_DREAM_TIMEOUT,
    dream_config,
    effective_config,
    is_local_url,
    resolve_settings,
)
from suzent_cli.errors import ClaudeUnavailable, ConfigInvalid

TURN = json.dumps({"user": "I moved to Lisbon last month. Can you fix my regex?", "assistant": "Sure."})
LISBON = {"content": "Moved to Lisbon.", "category": "personal", "tags": ["location", "move"]}


def facts_reply(*facts: dict) -> dict:
    return tool_use_reply(("record_facts", {"facts": list(facts)}))


def local_env(url: str, **extra: str) -> dict:
    return {"SUZENT_CLAUDE_BASE_URL": url, "SUZENT_CLAUDE_MODEL": MODEL, **extra}


def local_settings(home: Path, url: str, **extra: str):
    return resolve_settings(home=home, today="2026-06-01", env=local_env(url, **extra))


@pytest.fixture
def fast_backoff(monkeypatch):
    """A local server's retry waits in milliseconds rather than seconds (the rule, not the wait, is under test)."""
    monkeypatch.setattr(claude, "LOCAL_BACKOFF", (0.01,))


# --- what counts as local ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://localhost:11434", "http://LOCALHOST:8080/v1", "https://llm.localhost",
                                 "http://127.0.0.1:11434", "http://127.9.8.7", "http://[::1]:8080",
                                 "http://localhost."])
def test_loopback_and_localhost_urls_are_local(url):
    assert is_local_url(url)


@pytest.mark.parametrize("url", [None, "", "localhost:11434", "ftp://localhost/", "http://192.168.1.20:11434",
                                 "http://10.0.0.2", "https://api.anthropic.com", "http://127.0.0.1.evil.example",
                                 "http://localhost@evil.example", "http://0.0.0.0:11434", "http://[::1"])
def test_any_other_url_is_not_local(url):
    assert not is_local_url(url)


# --- no key for a local server; a remote one still needs it -----------------------------------------------------


def test_auto_picks_the_model_engine_for_a_local_url_without_a_key(tmp_path):
    settings = local_settings(tmp_path, "http://localhost:11434")
    assert settings.anthropic_api_key is None and settings.claude_configured
    assert resolve_extractor_name(settings) == "claude"
    assert dream_config(settings).engine_for(settings) == "claude"
    remote = resolve_settings(home=tmp_path, today="2026-06-01", env={"ANTHROPIC_BASE_URL": "https://llm.example"})
    assert not remote.claude_configured and resolve_extractor_name(remote) == "offline"


def test_a_remote_url_without_a_key_is_refused_with_one_line(tmp_path):
    env = {"ANTHROPIC_BASE_URL": "https://me:secret-pw@llm.example:8443/v1"}
    proc = invoke(tmp_path / "home", "dream", "--force", "--engine", "claude", env_extra=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: the claude dream engine needs ANTHROPIC_API_KEY for the "
                                                   "remote server https://***@llm.example:8443/v1"), proc.stderr
    assert "secret-pw" not in proc.stderr and "--engine offline" in proc.stderr
    with pytest.raises(ClaudeUnavailable, match="remote server https://llm.example"):
        claude.connect(None, model="m", base_url="https://llm.example")


def test_extraction_against_a_local_server_sends_no_key(tmp_path):
    with local_server([(200, facts_reply(LISBON))]) as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    assert result.extractor == "claude" and result.warnings == []
    assert "- [personal] Moved to Lisbon. `location move`" in result.path.read_text(encoding="utf-8")
    [request] = server.requests
    assert request["path"] == "/v1/messages" and request["body"]["model"] == MODEL
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert claude.LOCAL_KEY in (headers.get("authorization", "") + headers.get("x-api-key", ""))


def test_cli_capture_through_a_local_server(tmp_path):
    turn = tmp_path / "turn.json"
    turn.write_text(TURN, encoding="utf-8")
    with local_server([(200, facts_reply(LISBON))]) as server:
        proc = invoke(tmp_path / "home", "--today", "2026-06-01", "capture", "--turn-from", str(turn), "--json",
                      env_extra=local_env(server.url))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["extractor"] == "claude" and len(server.requests) == 1


# --- the servers' error shapes: one clear line, and the offline fallback -----------------------------------------


def fallback_warning(result) -> str:
    [warning] = [w for w in result.warnings if "used the offline extractor" in w]
    assert "\n" not in warning
    return warning


def test_model_not_found_falls_back_to_offline_and_says_what_to_do(tmp_path):
    with local_server(models=("llama3.2:3b",)) as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    warning = fallback_warning(result)
    assert f"model '{MODEL}' not found at the local server {server.url}" in warning
    assert "ollama pull" in warning and "claude.model" in warning
    assert len(server.requests) == 1  # a 404 is not retried
    assert result.extractor == "offline"
    assert "I moved to Lisbon last month." in result.path.read_text(encoding="utf-8")  # the fact is not lost


def test_a_base_url_ending_in_v1_is_named(tmp_path):
    with local_server() as server:
        result = extract_and_write(local_settings(tmp_path, server.url + "/v1"), TURN, time="10:00")
    warning = fallback_warning(result)
    assert f"no Messages API at {server.url}/v1 (HTTP 404: 404 page not found)" in warning
    assert "without /v1" in warning and server.requests[0]["path"] == "/v1/v1/messages"


def test_a_model_without_tool_use_is_named_and_not_retried(tmp_path):
    with local_server(no_tools=(MODEL,)) as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    warning = fallback_warning(result)
    assert "cannot use tools" in warning and "does not support tools" in warning
    assert "pick a model with tool use" in warning and len(server.requests) == 1


def test_llama_cpp_without_jinja_is_not_retried_and_says_the_flag(tmp_path, fast_backoff):
    with local_server([LLAMACPP_NO_JINJA], flavour="llama.cpp") as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    assert "--jinja" in fallback_warning(result) and len(server.requests) == 1


def test_a_server_that_is_down_falls_back_at_once(tmp_path):
    with local_server() as server:
        url = server.url
    started = time.monotonic()
    result = extract_and_write(local_settings(tmp_path, url), TURN, time="10:00")
    assert time.monotonic() - started < 5  # a refused connection is not retried (no backoff waits)
    warning = fallback_warning(result)
    assert f"no model server answers at {url}" in warning and "ollama serve" in warning
    assert "I moved to Lisbon last month." in result.path.read_text(encoding="utf-8")


def test_a_loading_model_is_retried_then_answers(tmp_path, fast_backoff):
    with local_server([LLAMACPP_LOADING, (200, facts_reply(LISBON))], flavour="llama.cpp") as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    assert result.extractor == "claude" and result.warnings == [] and len(server.requests) == 2
    assert server.requests[0]["body"]["model"] == MODEL  # llama-server answers whatever name is asked


def test_still_loading_after_the_retries_says_so(tmp_path, fast_backoff):
    with local_server([LLAMACPP_LOADING], flavour="llama.cpp") as server:
        result = extract_and_write(local_settings(tmp_path, server.url, SUZENT_CLAUDE_MAX_RETRIES="1"), TURN,
                                   time="10:00")
    assert "is still loading the model (HTTP 503: Loading model [unavailable_error])" in fallback_warning(result)
    assert len(server.requests) == 2  # claude.max_retries = 1


def test_a_crashed_runner_is_retried_as_the_server_asks(tmp_path):
    died = (*OLLAMA_RUNNER_DIED, {"retry-after-ms": "5"})
    with local_server([died, (200, facts_reply(LISBON))]) as server:
        result = extract_and_write(local_settings(tmp_path, server.url), TURN, time="10:00")
    assert result.extractor == "claude" and len(server.requests) == 2


def test_a_slow_answer_times_out_once_and_is_never_retried(tmp_path):
    """A request that timed out is still being computed by a CPU-bound server: a retry would queue a second copy."""
    with local_server([(200, facts_reply(LISBON))]) as server:
        server.delay = 2.0
        result = extract_and_write(local_settings(tmp_path, server.url, SUZENT_CLAUDE_TIMEOUT="1"), TURN,
                                   time="10:00")
    warning = fallback_warning(result)
    assert "gave no answer within 1 s" in warning and "claude.timeout" in warning
    assert len(server.requests) == 1


# --- time bounds --------------------------------------------------------------------------------------------------


def test_local_servers_get_long_time_bounds_unless_set(tmp_path):
    local = local_settings(tmp_path, "http://127.0.0.1:11434")
    assert claude.bounds(local, 60.0, 2) == (claude.LOCAL_TIMEOUT, claude.LOCAL_RETRIES)
    assert claude.bounds(local, 900.0, 2)[0] == 900.0  # never shorter than the stage's own
    assert dream_config(local).timeout_seconds == LOCAL_DREAM_TIMEOUT
    assert dream_config(local, timeout_seconds="120").timeout_seconds == 120
    remote = resolve_settings(home=tmp_path, today="2026-06-01", env={"ANTHROPIC_API_KEY": "k"})
    assert claude.bounds(remote, 60.0, 2) == (60.0, 2) and dream_config(remote).timeout_seconds == 600
    chosen = local_settings(tmp_path, "http://localhost:1", SUZENT_CLAUDE_TIMEOUT="90",
                            SUZENT_CLAUDE_MAX_RETRIES="0")
    assert claude.bounds(chosen, 60.0, 2) == (90.0, 0)
    bad = local_settings(tmp_path, "http://localhost:1", SUZENT_CLAUDE_TIMEOUT="soon")
    with pytest.raises(ConfigInvalid, match="claude.timeout must be a number"):
        claude.bounds(bad, 60.0, 2)
    assert "claude.timeout must be a number, got 'soon'" in effective_config(bad)["problems"]


def test_a_bad_bound_never_stops_a_capture_and_stops_a_dream_with_one_line(tmp_path):
    with local_server([(200, facts_reply(LISBON))]) as server:
        result = extract_and_write(local_settings(tmp_path, server.url, SUZENT_CLAUDE_TIMEOUT="soon"), TURN,
                                   time="10:00")
    assert result.extractor == "claude"
    assert "claude.timeout must be a number, got 'soon'; using 600" in result.warnings
    proc = invoke(tmp_path / "home", "dream", "--force",
                  env_extra=local_env("http://localhost:9", SUZENT_CLAUDE_MAX_RETRIES="99"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["Error: claude.max_retries must be between 0 and 10, got '99'"]


def test_the_engines_take_the_local_bounds(tmp_path):
    from suzent_cli.capture.extract.claude import ClaudeExtractor
    from suzent_cli.dream.claude_agent import ClaudeEngine

    settings = local_settings(tmp_path, "http://localhost:11434")
    engine = ClaudeEngine.from_settings(settings)
    assert (engine.request_timeout, engine.max_retries) == (claude.LOCAL_TIMEOUT, claude.LOCAL_RETRIES)
    extractor = ClaudeExtractor.from_settings(settings)
    assert extractor._claude.local and extractor._claude.sdk.max_retries == 0  # suzent retries, not the SDK
    assert extractor._claude.sdk.timeout == claude.LOCAL_TIMEOUT


# --- the dream and lint against a local server -------------------------------------------------------------------

BERLIN = "- [personal] Lives in Berlin `location`"
PAGE = ("---\ntype: personal\nstatus: active\n---\n# Profile\n\n## Claims\n\n"
        "- Lives in Lisbon (confirmed 1x, last 2026-06-02) · source: 2026-06-02.md:5\n")


def test_a_dream_tick_supersedes_the_replaced_fact_through_the_local_engine(tmp_path):
    """The update path end to end: Berlin, then the move to Lisbon; the local model writes the current claim and
    hands the replaced line off through its tool; the runner tombstones it as superseded; promote writes MEMORY.md
    through the same local model."""
    home = tmp_path / "home"
    archive = home / "sandbox/shared/memory/archive"
    append_entry(archive, dt.date(2026, 6, 1), "09:00", "s1", [Fact("Lives in Berlin", "personal", ("location",))],
                 timeout=5)
    append_entry(archive, dt.date(2026, 6, 2), "09:00", "s1", [Fact("Moved to Lisbon", "personal", ("location",))],
                 timeout=5)
    turns = [
        (200, tool_use_reply(("search", {"query": "Lives in"}))),
        (200, tool_use_reply(("write_file", {"path": "3_Personal/Profile.md", "content": PAGE}),
                             ("hand_off_superseded", {"lines": [BERLIN]}))),
        (200, text_reply("Lisbon replaces Berlin in 3_Personal/Profile.md.")),
        (200, text_reply("## Profile\n- Lives in Lisbon")),  # promote: MEMORY.md's digest, by the same model
    ]
    with local_server(turns) as server:
        proc = invoke(home, "dream", "--force", "--json",
                      env_extra=local_env(server.url, SUZENT_NOW="2026-06-03T12:00"))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["engine"], data["outcome"], data["watermark_after"]) == ("claude", "ingested", "2026-06-02")
    assert len(server.requests) == 4 and all(r["body"]["model"] == MODEL for r in server.requests)
    assert "tools" not in server.requests[3]["body"]  # the promote call
    memory = (home / "sandbox/shared/memory/MEMORY.md").read_text(encoding="utf-8")
    assert "- Lives in Lisbon" in memory and "Berlin" not in memory
    assert "hand_off_superseded" in [t["name"] for t in server.requests[0]["body"]["tools"]]
    vault = home / "notebook"
    assert (vault / "3_Personal/Profile.md").read_text() == PAGE
    tombstones = [json.loads(line) for line in (vault / ".state/tombstones.jsonl").read_text().splitlines()]
    assert tombstones == [{"content": "lives in berlin", "reason": "superseded"}]
    assert data["steps"][0]["name"] == "reconcile" and data["steps"][0]["detail"]["lines_retired"] == 1


def test_a_dream_against_a_local_server_that_is_down_backs_off_without_counting(tmp_path):
    home = tmp_path / "home"
    append_entry(home / "sandbox/shared/memory/archive", dt.date(2026, 6, 1), "09:00", "s1",
                 [Fact("Lives in Berlin", "personal")], timeout=5)
    with local_server() as server:
        url = server.url
    proc = invoke(home, "dream", "--force", "--json", env_extra=local_env(url, SUZENT_NOW="2026-06-03T12:00"))
    data = json.loads(proc.stdout)
    assert (proc.returncode, data["outcome"], data["failures"]) == (5, "unproductive", 0) and data["retry_after"]
    assert f"no model server answers at {url}" in data["error"]


def test_lint_through_a_local_server(tmp_path):
    home = tmp_path / "home"
    from suzent_cli.vault import bootstrap

    bootstrap(home / "notebook")
    turns = [(200, tool_use_reply(("search", {"query": "Lives in"}))),
             (200, text_reply('CONTRADICTION: 3_Personal/Profile.md: "Lives in Berlin" vs "Lives in Lisbon"\n'
                              "Checked the vault."))]
    with local_server(turns) as server:
        proc = invoke(home, "lint", "--json", env_extra=local_env(server.url, SUZENT_NOW="2026-06-03T12:00"))
    assert proc.returncode == 0, proc.stderr
    assert "Lives in Lisbon" in proc.stdout and len(server.requests) == 2
    assert "The dream: lint runbook" in json.dumps(server.requests[0]["body"]["system"])


def test_lint_names_a_missing_model(tmp_path):
    home = tmp_path / "home"
    with local_server(models=("other:1b",)) as server:
        proc = invoke(home, "lint", "--json", env_extra=local_env(server.url, SUZENT_NOW="2026-06-03T12:00"))
    assert proc.returncode == 5
    assert f"model '{MODEL}' not found at the local server" in proc.stdout + proc.stderr


# --- status and config show ---------------------------------------------------------------------------------------


def test_status_says_which_engine_and_endpoint_and_never_the_key(tmp_path):
    home = tmp_path / "home"
    proc = invoke(home, "status", "--json", env_extra=local_env("http://localhost:11434"))
    assert proc.returncode == 0, proc.stderr
    llm = json.loads(proc.stdout)["llm"]
    assert llm | {"problem": None} == {"url": "http://localhost:11434", "local": True, "model": MODEL,
                                       "key": "not needed", "usable": True, "timeout": claude.LOCAL_TIMEOUT,
                                       "max_retries": claude.LOCAL_RETRIES, "problem": None,
                                       "extractor": "claude", "dream": "claude"}
    text = invoke(home, "status", env_extra=local_env("http://localhost:11434")).stdout
    assert f"{MODEL} at local server http://localhost:11434, key not needed" in text
    secret = "sk-ant-never-print-me"
    for args in (("status", "--json"), ("status",), ("config", "show"), ("config", "show", "--json")):
        proc = invoke(home, *args, env_extra={"ANTHROPIC_API_KEY": secret,
                                              "ANTHROPIC_BASE_URL": "https://u:pw@llm.example"})
        assert secret not in proc.stdout + proc.stderr and "pw@" not in proc.stdout, args
    remote = json.loads(invoke(home, "status", "--json",
                               env_extra={"ANTHROPIC_BASE_URL": "https://llm.example"}).stdout)["llm"]
    assert (remote["local"], remote["key"], remote["usable"], remote["extractor"]) == (False, "missing", False,
                                                                                       "offline")


def test_status_warns_when_a_local_server_is_set_but_the_model_is_the_default(tmp_path):
    proc = invoke(tmp_path / "home", "status", "--json", env_extra={"SUZENT_CLAUDE_BASE_URL": "http://127.0.0.1:8080"})
    warnings = json.loads(proc.stdout)["warnings"]
    assert any("claude.model is still 'claude-sonnet-5-5'" in w for w in warnings), warnings


def test_config_show_names_the_local_dream_timeout_and_the_claude_bounds(tmp_path):
    settings = local_settings(tmp_path, "http://localhost:11434", SUZENT_CLAUDE_TIMEOUT="900")
    shown = effective_config(settings)["settings"]
    assert shown["dream.timeout_seconds"] == {"value": LOCAL_DREAM_TIMEOUT, "origin": "default"}
    assert shown["claude.timeout"] == {"value": "900", "origin": "env:SUZENT_CLAUDE_TIMEOUT"}
    assert shown["claude.max_retries"] == {"value": None, "origin": "default"}


# --- the error bodies ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, text", [
    ({"type": "error", "error": {"type": "not_found_error", "message": "model 'x' not found"}},
     "model 'x' not found [not_found_error]"),
    ({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
     "Loading model [unavailable_error]"),
    ({"error": "llama runner process has terminated"}, "llama runner process has terminated"),
    ("Service Unavailable\n", "Service Unavailable"),
    (None, "no details"),
    ({"error": {"message": ""}}, "{'error': {'message': ''}}"),
])
def test_server_message_reads_each_servers_error_shape(body, text):
    assert claude.server_message(body) == text


def test_claude_codes_own_local_base_url_alone_never_turns_auto_on(tmp_path):
    """ANTHROPIC_BASE_URL is Claude Code's variable too (a person's local proxy for Claude Code): with no key it is
    honoured by a stage asked for by name, but `auto` stays offline until a local URL is set for suzent."""
    claude_codes = resolve_settings(home=tmp_path, today="2026-06-01",
                                    env={"ANTHROPIC_BASE_URL": "http://localhost:8082"})
    assert claude_codes.claude_usable and not claude_codes.claude_configured
    for env in ({"SUZENT_CLAUDE_BASE_URL": "http://localhost:11434"},
                {"ANTHROPIC_BASE_URL": "http://localhost:8082", "ANTHROPIC_API_KEY": "sk-ant-test"}):
        settings = resolve_settings(home=tmp_path, today="2026-06-01", env=env)
        assert settings.claude_usable and settings.claude_configured
    (tmp_path / "config.toml").write_text('[claude]\nbase_url = "http://127.0.0.1:11434"\n')
    assert resolve_settings(home=tmp_path, today="2026-06-01", env={}).claude_configured
