"""The claude extractor against a scripted fake of the Messages API (a loopback HTTP server, no real API:
:mod:`fake_anthropic`). The real ``anthropic`` client code runs end to end: request building, retries, parsing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_anthropic import SERVER_ERROR, FakeMessagesAPI, running, text_reply, tool_use_reply

from conftest import invoke
from suzent_cli.archive import Fact
from suzent_cli.capture import extract_and_write
from suzent_cli.capture.extract import choose_extractor
from suzent_cli.capture.extract.claude import ClaudeExtractor, build_system_prompt, parse_facts
from suzent_cli.capture.extract.turns import Message, Turn
from suzent_cli.config import resolve_settings
from suzent_cli.errors import ClaudeUnavailable, ExtractionFailed, ExtractorUnavailable

TURN = Turn((Message("user", "I moved to Lisbon last month. I now prefer tea over coffee. Can you fix my regex?"),
             Message("assistant", "Sure, here is the regex.")))
TURN_JSON = json.dumps({"user": "I moved to Lisbon last month. I now prefer tea over coffee. Can you fix my regex?",
                        "assistant": "Sure, here is the regex."})

GOOD_FACTS = [
    {"content": "Moved to Lisbon in May 2026.", "category": "personal", "tags": ["location", "move"]},
    {"content": "Prefers tea over coffee now.", "category": "preference", "tags": ["drinks", "tea"]},
]


def tool_reply(facts: list, *, name: str = "record_facts") -> dict:
    return tool_use_reply((name, {"facts": facts}), prefix="toolu_0")


TEXT_ONLY = text_reply("The user moved to Lisbon.")


@pytest.fixture
def api():
    with running([(200, tool_reply(GOOD_FACTS))]) as fake:
        yield fake


def make_extractor(api: FakeMessagesAPI, **options) -> ClaudeExtractor:
    options.setdefault("max_retries", 0)
    return ClaudeExtractor("test-key", model="claude-test", base_url=api.url, **options)


def claude_settings(tmp_path, api: FakeMessagesAPI, **env):
    return resolve_settings(home=tmp_path / "home", today="2026-06-01",
                            env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url,
                                 "SUZENT_CLAUDE_MODEL": "claude-test", **env})


# --- the request ------------------------------------------------------------------------------------------------


def test_request_carries_tool_schema_forced_choice_and_prompt(api):
    known = ["Lives in Porto.", "Prefers coffee in the morning."]
    make_extractor(api).extract(TURN, known)
    assert len(api.requests) == 1
    req = api.requests[0]
    assert req["path"] == "/v1/messages"
    assert "test-key" in " ".join(req["headers"].values())  # SDK 2.x: Authorization: Bearer <key>
    body = req["body"]
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 1024
    assert "temperature" not in body  # removed in API 2026-10-21; the API answers 400 to it
    assert body["tool_choice"] == {"type": "tool", "name": "record_facts"}
    [tool] = body["tools"]
    assert tool["name"] == "record_facts"
    item = tool["input_schema"]["properties"]["facts"]["items"]
    assert tool["input_schema"]["required"] == ["facts"]
    assert item["properties"]["content"]["type"] == "string"
    assert item["properties"]["category"]["enum"] == ["personal", "preference", "goal", "context", "technical",
                                                      "interaction"]
    assert item["properties"]["tags"]["items"] == {"type": "string"}
    assert body["messages"] == [{"role": "user", "content": TURN.as_text()}]
    system = body["system"] if isinstance(body["system"], str) else " ".join(b["text"] for b in body["system"])
    assert "Already in memory" in system
    assert "- Lives in Porto.\n- Prefers coffee in the morning." in system
    assert "Do not re-emit a fact that is already in memory unchanged" in system
    assert "changes, updates, contradicts or adds" in system and "MUST still be emitted" in system
    assert "Never invent" in system


def test_prompt_keeps_at_most_ten_known_facts_each_on_one_line():
    prompt = build_system_prompt([f"fact {i}\nforged line" for i in range(15)])
    assert "- fact 9 forged line" in prompt
    assert "fact 10" not in prompt
    assert "(nothing yet)" in build_system_prompt([])


def test_from_settings_honours_key_base_url_and_model(tmp_path, api):
    settings = claude_settings(tmp_path, api, SUZENT_CLAUDE_MODEL="claude-from-settings")
    extractor = choose_extractor(settings, "auto")
    assert isinstance(extractor, ClaudeExtractor) and extractor.name == "claude"
    assert extractor.extract(TURN, []) == [Fact(**{**f, "tags": tuple(f["tags"])}) for f in GOOD_FACTS]
    assert api.last["model"] == "claude-from-settings"


def test_empty_turn_makes_no_request(api):
    assert make_extractor(api).extract(Turn((Message("user", "   "),)), []) == []
    assert api.requests == []


# --- parsing the reply ------------------------------------------------------------------------------------------


def test_facts_parse_and_bad_items_are_skipped(api):
    api.script((200, tool_reply([
        GOOD_FACTS[0],
        {"category": "personal", "tags": ["x", "y"]},  # no content
        {"content": 42, "category": "goal", "tags": []},  # content not a string
        {"content": "   ", "category": "goal"},  # blank content
        "just a string",  # not an object
        {"content": "Plans to run a marathon.", "category": "ambition", "tags": ["Running", 7, None, "goals", ""]},
        {"content": "Works on suzent.", "category": "context", "tags": "not-a-list"},
    ])))
    facts = make_extractor(api).extract(TURN, [])
    assert facts == [
        Fact("Moved to Lisbon in May 2026.", "personal", ("location", "move")),
        Fact("Plans to run a marathon.", "general", ("running", "goals")),
        Fact("Works on suzent.", "context", ()),
    ]


def test_tool_input_without_a_fact_list_fails():
    with pytest.raises(ExtractionFailed):
        parse_facts({"facts": "none"})
    assert parse_facts({"facts": []}) == []


def test_text_only_reply_raises_extraction_failed(api):
    api.script((200, TEXT_ONLY))
    with pytest.raises(ExtractionFailed, match="without a record_facts tool call"):
        make_extractor(api).extract(TURN, [])


def test_tool_use_of_another_tool_is_not_usable(api):
    api.script((200, tool_reply(GOOD_FACTS, name="something_else")))
    with pytest.raises(ExtractionFailed):
        make_extractor(api).extract(TURN, [])


# --- errors -----------------------------------------------------------------------------------------------------


def test_server_error_raises_extraction_failed(api):
    api.script((500, SERVER_ERROR))
    with pytest.raises(ExtractionFailed, match="500"):
        make_extractor(api).extract(TURN, [])
    assert len(api.requests) == 1  # max_retries=0


def test_server_error_is_retried_then_succeeds(api):
    api.script((500, SERVER_ERROR, {"retry-after-ms": "5"}), (200, tool_reply(GOOD_FACTS)))
    assert len(make_extractor(api, max_retries=2).extract(TURN, [])) == 2
    assert len(api.requests) == 2


def test_network_error_raises_extraction_failed(api):
    url = api.url
    api.server.shutdown()
    api.server.server_close()  # nothing listens on the port any more
    extractor = ClaudeExtractor("test-key", model="claude-test", base_url=url, max_retries=0, timeout=5)
    with pytest.raises(ExtractionFailed, match="Connection"):
        extractor.extract(TURN, [])


def test_missing_key_raises_claude_unavailable(tmp_path):
    settings = resolve_settings(home=tmp_path, today="2026-06-01", env={})
    with pytest.raises(ClaudeUnavailable) as err:
        ClaudeExtractor.from_settings(settings)
    message = str(err.value)
    assert "ANTHROPIC_API_KEY" in message and "--extractor offline" in message and "\n" not in message
    assert err.value.exit_code == 2
    with pytest.raises(ClaudeUnavailable):
        choose_extractor(settings, "claude")
    with pytest.raises(ExtractorUnavailable):
        choose_extractor(settings, "gpt")


# --- capture: fallback to offline -------------------------------------------------------------------------------


def test_capture_uses_claude_and_known_facts(tmp_path, api):
    settings = claude_settings(tmp_path, api)
    result = extract_and_write(settings, TURN_JSON, extractor_name="claude",
                               known_facts=lambda text: ["Lives in Porto."], time="10:00")
    assert result.extractor == "claude" and result.known_facts == 1 and result.warnings == []
    assert "- Lives in Porto." in api.last["system"]
    log = result.path.read_text(encoding="utf-8")
    assert "- [personal] Moved to Lisbon in May 2026. `location move`" in log


def test_capture_falls_back_to_offline_when_claude_fails(tmp_path, api):
    api.script((500, SERVER_ERROR, {"x-should-retry": "false"}))
    settings = claude_settings(tmp_path, api)

    def no_index(text):
        raise RuntimeError("no index")

    result = extract_and_write(settings, TURN_JSON, extractor_name="claude", known_facts=no_index, time="10:00")
    assert result.extractor == "offline" and result.known_facts == 0
    assert any("known-fact lookup skipped" in w for w in result.warnings)
    assert any(w.startswith("claude extraction failed (") and w.endswith("; used the offline extractor")
               for w in result.warnings)
    log = result.path.read_text(encoding="utf-8")
    assert "I moved to Lisbon last month." in log and "Moved to Lisbon in May 2026." not in log


# --- the CLI, in-process -------------------------------------------------------------------------------------


def run_capture(home: Path, api: FakeMessagesAPI, turn_file: Path, *extra: str) -> subprocess.CompletedProcess:
    args = ["--today", "2026-06-01", "capture", "--turn-from", str(turn_file), "--extractor", "claude",
            "--date", "2026-06-01", "--time", "10:00", *extra]
    return invoke(home, *args, env_extra={"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.url})


def test_cli_capture_with_claude_writes_the_extracted_facts(tmp_path, api):
    turn_file = tmp_path / "turn.json"
    turn_file.write_text(TURN_JSON, encoding="utf-8")
    proc = run_capture(tmp_path, api, turn_file, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["extractor"] == "claude" and summary["captured"] == 2
    log = (tmp_path / "sandbox/shared/memory/archive/2026-06-01.md").read_text(encoding="utf-8")
    assert "## 10:00" in log
    assert "- [personal] Moved to Lisbon in May 2026. `location move`" in log
    assert "- [preference] Prefers tea over coffee now. `drinks tea`" in log
    assert len(api.requests) == 1 and api.last["tool_choice"] == {"type": "tool", "name": "record_facts"}


def test_cli_capture_falls_back_to_offline_when_the_api_fails(tmp_path, api):
    api.script((500, SERVER_ERROR, {"retry-after-ms": "5"}))
    turn_file = tmp_path / "turn.json"
    turn_file.write_text(TURN_JSON, encoding="utf-8")
    proc = run_capture(tmp_path, api, turn_file)
    assert proc.returncode == 0, proc.stderr
    assert "claude extraction failed" in proc.stderr and "used the offline extractor" in proc.stderr
    assert len(api.requests) == 3  # the first try and max_retries=2
    log = (tmp_path / "sandbox/shared/memory/archive/2026-06-01.md").read_text(encoding="utf-8")
    assert "I moved to Lisbon last month." in log and "I now prefer tea over coffee." in log
    assert "fix my regex" not in log and "Moved to Lisbon in May 2026." not in log
