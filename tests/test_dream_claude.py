"""The claude dream engine and its vault sandbox.

The engine runs against :mod:`fake_anthropic` (a loopback fake of the Messages API driven by the real ``anthropic``
client) with canned tool-use turns; :class:`VaultTools` is also tested directly.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest
from fake_anthropic import NO_RETRY_WAIT, SERVER_ERROR, message, running, text_reply, tool_use_reply

from suzent_cli.config import resolve_settings
from suzent_cli.dream.claude_agent import ClaudeEngine, clean_summary, final_text, ingest_message, parse_contradictions
from suzent_cli.dream.engine import BatchFact, IngestBatch, LintJob
from suzent_cli.dream.vault_tools import OUTPUT_CAP, VaultTools, glob_regex
from suzent_cli.errors import ConfigInvalid, DreamFailed
from suzent_cli.vault import bootstrap

DAY = dt.date(2026, 6, 1)
# Line 6 was tombstoned: the batch's log text lacks it, so the facts keep their file line numbers (5 and 7).
LOG_TEXT = ("# Daily Log - 2026-06-01\n\n## 14:05 — abcdefgh\n\n"
            "- [preference] Likes tea `drinks tea`\n"
            "- [personal] Lives in Berlin `location`\n")
TEA = "- [preference] Likes tea `drinks tea`"
BERLIN = "- [personal] Lives in Berlin `location`"
PROFILE = ("---\ntype: personal\ntitle: Profile\nowner: me\n---\n\n# Profile\n\n## Claims\n\n"
           "- Lives in Berlin (confirmed 1x, last 2026-05-20) · source: 2026-05-20.md:5\n\n## Related\n")


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "notebook"
    bootstrap(root)
    (root / "3_Personal/Profile.md").write_text(PROFILE, encoding="utf-8")
    return root


def make_batch(vault: Path, *, deadline: float | None = None, **extra) -> IngestBatch:
    facts = (BatchFact(DAY, 5, TEA, "preference", "Likes tea", ("drinks", "tea")),
             BatchFact(DAY, 7, BERLIN, "personal", "Lives in Berlin", ("location",)))
    return IngestBatch(vault_dir=vault, run_date=dt.date(2026, 6, 3), start=dt.date(2026, 5, 31), end=DAY,
                       days=(DAY,), logs={DAY: LOG_TEXT}, facts=facts,
                       deadline=time.monotonic() + 600 if deadline is None else deadline, **extra)


def make_engine(api, **options) -> ClaudeEngine:
    options.setdefault("max_retries", 0)
    return ClaudeEngine("test-key", model="claude-test", base_url=api.url, **options)


def tool_results(request: dict) -> list[dict]:
    """The tool_result blocks of a request's last (user) message."""
    return [b for b in request["body"]["messages"][-1]["content"] if b.get("type") == "tool_result"]


def system_text(body: dict) -> str:
    system = body["system"]
    return system if isinstance(system, str) else " ".join(b["text"] for b in system)


# --- ingest: the happy path ---------------------------------------------------------------------------------------


NEW_PAGE = ("---\ntype: personal\ntitle: Preferences\nstatus: active\n---\n\n# Preferences\n\n## Claims\n\n"
            "- Likes tea (confirmed 1x, last 2026-06-01) · source: 2026-06-01.md:5\n\n## Related\n\n"
            "- [[3_Personal/Profile]]\n")


