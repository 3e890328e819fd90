"""A person's edit to a vault page is never lost (issue 13, section 2).

Races are made deterministic by fault injection: ``files.atomic_write_bytes`` (the one place a page is renamed into
place) is wrapped so that the person's edit lands at an exact point — after the dream read and folded the page and
before its rename, or after the last check and before the rename (an in-place append to the replaced file).
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from suzent_cli import files
from suzent_cli.dream.engine import BatchFact, IngestBatch
from suzent_cli.dream.lint import audit
from suzent_cli.dream.rules import RulesEngine
from suzent_cli.dream.vault_tools import VaultTools
from suzent_cli.vault import bootstrap
from suzent_cli.vault.pages import read_page, write_page

DAY = dt.date(2026, 6, 1)
PROFILE = ("---\ntype: personal\ntitle: Profile\nowner: me\n---\n\n# Profile\n\n## Claims\n\n"
           "- Likes long walks (confirmed 1x, last 2026-05-20) · source: 2026-05-20.md:5\n")
MINE = "\n## My notes\n\nWritten by me while the dream ran.\n"


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "notebook"
    bootstrap(root)
    return root


def fact(category: str, content: str, line: int = 5) -> BatchFact:
    return BatchFact(DAY, line, f"- [{category}] {content}", category, content, ())


def batch(vault: Path, *facts: BatchFact) -> IngestBatch:
    log = "# Daily Log - 2026-06-01\n\n## 14:05 — abcdefgh\n\n" + "".join(f.raw + "\n" for f in facts)
    return IngestBatch(vault_dir=vault, run_date=dt.date(2026, 6, 3), start=None, end=DAY, days=(DAY,),
                       logs={DAY: log}, facts=facts, deadline=time.monotonic() + 600)


def edit_once(monkeypatch, target: Path, *, in_place_after_check: bool = False) -> list[int]:
    """Wrap ``files.atomic_write_bytes`` so the person's edit (:data:`MINE` appended) lands on ``target`` once:
    before the writer's last check (default), or after that check, just before the rename
    (``in_place_after_check``). Returns the list of rename attempts on ``target`` (for the assertions)."""
    real = files.atomic_write_bytes
    attempts: list[int] = []

    def person_appends() -> None:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(MINE)

    def wrapped(path, data, *, before_replace=None):
        if Path(path) != target:
            return real(path, data, before_replace=before_replace)
        attempts.append(1)
        if len(attempts) == 1 and not in_place_after_check:
            person_appends()  # after the dream read and folded the page, before its rename
            return real(path, data, before_replace=before_replace)

        def check() -> bool:
            ok = before_replace() if before_replace is not None else True
            if len(attempts) == 1:
                person_appends()  # after the last check: lands in the file about to be replaced
            return ok

        return real(path, data, before_replace=check)

    monkeypatch.setattr(files, "atomic_write_bytes", wrapped)
    return attempts


# --- 1. a section appended while the dream runs is kept ------------------------------------------------------------

@pytest.mark.parametrize("in_place_after_check", [False, True], ids=["before-check", "during-rename"])
def test_rules_engine_refolds_a_page_a_person_edited_between_read_and_rename(vault, monkeypatch,
                                                                             in_place_after_check):
    page = vault / "3_Personal/Profile.md"
    page.write_text(PROFILE, encoding="utf-8")
    attempts = edit_once(monkeypatch, page, in_place_after_check=in_place_after_check)
    result = RulesEngine().ingest(batch(vault, fact("personal", "Lives in Lisbon")))
    text = page.read_text(encoding="utf-8")
    assert "## My notes" in text and "Written by me while the dream ran." in text  # the person's edit survives
    assert "- Lives in Lisbon (confirmed 1x, last 2026-06-01) · source: 2026-06-01.md:5" in text  # the fold too
    assert "Likes long walks" in text and "owner: me" in text
    assert text.count("Lives in Lisbon") == 1 and text.count("## My notes") == 1
    assert len(attempts) >= 2 and result.pages == ["3_Personal/Profile.md"]
    assert read_page(page).meta["folded_through"] == "2026-06-01.md:5"


def test_rules_engine_refolds_a_repeat_the_person_added_meanwhile(vault, monkeypatch):
    """The refold starts from the page as it is now: a claim the person added meanwhile is bumped, not doubled."""
    page = vault / "3_Personal/Profile.md"
    page.write_text(PROFILE, encoding="utf-8")
    real = files.atomic_write_bytes
    done: list[int] = []

    def wrapped(path, data, *, before_replace=None):
        if Path(path) == page and not done:
            done.append(1)
            page.write_text(PROFILE + "- Lives in Lisbon\n", encoding="utf-8")  # the person's own bullet
        return real(path, data, before_replace=before_replace)

    monkeypatch.setattr(files, "atomic_write_bytes", wrapped)
    result = RulesEngine().ingest(batch(vault, fact("personal", "Lives in Lisbon")))
    text = page.read_text(encoding="utf-8")
    assert text.count("Lives in Lisbon") == 1 and "Lives in Lisbon (confirmed 2x, last 2026-06-01)" in text
    assert result.superseded == ["- [personal] Lives in Lisbon"]  # handed off by the fold that was written


def test_write_page_without_refold_leaves_a_changed_page_to_the_person(vault):
    """lint writes through write_page without a refold: a page edited since it was read is left alone."""
    path = vault / "3_Personal/Profile.md"
    path.write_text(PROFILE, encoding="utf-8")
    page = read_page(path)
    page.meta["status"] = "active"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(MINE)
    assert write_page(path, page) is False
    assert path.read_text(encoding="utf-8") == PROFILE + MINE


def test_lint_does_not_overwrite_a_page_edited_between_read_and_rename(vault, monkeypatch):
    path = vault / "3_Personal/Profile.md"
    before = PROFILE.replace("owner: me\n", "stale_after: 2026-01-01\n")  # the audit flags it for review
    path.write_text(before, encoding="utf-8")
    attempts = edit_once(monkeypatch, path)
    report = audit(vault, dt.date(2026, 6, 3))
    assert path.read_text(encoding="utf-8") == before + MINE and attempts == [1]
    assert report.stale == ["3_Personal/Profile.md"] and report.pages_changed == []


def test_vault_tools_edit_applies_to_the_page_as_it_is_at_the_rename(vault, monkeypatch):
    """The claude engine's edit_file: the edit lands on what is on disk, a person's section appended meanwhile
    included; write_file of a page changed since the agent read it is refused (the agent reads it again)."""
    path = vault / "3_Personal/Profile.md"
    path.write_text(PROFILE, encoding="utf-8")
    tools = VaultTools(vault)
    text, err = tools.call("read_file", {"path": "3_Personal/Profile.md"})
    assert not err
    edit_once(monkeypatch, path)
    text, err = tools.call("edit_file", {"path": "3_Personal/Profile.md", "old_string": "Likes long walks",
                                         "new_string": "Likes long hikes"})
    assert not err, text
    assert "Likes long hikes" in path.read_text(encoding="utf-8")
    assert path.read_text(encoding="utf-8").endswith(MINE)
    with open(path, "a", encoding="utf-8") as fh:  # the person again, after the agent's last look at the page
        fh.write("- A line of mine.\n")
    now = path.read_text(encoding="utf-8")
    text, err = tools.call("write_file", {"path": "3_Personal/Profile.md", "content": PROFILE})
    assert err and "changed since you read it" in text
    assert path.read_text(encoding="utf-8") == now
    text, err = tools.call("read_file", {"path": "3_Personal/Profile.md"})
    text, err = tools.call("write_file", {"path": "3_Personal/Profile.md", "content": now + "\nMore.\n"})
    assert not err and path.read_text(encoding="utf-8") == now + "\nMore.\n"


# --- 2. a page whose frontmatter does not load is never rewritten ---------------------------------------------------

UNPARSEABLE = {
    "list": "---\n- a\n- b\n---\n\n# Profile\n\n## Claims\n\n- Likes tea\n",
    "string": "---\njust words\n---\n\n# Profile\n\n## Claims\n\n- Likes tea\n",
    "invalid": "---\ntitle: [unclosed\n---\n\n# Profile\n\n## Claims\n\n- Likes tea\n",
    "bad-date": "---\nstale_after: 2026-13-45\n---\n\n# Profile\n\n## Claims\n\n- Likes tea\n",
}


@pytest.mark.parametrize("kind", sorted(UNPARSEABLE))
def test_rules_engine_leaves_a_page_with_unloadable_frontmatter_untouched_and_warns_once(vault, kind):
    path = vault / "3_Personal/Profile.md"
    path.write_bytes(UNPARSEABLE[kind].encode())
    result = RulesEngine().ingest(batch(vault, fact("personal", "Lives in Lisbon"),
                                        fact("personal", "Works at Acme", 6)))
    assert path.read_bytes() == UNPARSEABLE[kind].encode()
    mentions = [w for w in result.warnings if "3_Personal/Profile.md" in w]
    assert len(mentions) == 1 and "left as it is" in mentions[0]
    assert result.superseded == [] and "3_Personal/Profile.md" not in result.pages


@pytest.mark.parametrize("kind", sorted(UNPARSEABLE))
def test_lint_leaves_a_page_with_unloadable_frontmatter_untouched(vault, kind):
    path = vault / "3_Personal/Profile.md"
    path.write_bytes(UNPARSEABLE[kind].encode())
    audit(vault, dt.date(2026, 6, 3))
    assert path.read_bytes() == UNPARSEABLE[kind].encode()


# --- 3. names that differ only by case are one page ------------------------------------------------------------------

@pytest.mark.parametrize("category, ours, theirs", [
    ("personal", "3_Personal/Profile.md", "3_Personal/profile.md"),
    ("tools", "2_Wiki/Concepts/Tools.md", "2_Wiki/Concepts/TOOLS.md"),
    ("editors", "2_Wiki/Concepts/Editors.md", "2_Wiki/Concepts/editors.md"),
])
def test_rules_engine_routes_to_the_existing_page_whatever_its_case(vault, category, ours, theirs):
    mine = "# Mine\n\nA person's page.\n\n## Claims\n\n- Something already known\n"
    (vault / theirs).parent.mkdir(parents=True, exist_ok=True)
    (vault / theirs).write_text(mine, encoding="utf-8")
    result = RulesEngine().ingest(batch(vault, fact(category, "Uses Helix daily")))
    assert not (vault / ours).exists()  # no second page beside the person's (on this case-sensitive filesystem)
    text = (vault / theirs).read_text(encoding="utf-8")
    assert "A person's page." in text and "- Uses Helix daily (confirmed 1x" in text
    assert result.pages == [theirs]
    index = (vault / "index.md").read_text(encoding="utf-8")
    assert f"[[{theirs[:-3]}]]" in index and f"[[{ours[:-3]}]]" not in index


def test_existing_case(vault):
    from suzent_cli.vault.pages import existing_case

    (vault / "2_Wiki/tools").mkdir(parents=True)
    (vault / "2_Wiki/tools/TOOLS.md").write_text("x", encoding="utf-8")
    (vault / "2_Wiki/tools/Tools.md").write_text("x", encoding="utf-8")
    (vault / "2_Wiki/tools/editors.md").write_text("x", encoding="utf-8")
    assert existing_case(vault, "2_Wiki/Tools/Tools.md") == "2_Wiki/tools/Tools.md"  # an exact match wins
    assert existing_case(vault, "2_Wiki/Tools/tools.md") == "2_Wiki/tools/TOOLS.md"  # then the first sorted
    assert existing_case(vault, "2_WIKI/TOOLS/Editors.md") == "2_Wiki/tools/editors.md"
    assert existing_case(vault, "2_Wiki/Tools/New.md") == "2_Wiki/tools/New.md"
    assert existing_case(vault, "9_None/A.md") == "9_None/A.md"


def test_vault_tools_write_to_a_case_variant_goes_to_the_existing_page(vault):
    (vault / "2_Wiki/Concepts").mkdir(parents=True, exist_ok=True)
    (vault / "2_Wiki/Concepts/Tools.md").write_text("# Tools\n", encoding="utf-8")
    tools = VaultTools(vault)
    text, err = tools.call("write_file", {"path": "2_Wiki/concepts/TOOLS.md", "content": "# Tools\n\n- Helix\n"})
    assert not err and "2_Wiki/Concepts/Tools.md" in text
    assert sorted(p.name for p in (vault / "2_Wiki").rglob("*.md")) == ["Tools.md"]
    assert (vault / "2_Wiki/Concepts/Tools.md").read_text(encoding="utf-8") == "# Tools\n\n- Helix\n"
    assert tools.written == {"2_Wiki/Concepts/Tools.md"}
    text, err = tools.call("read_file", {"path": "2_wiki/concepts/tools.md"})
    assert not err and "Helix" in text
    text, err = tools.call("edit_file", {"path": "2_WIKI/Concepts/TOOLS.MD", "old_string": "Helix",
                                         "new_string": "Helix and Vim"})
    assert not err and "Helix and Vim" in (vault / "2_Wiki/Concepts/Tools.md").read_text(encoding="utf-8")


# --- one heading rule, one page parser, one index.md writer -----------------------------------------------------

def test_page_sections_and_index_chunks_split_on_the_same_headings():
    """``Page.section`` and the index's ``split_sections`` use the one heading rule (``vault.pages.heading``):
    level 2 only, closing ``#`` and trailing blanks dropped, a CRLF page's ``\\r`` allowed."""
    from suzent_cli.index.chunking import split_sections
    from suzent_cli.vault.pages import Page, heading

    assert heading("## Claims ##") == (2, "Claims") and heading("## Claims\r") == (2, "Claims")
    assert heading("### Sub") == (3, "Sub") and heading("##Claims") is None and heading("- ## x") is None
    body = "# T\n\n## Claims ##\n\n- A\n\n### Detail\n\n- B\n\n## Previously\n\n- C\n"
    names = [name for name, _ in split_sections(body)]
    assert names == ["", "Claims", "Previously"]
    page = Page(body=body)
    assert [line for line in page.section("Claims") if line] == ["- A", "### Detail", "- B"]
    assert Page(body=body.replace("\n", "\r\n")).section("Previously") is not None


