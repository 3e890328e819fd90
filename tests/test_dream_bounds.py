"""The dream's bounds under hostile input (issue 13, section 6): a catastrophic regex in the agent's search, a YAML
alias bomb in a page's frontmatter, and an agent aiming at another tier when the configured folders nest.

No outcome here depends on timing: the catastrophic pattern never finishes (2^60 backtracking steps), so whatever
the machine's load a small time budget always cuts it; the alias bomb is refused by counting, not by time.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from fake_anthropic import running, text_reply, tool_use_reply

from suzent_cli.dream import vault_tools
from suzent_cli.dream.engine import BatchFact, IngestBatch
from suzent_cli.dream.rules import RulesEngine
from suzent_cli.dream.vault_tools import VaultTools
from suzent_cli.errors import DreamFailed
from suzent_cli.index.sources import Source, documents, parse_frontmatter
from suzent_cli.vault import bootstrap
from suzent_cli.vault.pages import read_page

DAY = dt.date(2026, 6, 1)
ISSUE_PATTERN = "(a+)+$"  # the issue's case: catastrophic for Python's re, linear for the regex package
CATASTROPHIC = "(x|x)+y"  # exponential for both over 60 x's: only the time budget ends it
VICTIM = "# Notes\n\n" + "a" * 36 + "!\n\n" + "x" * 60 + "\n"


def bomb(levels: int, key: str = "lol") -> str:
    """A page whose frontmatter is a billion-laughs alias bomb: each level nine aliases of the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return ("---\ntitle: Profile\n" + "\n".join(lines) + f"\n{key}: *a{levels}\n---\n\n# Profile\n\n## Claims\n\n"
            "- Likes tea\n")


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "notebook"
    bootstrap(root)
    (root / "2_Wiki/Notes.md").write_text(VICTIM, encoding="utf-8")
    return root


# --- 4. a catastrophic regex in the agent's search -------------------------------------------------------------

@pytest.mark.timeout(120)  # a safety net against a hang only: the fixed search returns within its small budget
def test_catastrophic_search_regex_is_cut_by_the_budget(vault, monkeypatch):
    monkeypatch.setattr(vault_tools, "SEARCH_SECONDS", 0.2)
    tools = VaultTools(vault)
    text, err = tools.call("search", {"query": ISSUE_PATTERN, "regex": True})
    assert not err and "2_Wiki/Notes.md" not in text  # returned, and the 36 a's then "!" do not match
    text, err = tools.call("search", {"query": CATASTROPHIC, "regex": True})
    assert err and "backtracks too much" in text and "\n" not in text
    text, err = tools.call("search", {"query": "a!", "regex": True})  # the tool still works afterwards
    assert not err and "2_Wiki/Notes.md:3:" in text


@pytest.mark.timeout(120)
def test_search_never_runs_past_the_runs_deadline(vault):
    tools = VaultTools(vault, deadline=time.monotonic() - 1)  # the run's time is up: no search starts
    text, err = tools.call("search", {"query": CATASTROPHIC, "regex": True})
    assert err and "time is up" in text
    tools = VaultTools(vault, deadline=time.monotonic() + 0.3)  # SEARCH_SECONDS is larger: the deadline wins
    text, err = tools.call("search", {"query": CATASTROPHIC, "regex": True})
    assert err and "backtracks too much" in text


@pytest.mark.timeout(120)
def test_list_files_glob_is_bounded_too(vault, monkeypatch):
    monkeypatch.setattr(vault_tools, "SEARCH_SECONDS", 0.2)
    (vault / "2_Wiki" / ("a" * 200 + ".md")).write_text("x\n", encoding="utf-8")
    text, err = VaultTools(vault).call("list_files", {"pattern": "2_Wiki/" + "*a" * 40 + "*b"})
    assert (err and "took too long" in text) or text.startswith("no files match")