def test_ingest_runs_the_tool_loop_and_reports_pages_superseded_and_summary(vault):
    script = [
        (200, tool_use_reply(("list_files", {"pattern": "**/*.md"}), ("read_file", {"path": "index.md"}),
                             text="Orienting.")),
        (200, tool_use_reply(("write_file", {"path": "3_Personal/Preferences.md", "content": NEW_PAGE}))),
        (200, tool_use_reply(("edit_file", {"path": "3_Personal/Preferences.md",
                                            "old_string": "- Likes tea (confirmed 1x",
                                            "new_string": "- Likes green tea (confirmed 1x"}))),
        (200, tool_use_reply(("hand_off_superseded", {"lines": [BERLIN, "- [personal] Never said this"]}))),
        (200, text_reply("<details>I checked the profile.</details>\nAdded a tea preference to "
                         "3_Personal/Preferences.md and confirmed Berlin.")),
    ]
    with running(script) as api:
        result = make_engine(api).ingest(make_batch(vault))
    assert result.pages == ["3_Personal/Preferences.md"]
    assert result.superseded == [BERLIN]
    assert result.summary == "Added a tea preference to 3_Personal/Preferences.md and confirmed Berlin."
    assert "Likes green tea (confirmed 1x" in (vault / "3_Personal/Preferences.md").read_text(encoding="utf-8")
    assert len(api.requests) == 5

    first = api.requests[0]
    assert first["path"] == "/v1/messages"  # the base URL is honoured: the fake got the request
    assert "test-key" in " ".join(first["headers"].values())
    body = first["body"]
    assert body["model"] == "claude-test" and body["max_tokens"] == 4096 and "temperature" not in body
    assert [t["name"] for t in body["tools"]] == ["list_files", "read_file", "search", "write_file", "edit_file",
                                                 "hand_off_superseded"]
    assert all(t["input_schema"]["type"] == "object" for t in body["tools"])
    system = system_text(body)
    assert "The dream: ingest runbook" in system and "Put conflicts on content pages" in system
    assert "# Notebook Schema" in system  # the vault's schema.md
    [user] = body["messages"]
    assert user["role"] == "user"
    assert '<log file="2026-06-01.md">' in user["content"]
    assert f"    5 | {TEA}" in user["content"] and f"    7 | {BERLIN}" in user["content"]
    assert "after 2026-05-31 up to and including 2026-06-01" in user["content"]

    listing, index = tool_results(api.requests[1])
    assert listing["tool_use_id"] == "toolu_1" and "3_Personal/Profile.md" in listing["content"]
    assert "log.md" not in listing["content"].split("\n")
    assert "# Notebook Index" in index["content"] and not index.get("is_error")
    assert api.requests[1]["body"]["messages"][1]["role"] == "assistant"  # the assistant turn is sent back
    [handoff] = tool_results(api.requests[4])
    assert handoff["is_error"] is True
    assert "handed off 1 line" in handoff["content"] and "Never said this" in handoff["content"]


def test_ingest_message_lists_queues_and_numbers_each_fact_line(vault):
    batch = make_batch(vault, confirmations=({"claim": "Likes tea", "date": "2026-06-02"},),
                       revisit=("3_Personal/Profile.md",))
    text = ingest_message(batch)
    assert "<confirmations>" in text and '"claim": "Likes tea"' in text
    assert "<revisit>\n- 3_Personal/Profile.md\n</revisit>" in text
    assert "      | # Daily Log - 2026-06-01" in text  # headings carry no number
    assert "<confirmations>" not in ingest_message(make_batch(vault))