def test_the_one_page_parser_strict_refuses_what_lenient_reads():
    """Strict (page writers) refuses a value that does not load; lenient (the index) reads it as a string and
    keeps the page's other keys; a page without frontmatter is the same in both."""
    from suzent_cli.vault import frontmatter

    text = "---\nstatus: deprecated\nstale_after: 2026-13-45\n---\n# P\n\n- Likes tea\n"
    with pytest.raises(frontmatter.FrontmatterInvalid):
        frontmatter.parse(text)
    meta, body = frontmatter.parse(text, lenient=True)
    assert meta == {"status": "deprecated", "stale_after": "2026-13-45"} and body.startswith("# P")
    plain = "# P\n\n- Likes tea\n"
    assert frontmatter.parse(plain, lenient=True) == ({}, plain)
    assert frontmatter.parse("---\n- a list\n---\nbody\n", lenient=True) == ({}, "---\n- a list\n---\nbody\n")


def test_index_links_are_added_once_and_keep_a_persons_edit(vault, monkeypatch):
    """``vault.pages.link_in_index`` adds a line per page not linked yet, through the page lock and the
    concurrent-edit check: a person's line added meanwhile is kept, and a second call adds nothing."""
    from suzent_cli.vault.pages import link_in_index

    index = vault / "index.md"
    edit_once(monkeypatch, index)
    assert link_in_index(vault, [("3_Personal/Profile.md", "Home and work."), ("1_Projects/Context.md", "Work.")])
    text = index.read_text(encoding="utf-8")
    assert MINE in text and text.count("[[3_Personal/Profile]]") == 1 and "- [[1_Projects/Context]] — Work." in text
    assert link_in_index(vault, [("3_Personal/Profile.md", "Home and work.")]) is False
    assert index.read_text(encoding="utf-8") == text
