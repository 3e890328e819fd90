"""forget is total (issue 13, section 1): a forgotten text leaves recall (log, vault and core rows), the vault's
claims, MEMORY.md's generated zone and the recall log, and no later dream, restatement, late line, reconcile,
``index --full`` or concurrent run brings it back. The daily logs and MEMORY.md's manual zone keep their bytes."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from conftest import HASH_ENV, CountingEmbedder, invoke
from suzent_cli.archive import Fact, append_entry, list_logs
from suzent_cli.capture import write_facts
from suzent_cli.config import DreamConfig, resolve_settings
from suzent_cli.dream.engine import IngestResult
from suzent_cli.dream.rules import RulesEngine
from suzent_cli.dream.runner import DREAM_LOCK, DreamRunner
from suzent_cli.errors import DreamBusy
from suzent_cli.forget import forget, plan_forget, text_of_row
from suzent_cli.index.api import run_index
from suzent_cli.index.store import ReadStore
from suzent_cli.promote import promote
from suzent_cli.recall import recall
from suzent_cli.reconcile import reconcile
from suzent_cli.vault.forgotten import Forgotten
from suzent_cli.vault.memory_md import MARKER, split_zones
from suzent_cli.vault.state import RECALL_LOG, append_confirmations, append_tombstones, read_forgotten

SECRET = "Has a secret diary"
EMB = HASH_ENV | {"SUZENT_NOW": "2026-06-20T12:00"}


def make_settings(home: Path, now: str = "2026-06-20T12:00"):
    return dataclasses.replace(resolve_settings(home=home, now=now, env={}), embedder="hash:64")


def log(settings, day: str, *facts: str) -> None:
    parsed = [Fact(content=f.partition("] ")[2], category=f.partition("] ")[0].lstrip("[")) for f in facts]
    append_entry(settings.paths.archive_dir, dt.date.fromisoformat(day), "09:00", "sess0001", parsed, timeout=5)


def dream(settings, emb, **kw):
    return DreamRunner(settings, DreamConfig(), engine="rules", embedder=emb, **kw).tick(force=True)


def rows(settings) -> list[tuple[str, str]]:
    return sorted((r["source"], r["content"]) for r in ReadStore.open_existing(settings.paths.index_dir).rows())


def holding(settings, words: str = "secret diary") -> list[tuple[str, str]]:
    return [r for r in rows(settings) if words in r[1].lower()]


def vault_text(settings) -> str:
    return "\n".join(p.read_text() for p in sorted(settings.paths.vault_dir.rglob("*.md")) if ".state" not in p.parts)


def memory(settings) -> str:
    path = settings.paths.memory_dir / "MEMORY.md"
    return path.read_text() if path.is_file() else ""


def logs_bytes(settings) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for _, p in list_logs(settings.paths.archive_dir)}


@pytest.fixture(scope="module")
def dreamed_once(tmp_path_factory) -> Path:
    """Three days stating the secret and two other facts, indexed, dreamed with every follow-up (reconcile,
    promote): the claim is in the vault, in MEMORY.md's generated zone and top-1 in recall. Built once per module
    (no file in it names its own path, so a copy is the same home)."""
    home = tmp_path_factory.mktemp("dreamed") / "suzent-home"
    s = make_settings(home)
    for i, day in enumerate(["2026-06-01", "2026-06-02", "2026-06-03"]):
        log(s, day, f"[personal] {SECRET}", "[preference] Likes green tea", f"[technical] Read chapter {i}")
    emb = CountingEmbedder()
    run_index(s, embedder=emb)
    assert dream(s, emb).outcome == "ingested"
    return home


@pytest.fixture
def dreamed(home, dreamed_once):
    """A copy of :func:`dreamed_once` at ``home``, its settings and a fresh hash embedder."""
    shutil.copytree(dreamed_once, home, symlinks=True)
    return make_settings(home), CountingEmbedder()


def test_forget_after_a_dream_removes_it_from_recall_vault_memory_md_and_recall_log(dreamed):
    s, emb = dreamed
    hits = recall(s, emb, "secret diary", limit=3)
    assert hits[0].source_type == "notebook" and SECRET in hits[0].content  # the vault claim, top-1
    assert recall(s, emb, "green tea", limit=3)  # a recall-log entry the purge must keep
    assert SECRET in memory(s) and SECRET in (s.paths.state_dir / RECALL_LOG).read_text()
    before = logs_bytes(s)

    report = forget(s, plan_forget(s, SECRET), embedder=emb)

    assert not [h for h in recall(s, emb, "secret diary", limit=10, log=False) if "secret diary" in h.content.lower()]
    assert not holding(s)
    assert report.claims_removed == 1 and report.memory_md == "written" and report.recall_log_purged >= 1
    assert "secret diary" not in vault_text(s).lower()
    assert "secret diary" not in memory(s).lower() and "Likes green tea" in memory(s)
    snippets = [json.loads(line)["snippet"] for line in (s.paths.state_dir / RECALL_LOG).read_text().splitlines()]
    assert snippets and not [x for x in snippets if "secret diary" in x.lower()]
    assert logs_bytes(s) == before  # the daily logs keep the line (invariant 1)
    promote(s)  # promote does not write it again
    assert "secret diary" not in memory(s).lower()


def test_forget_by_the_id_of_a_vault_row_also_hides_the_log_row_it_cites(dreamed):
    """"Read chapter 0" was stated once: its log row stays indexed behind the claim that cites it. Forgetting the
    claim's row by id used to hide only the chunk, so recall showed the log row again."""
    s, emb = dreamed
    row = next(r for r in ReadStore.open_existing(s.paths.index_dir).rows()
               if r["source"].startswith("notebook:") and "Read chapter 0" in r["content"])
    plan = plan_forget(s, text_of_row(s, row["id"]))
    assert plan.text == "Read chapter 0" and {m.source for m in plan.matches} == \
        {"archive:2026-06-01.md", "notebook:2_Wiki/Concepts/Technical.md"}
    forget(s, plan, embedder=emb)
    assert not holding(s, "read chapter 0") and holding(s, "read chapter 1")
    assert not [h for h in recall(s, emb, "read chapter 0", limit=10, log=False) if "chapter 0" in h.content.lower()]
    assert "Read chapter 0" not in vault_text(s)