def test_schema_falls_back_to_the_packaged_one(tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    with running([(200, text_reply("Nothing to fold."))]) as api:
        result = make_engine(api).ingest(make_batch(bare))
    assert result.summary == "Nothing to fold." and result.pages == [] and result.superseded == []
    assert "# Notebook Schema" in system_text(api.last)


# --- the sandbox, through the loop ---------------------------------------------------------------------------------


def test_escape_attempts_are_refused_and_the_loop_goes_on(tmp_path, vault):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.md").write_text("outside\n", encoding="utf-8")
    (vault / "3_Personal/link").symlink_to(outside, target_is_directory=True)
    (vault / "2_Wiki/Concepts/Alias.md").symlink_to(outside / "target.md")
    archive = vault / "archive"
    archive.mkdir()
    (archive / "2026-06-01.md").write_text(LOG_TEXT, encoding="utf-8")
    ledger = (vault / "log.md").read_text(encoding="utf-8")
    page = {"content": "# pwned\n"}
    attempts = [
        ("write_file", {"path": "../outside.md", **page}),
        ("write_file", {"path": str(tmp_path / "abs.md"), **page}),
        ("read_file", {"path": "/etc/passwd"}),
        ("write_file", {"path": "3_Personal/../../x.md", **page}),
        ("write_file", {"path": "3_Personal/link/evil.md", **page}),
        ("read_file", {"path": "3_Personal/link/target.md"}),
        ("write_file", {"path": "2_Wiki/Concepts/Alias.md", **page}),
        ("edit_file", {"path": "2_Wiki/Concepts/Alias.md", "old_string": "outside", "new_string": "pwned"}),
        ("write_file", {"path": "log.md", **page}),
        ("edit_file", {"path": "LOG.md", "old_string": "#", "new_string": "pwned"}),
        ("write_file", {"path": ".state/dream_state.json", **page}),
        ("write_file", {"path": ".state/notes.md", **page}),
        ("write_file", {"path": "archive/2026-06-01.md", **page}),
        ("write_file", {"path": "3_Personal/notes.txt", **page}),
    ]
    script = [(200, tool_use_reply(*attempts)), (200, text_reply("Nothing written."))]
    with running(script) as api:
        result = make_engine(api, protected=(archive, tmp_path / "index")).ingest(make_batch(vault))
    results = tool_results(api.requests[1])
    assert len(results) == len(attempts)
    assert all(r.get("is_error") is True for r in results), [r["content"] for r in results]
    assert all("\n" not in r["content"] for r in results)
    assert result.pages == [] and result.summary == "Nothing written."
    assert result.warnings and "refused" in result.warnings[0]
    for gone in (tmp_path / "outside.md", tmp_path / "abs.md", tmp_path / "x.md", outside / "evil.md",
                 vault / ".state/dream_state.json", vault / ".state/notes.md", vault / "3_Personal/notes.txt"):
        assert not gone.exists(), gone
    assert (outside / "target.md").read_text(encoding="utf-8") == "outside\n"
    assert (vault / "log.md").read_text(encoding="utf-8") == ledger
    assert (archive / "2026-06-01.md").read_text(encoding="utf-8") == LOG_TEXT
    assert "root:" not in " ".join(r["content"] for r in results)


# --- failures -----------------------------------------------------------------------------------------------------


def test_api_error_after_retries_raises_dream_failed(vault):
    with running([(500, SERVER_ERROR, NO_RETRY_WAIT)]) as api:
        with pytest.raises(DreamFailed, match="500") as err:
            make_engine(api, max_retries=2).ingest(make_batch(vault))
    assert len(api.requests) == 3 and "\n" not in str(err.value)


def test_turn_limit_raises_dream_failed_and_keeps_written_pages(vault):
    page = {"path": "0_Inbox/Note.md", "content": "# Note\n"}
    with running([(200, tool_use_reply(("write_file", page)))]) as api:
        with pytest.raises(DreamFailed, match="turn limit"):
            make_engine(api, max_turns=3).ingest(make_batch(vault))
    assert len(api.requests) == 3
    assert (vault / "0_Inbox/Note.md").is_file()


def test_deadline_already_passed_makes_no_request(vault):
    with running() as api:
        with pytest.raises(DreamFailed, match="deadline"):
            make_engine(api).ingest(make_batch(vault, deadline=time.monotonic() - 1))
    assert api.requests == []


def test_request_timeout_is_bounded_by_the_deadline(vault):
    """The mechanism, not the clock: the one request went out with a read timeout no longer than the time left to
    the deadline (the SDK sends it as ``x-stainless-read-timeout``), against a reply 2 s away."""
    with running() as api:
        api.delay = 2.0
        with pytest.raises(DreamFailed, match="timed out"):
            make_engine(api, max_retries=2).ingest(make_batch(vault, deadline=time.monotonic() + 0.3))
    assert len(api.requests) == 1  # no retries this close to the deadline
    headers = {k.lower(): v for k, v in api.requests[0]["headers"].items()}
    assert 0 < float(headers["x-stainless-read-timeout"]) <= 0.3


@pytest.mark.parametrize("reply, reason", [
    (message([], "end_turn"), "neither a tool call nor text"),
    (message([{"type": "tool_use", "id": "t1", "name": "write_file", "input": {"path": "a.md"}}], "max_tokens"),
     "cut off"),
    (message([{"type": "text", "text": "No."}], "refusal"), "refusal"),
])
def test_unusable_final_replies_raise_dream_failed(vault, reply, reason):
    with running([(200, reply)]) as api:
        with pytest.raises(DreamFailed, match=reason):
            make_engine(api).ingest(make_batch(vault))


# --- lint ---------------------------------------------------------------------------------------------------------


def test_lint_runs_the_loop_and_parses_contradiction_lines(vault):
    warning = "> [!warning] Conflicting claims: Lives in Berlin vs Lives in Lisbon\n\n## Related"
    script = [
        (200, tool_use_reply(("search", {"query": "lives in"}))),
        (200, tool_use_reply(("edit_file", {"path": "3_Personal/Profile.md", "old_string": "## Related",
                                            "new_string": warning}))),
        (200, text_reply('CONTRADICTION: 3_Personal/Profile.md: "Lives in Berlin" vs "Lives in Lisbon"\n'
                         "- CONTRADICTION: 3_Personal/Work.md: two employers\nCONTRADICTION: none\n\n"
                         "Checked 2 pages and marked one conflict.")),
    ]
    with running(script) as api:
        findings = make_engine(api).lint(LintJob(vault_dir=vault, run_date=dt.date(2026, 6, 3),
                                                 deadline=time.monotonic() + 600))
    assert findings.contradictions == ['3_Personal/Profile.md: "Lives in Berlin" vs "Lives in Lisbon"',
                                       "3_Personal/Work.md: two employers"]
    assert findings.pages == ["3_Personal/Profile.md"]
    assert findings.summary == "Checked 2 pages and marked one conflict."
    body = api.requests[0]["body"]
    assert "hand_off_superseded" not in [t["name"] for t in body["tools"]]
    assert "The dream: lint runbook" in system_text(body) and "# Notebook Schema" in system_text(body)
    assert "<log" not in body["messages"][0]["content"] and "2026-06-03" in body["messages"][0]["content"]
    [hits] = tool_results(api.requests[1])
    assert "3_Personal/Profile.md:11: - Lives in Berlin" in hits["content"]


# --- construction -------------------------------------------------------------------------------------------------


def test_from_settings_uses_key_base_url_and_model(tmp_path, vault):
    with running([(200, text_reply("ok"))]) as api:
        settings = resolve_settings(home=tmp_path / "home", today="2026-06-03",
                                    env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url,
                                         "SUZENT_CLAUDE_MODEL": "claude-from-settings"})
        engine = ClaudeEngine.from_settings(settings, max_turns=5, protected=(tmp_path / "archive",))
        assert engine.name == "claude" and engine.max_turns == 5
        engine.ingest(make_batch(vault))
    assert api.last["model"] == "claude-from-settings"


