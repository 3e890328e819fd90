"""Per-project vault pages and the per-project briefing (issue 26, section 1): the dream never folds across scopes.

Real files, the rules engine through the real runner, the claude engine against the scripted fake Messages API,
real git repositories with origins for the briefing."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
from pathlib import Path

import pytest
from fake_anthropic import running, text_reply, tool_use_reply

from conftest import HASH_ENV, invoke, log, run_cli, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream.claude_agent import ClaudeEngine
from suzent_cli.dream.engine import BatchFact, IngestBatch, IngestResult
from suzent_cli.dream.lint import lint_vault
from suzent_cli.dream.rules import RulesEngine
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.dream.scopes import confirmation_scope, ingest_by_scope, split_by_scope
from suzent_cli.errors import DreamFailed
from suzent_cli.hooks.session_start import session_start_output
from suzent_cli.promote import promote
from suzent_cli.scope import scope_tag
from suzent_cli.vault import bootstrap
from suzent_cli.vault.pages import read_page
from suzent_cli.vault.projects import folder_for, folder_name, page_scope, project_folders
from suzent_cli.vault.state import append_confirmations, read_superseded

A, B = "github.com/acme/a", "github.com/acme/b"
TA, TB = scope_tag(A), scope_tag(B)
FA, FB = folder_name(A), folder_name(B)


def tick(s):
    return DreamRunner(s, DreamConfig(), engine="rules", follow_ups=[]).tick(force=True)


def claims(vault: Path, rel: str, section: str = "Claims") -> list[str]:
    return [c.text for c in read_page(vault / rel).claims(section)]


def test_folder_names_are_safe_deterministic_and_never_shared(tmp_path):
    assert folder_name(A) == folder_name(A) and folder_name(A).startswith("a-") and len(folder_name(A)) == 8
    # two keys with one short name: two folders
    assert folder_name("github.com/x/api") != folder_name("gitlab.com/y/api")
    assert folder_name("dir:/home/p/my notes").startswith("my-notes-")
    assert folder_name("dir:/").startswith("project-")
    assert "/" not in folder_name("git:/srv/../../etc") and ".." not in folder_name("git:/srv/..")
    vault = tmp_path / "v"
    bootstrap(vault)
    # a folder a person renamed keeps its project: the pages recording the key win
    moved = vault / "1_Projects" / "Our API"
    moved.mkdir()
    (moved / "Technical.md").write_text(f"---\nproject: {A}\n---\n# T\n", encoding="utf-8")
    assert project_folders(vault) == {A: "Our API"} and folder_for(vault, A) == "Our API"
    # the computed folder holds a page of no project (a person's notes): adopted, the folder is B's
    squat = vault / "1_Projects" / FB
    squat.mkdir()
    (squat / "Notes.md").write_text("# my own notes\n", encoding="utf-8")
    assert folder_for(vault, B) == FB
    # ... but one recording another project (a person moved it there): a longer name is taken
    (squat / "Notes.md").write_text("---\nproject: example.org/else\n---\n# notes\n", encoding="utf-8")
    assert folder_for(vault, B) == folder_name(B, 12)
    with pytest.raises(ValueError):
        folder_for(vault, "")


def test_two_projects_with_overlapping_facts_never_fold_into_each_other(tmp_path):
    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 `{TA}`", f"[technical] Uses MySQL 8 `{TB}`",
        f"[technical] CI runs on Woodpecker `{TA}`", f"[technical] CI runs on Woodpecker `{TB}`",
        "[preference] Likes green tea", "[technical] Uses Postgres 15")
    first = tick(s)
    assert first.outcome == "ingested", first.error
    vault = s.paths.vault_dir
    pa, pb = f"1_Projects/{FA}/Technical.md", f"1_Projects/{FB}/Technical.md"
    assert claims(vault, pa) == ["Uses Postgres 16", "CI runs on Woodpecker"]
    assert claims(vault, pb) == ["Uses MySQL 8", "CI runs on Woodpecker"]
    assert read_page(vault / pa).meta["project"] == A and read_page(vault / pb).meta["project"] == B
    assert "project:" not in " ".join(map(str, read_page(vault / pa).meta.get("tags", []))) # a scope is no topic
    # the person's facts go where they always went, recording no project
    assert claims(vault, "2_Wiki/Concepts/Technical.md") == ["Uses Postgres 15"]
    assert claims(vault, "3_Personal/Preferences.md") == ["Likes green tea"]
    assert page_scope(vault / "3_Personal/Preferences.md") == ""
    assert read_superseded(s.paths.state_dir) == []  # the same words in two projects: no repeat across them
    index = (vault / "index.md").read_text(encoding="utf-8")
    assert f"[[{pa[:-3]}]]" in index and f"[[{pb[:-3]}]]" in index

    b_before = (vault / pb).read_bytes()
    person_before = (vault / "2_Wiki/Concepts/Technical.md").read_bytes()
    s2 = settings_at(tmp_path / "home", now="2026-06-21T12:00")
    log(s2, "2026-06-20", f"[technical] Uses Postgres 17 `{TA}`")
    assert tick(s2).outcome == "ingested"
    assert claims(vault, pa) == ["CI runs on Woodpecker",
                                 "Uses Postgres 17 (since 2026-06-20); previously: Uses Postgres 16"]
    assert claims(vault, pa, "Previously") == ["Uses Postgres 16"]  # A's own claim, superseded within A
    assert (vault / pb).read_bytes() == b_before  # B's page untouched
    assert (vault / "2_Wiki/Concepts/Technical.md").read_bytes() == person_before  # and the person's Postgres 15


def test_confirmations_are_folded_within_the_claims_scope(tmp_path):
    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", f"[technical] Deploys with helm `{TA}`", f"[technical] Deploys with helm `{TB}`",
        "[technical] Deploys with helm")
    tick(s)
    vault = s.paths.vault_dir
    pa, pb = f"1_Projects/{FA}/Technical.md", f"1_Projects/{FB}/Technical.md"
    base = {"day": "2026-06-19", "time": "10:00", "content": "Deploys with helm", "category": "technical",
            "matched": "Deploys with helm", "score": 1.0, "session": "s"}
    append_confirmations(s.paths.state_dir, [
        base | {"ts": "2026-06-19T10:00:00+00:00", "source": f"notebook:{pb}", "locator": 0},
        base | {"ts": "2026-06-19T10:00:01+00:00", "source": "archive:2026-06-01.md", "locator": 6},  # B's line
        base | {"ts": "2026-06-19T10:00:02+00:00", "source": "legacy:x", "scope": A},  # only its own scope
    ], timeout=5)
    log(s, "2026-06-19", "[preference] Reads on Sundays")  # a pending day so the gate ingests
    assert tick(s).outcome == "ingested"
    text = {rel: (vault / rel).read_text(encoding="utf-8") for rel in (pa, pb, "2_Wiki/Concepts/Technical.md")}
    assert "(confirmed 3x, last 2026-06-19)" in text[pb]  # both of B's restatements
    assert "(confirmed 2x, last 2026-06-19)" in text[pa]  # the one recorded for A
    assert "confirmed 1x" in text["2_Wiki/Concepts/Technical.md"]  # the person's claim: untouched


def test_confirmation_scope_rules(tmp_path):
    vault, archive = tmp_path / "v", tmp_path / "a"
    bootstrap(vault)
    archive.mkdir()
    (archive / "2026-06-01.md").write_text(f"# x\n- [technical] Y `{TB}`\n", encoding="utf-8")
    (vault / "1_Projects" / FA).mkdir()
    (vault / "1_Projects" / FA / "T.md").write_text(f"---\nproject: {A}\n---\n", encoding="utf-8")
    assert confirmation_scope({"source": f"notebook:1_Projects/{FA}/T.md"}, vault, archive) == A
    assert confirmation_scope({"source": "archive:2026-06-01.md", "locator": 2}, vault, archive) == B
    assert confirmation_scope({"source": "archive:2026-06-01.md", "locator": 99, "scope": A}, vault, archive) == A
    assert confirmation_scope({"source": "notebook:../../etc/passwd"}, vault, archive) == ""
    assert confirmation_scope({"source": "archive:/etc/passwd", "locator": 1}, vault, archive) == ""
    assert confirmation_scope({}, vault, archive) == ""


def test_a_page_recording_another_scope_is_never_folded_into(tmp_path):
    s = settings_at(tmp_path / "home")
    vault = s.paths.vault_dir
    bootstrap(vault)
    # a person wrote project B's key into the person's wiki page
    (vault / "2_Wiki/Concepts/Technical.md").write_text(
        f"---\nproject: {B}\n---\n# Technical\n\n## Claims\n\n- Uses MySQL 8\n", encoding="utf-8")
    before = (vault / "2_Wiki/Concepts/Technical.md").read_bytes()
    log(s, "2026-06-01", "[technical] Uses MySQL 9", "[preference] Likes tea")
    result = tick(s)
    assert (vault / "2_Wiki/Concepts/Technical.md").read_bytes() == before
    assert any("2_Wiki/Concepts/Technical.md left as it is" in w and "records project" in w for w in result.warnings)
    assert "- [technical] Uses MySQL 9" not in read_superseded(s.paths.state_dir)


def test_an_old_vault_keeps_working_as_the_persons(tmp_path):
    s = settings_at(tmp_path / "home")
    vault = s.paths.vault_dir
    bootstrap(vault)
    (vault / "3_Personal/Profile.md").write_text(
        "---\ntype: personal\ntitle: Profile\n---\n\n# Profile\n\n## Claims\n\n"
        "- Lives in Berlin (confirmed 1x, last 2026-05-20) · source: 2026-05-20.md:5\n", encoding="utf-8")
    (vault / "1_Projects/Context.md").write_text("# Context\n\n## Claims\n\n- Ships on Fridays\n", encoding="utf-8")
    log(s, "2026-06-01", "[personal] Lives in Berlin", "[context] Ships on Fridays", f"[context] Ships daily `{TA}`")
    assert tick(s).outcome == "ingested"
    assert "confirmed 2x" in (vault / "3_Personal/Profile.md").read_text(encoding="utf-8")
    assert claims(vault, "1_Projects/Context.md") == ["Ships on Fridays"]
    assert "project" not in read_page(vault / "3_Personal/Profile.md").meta
    assert claims(vault, f"1_Projects/{FA}/Context.md") == ["Ships daily"]
    # lint, status and the promotion all read the nested folder; MEMORY.md stays the person's
    report = lint_vault(vault, dt.date(2026, 6, 20), RulesEngine(), time.monotonic() + 60)
    assert f"1_Projects/{FA}/Context.md" not in report.orphans
    promote(s)
    memory = (s.paths.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "Berlin" in memory and "Ships daily" not in memory
    status = invoke(tmp_path / "home", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)


def test_split_by_scope_gives_each_part_its_own_lines_and_folder(tmp_path):
    vault = tmp_path / "v"
    bootstrap(vault)
    day = dt.date(2026, 6, 1)
    lines = ["# Daily Log", "", "## 09:00 — s", "", f"- [technical] Uses Postgres 16 `{TA}`",
             f"- [technical] Uses MySQL 8 `{TB}`", "- [preference] Likes tea"]
    facts = tuple(BatchFact(day, n, lines[n - 1], "technical", "x", tuple(lines[n - 1].split("`")[1:2]))
                  for n in (5, 6, 7))
    batch = IngestBatch(vault_dir=vault, run_date=day, start=None, end=day, days=(day,), logs={day: "\n".join(lines)},
                        facts=facts, deadline=time.monotonic() + 60,
                        revisit=("3_Personal/Profile.md",))
    person, a, b = split_by_scope(batch)
    assert (person.scope, person.folder, a.scope, a.folder, b.scope, b.folder) == ("", "", A, FA, B, FB)
    assert [f.line for f in a.facts] == [5] and "MySQL" not in a.logs[day] and "tea" not in a.logs[day]
    assert "Postgres" not in person.logs[day] and "Likes tea" in person.logs[day]
    assert person.revisit == ("3_Personal/Profile.md",) and a.revisit == ()
    assert split_by_scope(a) == [a]


class _Stray:
    """An engine with a bug: whatever the batch, it writes into project B's folder."""

    name = "stray"

    def ingest(self, batch):
        target = batch.vault_dir / "1_Projects" / FB / "Technical.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        claims = "".join(f"- {f.content}\n" for f in batch.facts)
        target.write_text(f"---\nproject: {B}\n---\n\n## Claims\n\n{claims}", encoding="utf-8")
        return IngestResult(summary="wrote", pages=[target.relative_to(batch.vault_dir).as_posix()])


