"""Supersession across pages (issue 27): a statement filed on one page retires the claim it replaces on another
page of its scope, and the two paths that were untested: a person editing that other page while the pass runs
(the retirement replayed onto their text, or skipped and said when the claim they edited is no longer the one
chosen), and a pass interrupted by its deadline, a crash or a kill (``.state/across_pages.jsonl`` makes the next
dream finish it, retiring nothing twice). Real files, real runners; the SIGKILL runs a real process in
tests/integration/test_across_pages_kill.py."""

from __future__ import annotations

import json
import time as real_time

import pytest

from conftest import invoke, log, settings_at
from suzent_cli.config import DreamConfig
from suzent_cli.dream import rules
from suzent_cli.dream.runner import DreamRunner
from suzent_cli.vault import ledger
from suzent_cli.vault.pages import read_page
from suzent_cli.vault.state import ACROSS_PAGES, read_superseded
from suzent_cli.vault.state.owed import read_owed

PREFS, TECH = "3_Personal/Preferences.md", "2_Wiki/Concepts/Technical.md"
DARK, LIGHT = "I prefer dark mode in every editor", "I use light mode in every editor now"


def tick(s, **config):
    return DreamRunner(s, DreamConfig(**config), engine="rules", follow_ups=[]).tick(force=True)


def seeded(home):
    """The dark-mode preference folded on Preferences.md (day 1); the light-mode statement logged (day 5), to be
    filed under Technical.md by the next dream, whose across-pages pass alone writes Preferences.md."""
    s = settings_at(home)
    log(s, "2026-06-01", f"[preference] {DARK}", "[preference] Likes jazz")
    assert tick(s).outcome == "ingested"
    log(s, "2026-06-05", f"[technical] {LIGHT}")
    return s


def claims(s, rel, section="Claims"):
    return [c.text for c in read_page(s.paths.vault_dir / rel).claims(section)]


def retired(s, handed_off: bool = True) -> None:
    """The dark-mode claim is history (until the light-mode day), once; light mode is current on its page; its log
    line is handed off to reconcile (``handed_off``; a CLI dream's reconcile has drained the hand-off since)."""
    assert DARK not in claims(s, PREFS) and "Likes jazz" in claims(s, PREFS)
    assert [(c.text, c.until.isoformat()) for c in read_page(s.paths.vault_dir / PREFS).claims("Previously")] == \
           [(DARK, "2026-06-05")]
    assert claims(s, TECH) == [LIGHT]
    if handed_off:
        assert [ln for ln in read_superseded(s.paths.state_dir) if DARK in ln] == [f"- [preference] {DARK}"]
    assert not (s.paths.state_dir / ACROSS_PAGES).exists()


def verified(home) -> dict:
    """``suzent verify``'s state check, which must pass but for the folder modes in-process test helpers leave (a
    test home is not made private), and its claim sources; the state check returned."""
    checks = json.loads(invoke(home, "verify", "--json").stdout)["checks"]
    assert checks["claim_sources"]["ok"], checks["claim_sources"]
    assert all(": mode 0" in v for v in checks["state"]["violations"]), checks["state"]
    return checks["state"]


def test_a_statement_on_one_page_retires_its_claim_on_another(home):
    s = seeded(home)
    result = tick(s)
    assert result.outcome == "ingested", result.error
    retired(s)


# --- 1. a person edits the other page while the pass runs ----------------------------------------------------------

def edit_during_pass(monkeypatch, s, edit):
    """Run ``edit(path)`` on Preferences.md between the pass's read of it and its write (the seam: the pass's
    :func:`write_page` call, which takes the page lock and compares with what the pass read)."""
    real = rules.write_page
    edited = []

    def write(path, page, **kw):
        if path.name == "Preferences.md" and not edited:
            edit(path)
            edited.append(path)
        return real(path, page, **kw)

    monkeypatch.setattr(rules, "write_page", write)
    result = tick(s)
    assert edited, "the pass never wrote Preferences.md"
    return result