def test_missing_key_raises_config_invalid(tmp_path):
    settings = resolve_settings(home=tmp_path, today="2026-06-03", env={})
    with pytest.raises(ConfigInvalid) as err:
        ClaudeEngine.from_settings(settings, max_turns=5, protected=())
    assert "ANTHROPIC_API_KEY" in str(err.value) and "--engine offline" in str(err.value)


# --- summary helpers ----------------------------------------------------------------------------------------------


def test_summary_is_the_last_text_after_the_final_tool_call():
    blocks = [{"type": "text", "text": "Start."}, {"type": "tool_use", "id": "t", "name": "x", "input": {}},
              {"type": "text", "text": "Draft."}, {"type": "text", "text": "Final."}]
    assert final_text(blocks) == "Final."
    assert final_text([{"type": "text", "text": "A."}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}]) \
        == "A."  # no text after the tool call: all text
    assert clean_summary("<details><summary>why</summary>long\nreasoning</details>  Done.  ") == "Done."
    capped = clean_summary("x" * 700)
    assert len(capped) == 598 and capped.endswith("…")
    assert clean_summary("y" * 600) == "y" * 600


def test_parse_contradictions_ignores_other_lines():
    text = "Summary first.\n**CONTRADICTION:** a vs b\nnot CONTRADICTION: inline\nCONTRADICTION: a vs b\n"
    assert parse_contradictions(text) == ["a vs b"]


