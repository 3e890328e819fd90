"""The reliability corpus harness (benchmarks/reliability.py): its verdicts, in process. A small real subset runs
as processes in tests/integration/test_reliability_corpus_process.py."""

from __future__ import annotations

import os
import sys

from conftest import REPO, load_script


def _load():
    return load_script("benchmarks/reliability.py", "reliability_corpus")


rel = _load()


def _load_attack():
    """benchmarks/attack.py on this harness module (it imports it as ``reliability``: the same object, so what a
    test patches in ``rel`` holds for its cases too)."""
    sys.modules["reliability"] = rel
    return load_script("benchmarks/attack.py", "attack_corpus")


att = _load_attack()

# Fast cases, one per kind of entry point, that hold on main: the harness is what this file tests.
SUBSET = ("init-twice", "capture-facts-from-missing", "hook-capture-garbage-stdin", "recall-bad-mode",
          "forget-no-match", "promote-bad-max-lines", "config-show-unknown-key", "verify-fact-bad-by")
# Fast attack cases (issue 24), one per capture-side item, that hold on main.
ATTACK_SUBSET = ("priv-umask000-capture", "stamp-fact-exact", "planted-facts-from-tagged", "secret-facts-from-stdin")


def test_corpus_is_large_and_covers_every_command_and_state_file():
    names = [c.name for c in rel.CASES]
    assert len(names) == len(set(names)) and len(names) >= 60
    entries = {c.entry.split()[0] for c in rel.CASES}
    for cmd in ("init", "capture", "index", "recall", "dream", "reconcile", "forget", "lint", "promote",
                "retire-legacy", "dry-run", "run", "status", "config"):
        assert cmd in entries, cmd
    src = (REPO / "benchmarks" / "reliability.py").read_text(encoding="utf-8")
    for state in ("tombstones.jsonl", "superseded.txt", "confirmations.jsonl", "late_lines.jsonl",
                  "recall_log.jsonl", "dream_state.json", "claude_code.json", "memory_md.json", "spool"):
        assert f'"{state}' in src, state
    assert all(n in names for n in SUBSET)


def _ran(rc, out="", err="", hung=False, hook=False):
    return rel.Ran(rel.Step(["status"], hook=hook), rc, out, err, 0.1, hung)


def test_crash_verdicts():
    assert rel.crash_problems([_ran(0), _ran(2, err="Error: bad"), _ran(3)]) == []
    assert rel.crash_problems([_ran(1, err="Traceback (most recent call last):\n  x\nValueError: y")])
    assert rel.crash_problems([_ran(-9)]) and rel.crash_problems([_ran(120)])
    assert rel.crash_problems([_ran(2, hook=True)])  # a hook must exit 0


def test_data_verdicts(tmp_path, monkeypatch):
    """A changed or truncated log is lost data; an append is fine only for a capture case; a recalled forgotten
    text is resurfaced; a kept text not recalled after exit 0 is lost."""
    home = rel.Home(tmp_path / "home")
    home.archive.mkdir(parents=True)
    log = home.log("2026-06-08")
    log.write_bytes(b"- [personal] a\n")
    recalled = {"text": ""}
    monkeypatch.setattr(rel, "recall_texts", lambda root, q: recalled["text"])

    def problems(capture=False, gone=(), kept=(), runs=None):
        case = rel.Case("c", "x", [], capture=capture, gone=gone, kept=kept)
        return rel.data_problems(case, home, before, None, [_ran(0)] if runs is None else list(runs))

    before = rel.snapshot(home)
    assert problems() == []
    log.write_bytes(b"- [personal] a\n- [personal] b\n")
    assert problems() and problems(capture=True) == []
    log.write_bytes(b"- [personal] ")
    assert problems(capture=True)
    log.write_bytes(b"- [personal] a\n")
    recalled["text"] = "- Rode bus 4242 to school"
    assert any("resurfaced" in p for p in problems())
    recalled["text"] = ""
    assert any("lost" in p for p in problems(kept=("Lives in Lyon",)))
    assert problems(kept=("Lives in Lyon",), runs=(_ran(1),)) == []  # a refused run need not keep recall working


def test_attack_corpus_covers_each_item_and_entry_point():
    """Issue 24: a corpus of its own, >= 60 uniquely named cases, every item and every way in."""
    names = [c.name for c in att.CASES]
    assert len(names) == len(set(names)) and len(names) >= 60
    assert not set(names) & {c.name for c in rel.CASES}
    for item in att.ITEMS.values():
        assert sum(c.item == item for c in att.CASES) >= 8, item
    entries = {c.entry for c in att.CASES}
    for entry in ("capture --fact", "capture --facts-from", "capture --turn-from", "capture --from claude-code",
                  "recall --from claude-code", "mcp (stdio)", "serve (socket)", "serve (HTTP)", "init", "status",
                  "dream", "index"):
        assert entry in entries, entry
    assert all(n in names for n in ATTACK_SUBSET)


def test_attack_checks_name_what_breaks_a_promise(tmp_path):
    """The attack corpus's checks: an open file or folder, a secret in any file (lower-cased, binary), a stamp a
    text file gained, a stamp or planted text in MEMORY.md's generated zone (not in the manual zone)."""
    home = rel.Home(tmp_path / "home")
    home.archive.mkdir(parents=True)
    log = home.log("2026-06-08")
    log.write_text("- [personal] a\n", encoding="utf-8")
    att.privatize(home)
    assert att.private(home) == []
    os.chmod(log, 0o644)
    assert att.private(home) == ["file home/sandbox/shared/memory/archive/2026-06-08.md is 0644"]

    core = att.SECRETS["github token"][1]
    (home.root / "blob.bin").write_bytes(b"\x00\xff" + core.lower().encode() + b"\x00")
    assert att.grep_home(home, (core,)) == [f"home/blob.bin holds the secret {core!r}"]

    att.remember_counts(att.STAMP_NEEDLES)(home)
    assert att.gained_none(home, "stamp") == []
    log.write_text("- [personal] a <!-- verified: human:x -->\n", encoding="utf-8")
    assert att.gained_none(home, "stamp") == ["sandbox/shared/memory/archive/2026-06-08.md gained 3 × stamp"]

    home.memory_md.write_text(f"# M\n- ok\n{att.MARKER}\n- mine <!-- verified: human:ana@2026-06-10 -->\n",
                              encoding="utf-8")
    assert att.zone_clean(home, att.PL_MARKS[att.PL_RM]) == []
    home.memory_md.write_text(f"# M\n- {att.PL_RM} verified: human:x\n{att.MARKER}\n", encoding="utf-8")
    assert att.zone_clean(home, att.PL_MARKS[att.PL_RM]) == [
        "MEMORY.md's generated zone holds a `verified` stamp",
        f"MEMORY.md's generated zone holds {att.PL_MARKS[att.PL_RM]!r}"]