def test_no_restatement_late_line_dream_reconcile_or_full_index_brings_it_back(dreamed):
    s, emb = dreamed
    forget(s, plan_forget(s, SECRET), embedder=emb)
    # a restatement the write path recorded as a confirmation (before or after the forget), with a full stop
    append_confirmations(s.paths.state_dir, [{
        "ts": "2026-06-20T10:00:00+00:00", "day": "2026-06-20", "time": "10:00", "content": f"{SECRET}.",
        "category": "personal", "matched": f"- {SECRET} (confirmed 3x, last 2026-06-03) · source: 2026-06-01.md:5",
        "source": "notebook:3_Personal/Profile.md", "locator": 0, "score": 1.0, "session": "s"}], timeout=5)
    # a late line on a consolidated day (capture --date), and the same words captured today
    write_facts(s, [Fact(content=SECRET, category="personal")], day=dt.date(2026, 6, 2), refresh=False)
    write_facts(s, [Fact(content=f"{SECRET}.", category="personal"), Fact(content="Owns a bike", category="personal")],
                refresh=False)
    run_index(s, embedder=emb)
    assert not holding(s)  # a later capture of the same words is hidden again
    s2 = make_settings(s.paths.vault_dir.parent, now="2026-06-22T12:00")
    result = dream(s2, emb)
    assert result.outcome == "ingested", result.summary
    assert "secret diary" not in vault_text(s).lower() and "Owns a bike" in vault_text(s)
    assert "secret diary" not in memory(s).lower()
    reconcile(s2, embedder=emb)
    run_index(s2, full=True, embedder=emb)
    assert not holding(s)
    assert not [h for h in recall(s2, emb, "secret diary", limit=10, log=False) if "secret diary" in h.content.lower()]


def test_a_longer_fact_holding_the_text_is_a_new_log_fact_but_never_enters_the_vault(dreamed):
    s, emb = dreamed
    forget(s, plan_forget(s, SECRET), embedder=emb)
    log(s, "2026-06-15", f"[personal] {SECRET} in the attic", "[personal] Owns a bike")
    run_index(s, embedder=emb)
    assert [c for _, c in holding(s)] == [f"{SECRET} in the attic"]  # different words: a new fact, recalled
    dream(make_settings(s.paths.vault_dir.parent, now="2026-06-22T12:00"), emb)
    assert "secret diary" not in vault_text(s).lower() and "Owns a bike" in vault_text(s)