# --- VaultTools directly ------------------------------------------------------------------------------------------


@pytest.fixture
def tools(tmp_path, vault) -> VaultTools:
    (vault / "2_Wiki/Concepts/Tea.md").write_text("# Tea\n\nGreen TEA is good.\nBlack tea too.\n", encoding="utf-8")
    (vault / ".state/secret.md").write_text("tea secret\n", encoding="utf-8")
    (vault / "archive").mkdir()
    (vault / "archive/2026-06-01.md").write_text("tea log\n", encoding="utf-8")
    return VaultTools(vault, protected=[vault / "archive"], allowed_superseded={TEA, BERLIN})


def test_list_files_globs_inside_the_vault_only(tools, vault):
    text, err = tools.call("list_files", {"pattern": "*.md"})
    assert not err and text.split("\n") == ["index.md", "schema.md"]  # log.md is the runner's
    text, _ = tools.call("list_files", {})
    files = text.split("\n")
    assert "2_Wiki/Concepts/Tea.md" in files and "3_Personal/Profile.md" in files
    assert not any(f.startswith((".state", "archive")) or f == "log.md" for f in files)
    assert tools.call("list_files", {"pattern": "3_Personal/**"})[0] == "3_Personal/Profile.md"
    assert tools.call("list_files", {"pattern": "nothing/*.md"}) == ("no files match 'nothing/*.md'", False)
    assert tools.call("list_files", {"pattern": "../*"})[1] is True


def test_glob_regex():
    assert glob_regex("**/*.md").match("a/b/c.md") and glob_regex("**/*.md").match("c.md")
    assert not glob_regex("*.md").match("a/c.md")
    assert glob_regex("2_Wiki/**").match("2_Wiki/Concepts/Tea.md")
    assert glob_regex("[!x]?.md").match("ab.md") and not glob_regex("[!x]?.md").match("xb.md")


def test_read_file_windows_and_errors(tools):
    text, err = tools.call("read_file", {"path": "2_Wiki/Concepts/Tea.md", "offset": 3, "limit": 1})
    assert not err and text == "Green TEA is good.\n[lines 3-3 of 4; read on with offset=4]"
    assert tools.call("read_file", {"path": "2_Wiki/Concepts/Tea.md"})[0].startswith("# Tea\n")
    assert tools.call("read_file", {"path": "missing.md"}) == ("read_file: missing.md: no such file", True)
    assert tools.call("read_file", {"path": "3_Personal"})[1] is True
    assert tools.call("read_file", {"path": "2_Wiki/Concepts/Tea.md", "offset": 0})[1] is True
    assert tools.call("read_file", {"path": "2_Wiki/Concepts/Tea.md", "offset": "2"})[1] is True
    assert tools.call("read_file", {"path": "archive/2026-06-01.md"})[1] is True
    assert tools.call("read_file", {"path": ".state/secret.md"})[1] is True


def test_output_is_capped(tools, vault):
    (vault / "0_Inbox/Big.md").write_text("z" * (OUTPUT_CAP + 5000), encoding="utf-8")
    text, err = tools.call("read_file", {"path": "0_Inbox/Big.md"})
    assert not err and len(text) < OUTPUT_CAP + 200 and "truncated" in text


