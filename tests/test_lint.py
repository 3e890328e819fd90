"""The lint phase: structural audit (links, orphans, reciprocal Related, stale) and the rules contradiction check."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest

from suzent_cli.dream.engine import LintFindings
from suzent_cli.dream.lint import LintReport, _Resolver, audit, lint_vault, rules_contradictions
from suzent_cli.errors import DreamFailed
from suzent_cli.vault import bootstrap
from suzent_cli.vault.pages import read_page

RUN = dt.date(2026, 6, 10)


def write(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


@pytest.fixture
def vault(tmp_path) -> Path:
    v = tmp_path / "notebook"
    bootstrap(v)
    return v


# --- link resolution ------------------------------------------------------------------------------------------

def test_resolution_cases(vault):
    write(vault, "2_Wiki/Concepts/Graph Theory.md", "# Graph Theory\n")
    write(vault, "2_Wiki/Entities/Ada.md", "# Ada\n")
    write(vault, "1_Projects/Alpha/Plan.md", "# Plan\n")
    write(vault, "1_Projects/Beta/Plan.md", "# Plan\n")
    write(vault, "4_Assets/diagram.png", "png")
    r = _Resolver(vault)
    src = "2_Wiki/Concepts/Graph Theory.md"
    assert r.resolve("2_Wiki/Entities/Ada", src, False) == "2_Wiki/Entities/Ada.md"        # path without .md
    assert r.resolve("2_Wiki/Entities/Ada.md", src, False) == "2_Wiki/Entities/Ada.md"     # path with .md
    assert r.resolve("ada", src, False) == "2_Wiki/Entities/Ada.md"                        # bare name, any case
    assert r.resolve("Plan", src, False) is None                                           # ambiguous bare name
    assert r.resolve("Alpha/Plan", src, False) == "1_Projects/Alpha/Plan.md"               # nested, unique tail
    assert r.resolve("1_Projects/Beta/Plan", src, False) == "1_Projects/Beta/Plan.md"      # nested path
    assert r.resolve("../Entities/Ada.md", src, True) == "2_Wiki/Entities/Ada.md"          # relative md link
    assert r.resolve("Graph%20Theory.md", src, True) == src                                 # encoded, same folder
    assert r.resolve("4_Assets/diagram.png", src, False) == "4_Assets/diagram.png"         # attachment
    assert r.resolve("Missing", src, False) is None
    assert r.resolve("https://example.com/a.md", src, True) is None
    assert r.resolve("../../../outside.md", src, True) is None
    # aliases and heading anchors are stripped by the link patterns
    text = "[[Ada|the countess]] [[Graph Theory#Trees]] [[ada#^block|x]] [t](../Entities/Ada.md#life) `[[Nope]]`"
    assert r.targets(text, src) == ["2_Wiki/Entities/Ada.md", src, "2_Wiki/Entities/Ada.md", "2_Wiki/Entities/Ada.md"]


# --- audit ----------------------------------------------------------------------------------------------------

def test_broken_links_in_index_reported_not_deleted(vault):
    write(vault, "2_Wiki/Concepts/Rust.md", "# Rust\n")
    write(vault, "3_Personal/Profile.md", "# Profile\n")
    index = ("# Notebook Index\n\nOne line per page: `[[path]]` — what it holds.\n\n"
             "- [[2_Wiki/Concepts/Rust|Rust]] — the language\n- [[Profile#Home]] — who\n"
             "- [[Gone]] — deleted page\n- [old](2_Wiki/Concepts/Old.md) — moved\n"
             "```\n[[in a code block]]\n```\n")
    write(vault, "index.md", index)
    report = audit(vault, RUN)
    assert report.broken_links == [("index.md", "Gone"), ("index.md", "2_Wiki/Concepts/Old.md")]
    assert report.counts()["broken_links"] == 2
    assert (vault / "index.md").read_text(encoding="utf-8") == index
    assert "index.md" not in report.pages_changed


def test_seed_vault_is_clean(vault):
    report = audit(vault, RUN)
    assert report.counts() == {"broken_links": 0, "orphans": 0, "missing_related": 0, "stale": 0,
                               "contradictions": 0}
    assert report.pages_changed == [] and report.warnings == []


def test_orphans(vault):
    write(vault, "index.md", "# Notebook Index\n\n- [[Listed]]\n")
    write(vault, "2_Wiki/Concepts/Listed.md", "# Listed\n\nSee [[Linked]].\n")
    write(vault, "2_Wiki/Concepts/Linked.md", "# Linked\n")
    write(vault, "2_Wiki/Concepts/Lonely.md", "# Lonely\n\nOnly [[Lonely|myself]].\n")
    write(vault, "0_Inbox/Note.md", "# Note\n")
    report = audit(vault, RUN)
    assert report.orphans == ["0_Inbox/Note.md", "2_Wiki/Concepts/Lonely.md"]
    assert report.counts()["orphans"] == 2


def test_reciprocal_related_added_and_idempotent(vault):
    write(vault, "2_Wiki/Concepts/A.md", "---\ntype: concept\n---\n# A\n\n## Related\n\n- [[2_Wiki/Concepts/B]]\n"
                                         "- [C](../Entities/C.md)\n")
    write(vault, "2_Wiki/Concepts/B.md", "---\ntype: concept\n---\n# B\n\nBody.\n")
    write(vault, "2_Wiki/Entities/C.md", "# C\n\n## Related\n\n- [[Other]]\n\n## Notes\n\nkept\n")
    write(vault, "2_Wiki/Concepts/D.md", "# D\n\n## Related\n\n- [[A|back]]\n")      # D→A, A does not link D
    report = audit(vault, RUN)
    assert sorted(report.related_fixed) == [("2_Wiki/Concepts/A.md", "2_Wiki/Concepts/D.md"),
                                            ("2_Wiki/Concepts/B.md", "2_Wiki/Concepts/A.md"),
                                            ("2_Wiki/Entities/C.md", "2_Wiki/Concepts/A.md")]
    assert report.counts()["missing_related"] == 3
    assert report.pages_changed == ["2_Wiki/Concepts/A.md", "2_Wiki/Concepts/B.md", "2_Wiki/Entities/C.md"]

    b = read_page(vault / "2_Wiki/Concepts/B.md")
    assert b.section("Related") == ["", "- [[2_Wiki/Concepts/A]]", ""]          # section created at the end
    assert b.body.startswith("# B\n\nBody.\n") and b.meta == {"type": "concept"}
    c = read_page(vault / "2_Wiki/Entities/C.md")
    assert c.section("Related") == ["", "- [[Other]]", "- [[2_Wiki/Concepts/A]]", ""]
    assert c.section("Notes") == ["", "kept", ""]
    a = read_page(vault / "2_Wiki/Concepts/A.md")
    assert "- [[2_Wiki/Concepts/D]]" in a.section("Related")

    before = snapshot(vault)
    again = audit(vault, RUN)
    assert again.related_fixed == [] and again.pages_changed == []
    assert snapshot(vault) == before


def test_stale_flagged_once_keys_and_order_kept(vault):
    page = ("---\ntitle: Home\nx_custom: keep me\nstale_after: 2026-06-01\ntags: [a, b]\n---\n\n# Home\n\n"
            "## Claims\n\n- Lives in Berlin\n")
    write(vault, "3_Personal/Home.md", page)
    write(vault, "3_Personal/Job.md", "---\nreview: current\nstale_after: '2026-05-01'\nzeta: 1\n---\n# Job\n")
    write(vault, "3_Personal/Fresh.md", "---\nstale_after: 2026-06-10\n---\n# Fresh\n")   # not earlier: current
    write(vault, "3_Personal/Odd.md", "---\nstale_after: someday\n---\n# Odd\n")
    report = audit(vault, RUN)
    assert report.stale == ["3_Personal/Home.md", "3_Personal/Job.md"]
    assert report.pages_changed == ["3_Personal/Home.md", "3_Personal/Job.md"]
    assert any("Odd.md" in w and "someday" in w for w in report.warnings)

    home = read_page(vault / "3_Personal/Home.md")
    assert list(home.meta) == ["title", "x_custom", "stale_after", "tags", "review"]
    assert home.meta["x_custom"] == "keep me" and home.meta["review"] == "needs-review"
    assert home.meta["stale_after"] == dt.date(2026, 6, 1) and home.meta["tags"] == ["a", "b"]
    assert home.claims()[0].text == "Lives in Berlin"
    job = read_page(vault / "3_Personal/Job.md")
    assert list(job.meta) == ["review", "stale_after", "zeta"] and job.meta["review"] == "needs-review"

    before = snapshot(vault)
    again = audit(vault, RUN)
    assert again.stale == ["3_Personal/Home.md", "3_Personal/Job.md"]     # still counted
    assert again.pages_changed == [] and snapshot(vault) == before     # but not rewritten


def test_broken_yaml_page_skipped_byte_identical(vault):
    bad = "---\ntitle: [unclosed\nstale_after: 2020-01-01\n---\n# Bad\n\n## Related\n\n- [[Good]]\n"
    path = write(vault, "2_Wiki/Concepts/Bad.md", bad)
    write(vault, "2_Wiki/Concepts/Good.md", "# Good\n\n## Related\n\n- [[Bad]]\n")
    report = audit(vault, RUN)
    assert path.read_bytes() == bad.encode()
    assert "2_Wiki/Concepts/Bad.md" not in report.pages_changed
    assert report.stale == [] and report.related_fixed == []
    assert len(report.warnings) == 1 and "2_Wiki/Concepts/Bad.md" in report.warnings[0]
    # its links still count: Good is linked from Bad, so neither is an orphan
    assert report.orphans == []


def test_report_json_and_counts_order(vault):
    write(vault, "index.md", "# Index\n\n- [[Nowhere]]\n")
    report = audit(vault, RUN)
    assert list(report.counts()) == ["broken_links", "orphans", "missing_related", "stale", "contradictions"]
    data = json.loads(json.dumps(report.to_json()))
    assert data["broken_links"] == [["index.md", "Nowhere"]] and data["counts"]["broken_links"] == 1


# --- contradictions -------------------------------------------------------------------------------------------

def test_contradictions_across_personal_pages(vault):
    write(vault, "3_Personal/Profile.md",
          "---\ntype: personal\nreview: current\n---\n# Profile\n\n## Claims\n\n"
          "- Lives in Berlin (confirmed 2x, last 2026-06-01) · source: 2026-06-01.md:5\n"
          "\n## Previously\n\n- Lives in Madrid (until 2026-01-01)\n")
    write(vault, "3_Personal/Moves.md", "# Moves\n\nSome text.\n\n## Claims\n\n- Moved to Lisbon\n- Likes tea\n")
    write(vault, "3_Personal/Other.md", "# Other\n\n## Claims\n\n- Lives in Berlin.\n- Works at Acme\n")
    findings = rules_contradictions(vault, RUN)
    assert isinstance(findings, LintFindings)
    assert len(findings.contradictions) == 1
    assert findings.contradictions == ["residence: Moved to Lisbon (3_Personal/Moves.md) / "
                                       "Lives in Berlin. (3_Personal/Other.md)"]      # first claim per value
    assert findings.pages == ["3_Personal/Moves.md", "3_Personal/Other.md", "3_Personal/Profile.md"]

    profile = read_page(vault / "3_Personal/Profile.md")
    callout = "> [!warning] Conflicting claims: Moved to Lisbon / Lives in Berlin."
    assert profile.body.split("\n")[:3] == ["# Profile", "", callout]
    assert profile.meta == {"type": "personal", "review": "needs-review"}        # key kept in place
    moves = read_page(vault / "3_Personal/Moves.md")
    assert moves.body.startswith(f"# Moves\n\n{callout}\n\nSome text.\n")
    assert moves.meta == {"review": "needs-review"}

    before = snapshot(vault)
    again = rules_contradictions(vault, RUN)
    assert again.contradictions == findings.contradictions and again.pages == []
    assert snapshot(vault) == before
    assert (vault / "3_Personal/Profile.md").read_text(encoding="utf-8").count("Conflicting claims") == 1


def test_previously_is_history_not_a_conflict(vault):
    write(vault, "3_Personal/Profile.md", "# Profile\n\n## Claims\n\n- Lives in Berlin\n"
                                          "- Currently lives in Berlin (since 2026-06-01); previously Madrid\n"
                                          "- Lived in Paris (until 2025-01-01)\n\n"
                                          "## Previously\n\n- Lives in Madrid (until 2026-06-01)\n")
    before = snapshot(vault)
    findings = rules_contradictions(vault, RUN)
    assert findings.contradictions == [] and findings.pages == []
    assert snapshot(vault) == before


def test_contradiction_within_wiki_page_not_across(vault):
    write(vault, "2_Wiki/Entities/Ada.md", "Intro line.\n\n## Claims\n\n- Works at Acme\n- Works at Globex\n")
    write(vault, "2_Wiki/Entities/Bob.md", "# Bob\n\n## Claims\n\n- Works at Initech\n")   # other page: no pool
    findings = rules_contradictions(vault, RUN)
    assert findings.contradictions == ["employer: Works at Acme (2_Wiki/Entities/Ada.md) / "
                                       "Works at Globex (2_Wiki/Entities/Ada.md)"]
    assert findings.pages == ["2_Wiki/Entities/Ada.md"]
    ada = read_page(vault / "2_Wiki/Entities/Ada.md")
    assert ada.body.startswith("> [!warning] Conflicting claims: Works at Acme / Works at Globex\n\nIntro line.\n")
    assert ada.meta == {"review": "needs-review"}
    assert "1 contradiction" in findings.summary


def test_contradiction_check_skips_broken_yaml(vault):
    bad = "---\n: : nope\n  - [\n---\n## Claims\n\n- Lives in Rome\n- Lives in Oslo\n"
    path = write(vault, "3_Personal/Bad.md", bad)
    findings = rules_contradictions(vault, RUN)
    assert findings.contradictions == [] and path.read_text(encoding="utf-8") == bad
    assert len(findings.warnings) == 1 and "3_Personal/Bad.md" in findings.warnings[0]


# --- the full pass --------------------------------------------------------------------------------------------

class RulesLike:
    def __init__(self):
        self.jobs = []

    def lint(self, job):
        self.jobs.append(job)
        return rules_contradictions(job.vault_dir, job.run_date)


class Failing:
    def lint(self, job):
        raise DreamFailed("engine broke")


def test_lint_vault_merges_engine_findings(vault):
    write(vault, "index.md", "# Index\n\n- [[Profile]]\n")
    write(vault, "3_Personal/Profile.md", "---\nstale_after: 2026-01-01\n---\n# Profile\n\n## Claims\n\n"
                                          "- Lives in Berlin\n- Lives in Rome\n")
    write(vault, "3_Personal/Bad.md", "---\n[broken\n---\n# Bad\n")
    engine = RulesLike()
    deadline = time.monotonic() + 60
    report = lint_vault(vault, RUN, engine, deadline)
    assert isinstance(report, LintReport)
    assert engine.jobs[0].vault_dir == vault and engine.jobs[0].run_date == RUN and engine.jobs[0].deadline == deadline
    assert report.counts() == {"broken_links": 0, "orphans": 1, "missing_related": 0, "stale": 1,
                               "contradictions": 1}
    assert report.pages_changed == ["3_Personal/Profile.md"]
    assert len(report.warnings) == 1                                     # the bad page, reported once
    text = (vault / "3_Personal/Profile.md").read_text(encoding="utf-8")
    assert text.count("review: needs-review") == 1 and "Conflicting claims: Lives in Berlin / Lives in Rome" in text

    before = snapshot(vault)
    again = lint_vault(vault, RUN, RulesLike(), deadline)
    assert again.pages_changed == [] and snapshot(vault) == before


def test_lint_vault_engine_failure_propagates(vault):
    with pytest.raises(DreamFailed):
        lint_vault(vault, RUN, Failing(), time.monotonic() + 60)


def test_page_linked_back_by_the_fix_is_not_an_orphan(vault):
    write(vault, "index.md", "# Index\n\n- [[Goals]]\n")
    write(vault, "3_Personal/Profile.md", "# Profile\n\n## Related\n\n- [[Goals]]\n")   # nothing links here yet
    write(vault, "3_Personal/Goals.md", "# Goals\n")
    report = audit(vault, RUN)
    assert report.related_fixed == [("3_Personal/Goals.md", "3_Personal/Profile.md")]
    assert report.orphans == []