def test_claims_holding_the_text_go_from_claims_and_previously_with_their_notes_and_nothing_else(home):
    s = make_settings(home)
    log(s, "2026-06-01", f"[personal] {SECRET}")
    page = s.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntitle: Profile\nowner: ana\n---\n\n# Profile\n\nMy own intro.\n\n## Claims\n\n"
        f"- {SECRET} in the attic (confirmed 2x, last 2026-06-01) · source: 2026-06-01.md:5\n"
        "  - a note under it\n- Likes tea (confirmed 1x, last 2026-06-01)\n\n## Previously\n\n"
        f"- Moved to Lisbon (since 2026-01-01); previously: {SECRET} (until 2026-05-01)\n- Lived in Porto\n\n"
        "## Notes\n\nKeep this.\n")
    run_index(s, embedder=CountingEmbedder())
    plan = plan_forget(s, SECRET)
    assert [(c["page"], c["section"]) for c in plan.claims] == [("3_Personal/Profile.md", "Claims"),
                                                                ("3_Personal/Profile.md", "Previously")]
    forget(s, plan, embedder=CountingEmbedder())
    text = page.read_text()
    assert "secret diary" not in text.lower() and "a note under it" not in text
    for kept in ("owner: ana", "My own intro.", "- Likes tea (confirmed 1x, last 2026-06-01)", "- Lived in Porto",
                 "## Notes\n\nKeep this."):
        assert kept in text, kept


def test_memory_md_manual_line_is_named_not_edited_and_dropped_from_what_is_indexed(dreamed, capsys):
    s, emb = dreamed
    path = s.paths.memory_dir / "MEMORY.md"
    path.write_bytes(path.read_bytes() + f"- {SECRET} <!-- verified: human:ana@2026-06-05 -->\n- Likes jazz\n".encode())
    manual_before = split_zones(path.read_bytes()).manual
    run_index(s, embedder=emb)
    assert holding(s) and any(src == "facts:MEMORY.md" for src, _ in holding(s))
    plan = plan_forget(s, SECRET)
    assert [m["text"] for m in plan.memory_manual] == [f"- {SECRET} <!-- verified: human:ana@2026-06-05 -->"]
    assert [m["text"] for m in plan.memory_generated] == [f"- {SECRET}"]
    report = forget(s, plan, embedder=emb)
    assert any("MEMORY.md below the marker is yours" in w for w in report.warnings)
    assert split_zones(path.read_bytes()).manual == manual_before  # the person's part, byte for byte
    assert "secret diary" not in split_zones(path.read_bytes()).generated.decode().lower()
    assert not holding(s)
    assert any(src == "facts:MEMORY.md" and "Likes jazz" in c for src, c in rows(s))  # the rest stays searchable


def test_forget_waits_for_a_running_dream_and_changes_nothing_when_it_stays_busy(dreamed):
    s, emb = dreamed
    s0 = dataclasses.replace(s, lock_timeout=0)
    vault, mem = vault_text(s), memory(s)
    lock = FileLock(str(s.paths.state_dir / DREAM_LOCK))
    with lock:
        with pytest.raises(DreamBusy, match="nothing was forgotten"):
            forget(s0, plan_forget(s0, SECRET), embedder=emb)
    assert "has a secret diary" not in read_forgotten(s.paths.state_dir)
    assert vault_text(s) == vault and memory(s) == mem


def test_a_forget_racing_a_dream_cannot_be_undone(dreamed, monkeypatch):
    """A forget arriving while the engine folds (after the batch was read) waits for the lock; with a short wait
    it fails with nothing written, and once the dream is done it removes the claim the dream just bumped."""
    s, emb = dreamed
    log(s, "2026-06-15", f"[personal] {SECRET}")
    attempts = []
    real = RulesEngine.ingest

    def ingest_with_a_forget_arriving(self, batch):
        s0 = dataclasses.replace(s, lock_timeout=0)
        try:
            forget(s0, plan_forget(s0, SECRET), embedder=emb)
        except DreamBusy as exc:
            attempts.append(str(exc))
        return real(self, batch)

    monkeypatch.setattr(RulesEngine, "ingest", ingest_with_a_forget_arriving)
    later = make_settings(s.paths.vault_dir.parent, now="2026-06-22T12:00")
    assert dream(later, emb).outcome == "ingested"
    assert len(attempts) == 1 and "has a secret diary" not in read_forgotten(s.paths.state_dir)
    monkeypatch.setattr(RulesEngine, "ingest", real)
    forget(later, plan_forget(later, SECRET), embedder=emb)
    assert "secret diary" not in vault_text(s).lower() and not holding(s)


