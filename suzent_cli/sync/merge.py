"""The per-file merges of ``suzent sync``: pure functions of text, no I/O but :func:`merge_page` (system git).

Each travelling file has one kind (:func:`kind_of`) and one merge:

* ``log`` — a daily log or the vault's ``log.md``: append-only files of entries (a block from a ``## `` heading,
  with the blank line before it, to the next one). :func:`merge_appended` keeps one side whole and in place and
  appends the entries of the other side it lacks, as a multiset: an entry both sides hold is kept once, an entry
  one side holds twice is kept twice; the other side's preamble lines the first lacks become an entry of their own
  (``PREAMBLE_HEADING``). No line is lost or duplicated, whatever the base, and the result does not
  depend on the base (so a crash, a criss-cross history or a lost base cannot make it wrong).
* ``records`` — a JSON-lines state file (tombstones, confirmations): :func:`merge_records` is a three-way merge of
  sets of lines: a record either side added is kept (once), a record either side removed since the base (a dream
  that folded and truncated its confirmations) stays removed.
* ``memory`` — MEMORY.md: its generated zone is derived (capture and promote rewrite it on every machine), so the
  zone of the dreaming machine's side is kept whole, and the person's zone below the marker is merged as a page
  (:func:`merge_memory_md`).
* ``page`` — a vault page, persona.md, user.md: :func:`merge_page`, git's three-way line merge, and where
  both sides changed the same lines, both versions' lines (``--union``): a person's edit is never lost.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

HEADING = re.compile(r"^## ")


def split_blocks(text: str) -> tuple[str, list[str]]:
    """``(preamble, entries)`` of an append-only markdown file: an entry starts at a ``## `` heading line, or at
    the blank line right before it (a daily-log entry is written as ``\\n## HH:MM — s\\n\\n- …\\n``); the preamble
    is what comes before the first entry (the ``# Daily Log - D`` header). ``preamble + "".join(entries) ==
    text``."""
    lines = text.splitlines(keepends=True)
    starts = []
    for i, line in enumerate(lines):
        if HEADING.match(line):
            start = i - 1 if i > 0 and not lines[i - 1].strip() and (not starts or i - 1 > starts[-1]) else i
            starts.append(start)
    if not starts:
        return text, []
    pre = "".join(lines[: starts[0]])
    bounds = [*starts, len(lines)]
    return pre, ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def _complete(block: str) -> str:
    return block if not block or block.endswith("\n") else block + "\n"


# The heading of the entry that holds a side's preamble lines the other side's preamble lacks (a hand-edited or
# conflict-copy header): a daily-log heading (``## HH:MM — session``), so every reader takes it as an entry.
PREAMBLE_HEADING = "## 00:00 \u2014 preamble"


def _unmatched(lines: list[str], known: list[str]) -> list[str]:
    """``lines`` without those ``known`` holds (as a multiset: a line known once is removed once), in order."""
    left = Counter(known)
    out = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def merge_appended(first: str, second: str) -> str:
    """``first`` unchanged, then every entry of ``second`` that ``first`` does not hold (counted: see the module
    doc), in ``second``'s order; ``second``'s preamble lines that ``first``'s preamble lacks are appended too, as one
    entry under :data:`PREAMBLE_HEADING` (held once: a ``first`` that already has that entry gets it no second
    time). ``first`` is the side whose line numbers stay true (see :mod:`suzent_cli.sync`: the dreaming
    machine's, or the remote's)."""
    pre_a, blocks_a = split_blocks(first)
    pre_b, blocks_b = split_blocks(second)
    have = Counter(_complete(b) for b in blocks_a)
    extra: list[str] = []
    if pre_b.strip() and pre_b != pre_a and pre_b not in first:
        # The preamble's lines ``first``'s own preamble lacks, as an entry of their own (PREAMBLE_HEADING): glued
        # onto ``first``'s last entry they would make it differ from the same entry on another machine, and the
        # next merge would keep both (a duplicated fact).
        lines = [line for line in _unmatched(pre_b.splitlines(), pre_a.splitlines()) if line.strip()]
        if lines:
            entry = f"\n{PREAMBLE_HEADING}\n\n" + "\n".join(lines) + "\n"
            if have[entry] > 0:
                have[entry] -= 1
            else:
                extra.append(entry)
    for block in blocks_b:
        key = _complete(block)
        if have[key] > 0:
            have[key] -= 1
        else:
            extra.append(key)
    if not extra:
        return first
    return _complete(first) + "".join(extra) if first else "".join(extra)


def appended_lines(old: str, new: str) -> bool:
    """True when every line of ``old`` is in ``new`` at least as often (``new`` loses none of ``old``'s lines):
    the check every log write-back makes before it replaces a file."""
    need = Counter(old.splitlines())
    have = Counter(new.splitlines())
    return all(have[line] >= n for line, n in need.items())


def _records(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def merge_records(base: str, ours: str, theirs: str) -> str:
    """A three-way merge of JSON-lines files as sets of lines (module doc): the base's records both sides still
    hold, in the base's order, then the records ``ours`` added, then those ``theirs`` added, each once."""
    b, o, t = _records(base), _records(ours), _records(theirs)
    bs, os_, ts = set(b), set(o), set(t)
    out: list[str] = []
    seen: set[str] = set()
    for line in [*(x for x in b if x in os_ and x in ts), *(x for x in o if x not in bs), *(x for x in t if x not in bs)]:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return "".join(line + "\n" for line in out)


def merge_page(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """``(merged text, clean)``: git's three-way merge of a page (``git merge-file``); where both sides changed
    the same lines, both versions are kept, ours first (``--union``) and ``clean`` is False. Raises OSError when
    git cannot run."""
    if ours == theirs or theirs == base:
        return ours, True
    if ours == base:
        return theirs, True
    with tempfile.TemporaryDirectory(prefix="suzent-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8", newline="")
            paths.append(str(p))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        done = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True, env=env,
                              stdin=subprocess.DEVNULL)
        if done.returncode == 0:
            return done.stdout.decode("utf-8", "surrogateescape"), True
        if done.returncode < 0 or done.returncode >= 128:
            raise OSError(f"git merge-file failed: {done.stderr.decode('utf-8', 'replace').strip()}")
        done = subprocess.run(["git", "merge-file", "-p", "--union", *paths], capture_output=True, env=env,
                              stdin=subprocess.DEVNULL)
        if done.returncode < 0 or done.returncode >= 128:
            raise OSError(f"git merge-file failed: {done.stderr.decode('utf-8', 'replace').strip()}")
        return done.stdout.decode("utf-8", "surrogateescape"), False


def merge_memory_md(base: bytes, ours: bytes, theirs: bytes, *, ours_first: bool) -> tuple[bytes, bool]:
    """``(merged, clean)`` of MEMORY.md (module doc): the generated zone of ``ours`` (``ours_first``: this machine
    dreams) or ``theirs``, the marker, and the manual zones merged three-way (:func:`merge_page`). A side without
    the marker is all manual: then the whole files are merged as pages."""
    from suzent_cli.vault.memory_md import split_zones

    b, o, t = split_zones(base), split_zones(ours), split_zones(theirs)
    if not (o.has_marker and t.has_marker):
        text, clean = merge_page(base.decode("utf-8", "surrogateescape"), ours.decode("utf-8", "surrogateescape"),
                                 theirs.decode("utf-8", "surrogateescape"))
        return text.encode("utf-8", "surrogateescape"), clean
    kept = o if ours_first else t
    manual, clean = merge_page(b.manual.decode("utf-8", "surrogateescape"), o.manual.decode("utf-8", "surrogateescape"),
                               t.manual.decode("utf-8", "surrogateescape"))
    return kept.generated + kept.marker_line + manual.encode("utf-8", "surrogateescape"), clean