def test_the_runner_fails_a_run_that_writes_into_another_scope(tmp_path):
    s = settings_at(tmp_path / "home")
    bootstrap(s.paths.vault_dir)
    (s.paths.vault_dir / "1_Projects" / FB).mkdir()
    (s.paths.vault_dir / "1_Projects" / FB / "Context.md").write_text(f"---\nproject: {B}\n---\n", encoding="utf-8")
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 `{TA}`")
    runner = DreamRunner(s, DreamConfig(), engine="stray", engine_factory=lambda name: _Stray(), follow_ups=[])
    result = runner.tick(force=True)
    assert result.outcome == "unproductive"
    assert "folded across scopes" in result.error and FB in result.error
    day = dt.date(2026, 6, 1)
    batch = IngestBatch(vault_dir=s.paths.vault_dir, run_date=day, start=None, end=day, days=(day,), logs={},
                        facts=(BatchFact(day, 5, "- [general] Likes tea", "general", "Likes tea"),),
                        deadline=time.monotonic() + 60)
    with pytest.raises(DreamFailed, match="written while folding the person's facts"):
        ingest_by_scope(_Stray(), batch)


# --- the claude engine, through the scripted fake Messages API -------------------------------------------------

LOG = ("# Daily Log - 2026-06-01\n\n## 14:05 — abcdefgh\n\n"
       "- [preference] Likes tea `drinks`\n"
       f"- [technical] Uses Postgres 16 `{TA}`\n")