@pytest.mark.timeout(120)
def test_claude_engine_gets_a_tool_error_for_a_catastrophic_search_and_finishes(vault, monkeypatch):
    from suzent_cli.dream.claude_agent import ClaudeEngine

    monkeypatch.setattr(vault_tools, "SEARCH_SECONDS", 0.2)
    raw = "- [preference] Likes tea"
    batch = IngestBatch(vault_dir=vault, run_date=dt.date(2026, 6, 3), start=None, end=DAY, days=(DAY,),
                        logs={DAY: f"# Daily Log - 2026-06-01\n\n{raw}\n"},
                        facts=(BatchFact(DAY, 3, raw, "preference", "Likes tea", ()),),
                        deadline=time.monotonic() + 600)
    script = [(200, tool_use_reply(("search", {"query": CATASTROPHIC, "regex": True}))),
              (200, text_reply("Nothing to fold."))]
    with running(script) as api:
        engine = ClaudeEngine("test-key", model="claude-test", base_url=api.url, max_retries=0)
        result = engine.ingest(batch)
        results = [b for b in api.requests[1]["body"]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert result.summary == "Nothing to fold."
    assert results[0]["is_error"] is True and "backtracks too much" in results[0]["content"]


# --- 5. a YAML alias bomb in a page's frontmatter ------------------------------------------------------------------

def test_the_frontmatter_loader_refuses_an_alias_bomb_by_counting():
    from suzent_cli.vault import frontmatter

    with pytest.raises(frontmatter.FrontmatterInvalid, match="alias bomb") as err:
        frontmatter.parse(bomb(12))  # 9^12 laughs: refused after a bounded number of nodes, before any expansion
    assert err.value.bounded


@pytest.mark.parametrize("text, reason", [
    ("---\na: &a [*a]\n---\nbody\n", "refers to itself"),
    ("---\nx: " + "[" * 200 + "]" * 200 + "\n---\nbody\n", "deeper than"),
    ("---\nx: '" + "y" * 200_000 + "'\n---\nbody\n", "larger than"),
])
def test_the_frontmatter_loader_refuses_other_abuse(text, reason):
    from suzent_cli.vault import frontmatter

    with pytest.raises(frontmatter.FrontmatterInvalid, match=reason):
        frontmatter.parse(text)


def test_the_frontmatter_loader_keeps_ordinary_anchors():
    from suzent_cli.vault import frontmatter

    meta, body = frontmatter.parse("---\nbase: &b [x, y]\ncopy: *b\nmore: [*b, *b]\n---\n\nbody\n")
    assert meta == {"base": ["x", "y"], "copy": ["x", "y"], "more": [["x", "y"], ["x", "y"]]} and body == "body"


def test_read_page_refuses_an_alias_bomb(tmp_path):
    path = tmp_path / "Profile.md"
    path.write_text(bomb(12), encoding="utf-8")
    with pytest.raises(DreamFailed, match="alias bomb"):
        read_page(path)


def test_rules_engine_leaves_a_page_with_an_alias_bomb_untouched_with_one_warning(vault):
    path = vault / "3_Personal/Profile.md"
    path.write_text(bomb(9), encoding="utf-8")
    raw = "- [personal] Lives in Lisbon"
    batch = IngestBatch(vault_dir=vault, run_date=dt.date(2026, 6, 3), start=None, end=DAY, days=(DAY,),
                        logs={DAY: f"# Daily Log - 2026-06-01\n\n{raw}\n"},
                        facts=(BatchFact(DAY, 3, raw, "personal", "Lives in Lisbon", ()),),
                        deadline=time.monotonic() + 600)
    result = RulesEngine().ingest(batch)
    assert path.read_text(encoding="utf-8") == bomb(9)
    warnings = [w for w in result.warnings if "Profile.md" in w]
    assert len(warnings) == 1 and "alias bomb" in warnings[0]
    assert result.superseded == [] and result.pages == []


def test_index_skips_the_frontmatter_of_a_page_with_an_alias_bomb_with_one_warning(tmp_path):
    warnings: list[str] = []
    body, meta = parse_frontmatter(bomb(12, key="title"), warnings.append)
    assert meta == {} and body.startswith("# Profile") and len(warnings) == 1 and "alias bomb" in warnings[0]
    path = tmp_path / "Profile.md"
    path.write_text(bomb(12, key="title"), encoding="utf-8")
    warnings.clear()
    docs, _ = documents(Source("notebook", "3_Personal/Profile.md", path), frozenset(), 0, warn=warnings.append)
    assert [d.content for d in docs] and all("lol" not in d.search_text for d in docs)
    assert len(warnings) == 1 and warnings[0].startswith("notebook:3_Personal/Profile.md: ")


# --- 6. the agent's tools guard every tier, whatever the nesting ---------------------------------------------------

def _layouts(home: Path) -> dict[str, dict[str, Path]]:
    v = home / "notebook"
    return {
        "memory-and-index-inside-the-vault": {"vault_dir": v, "memory_dir": v / "mem", "index_dir": v / "idx"},
        "memory-dir-is-the-vault": {"vault_dir": v, "memory_dir": v, "index_dir": home / "index"},
        "vault-inside-the-memory-dir": {"vault_dir": home / "mem/notebook", "memory_dir": home / "mem",
                                        "index_dir": home / "mem/notebook/idx"},
    }


@pytest.mark.parametrize("layout", ["memory-and-index-inside-the-vault", "memory-dir-is-the-vault",
                                    "vault-inside-the-memory-dir"])
def test_vault_tools_refuse_every_tier_whatever_the_nesting(tmp_path, layout):
    from suzent_cli.config import resolve_settings
    from suzent_cli.dream.vault_tools import tier_paths

    dirs = _layouts(tmp_path)[layout]
    settings = resolve_settings(home=tmp_path, env={}, **dirs)
    p = settings.paths
    bootstrap(p.vault_dir)
    for d in (p.archive_dir, p.index_dir):
        d.mkdir(parents=True, exist_ok=True)
    guarded = {p.memory_dir / "MEMORY.md": "# Long-term Memory\n", p.memory_dir / "persona.md": "persona\n",
               p.archive_dir / "2026-06-01.md": "# Daily Log - 2026-06-01\n", p.index_dir / "notes.md": "index\n",
               p.state_dir / "notes.md": "state\n"}
    for path, text in guarded.items():
        path.write_text(text, encoding="utf-8")
    tools = VaultTools(p.vault_dir, protected=tier_paths(p))
    root = p.vault_dir.resolve()
    for path in guarded:
        try:
            rel = path.resolve().relative_to(root).as_posix()
        except ValueError:
            continue  # outside the vault: refused as such by every tool already
        for variant in (rel, rel.upper() if "/" not in rel else rel.rsplit("/", 1)[0] + "/" + rel.rsplit("/", 1)[1].upper()):
            for name, args in (("write_file", {"path": variant, "content": "# pwned\n"}),
                               ("edit_file", {"path": variant, "old_string": "#", "new_string": "pwned"}),
                               ("read_file", {"path": variant})):
                text, err = tools.call(name, args)
                assert err, (name, variant, text)
    for path, text in guarded.items():
        assert path.read_text(encoding="utf-8") == text, path
    listed, _ = tools.call("list_files", {"pattern": "**/*"})
    assert "MEMORY.md" not in listed and "2026-06-01.md" not in listed and "persona.md" not in listed
    text, err = tools.call("write_file", {"path": "2_Wiki/Concepts/Fine.md", "content": "# Fine\n"})
    assert not err, text  # the vault's own pages stay writable


def test_dream_with_the_memory_dir_inside_the_vault_cannot_touch_memory_md(tmp_path):
    """Through the runner: the claude engine gets every tier as protected (runner wiring)."""
    from suzent_cli.archive import Fact, append_entry
    from suzent_cli.config import DreamConfig, resolve_settings
    from suzent_cli.dream.runner import DreamRunner

    vault = tmp_path / "notebook"
    turns = [
        (200, tool_use_reply(("write_file", {"path": "mem/MEMORY.md", "content": "# pwned\n"}),
                             ("edit_file", {"path": "mem/MEMORY.md", "old_string": "Memory", "new_string": "pwned"}),
                             ("write_file", {"path": "mem/memory.md", "content": "# pwned\n"}),
                             ("write_file", {"path": "mem/user.md", "content": "# pwned\n"}))),
        (200, text_reply("Nothing folded.")),
    ]
    with running(turns) as api:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url}
        settings = resolve_settings(home=tmp_path, vault_dir=vault, memory_dir=vault / "mem", now="2026-06-02T12:00",
                                    env=env)
        bootstrap(vault)
        memory = settings.paths.memory_dir / "MEMORY.md"
        memory.parent.mkdir(parents=True, exist_ok=True)
        memory.write_text("# Long-term Memory\n\nmine\n", encoding="utf-8")
        append_entry(settings.paths.archive_dir, DAY, "09:00", "s1", [Fact("Likes tea", "preference")], timeout=5)
        DreamRunner(settings, DreamConfig(), engine="claude", follow_ups=[]).tick(force=True)
        results = [b for b in api.requests[1]["body"]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert all(r.get("is_error") is True for r in results), [r["content"] for r in results]
    assert memory.read_text(encoding="utf-8") == "# Long-term Memory\n\nmine\n"
    assert not (settings.paths.memory_dir / "user.md").exists()