def test_search_is_case_insensitive_scoped_and_capped(tools, vault):
    text, err = tools.call("search", {"query": "tea"})
    assert not err and text.split("\n") == ["2_Wiki/Concepts/Tea.md:1: # Tea",
                                            "2_Wiki/Concepts/Tea.md:3: Green TEA is good.",
                                            "2_Wiki/Concepts/Tea.md:4: Black tea too."]
    assert tools.call("search", {"query": r"^(green|black)", "regex": True})[0].count("\n") == 1
    assert tools.call("search", {"query": "tea", "glob": "3_Personal/**"}) == ("no matches for 'tea'", False)
    assert tools.call("search", {"query": "(", "regex": True})[1] is True
    (vault / "0_Inbox/Many.md").write_text("match\n" * 250, encoding="utf-8")
    text, _ = tools.call("search", {"query": "match"})
    assert text.count("\n") == 200 and "50 more matches not shown" in text


def test_write_and_edit(tools, vault):
    assert tools.call("write_file", {"path": "2_Wiki/Entities/New/Deep.md", "content": "a\nb\nb\n"}) == \
        ("created 2_Wiki/Entities/New/Deep.md (3 lines)", False)
    assert tools.call("edit_file", {"path": "2_Wiki/Entities/New/Deep.md", "old_string": "a",
                                    "new_string": "c"}) == ("edited 2_Wiki/Entities/New/Deep.md", False)
    text, err = tools.call("edit_file", {"path": "2_Wiki/Entities/New/Deep.md", "old_string": "b\n",
                                         "new_string": "x"})
    assert err and "occurs 2 times" in text
    text, err = tools.call("edit_file", {"path": "2_Wiki/Entities/New/Deep.md", "old_string": "zzz",
                                         "new_string": "x"})
    assert err and "not found" in text
    assert (vault / "2_Wiki/Entities/New/Deep.md").read_text(encoding="utf-8") == "c\nb\nb\n"
    assert tools.written == {"2_Wiki/Entities/New/Deep.md"}
    assert not [p for p in (vault / "2_Wiki/Entities/New").iterdir() if p.name.startswith(".")]  # no temp files


@pytest.mark.parametrize("name, args, reason", [
    ("write_file", {"path": "a.md"}, "missing required input 'content'"),
    ("write_file", {"path": "a.md", "content": None}, "missing required input 'content'"),
    ("write_file", {"path": 3, "content": "x"}, "input 'path' must be a string, got int"),
    ("write_file", {"path": " ", "content": "x"}, "'path' must be a non-empty string"),
    ("write_file", {"path": "a.md", "content": ["x"]}, "must be a string"),
    ("edit_file", {"path": "a.md", "old_string": "", "new_string": "x"}, "must not be empty"),
    ("hand_off_superseded", {"lines": "- [x] y"}, "must be a list"),
    ("hand_off_superseded", {"lines": [1]}, "non-empty list of strings"),
    ("delete_file", {"path": "a.md"}, "unknown tool"),
    ("write_file", "a.md", "must be a JSON object"),
    ("write_file", {"path": "a\\b.md", "content": "x"}, "forward slashes"),
    ("write_file", {"path": "C:/x.md", "content": "x"}, "absolute"),
    ("write_file", {"path": "~/x.md", "content": "x"}, "absolute"),
    ("write_file", {"path": "./", "content": "x"}, "not a file"),
])
def test_bad_inputs_are_tool_errors_not_exceptions(tools, name, args, reason):
    text, err = tools.call(name, args)
    assert err and reason in text and "\n" not in text


def test_hand_off_accepts_only_lines_of_the_batch(tools):
    text, err = tools.call("hand_off_superseded", {"lines": [TEA, f"  7 | {BERLIN}", f"{TEA}  "]})
    assert (text, err) == ("handed off 3 lines", False)
    assert tools.accepted_superseded == [TEA, BERLIN]
    text, err = tools.call("hand_off_superseded", {"lines": ["- [preference] Likes coffee", TEA]})
    assert err and "handed off 1 line;" in text and "Likes coffee" in text
    assert tools.accepted_superseded == [TEA, BERLIN]