TEA, PG = "- [preference] Likes tea `drinks`", f"- [technical] Uses Postgres 16 `{TA}`"


def test_claude_engine_gets_one_scoped_batch_per_scope_and_cannot_leave_it(tmp_path):
    vault = tmp_path / "notebook"
    bootstrap(vault)
    (vault / "1_Projects" / FB).mkdir()
    (vault / "1_Projects" / FB / "Technical.md").write_text(
        f"---\nproject: {B}\n---\n\n## Claims\n\n- Uses MySQL 8\n", encoding="utf-8")
    b_before = (vault / "1_Projects" / FB / "Technical.md").read_bytes()
    day = dt.date(2026, 6, 1)
    batch = IngestBatch(vault_dir=vault, run_date=dt.date(2026, 6, 3), start=None, end=day, days=(day,),
                        logs={day: LOG}, deadline=time.monotonic() + 600,
                        facts=(BatchFact(day, 5, TEA, "preference", "Likes tea", ("drinks",)),
                               BatchFact(day, 6, PG, "technical", "Uses Postgres 16", (TA,))))
    mine = f"1_Projects/{FA}/Technical.md"
    script = [
        # the person's conversation
        (200, tool_use_reply(("list_files", {"pattern": "**/*.md"}),
                             ("write_file", {"path": "3_Personal/Preferences.md",
                                             "content": "# Preferences\n\n## Claims\n\n- Likes tea\n"}))),
        (200, text_reply("Added tea.")),
        # project A's conversation: every way out is refused, its own folder is not
        (200, tool_use_reply(("list_files", {"pattern": "**/*.md"}),
                             ("read_file", {"path": f"1_Projects/{FB}/Technical.md"}),
                             ("write_file", {"path": "3_Personal/Preferences.md", "content": "# hijack\n"}),
                             ("write_file", {"path": f"1_Projects/{FB}/Technical.md", "content": "# hijack\n"}),
                             ("write_file", {"path": "2_Wiki/Concepts/Technical.md", "content": "# hijack\n"}),
                             # its own folder, but recording B's key: B's recall would show A's claims
                             ("write_file", {"path": mine, "content": f"---\nproject: {B}\n---\n# x\n"}),
                             ("write_file", {"path": mine, "content": "# Technical\n\n## Claims\n\n"
                                                                      "- Uses Postgres 16\n"}),
                             ("edit_file", {"path": mine, "old_string": "# Technical",
                                            "new_string": f"---\nproject: {B}\n---\n# Technical"}))),
        (200, text_reply("Added Postgres to project A.")),
    ]
    with running(script) as api:
        engine = ClaudeEngine("test-key", model="claude-test", base_url=api.url, max_retries=0)
        result = engine.ingest(batch)
    first_person = api.requests[0]["body"]["messages"][0]["content"]
    first_a = api.requests[2]["body"]["messages"][0]["content"]
    assert "the person's" in first_person and TEA in first_person and "Postgres" not in first_person
    assert f'project "{A}"' in first_a and f"1_Projects/{FA}/" in first_a
    assert PG in first_a and "Likes tea" not in first_a
    listing, read_b, *writes = [b for b in api.requests[3]["body"]["messages"][-1]["content"]
                                if b.get("type") == "tool_result"]
    assert FB not in listing["content"] and read_b["is_error"]
    assert [w.get("is_error", False) for w in writes] == [True, True, True, True, False, True]
    assert "records project" in writes[3]["content"] and "records project" in writes[5]["content"]
    assert "Likes tea" in (vault / "3_Personal/Preferences.md").read_text(encoding="utf-8")
    assert (vault / "1_Projects" / FB / "Technical.md").read_bytes() == b_before
    assert not (vault / "2_Wiki/Concepts/Technical.md").exists()
    assert read_page(vault / mine).meta["project"] == A  # the runner's check stamped the key the agent left out
    assert "# Technical" in (vault / mine).read_text(encoding="utf-8")
    assert result.pages == ["3_Personal/Preferences.md", mine]
    assert "refused" in " ".join(result.warnings)