def test_the_runner_scrubs_whatever_an_engine_writes(dreamed):
    """Any engine (the claude agent reads pages and may restate a claim): after it writes, the runner removes
    every claim holding a forgotten text, under the consolidation lock."""
    s, emb = dreamed
    append_tombstones(s.paths.state_dir, [SECRET], reason="forget", timeout=5)
    log(s, "2026-06-15", "[personal] Owns a bike")

    class Restating:
        name = "fake"

        def ingest(self, batch):
            page = batch.vault_dir / "3_Personal" / "Profile.md"
            page.write_text(page.read_text().replace("## Claims\n", f"## Claims\n\n- {SECRET} under the bed\n- Owns a bike\n"))
            return IngestResult(pages=["3_Personal/Profile.md"], summary="fake")

    later = make_settings(s.paths.vault_dir.parent, now="2026-06-22T12:00")
    result = DreamRunner(later, DreamConfig(), engine="fake", engine_factory=lambda _n: Restating(),
                         embedder=emb).tick(force=True)
    assert result.outcome == "ingested" and any("forgotten claim" in w for w in result.warnings)
    assert "secret diary" not in vault_text(s).lower() and "- Owns a bike" in vault_text(s)
    assert "secret diary" not in memory(s).lower()


def test_dry_run_lists_every_place_and_changes_nothing(dreamed):
    s, emb = dreamed
    path = s.paths.memory_dir / "MEMORY.md"
    path.write_bytes(path.read_bytes() + f"- {SECRET} <!-- verified: human:ana@2026-06-05 -->\n".encode())
    recall(s, emb, "secret diary", limit=2)
    snapshot = {p: p.read_bytes() for p in s.paths.vault_dir.parent.rglob("*") if p.is_file() and ".lance" not in str(p)
                and "index_state" not in p.name}
    proc = invoke(s.paths.vault_dir.parent, "forget", SECRET, "--dry-run", env_extra=EMB)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "archive:2026-06-01.md line 5: Has a secret diary" in out
    assert "vault claim 3_Personal/Profile.md ## Claims: - Has a secret diary (confirmed 3x" in out
    assert "(generated zone): - Has a secret diary" in out
    assert "(your part, below the marker; not edited): - Has a secret diary <!-- verified" in out
    assert "recall log: " in out and "would remove 1 vault claim(s), 1 generated MEMORY.md line(s)" in out
    assert "nothing changed (--dry-run)" in out and "daily logs keep the line" in out
    after = {p: p.read_bytes() for p in snapshot}
    assert after == snapshot and not read_forgotten(s.paths.state_dir)


def test_forget_cli_busy_is_one_line_with_the_busy_exit_code(dreamed):
    s, _ = dreamed
    with FileLock(str(s.paths.state_dir / DREAM_LOCK)):
        proc = invoke(s.paths.vault_dir.parent, "forget", SECRET, env_extra={**EMB, "SUZENT_LOCK_TIMEOUT": "0"})
    assert proc.returncode == 3 and proc.stderr.startswith("Error: ") and "nothing was forgotten" in proc.stderr
    assert "Traceback" not in proc.stderr and not read_forgotten(s.paths.state_dir)


def test_matcher_rules():
    f = Forgotten(["Has a secret diary", "tea"])
    assert f.same("has a  SECRET diary.") and not f.same("Has a secret diary in the attic")
    assert f.covers("Has a secret diary in the attic") and f.covers("Moved (since 2026-01-01); previously: has a secret diary")
    assert not f.covers("Has a secret diaryx") and not f.covers("Likes steam")  # whole words; short texts only equal
    assert f.covers_line(f"- {SECRET} (confirmed 3x, last 2026-06-03) · source: 2026-06-01.md:5")
    assert f.covers_line(f"- {SECRET} <!-- verified: human:ana@2026-06-05 -->") and f.covers_line("- Tea.")
    assert f.scrub_chunk(f"# Notes\n{SECRET} here.\nKeep me") == "# Notes\nKeep me"
    assert not Forgotten([]) and Forgotten([]).scrub_chunk("x") == "x"
    assert MARKER  # imported for the MEMORY.md tests above