def test_without_allowed_lines_there_is_no_hand_off_tool(vault):
    tools = VaultTools(vault)
    assert "hand_off_superseded" not in [s["name"] for s in tools.schemas]
    assert tools.call("hand_off_superseded", {"lines": [TEA]})[1] is True


# --- through the runner and the CLI -----------------------------------------------------------------------------


def test_cli_dream_with_the_claude_engine_end_to_end(tmp_path):
    """`suzent dream` with an API key picks the claude engine; the agent's page counts, its hand-off is recorded by
    the runner, its attempts at log.md and .state are refused, and the watermark is the runner's alone."""
    from conftest import invoke
    from suzent_cli.archive import Fact, append_entry

    home = tmp_path / "home"
    archive = home / "sandbox/shared/memory/archive"
    append_entry(archive, dt.date(2026, 6, 1), "09:00", "s1", [Fact("Likes tea", "preference"),
                                                              Fact("Likes tea", "preference")], timeout=5)
    page = "---\ntype: personal\nstatus: active\n---\n# Preferences\n\n## Claims\n\n" \
           "- Likes tea (confirmed 2x, last 2026-06-01) · source: 2026-06-01.md:5\n"
    turns = [
        (200, tool_use_reply(("write_file", {"path": "3_Personal/Preferences.md", "content": page}),
                             ("write_file", {"path": "log.md", "content": "## [2026-06-02] ingest watermark=2030-01-01\n"}),
                             ("write_file", {"path": ".state/dream_state.json", "content": "{}"}),
                             ("hand_off_superseded", {"lines": ["- [preference] Likes tea"]}))),
        (200, text_reply("Folded 2 facts into 3_Personal/Preferences.md.")),
    ]
    env = {"SUZENT_NOW": "2026-06-02T12:00", "ANTHROPIC_API_KEY": "test-key"}
    with running(turns) as api:
        proc = invoke(home, "dream", "--force", "--json", env_extra=env | {"ANTHROPIC_BASE_URL": api.url})
    data = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert (data["engine"], data["outcome"], data["watermark_after"]) == ("claude", "ingested", "2026-06-01")
    assert data["summary"] == "Folded 2 facts into 3_Personal/Preferences.md."
    assert any("refused by the vault sandbox" in w for w in data["warnings"])
    vault = home / "notebook"
    assert "2030" not in (vault / "log.md").read_text()
    # the runner recorded the hand-off and its reconcile step retired it: tombstoned as superseded, file truncated
    assert (vault / ".state/superseded.txt").read_text() == ""
    assert json.loads((vault / ".state/tombstones.jsonl").read_text()) == {"content": "likes tea", "reason": "superseded"}
    assert data["steps"][0]["name"] == "reconcile" and data["steps"][0]["detail"]["lines_retired"] == 1
    assert (vault / "3_Personal/Preferences.md").read_text() == page

    append_entry(archive, dt.date(2026, 6, 2), "09:00", "s1", [Fact("Lives in Berlin", "personal")], timeout=5)
    with running([(500, SERVER_ERROR, NO_RETRY_WAIT)]) as api:
        proc = invoke(home, "dream", "--force", "--json",
                       env_extra=env | {"SUZENT_NOW": "2026-06-03T12:00", "ANTHROPIC_BASE_URL": api.url})
    data = json.loads(proc.stdout)
    # a 5xx is the API not serving now (issue 13 §6): not a counted attempt, retried after a back-off
    assert (proc.returncode, data["outcome"], data["failures"]) == (5, "unproductive", 0) and data["retry_after"]
    assert "500" in data["error"] and "not counted" in data["error"] and data["watermark_after"] == "2026-06-01"