# --- the briefing, per project -----------------------------------------------------------------------------------

def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def repo(root: Path, origin: str) -> Path:
    (root / "billing").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", origin)
    return root


def payload(cwd: Path) -> bytes:
    return json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(cwd)}).encode()


def briefed(s, cwd: Path) -> str:
    out = session_start_output(s, payload(cwd))
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def test_the_briefing_is_the_persons_profile_plus_this_projects_claims_only(tmp_path):
    from suzent_cli.index.api import run_index

    s = settings_at(tmp_path / "home", env=HASH_ENV)
    a = repo(tmp_path / "src" / "a", "git@github.com:acme/a.git")
    b = repo(tmp_path / "src" / "b", "https://github.com/acme/b")
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 on Hetzner `{TA}`", f"[technical] Uses MySQL 8 `{TB}`",
        "[preference] Prefers short answers")
    assert tick(s).outcome == "ingested"
    promote(s)
    # captured after the dream: only in the daily log (and the index), found by the directory's words
    log(s, "2026-06-19", f"[technical] The billing service runs on Woodpecker CI `{TA}`",
        f"[technical] The billing service runs on Jenkins CI `{TB}`", "[technical] The billing team meets Mondays")
    run_index(s)

    in_a = briefed(s, a / "billing")
    assert "Prefers short answers" in in_a  # the person's profile, everywhere
    assert "Uses Postgres 16 on Hetzner" in in_a and f"1_Projects/{FA}/Technical.md" in in_a and A in in_a
    assert "Woodpecker" in in_a and "meets Mondays" in in_a
    assert "MySQL" not in in_a and "Jenkins" not in in_a

    in_b = briefed(s, b / "billing")
    assert "Prefers short answers" in in_b and "Uses MySQL 8" in in_b and "Jenkins" in in_b
    assert "Postgres" not in in_b and "Hetzner" not in in_b and "Woodpecker" not in in_b

    outside = tmp_path / "scratch" / "billing"
    outside.mkdir(parents=True)
    elsewhere = briefed(s, outside)
    assert "Prefers short answers" in elsewhere and "meets Mondays" in elsewhere
    for other in ("Postgres", "MySQL", "Woodpecker", "Jenkins"):
        assert other not in elsewhere

    # the hook as Claude Code runs it: a process reading the payload on stdin, cold (no server)
    done = run_cli(tmp_path / "home", "recall", "--from", "claude-code", "--timeout", "60",
                   input=payload(b / "billing"), env_extra=HASH_ENV)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Uses MySQL 8" in context and "Jenkins" in context and "Prefers short answers" in context
    assert "Postgres" not in context and "Woodpecker" not in context