def _moved_page(s) -> Path:
    """A profile as the rules engine writes a changed value: one current claim quoting the old one, which moved to
    ``## Previously``; plus a longer claim mentioning a one-word fact and that fact as its own claim."""
    log(s, "2026-06-01", "[personal] Lives in Berlin", "[general] Lisbon")
    log(s, "2026-06-03", "[personal] I live in Madrid now")
    page = s.paths.vault_dir / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\ntitle: Profile\n---\n\n# Profile\n\n## Claims\n\n"
        "- I live in Madrid now (since 2026-06-03); previously: Lives in Berlin (confirmed 1x, last 2026-06-03)"
        " · source: 2026-06-03.md:5\n  - a note under it\n"
        "- Moved to Lisbon for a year (confirmed 1x, last 2026-06-01)\n- Lisbon (confirmed 1x, last 2026-06-01)\n\n"
        "## Previously\n\n- Lives in Berlin (confirmed 1x, last 2026-06-01) (until 2026-06-03) · source: 2026-06-01.md:5\n")
    return page


MADRID = "- I live in Madrid now (since 2026-06-03) (confirmed 1x, last 2026-06-03) · source: 2026-06-03.md:5"


def test_forgetting_an_old_value_keeps_the_current_claim_that_quotes_it(home):
    """P1/P4: "X (since D); previously: <forgotten>" used to be removed whole (the current address was lost) and the
    output then claimed the text stayed on the page. The claim loses only its tail; nothing is named as left."""
    s = make_settings(home)
    page = _moved_page(s)
    emb = CountingEmbedder()
    run_index(s, embedder=emb)
    plan = plan_forget(s, "Lives in Berlin")
    assert [(c["section"], c["now"]) for c in plan.claims] == [("Claims", MADRID), ("Previously", None)]
    assert plan.mentions == [] and plan.mention_files == []
    report = forget(s, plan, embedder=emb)
    text = page.read_text()
    assert f"{MADRID}\n  - a note under it\n" in text and "berlin" not in text.lower()
    assert report.claims_removed == 1 and report.claims_rewritten == 1
    assert not [w for w in report.warnings if "still written" in w]
    assert not holding(s, "berlin") and any(src.startswith("notebook:") for src, _ in holding(s, "madrid now"))


def test_dry_run_names_no_page_the_scrub_cleans(home):
    s = make_settings(home)
    _moved_page(s)
    proc = invoke(home, "forget", "Lives in Berlin", "--dry-run", env_extra=EMB)
    assert proc.returncode == 0, proc.stderr
    assert f"-> kept as: {MADRID}" in proc.stdout
    assert "a longer line holds it" not in proc.stdout and "still written" not in proc.stderr


def test_a_one_word_forgotten_text_removes_only_claims_that_are_exactly_it(home):
    """P1: forget "Lisbon" removed every claim mentioning the word; a text of 1-2 words matches by equality only,
    in the vault scrub and in the indexer alike."""
    s = make_settings(home)
    page = _moved_page(s)
    emb = CountingEmbedder()
    run_index(s, embedder=emb)
    plan = plan_forget(s, "Lisbon")
    assert [c["line"] for c in plan.claims] == ["- Lisbon (confirmed 1x, last 2026-06-01)"] and plan.mentions == []
    forget(s, plan, embedder=emb)
    text = page.read_text()
    assert "- Moved to Lisbon for a year (confirmed 1x" in text and "\n- Lisbon (" not in text
    assert [c for _, c in holding(s, "lisbon") if "Moved to Lisbon for a year" not in c] == []
    assert any(src.startswith("notebook:") and "Moved to Lisbon for a year" in c for src, c in holding(s, "lisbon"))