def test_a_person_edit_during_the_pass_is_kept_and_the_retirement_applied_to_it(home, monkeypatch):
    s = seeded(home)

    def edit(path):
        text = path.read_text(encoding="utf-8")
        text = text.replace("- Likes jazz", "- Prefers paper books\n- Likes jazz", 1) + "\nA note I wrote.\n"
        path.write_text(text, encoding="utf-8")

    result = edit_during_pass(monkeypatch, s, edit)
    assert result.outcome == "ingested", result.error
    retired(s)
    assert "Prefers paper books" in claims(s, PREFS)
    text = (s.paths.vault_dir / PREFS).read_text(encoding="utf-8")
    assert text.count("A note I wrote.") == 1 and text.count("Prefers paper books") == 1
    assert text.count(DARK) == 1 and text.count("Likes jazz") == 1  # nothing duplicated
    assert not [w for w in result.warnings if "changed while" in w]
    verified(home)


def test_a_claim_the_person_changed_meanwhile_is_not_retired_nor_another_line(home, monkeypatch):
    s = seeded(home)
    mine = f"{DARK} except Vim"

    def edit(path):  # the person reworded the very claim the pass chose: it is theirs now
        path.write_text(path.read_text(encoding="utf-8").replace(f"- {DARK} (", f"- {mine} (", 1), encoding="utf-8")

    before_edit = []
    result = edit_during_pass(monkeypatch, s, lambda p: (edit(p), before_edit.append(p.read_bytes())))
    assert result.outcome == "ingested", result.error
    assert (s.paths.vault_dir / PREFS).read_bytes() == before_edit[0]  # left exactly as the person wrote it
    assert claims(s, PREFS) == [mine, "Likes jazz"] and claims(s, PREFS, "Previously") == []
    assert claims(s, TECH) == [LIGHT]
    assert any(PREFS in w and "changed while claims were retired across pages" in w for w in result.warnings), \
        result.warnings
    assert not [ln for ln in read_superseded(s.paths.state_dir) if DARK in ln]  # nothing retired, nothing handed off
    assert not (s.paths.state_dir / ACROSS_PAGES).exists()  # compared: not owed again


def test_a_page_removed_during_the_pass_stays_removed(home, monkeypatch):
    s = seeded(home)
    result = edit_during_pass(monkeypatch, s, lambda path: path.unlink())
    assert result.outcome == "ingested", result.error
    assert not (s.paths.vault_dir / PREFS).exists()
    assert any(PREFS in w and "the page was removed" in w for w in result.warnings), result.warnings


# --- 2. a pass interrupted by its deadline is finished by the next dream --------------------------------------------

class _LateClock:
    """``time`` as rules.py sees it: the real monotonic clock until the across-pages pass starts, then an instant
    past every deadline (the deadline seam: ``batch.deadline`` is compared with ``time.monotonic()``)."""

    def __init__(self):
        self.late = False

    def monotonic(self):
        return real_time.monotonic() + (10**9 if self.late else 0)


def past_deadline_in_pass(monkeypatch):
    clock = _LateClock()
    real = rules._write_passive

    def write_passive(*args, **kwargs):  # the pass's writes: from here on the run is past its deadline
        clock.late = True
        return real(*args, **kwargs)

    monkeypatch.setattr(rules, "time", clock)
    monkeypatch.setattr(rules, "_write_passive", write_passive)


def test_a_deadline_inside_the_pass_is_finished_by_the_next_run(home, monkeypatch):
    s = seeded(home)
    with monkeypatch.context() as m:
        past_deadline_in_pass(m)
        failed = tick(s)
    assert failed.outcome == "unproductive" and "comparing claims across pages" in failed.error
    assert DARK in claims(s, PREFS) and claims(s, TECH) == [LIGHT]  # folded, not compared yet
    owed = read_owed(s.paths.state_dir)
    assert [(o.page, o.claim, o.day.isoformat(), o.scope) for o in owed] == [(TECH, LIGHT, "2026-06-05", "")]

    again = tick(s)
    assert again.outcome == "ingested", again.error
    assert any("finished the comparison across pages of 1 statement(s)" in w for w in again.warnings), again.warnings
    assert PREFS in again.pages_changed
    retired(s)
    assert tick(s).outcome in ("idle", "linted") and claims(s, PREFS, "Previously") == [DARK]  # nothing twice


def test_a_dream_with_nothing_new_finishes_what_is_owed(home, monkeypatch):
    s = seeded(home)
    with monkeypatch.context() as m:
        past_deadline_in_pass(m)
        assert tick(s).outcome == "unproductive"
    # the batch's watermark moves without this engine finishing it (a skip after max_retries, another machine's
    # or engine's run): the gate has nothing new
    ledger.append_ledger(s.paths.vault_dir, ledger.ingest_entry(s.today, s.today.replace(day=5)), timeout=5)
    proc = invoke(home, "dream")
    assert proc.returncode in (0, 1), proc.stderr  # idle or a lint: no traceback, no failure
    assert "Traceback" not in proc.stderr and "finished the comparison across pages" in proc.stdout + proc.stderr
    retired(s, handed_off=False)
    assert read_superseded(s.paths.state_dir) == []  # handed off, and drained by the follow-ups the page change owed