def test_odd_project_keys_are_folded_into_safe_folders_and_never_wedge_the_dream(tmp_path):
    s = settings_at(tmp_path / "home")
    odd = ["%FF", "a%0Ab", "..", "%2E%2E%2F%2E%2E", "x%60y", "%20padded%20", "x" * 3000]
    log(s, "2026-06-01", *(f"[technical] Uses tool {n} `project:{key}`" for n, key in enumerate(odd)))
    result = tick(s)
    assert result.outcome == "ingested" and not result.warnings, (result.error, result.warnings)
    vault = s.paths.vault_dir
    pages = sorted((vault / "1_Projects").rglob("*.md"))
    assert len(pages) == len(odd)
    for page in pages:
        rel = page.relative_to(vault)
        assert len(rel.parts) == 3 and len(rel.parts[1]) <= 47 and rel.parts[1][0] not in ".-"
    keys = {read_page(p).meta["project"] for p in pages}
    assert {"\\xff", "a\nb", "..", "../..", "x`y", "padded"} <= keys
    assert tick(s).outcome in ("idle", "linted")  # converged: nothing left to fold


class _DiesOnProjectB(RulesEngine):
    """The rules engine, killed while folding project B's part (after the person's and A's are written)."""

    def ingest(self, batch):
        if batch.scope == B:
            raise DreamFailed("killed")
        return super().ingest(batch)