def test_the_recall_log_purge_matches_whole_words_like_everything_else(home):
    """P5: forgetting "eovi" dropped the recall-log entry "Uses neovim as main editor" (a raw substring match)."""
    s = make_settings(home)
    log(s, "2026-06-01", "[technical] eovi", "[technical] Uses neovim as main editor")
    s.paths.state_dir.mkdir(parents=True, exist_ok=True)
    entries = ["Uses neovim as main editor", "eovi", "- eovi (confirmed 1x, last 2026-06-01)", "Moved to eovi land"]
    (s.paths.state_dir / RECALL_LOG).write_text("".join(json.dumps({"snippet": e}) + "\n" for e in entries))
    plan = plan_forget(s, "eovi")
    assert plan.recall_log == 2
    assert forget(s, plan).recall_log_purged == 2
    kept = [json.loads(line)["snippet"] for line in (s.paths.state_dir / RECALL_LOG).read_text().splitlines()]
    assert kept == ["Uses neovim as main editor", "Moved to eovi land"]


def test_matcher_short_texts_and_previously_tails():
    f = Forgotten(["Lisbon", "Lives in Berlin"])
    assert f.covers("Lisbon.") and not f.covers("Moved to Lisbon") and f.covers("Lives in Berlin now")
    assert f.holds("# Profile\n- Lives in Berlin (confirmed 1x, last 2026-06-01)") and not f.holds("Lisbon is far")


def test_a_page_edited_while_forget_scrubs_it_keeps_the_edit_and_loses_the_claim(tmp_path, monkeypatch):
    """scrub_vault writes through write_page's read-compare-rename: a person's edit landing between the scrub's
    read and its rename is kept, and the claim is scrubbed from the page as it is then (before this, write_page
    left the changed page as it was and forget counted the claim as removed)."""
    from suzent_cli import files
    from suzent_cli.vault.forgotten import scrub_vault

    vault = tmp_path / "vault"
    page = vault / "3_Personal" / "Profile.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: Profile\n---\n# Profile\n\n## Claims\n\n- Keeps a secret diary at home\n"
                    "- Lives in Lisbon\n", encoding="utf-8")
    mine = "\n## My notes\n\nWritten by me while forget ran.\n"
    real, done = files.atomic_write_bytes, []

    def wrapped(path, data, *, before_replace=None):
        if Path(path) == page and not done:
            done.append(1)
            with open(page, "a", encoding="utf-8") as fh:  # after the scrub read the page, before its rename
                fh.write(mine)
        return real(path, data, before_replace=before_replace)

    monkeypatch.setattr(files, "atomic_write_bytes", wrapped)
    removed, problems = scrub_vault(vault, Forgotten(["keeps a secret diary at home"]))
    text = page.read_text(encoding="utf-8")
    assert done and not problems
    assert "Written by me while forget ran." in text  # the person's edit survives
    assert "secret diary" not in text and "- Lives in Lisbon" in text  # and the claim is gone all the same
    assert [c.line for c in removed] == ["- Keeps a secret diary at home"]


@pytest.mark.parametrize("fast", [True, False], ids=["capture fast path", "typer"])
def test_capturing_forgotten_words_says_they_are_hidden(tmp_path, fast):
    """A trial: after `suzent forget "Owns a corgi named Biscuit"`, `capture --fact` of the same words printed a
    plain 'captured' (JSON "outcome": "new", nothing else), while MCP remember said 'captured but hidden by a
    forget'. The rule is one (capture.forgotten_flags); the CLI now says it too, on both of its paths."""
    import json
    import subprocess
    import sys

    from conftest import REPO, cli_env

    home = tmp_path / "home"
    words = "Owns a corgi named Biscuit"
    assert invoke(home, "capture", "--fact", f"[personal] {words}", env_extra=HASH_ENV).returncode == 0
    assert invoke(home, "forget", words, env_extra=HASH_ENV).returncode == 0

    def capture(*extra):
        args = ["capture", "--fact", f"[personal] {words}", *extra]
        if not fast:
            return invoke(home, *args, env_extra=HASH_ENV)
        return subprocess.run([sys.executable, "-m", "suzent_cli", *args], capture_output=True, text=True, cwd=REPO,
                              env=cli_env(home, **HASH_ENV), timeout=120)

    text = capture()
    assert text.returncode == 0 and "hidden: these words were forgotten; recall never shows them" in text.stdout
    shown = json.loads(capture("--json").stdout)
    fact, = shown["facts"]
    assert fact["hidden"] == "forgotten" and "suzent forget" in fact["reason"]
    other = invoke(home, "capture", "--fact", "[personal] Owns a cat", "--json", env_extra=HASH_ENV)
    assert "hidden" not in json.loads(other.stdout)["facts"][0], other.stdout