def test_a_skipped_batch_still_finishes_its_owed_comparison(home, monkeypatch):
    s = seeded(home)
    with monkeypatch.context() as m:
        past_deadline_in_pass(m)
        assert tick(s, max_retries=1).outcome == "unproductive"
    skipped = tick(s, max_retries=1)
    assert skipped.outcome == "skipped", skipped.error
    retired(s)


def test_a_crash_after_the_pass_wrote_retires_nothing_twice(home, monkeypatch):
    """The pass wrote its retirement, then the run died before dropping the record (a monkeypatched in-process
    crash at the drop; the SIGKILL of a real process is tests/integration/test_across_pages_kill.py)."""
    s = seeded(home)

    class Crash(BaseException):
        pass

    def crash(*args, **kwargs):
        raise Crash

    with monkeypatch.context() as m:
        m.setattr(rules, "settle", crash)
        with pytest.raises(Crash):
            tick(s)
    assert DARK in claims(s, PREFS, "Previously") and len(read_owed(s.paths.state_dir)) == 1
    # a similar claim on another page that the statement would replace next, were it compared blindly again
    (s.paths.vault_dir / "3_Personal/Interaction.md").write_text(
        "# Interaction\n\n## Claims\n\n- I prefer dark mode in every editor · source: 2026-06-02.md:9\n",
        encoding="utf-8")
    done = rules.finish_owed(s.paths.vault_dir, s.paths.archive_dir, real_time.monotonic() + 60, 5)
    assert done.compared == 1 and done.pages == []  # no page written again
    assert done.superseded == [f"- [preference] {DARK}"]  # the line the crashed run did not hand off, handed off
    assert claims(s, "3_Personal/Interaction.md") == [DARK]
    assert claims(s, PREFS, "Previously") == [DARK] and not (s.paths.state_dir / ACROSS_PAGES).exists()


# --- 3. the state file: junk, a stale record, verify --------------------------------------------------------------

def test_junk_in_the_state_file_is_one_warning_and_a_safe_rerun(home, monkeypatch):
    s = seeded(home)
    with monkeypatch.context() as m:
        past_deadline_in_pass(m)
        assert tick(s).outcome == "unproductive"
    path = s.paths.state_dir / ACROSS_PAGES
    path.write_bytes(path.read_bytes() + b"\xff\xfe{not json\x00\n" + b'{"scope": 3}\n')
    assert any(f"{ACROSS_PAGES}: 2 bad record(s)" in n for n in verified(home)["notes"])  # their reader quarantines
    proc = invoke(home, "dream", "--force")
    assert "Traceback" not in proc.stderr, proc.stderr
    warned = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ACROSS_PAGES in ln and "quarantine" in ln]
    assert len(warned) == 1, proc.stdout + proc.stderr
    retired(s, handed_off=False)  # the good record was still finished
    assert (s.paths.state_dir / "quarantine" / ACROSS_PAGES).is_file()
    again = invoke(home, "dream", "--force")
    assert ACROSS_PAGES not in again.stdout + again.stderr and "Traceback" not in again.stderr


def test_a_record_whose_claim_is_no_longer_current_compares_nothing(home):
    s = seeded(home)
    assert tick(s).outcome == "ingested"
    (s.paths.vault_dir / "3_Personal/Goals.md").write_text(
        "# Goals\n\n## Claims\n\n- Wants to learn Rust · source: 2026-06-01.md:9\n", encoding="utf-8")
    path = s.paths.state_dir / ACROSS_PAGES  # owed by a statement a person since removed from its page
    path.write_text(json.dumps({"scope": "", "folder": "", "page": TECH, "day": "2026-06-07",
                                "claim": "No longer wants to learn Rust", "source": None}) + "\n")
    done = rules.finish_owed(s.paths.vault_dir, s.paths.archive_dir, real_time.monotonic() + 60, 5)
    assert done.compared == 1 and done.pages == [] and claims(s, "3_Personal/Goals.md") == ["Wants to learn Rust"]
    assert not path.exists()