def test_a_run_that_dies_between_scopes_converges_to_the_uninterrupted_one(tmp_path):
    facts = ("[preference] Likes tea", f"[technical] Uses Postgres 16 `{TA}`", f"[technical] Uses MySQL 8 `{TB}`",
             "[preference] Likes tea", f"[technical] Uses Postgres 16 `{TA}`")
    clean, broken = settings_at(tmp_path / "clean"), settings_at(tmp_path / "broken")
    for s in (clean, broken):
        log(s, "2026-06-01", *facts)
    assert tick(clean).outcome == "ingested"
    dying = DreamRunner(broken, DreamConfig(), engine="rules", engine_factory=lambda name: _DiesOnProjectB(),
                        follow_ups=[])
    first = dying.tick(force=True)
    assert first.outcome == "unproductive" and "killed" in first.error
    assert not (broken.paths.vault_dir / "1_Projects" / FB).exists()
    assert tick(broken).outcome == "ingested"

    def pages(s):
        root = s.paths.vault_dir
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.md") if ".state" not in p.parts
                and p.name != "log.md"}

    assert pages(broken) == pages(clean)
    assert read_superseded(broken.paths.state_dir) == read_superseded(clean.paths.state_dir) == [
        "- [preference] Likes tea", f"- [technical] Uses Postgres 16 `{TA}`"]


def test_lint_compares_claims_within_one_scope_only(tmp_path):
    vault = tmp_path / "v"
    bootstrap(vault)
    page = "---\n{meta}---\n# {title}\n\n## Claims\n\n- Lives in {city}\n"
    (vault / "3_Personal/Profile.md").write_text(page.format(meta="type: personal\n", title="Profile", city="Berlin"),
                                                 encoding="utf-8")
    # a person handed a personal page to project A (frontmatter project:): its claim is A's, not the person's
    (vault / "3_Personal/Relocation.md").write_text(
        page.format(meta=f"type: personal\nproject: {A}\n", title="Relocation", city="Lisbon"), encoding="utf-8")
    report = lint_vault(vault, dt.date(2026, 6, 20), RulesEngine(), time.monotonic() + 60)
    assert report.contradictions == []
    (vault / "3_Personal/Home.md").write_text(page.format(meta="type: personal\n", title="Home", city="Madrid"),
                                              encoding="utf-8")
    report = lint_vault(vault, dt.date(2026, 6, 20), RulesEngine(), time.monotonic() + 60)
    assert len(report.contradictions) == 1 and "Lisbon" not in report.contradictions[0]


def test_memory_md_stays_the_persons(tmp_path):
    s = settings_at(tmp_path / "home")
    vault = s.paths.vault_dir
    bootstrap(vault)
    claim = "---\n{meta}---\n# P\n\n## Claims\n\n- {text} (confirmed 2x, last 2026-06-01)\n"
    (vault / "3_Personal/Preferences.md").write_text(claim.format(meta="type: personal\n", text="Prefers tabs"),
                                                     encoding="utf-8")
    (vault / "3_Personal/Team.md").write_text(claim.format(meta=f"project: {A}\n", text="Pairs with Ana on Fridays"),
                                              encoding="utf-8")
    promote(s)
    memory = (s.paths.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "Prefers tabs" in memory and "Ana" not in memory


def test_a_page_of_a_projects_folder_without_its_key_is_adopted_and_stamped(tmp_path):
    s = settings_at(tmp_path / "home")
    vault = s.paths.vault_dir
    bootstrap(vault)
    (vault / "1_Projects" / FA).mkdir()
    # an agent (or a person) left the key out of the folder's pages
    (vault / "1_Projects" / FA / "Technical.md").write_text("# Technical\n\n## Claims\n\n- Uses Postgres 16\n",
                                                          encoding="utf-8")
    (vault / "1_Projects" / FA / "Notes.md").write_text("# Notes\n\nfree text\n", encoding="utf-8")
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 `{TA}`", f"[technical] Runs on Hetzner `{TA}`")
    assert tick(s).outcome == "ingested"
    assert claims(vault, f"1_Projects/{FA}/Technical.md")[0].startswith("Uses Postgres 16")
    assert "confirmed 2x" in (vault / "1_Projects" / FA / "Technical.md").read_text(encoding="utf-8")
    assert page_scope(vault / "1_Projects" / FA / "Technical.md") == A
    assert page_scope(vault / "1_Projects" / FA / "Notes.md") == A  # stamped: no page there reads as the person's
    assert "free text" in (vault / "1_Projects" / FA / "Notes.md").read_text(encoding="utf-8")


def test_a_forged_folder_collision_never_shares_a_folder(tmp_path, monkeypatch):
    """6 hex digits can be matched by a key crafted for it (2^24 tries): the folder's pages decide, not the name."""
    import suzent_cli.vault.projects as projects

    real = projects.folder_name
    monkeypatch.setattr(projects, "folder_name", lambda key, digits=6: "api-000000" if digits == 6 else real(key, digits))
    forged = "evil.example/x/api"
    s = settings_at(tmp_path / "home")
    log(s, "2026-06-01", f"[technical] Deploys to prod on push `{scope_tag(forged)}`")
    assert tick(s).outcome == "ingested"
    s2 = settings_at(tmp_path / "home", now="2026-06-21T12:00")
    log(s2, "2026-06-20", f"[technical] Deploys with helm `{TA}`", f"[technical] Deploys to prod on push `{TB}`")
    assert tick(s2).outcome == "ingested"
    folders = project_folders(s.paths.vault_dir)
    assert folders[forged] == "api-000000"
    assert len(set(folders.values())) == 3 and folders[A] == real(A, 12) and folders[B] == real(B, 12)
    assert claims(s.paths.vault_dir, "1_Projects/api-000000/Technical.md") == ["Deploys to prod on push"]


def test_the_persons_pages_are_revisited_when_a_batch_holds_only_project_facts(tmp_path):
    s = settings_at(tmp_path / "home")
    vault = s.paths.vault_dir
    bootstrap(vault)
    (vault / "3_Personal/Goals.md").write_text("---\ntype: personal\nupdated: 2026-01-10\n---\n# Goals\n\n## Claims\n\n"
                                              "- Learn Rust\n", encoding="utf-8")
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 `{TA}`")
    assert tick(s).outcome == "ingested"
    assert "stale_after" in read_page(vault / "3_Personal/Goals.md").meta  # backfilled, as before scopes


def test_vault_tools_fence_for_a_persons_batch(tmp_path):
    from suzent_cli.dream.vault_tools import VaultTools

    vault = tmp_path / "v"
    bootstrap(vault)
    (vault / "1_Projects" / FA).mkdir()
    (vault / "1_Projects" / FA / "Technical.md").write_text(f"---\nproject: {A}\n---\n# T\n", encoding="utf-8")
    tools = VaultTools(vault, fenced=[FA], scope="")
    keyed = {"path": "3_Personal/Profile.md", "content": f"---\nproject: {A}\n---\n# P\n"}
    text, refused = tools.call("write_file", keyed)
    assert refused and "records project" in text and not (vault / "3_Personal/Profile.md").exists()
    assert tools.call("read_file", {"path": f"1_Projects/{FA}/Technical.md"})[1]
    assert FA not in tools.call("search", {"query": "project"})[0]
    assert FA not in tools.call("list_files", {"pattern": "**/*"})[0]
    assert not tools.call("write_file", keyed | {"content": "# P\n"})[1]
    # lint (no batch, no scope) may write any page, keys included
    assert not VaultTools(vault).call("write_file", keyed)[1]


def test_list_pages_and_read_page_reach_a_projects_folder(tmp_path):
    from suzent_cli.server.ops import LocalBackend
    from suzent_cli.server.warm import Warm

    s = settings_at(tmp_path / "home", env=HASH_ENV)
    log(s, "2026-06-01", f"[technical] Uses Postgres 16 `{TA}`", "[preference] Likes tea")
    assert tick(s).outcome == "ingested"
    warm = Warm(s)
    try:
        backend = LocalBackend(warm)
        names = {p["name"]: p for p in backend.list_pages()["pages"]}
        page = f"1_Projects/{FA}/Technical.md"
        assert page in names and names[page]["claims"] == 1 and "3_Personal/Preferences.md" in names
        assert "Uses Postgres 16" in backend.read_page(page)["content"]
    finally:
        warm.close()
