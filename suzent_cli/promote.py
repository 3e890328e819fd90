"""MEMORY.md's generated zone from the vault: ``promote`` and the legacy per-capture refresh (invariant 6).

Two writers regenerate the generated zone (through :func:`suzent_cli.vault.memory_md.write_generated`, which copies the
manual zone through, never touches an unmarked file it did not write, and enforces the size bound):

* :func:`promote` — after a productive dream (and ``suzent promote``): the current claims of the ``3_Personal/``
  pages. Engines: ``offline`` (deterministic: every current claim, most recalled first, then importance, then
  confirmations, then last date; grouped by page, pages ordered by their best claim) and ``claude`` (one Messages
  API call summarising the claims and the recent recall signal; an API error falls back to ``offline``). Either
  engine's body is followed by a ``## Recent (not yet consolidated)`` section (:func:`recent_facts`): the
  personal/preference/goal/interaction facts the dream has not folded yet — the logs after its watermark (today's
  included) and late lines — newest first, leaving out those already a current claim. The vault only holds past
  days, so without it the newest facts would vanish from MEMORY.md at every dream. The section takes at most half
  the body's bound (and :data:`LEGACY_MAX_FACTS` facts); the claims fill the rest.
* :func:`legacy_refresh` — after a capture of a personal/preference/goal/interaction fact, from the most recent
  such facts in the daily logs. As soon as the vault has any personal page (no flag), promote owns the zone and a
  capture only rebuilds its Recent section (:func:`refresh_recent`), keeping whatever body promote wrote.

Both bound the body in code to whole claims/lines within ``max_lines``/``max_bytes`` minus the zone's header and
footer, so ``write_generated`` (which bounds the whole zone again, header and footer included) never has to cut. Nothing here imports ``anthropic`` unless the claude engine runs.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suzent_cli.config import ENGINES, Settings, canonical_engine
from suzent_cli.errors import ConfigInvalid, InputInvalid, SuzentError
from suzent_cli.text import normalize

PERSONAL = "3_Personal"
LEGACY_CATEGORIES = ("personal", "preference", "goal", "interaction")  # also the section order of the refresh
LEGACY_MAX_FACTS = 50
CLAUDE_CLAIMS_CHARS = 12000
CLAUDE_SNIPPETS = 30
RECALL_LOG_WINDOW = 5000  # most recent recall_log.jsonl lines counted by the offline ranking
RECENT = "Recent (not yet consolidated)"  # promote's section of the facts the dream has not folded yet
MIN_MATCH = 6  # a normalized text shorter than this never counts as containing/contained (no "a" matches all)
MAX_LINES, MAX_BYTES = 200, 16000
FRAME_LINES, FRAME_BYTES = 4, 200  # what write_generated's header and footer take out of the bound (generous)
USER, INSTEAD = "the claude promote engine", "--engine offline"  # how a missing key is worded

PROMPT = """\
You maintain the generated part of the user's MEMORY.md: a short digest of durable, high-value facts about the \
user that an assistant reads at the start of every conversation.

Below are the current claims of the user's personal notes (grouped by page; "confirmed Nx" counts how often a \
claim was stated) and the snippets memory recall returned most recently.

Write only the digest: a few `## ` section headers, under each one fact per `- ` bullet, stated directly. Keep \
durable facts (identity, home, work, family, health, strong preferences, goals, how the user wants to be helped); \
favour topics that were recalled; drop trivia, duplicates and anything transient. Never invent a fact. No \
preamble, no closing remarks, no code fences. Hard limit: {max_lines} lines.

## Personal notes
{claims}

## Recently recalled
{snippets}"""


@dataclass
class PromoteResult:
    """``status``: ``written``/``unchanged``/``manual`` (from :func:`write_generated`) or ``nothing`` (no personal
    page, or neither a current claim nor a fact not yet consolidated: nothing written). ``engine``: the engine that
    produced the body (``offline`` after a claude fallback, or with no claim to summarise). ``claims``/``pages``:
    what the body was built from; ``recent``: the not yet consolidated facts after them (:func:`recent_facts`).
    ``write``: the WriteResult or None."""

    status: str
    engine: str | None
    claims: int = 0
    pages: int = 0
    reason: str | None = None
    write: Any = None
    warnings: list[str] = field(default_factory=list)
    recent: int = 0  # facts of the Recent section (not yet consolidated by the dream)

    def to_json(self) -> dict[str, Any]:
        w = self.write
        return {"status": self.status, "engine": self.engine, "claims": self.claims, "pages": self.pages,
                "recent": self.recent, "reason": self.reason, "path": str(w.path) if w is not None and w.path else None,
                "lines": getattr(w, "lines", None), "bytes": getattr(w, "bytes", None), "warnings": self.warnings}


@dataclass
class RankedClaim:
    page: str  # title
    rel: str  # vault-relative path
    order: int  # position on the page
    text: str
    recalls: int
    importance: float
    count: int
    last: dt.date | None
    since: dt.date | None = None  # the day the claim became true (its ``(since D)``, else its source's day)


# --- vault -------------------------------------------------------------------------------------------------

def personal_pages(vault_dir: Path) -> list[Path]:
    """The content pages under ``3_Personal/`` (any depth), sorted by vault-relative path; a symlink leaving the
    vault is no page (:func:`suzent_cli.vault.content_pages`, the one walker)."""
    from suzent_cli.vault import content_pages

    if not (vault_dir / PERSONAL).is_dir():
        return []
    return [p for p in content_pages(vault_dir) if p.relative_to(vault_dir).parts[0] == PERSONAL]


def has_personal_page(vault_dir: Path) -> bool:
    """True as soon as ``3_Personal/`` holds any content page: the legacy refresh then stands down."""
    return bool(personal_pages(vault_dir))


def _title(page, path: Path) -> str:
    title = page.meta.get("title")
    if isinstance(title, str) and title.strip():
        return " ".join(title.split())
    for line in page.body.split("\n"):
        if line.startswith("# ") and line[2:].strip():
            return " ".join(line[2:].split())
    return path.stem


def recall_snippets(state_dir: Path, limit: int | None = None) -> list[str]:
    """The ``snippet`` of each readable ``recall_log.jsonl`` line of a hit of the person's (not a project's: MEMORY.md
    is read in every project), oldest first; the last ``limit`` when given
    (:func:`suzent_cli.vault.state.recall_snippets`, the log's reader)."""
    from suzent_cli.vault.state import recall_snippets as read

    return read(state_dir, limit, person_only=True)


def _recall_count(key: str, snippets: Counter) -> int:
    if len(key) < MIN_MATCH:
        return sum(n for s, n in snippets.items() if s == key)
    return sum(n for s, n in snippets.items() if key in s or (len(s) >= MIN_MATCH and s in key))


def ranked_claims(settings: Settings, warnings: list[str]) -> tuple[list[RankedClaim], int]:
    """Every current claim (``## Claims``; not ``## Previously``, not ended, holding no forgotten text) of every
    non-deprecated personal page that records no project (``project:``, issue 26), best first, deduplicated by normalized text; and the number of personal pages
    found. A page whose frontmatter
    does not parse is skipped with a warning."""
    from suzent_cli.index.rank import chunk_importance, page_signals
    from suzent_cli.vault.forgotten import Forgotten
    from suzent_cli.vault.pages import CLAIMS, claim_since, read_page
    from suzent_cli.vault.projects import meta_scope

    vault = settings.paths.vault_dir
    paths = personal_pages(vault)
    forgotten = Forgotten.from_state(settings.paths.state_dir)
    snippets = Counter(normalize(s) for s in recall_snippets(settings.paths.state_dir, RECALL_LOG_WINDOW))
    out: list[RankedClaim] = []
    for path in paths:
        rel = path.relative_to(vault).as_posix()
        try:
            page = read_page(path)
        except (SuzentError, OSError, UnicodeError) as exc:
            warnings.append(f"{rel} skipped: {' '.join(str(exc).split())[:160]}")
            continue
        signals = page_signals(page.meta)
        if signals.status == "deprecated" or meta_scope(page.meta):
            continue  # MEMORY.md's generated zone is the person's: a page recording a project is that project's
        title = _title(page, path)
        for order, claim in enumerate(page.claims(CLAIMS)):
            if claim.until is not None or forgotten.covers(claim.text):
                continue  # ended, or a text the person forgot (even if a page still holds it)
            importance, _ = chunk_importance(signals, CLAIMS, claim.render())
            out.append(RankedClaim(title, rel, order, claim.text, _recall_count(claim.key, snippets), importance,
                                   claim.count or 0, claim.last, claim_since(claim)))
    out.sort(key=lambda c: (-c.recalls, -c.importance, -c.count, -(c.last.toordinal() if c.last else 0),
                            c.rel, c.order))
    seen: set[str] = set()
    unique = []
    for c in out:
        key = _key(c.text)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique, len(paths)


def one_value_per_slot(claims: list[RankedClaim], recent: list[str]) -> tuple[list[RankedClaim], list[str]]:
    """MEMORY.md never states two values of one subject as current (invariant 38): of two current claims (or a
    claim and a fact not yet consolidated, or two such facts) that the same-subject test finds to be a change or an
    undecided pair of values (:func:`replaced_lines`), only the newer is kept; a combined claim of which only a part
    changed keeps its other parts. ``claims`` are in ranked order, ``recent`` newest first (both later than every
    claim: the dream has not folded them); the same lists come back without what a newer statement replaced, in
    the same order. The vault is not changed: lint reports undecided pairs to the person."""
    days = [c.since for c in claims]
    dropped, rests = replaced_lines([c.text for c in claims], days, recent)
    kept = [RankedClaim(**{**c.__dict__, "text": rests[("claim", i)]}) if ("claim", i) in rests else c
            for i, c in enumerate(claims) if ("claim", i) not in dropped]
    return kept, [rests.get(("recent", k), t) for k, t in enumerate(recent) if ("recent", k) not in dropped]


def replaced_lines(claims: list[str], days: list[dt.date | None], recent: list[str], *,
                   among_claims: bool = True) -> tuple[set[tuple[str, int]], dict[tuple[str, int], str]]:
    """Which of ``claims`` (texts, with the day each became true; None sorts first) and ``recent`` (facts not yet
    consolidated, newest first, all later than every claim) a newer one replaces, by
    :func:`suzent_cli.vault.supersede.pairs_to_review` (words only; pairs sharing a word): ``(dropped, rests)``,
    ``dropped`` holding ``("claim", i)``/``("recent", k)``, ``rests`` the text left of claim ``i`` when only a part
    of it changed. ``among_claims=False`` leaves pairs of two claims alone (the Recent refresh after a capture:
    promote already decided those)."""
    from suzent_cli.vault import structure, supersede

    far = dt.date.max.toordinal()
    items = [(("claim", i), text, day) for i, (text, day) in enumerate(zip(claims, days, strict=True))]
    items += [(("recent", k), text, dt.date.fromordinal(far - k)) for k, text in enumerate(recent)]
    dropped: set[tuple[str, int]] = set()
    rests: dict[tuple[str, int], str] = {}
    pairs = supersede.pairs_to_review(items)
    # A fact not consolidated yet is also compared with what shares no word with it but may hold the same
    # single-valued subject or be a combined statement ("I'm a data engineer living in Berlin" / "I moved to
    # Lisbon"): the recent facts are few (LEGACY_MAX_FACTS), so this stays cheap after a capture.
    reads = {handle: supersede.read(text) for handle, text, _ in items}
    seen = {(o, n) for o, n, _ in pairs}
    for k in range(len(recent)):
        newer = ("recent", k)
        for older, _text, _day in items:
            if older == newer or (older[0] == "recent" and older[1] <= k) or (older, newer) in seen:
                continue  # recent is newest first: a fact only replaces the facts below it and the claims
            a, b = reads[older], reads[newer]
            if not (a.parts or b.parts or _same_subject(a.key, b.key)):
                continue
            verdict = supersede.compare(a, b)
            if verdict.relation == supersede.REPLACES:
                pairs.append((older, newer, verdict))
    for older, newer, verdict in pairs:
        if not among_claims and older[0] == newer[0] == "claim":
            continue
        text = claims[older[1]] if older[0] == "claim" else recent[older[1]]
        if verdict.parts and (rest := structure.remainder(text, set(verdict.parts))):
            rests[older] = rest
        else:
            dropped.add(older)
    return dropped, rests


# --- bodies ------------------------------------------------------------------------------------------------

def _size(lines: list[str]) -> int:
    return len(("\n".join(lines) + "\n").encode("utf-8")) if lines else 0


def grouped_body(items: list[tuple[str, str]], *, max_lines: int, max_bytes: int) -> tuple[str, int, int]:
    """Render ``(group, text)`` items (best first) as ``## group`` sections of ``- text`` bullets, groups ordered by
    their best item. Items are taken best first while the rendered body stays within ``max_lines`` lines and
    ``max_bytes`` bytes; the first that does not fit ends the selection. Returns ``(body, items, groups)``."""
    chosen: dict[str, list[str]] = {}
    n_lines = n_bytes = taken = 0
    for group, text in items:
        bullet = "- " + " ".join(text.split())
        add_lines, add_bytes = 1, len(bullet.encode("utf-8")) + 1
        if group not in chosen:
            head = "## " + " ".join(group.split())
            add_lines += 2 if chosen else 1  # blank line before a later section
            add_bytes += len(head.encode("utf-8")) + 1 + (1 if chosen else 0)
        if n_lines + add_lines > max_lines or n_bytes + add_bytes > max_bytes:
            break
        chosen.setdefault(group, []).append(bullet)
        n_lines, n_bytes, taken = n_lines + add_lines, n_bytes + add_bytes, taken + 1
    blocks = ["\n".join(["## " + " ".join(g.split()), *bullets]) for g, bullets in chosen.items()]
    return ("\n\n".join(blocks) + "\n" if blocks else ""), taken, len(chosen)


def bound_text(text: str, *, max_lines: int, max_bytes: int) -> str:
    """``text`` cut to whole lines within ``max_lines`` and ``max_bytes`` (a trailing header left alone is
    dropped)."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n"):
        if len(kept) + 1 > max_lines or _size([*kept, line]) > max_bytes:
            break
        kept.append(line.rstrip())
    while kept and (not kept[-1].strip() or kept[-1].lstrip().startswith("#")):
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


# --- promote -----------------------------------------------------------------------------------------------

def _budget(max_lines: int, max_bytes: int) -> tuple[int, int]:
    """The body's share of the zone bound (the rest is write_generated's header and footer)."""
    return max(1, max_lines - FRAME_LINES), max(1, max_bytes - FRAME_BYTES)


def _check_bounds(max_lines: int, max_bytes: int) -> None:
    if max_lines < 6 or max_bytes < 400:
        raise InputInvalid(f"MEMORY.md bound too small: need at least 6 lines and 400 bytes "
                           f"(got {max_lines} lines, {max_bytes} bytes)")


def _write(settings: Settings, body: str, writer: str, max_lines: int, max_bytes: int):
    from suzent_cli.vault.memory_md import write_generated

    return write_generated(settings, body, writer=writer, max_lines=max_lines, max_bytes=max_bytes)


def claude_body(settings: Settings, claims: list[RankedClaim], *, max_lines: int, timeout: float = 120.0,
                max_retries: int = 2) -> str:
    """One Messages API call: the claims (grouped by page, at most 12000 characters) and the last 30 recall
    snippets in, the digest text out. Raises a :class:`SuzentError` on an API error or an empty reply
    (:class:`~suzent_cli.errors.ClaudeUnavailable` without the ``anthropic`` package,
    :class:`~suzent_cli.claude.ClaudeRequestFailed` when the request fails)."""
    from suzent_cli import claude  # the API client only when a claude promote runs

    client = claude.from_settings(settings, timeout=timeout, max_retries=max_retries, user=USER, instead=INSTEAD)
    listing, _, _ = grouped_body(
        [(c.page, c.text + (f" (confirmed {c.count}x)" if c.count > 1 else "")) for c in claims],
        max_lines=10**9, max_bytes=CLAUDE_CLAIMS_CHARS)
    snippets = recall_snippets(settings.paths.state_dir, CLAUDE_SNIPPETS)
    recalled = "\n".join(f"- {' '.join(s.split())}" for s in snippets) or "(none)"
    prompt = PROMPT.format(max_lines=max_lines, claims=listing.strip() or "(none)", snippets=recalled)
    response = client.create(max_tokens=2000, messages=[{"role": "user", "content": prompt}])
    text = "\n".join(getattr(b, "text", "") for b in getattr(response, "content", None) or []
                     if getattr(b, "type", None) == "text").strip()
    if text.startswith("```"):
        text = "\n".join(ln for ln in text.split("\n") if not ln.startswith("```"))
    if not text.strip():
        raise SuzentError("claude replied with no text")
    return text


def promote(settings: Settings, *, engine: str = "auto", max_lines: int = MAX_LINES,
            max_bytes: int = MAX_BYTES) -> PromoteResult:
    """Regenerate MEMORY.md's generated zone from the personal pages (module doc). ``engine``: ``auto`` (claude
    when an API key or a local base_url is configured, else offline), ``offline`` or ``claude`` (raises :class:`ConfigInvalid`
    without a key). A claude API error falls back to offline with a warning. Raises like ``write_generated``
    (a lock timeout); a manual MEMORY.md is status ``manual``, not an error."""
    given, engine = engine, canonical_engine(engine)
    if engine is None:
        raise ConfigInvalid(f"promote engine must be one of {', '.join(ENGINES)}, got {given!r}")
    _check_bounds(max_lines, max_bytes)
    if engine == "claude":
        from suzent_cli.claude import require_key

        require_key(settings, USER, INSTEAD)
    name = engine if engine != "auto" else ("claude" if settings.claude_configured else "offline")
    warnings: list[str] = []
    claims, n_pages = ranked_claims(settings, warnings)
    if not n_pages:
        return PromoteResult("nothing", name, reason=f"the vault has no {PERSONAL}/ page", warnings=warnings)
    recent = recent_facts(settings, {_key(c.text) for c in claims})
    claims, recent = one_value_per_slot(claims, recent)
    if not claims and not recent:
        return _emptied(settings, name, n_pages, warnings, max_lines, max_bytes)
    lines_budget, bytes_budget = _budget(max_lines, max_bytes)
    # the newest facts first take up to half the bound; the claims fill the rest (a blank line between the two)
    tail, used_recent, _ = grouped_body([(RECENT, text) for text in recent], max_lines=lines_budget // 2,
                                        max_bytes=bytes_budget // 2)
    if used_recent < len(recent):
        warnings.append(f"the size bound kept the {used_recent} newest of {len(recent)} facts not yet "
                        f"consolidated; {len(recent) - used_recent} were left out")
    if tail:
        lines_budget, bytes_budget = lines_budget - tail.count("\n") - 1, bytes_budget - len(tail.encode()) - 1
    body = None
    used_claims, used_pages = len(claims), len({c.rel for c in claims})
    if not claims:
        name = "offline"  # only the Recent section: nothing for claude to summarise, no API call
    if name == "claude":
        try:
            body = bound_text(claude_body(settings, claims, max_lines=lines_budget), max_lines=lines_budget,
                              max_bytes=bytes_budget)
            if not body:
                raise SuzentError("claude's reply had no usable line within the bound")
        except SuzentError as exc:
            warnings.append(f"claude promote failed ({exc}); used the offline engine")
            name, body = "offline", None
    if body is None:
        body, used_claims, groups = grouped_body([(c.page, c.text) for c in claims], max_lines=lines_budget,
                                                 max_bytes=bytes_budget)
        used_pages = groups
        if used_claims < len(claims):
            warnings.append(f"the size bound ({max_lines} lines, {max_bytes} bytes) kept the {used_claims} best of "
                            f"{len(claims)} personal claims; {len(claims) - used_claims} were left out")
    body = "\n".join(part for part in (body, tail) if part)
    write = _write(settings, body, "promote", max_lines, max_bytes)
    reason = write.reason
    if write.status == "manual":
        reason = reason or "MEMORY.md has no generated zone we wrote: it is manual and was left untouched"
    return PromoteResult(write.status, name, used_claims, used_pages, reason, write, warnings, used_recent)


def _emptied(settings: Settings, name: str, n_pages: int, warnings: list[str], max_lines: int,
             max_bytes: int) -> PromoteResult:
    """No current claim and no fact waiting: a generated zone already in MEMORY.md (written by promote or a
    capture) may still state claims the vault has retired since (a fact filed on another page ended the last
    one), so it is rewritten empty — the person's zone below the marker is copied through as always. Without a
    MEMORY.md (or with an empty one) nothing is written: status ``nothing``. A manual MEMORY.md (no zone we
    wrote) is left untouched, also ``nothing``. Raises like :func:`write_generated`."""
    from suzent_cli.vault.memory_md import memory_path

    reason = f"no current claim on the {PERSONAL}/ pages"
    try:
        exists = memory_path(settings).stat().st_size > 0
    except FileNotFoundError:
        exists = False
    if not exists:
        return PromoteResult("nothing", name, pages=n_pages, reason=reason, warnings=warnings)
    write = _write(settings, "", "promote", max_lines, max_bytes)
    if write.status == "manual":
        return PromoteResult("nothing", name, pages=n_pages, reason=reason, warnings=warnings)
    return PromoteResult(write.status, "offline", 0, 0, f"{reason}: the generated zone was emptied", write,
                         warnings)


# --- legacy refresh ----------------------------------------------------------------------------------------

def refresh_recent(settings: Settings, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """Refresh only the Recent section of the zone promote wrote, after a capture (the vault has personal pages):
    the rest of the current body is kept, the section is rebuilt from :func:`recent_facts` leaving out any fact
    that is a bullet of that rest. The section takes at most half the body's bound, as in :func:`promote`; when
    the kept part and the new section do not fit, the kept part loses its last lines (whole lines). Reads no
    vault page and calls no API: a capture stays fast. The logs are read under the MEMORY.md lock, so of two
    concurrent captures the second refresh sees both facts. Returns ``{"status", "reason", "path", "facts"}``
    (``rewrite_generated``'s status; ``facts``: the section's facts). Raises like ``write_generated``."""
    from suzent_cli.vault.memory_md import rewrite_generated

    lines_budget, bytes_budget = _budget(max_lines, max_bytes)
    read: dict[str, list[str]] = {}
    taken = [0]

    def make(current: str) -> str:
        if "facts" not in read:  # once, under the lock (so a capture that appended and locked first is seen);
            read["facts"] = recent_facts(settings, set(), limit=2 * LEGACY_MAX_FACTS)  # a retry reuses it
        kept = _without_section(current, RECENT)
        shown = {_key(line[2:]) for line in kept.split("\n") if line.startswith("- ")}
        fresh = [text for text in read["facts"] if _key(text) not in shown][:LEGACY_MAX_FACTS]
        kept, fresh = _without_replaced(kept, fresh)
        tail, taken[0], _ = grouped_body([(RECENT, text) for text in fresh], max_lines=lines_budget // 2,
                                         max_bytes=bytes_budget // 2)
        if kept.strip():
            room_lines = lines_budget - (tail.count("\n") + 1 if tail else 0)
            room_bytes = bytes_budget - (len(tail.encode()) + 1 if tail else 0)
            kept = bound_text(kept, max_lines=room_lines, max_bytes=room_bytes)
        return "\n".join(part for part in (kept, tail) if part)

    write = rewrite_generated(settings, make, writer="promote", max_lines=max_lines, max_bytes=max_bytes)
    return {"status": write.status, "reason": write.reason, "path": str(write.path), "facts": taken[0]}


def _same_subject(a: str, b: str) -> bool:
    """Both texts state the same single-valued subject (:func:`suzent_cli.vault.claims.subject_of`)."""
    from suzent_cli.vault.claims import subject_of

    sa, sb = subject_of(a), subject_of(b)
    return bool(sa and sb and sa[0] == sb[0])


def _without_replaced(body: str, recent: list[str]) -> tuple[str, list[str]]:
    """``body`` (promote's claims) without the bullets a fact of ``recent`` replaces, and ``recent`` without the
    facts a newer one replaces, each combined one keeping its part still true (:func:`replaced_lines`, as
    :func:`promote` decides): a capture that changes a claim or an earlier fact does not leave MEMORY.md stating
    both values until the next dream."""
    lines: list[str | None] = list(body.split("\n"))
    at = [i for i, line in enumerate(lines) if line is not None and line.startswith("- ")]
    if not recent:
        return body, recent
    dropped, rests = replaced_lines([lines[i][2:] for i in at], [None] * len(at), recent, among_claims=False)
    for n, i in enumerate(at):
        if ("claim", n) in dropped:
            lines[i] = None
        elif ("claim", n) in rests:
            lines[i] = "- " + rests[("claim", n)]
    fresh = [rests.get(("recent", k), t) for k, t in enumerate(recent) if ("recent", k) not in dropped]
    return "\n".join(line for line in lines if line is not None), fresh


def _without_section(body: str, title: str) -> str:
    """``body`` without its ``## title`` section (the heading up to the next ``#``/``##`` heading), blank lines
    around it squeezed."""
    out: list[str] = []
    inside = False
    for line in body.split("\n"):
        if line.startswith("#") and _heading_level(line) in (1, 2):
            inside = line[3:].strip() == title and line.startswith("## ")
        if not inside:
            out.append(line)
    return "\n".join(out).strip("\n")


def _heading_level(line: str) -> int:
    hashes = len(line) - len(line.lstrip("#"))
    return hashes if line[hashes:hashes + 1] == " " else 0


def legacy_facts(settings: Settings, limit: int = LEGACY_MAX_FACTS) -> list[tuple[str, str]]:
    """The most recent personal/preference/goal/interaction facts of the daily logs as ``(category, content)``:
    newest first (later days, later lines), deduplicated by normalized text, facts holding a forgotten text or a
    project's scope (a ``project:`` tag: MEMORY.md is the person's, read in every project) left out, at most
    ``limit``. Reads logs newest first, from their ends, at most LEGACY_READ_BYTES in all, and stops once ``limit``
    are found, so its cost does not grow with the history."""
    from suzent_cli.archive import list_logs

    return _scan_facts(settings, [(path, 1) for _, path in reversed(list_logs(settings.paths.archive_dir))], limit)


def recent_facts(settings: Settings, skip: set[str], limit: int = LEGACY_MAX_FACTS) -> list[str]:
    """The personal/preference/goal/interaction facts the dream has not folded yet, newest first: every line of the
    daily logs dated after the ledger's watermark (all logs when there is none; today's included) and, older than
    those, the late lines of days at or below it (``.state/late_lines.jsonl`` minus what the last run read: what
    the dream's gate counts as pending). Deduplicated by normalized text; a fact whose normalized text is in
    ``skip`` (the current vault claims) or that holds a forgotten text is left out; at most ``limit``, reading at
    most LEGACY_READ_BYTES in all. Read-only: a bad late-lines record is ignored, an unreadable log skipped."""
    from suzent_cli.archive import list_logs
    from suzent_cli.vault import ledger
    from suzent_cli.vault.dream_state import peek_state
    from suzent_cli.vault.state.handoff import late_days, read_late_lines

    paths = settings.paths
    mark = ledger.watermark(ledger.read_ledger(paths.vault_dir))
    logs = [(path, 1) for day, path in reversed(list_logs(paths.archive_dir)) if mark is None or day > mark]
    if mark is not None:
        late = late_days(read_late_lines(paths.state_dir), mark, settings.today,
                         peek_state(paths.state_dir, settings.clock).logs_read)
        logs += [(paths.log_path(day), first) for day, first in reversed(late.items())]
    return [text for _, text in _scan_facts(settings, logs, limit, skip)]


def _scan_facts(settings: Settings, logs: list[tuple[Path, int]], limit: int,
                skip: set[str] | None = None) -> list[tuple[str, str]]:
    """The facts of LEGACY_CATEGORIES in ``logs`` (``(path, first line)``, newest first; each read from its end
    to ``first line``), last line first; see :func:`legacy_facts` for the rules."""
    from suzent_cli.archive import parse_fact_line
    from suzent_cli.scope import scope_of_tags
    from suzent_cli.vault.forgotten import Forgotten

    forgotten = Forgotten.from_state(settings.paths.state_dir)
    seen: set[str] = set(skip or ())
    out: list[tuple[str, str]] = []
    budget = LEGACY_READ_BYTES  # it runs after a capture: its cost must not grow with the history
    for path, first in logs:
        try:
            if first > 1:  # late lines: from a known line on (a backfill, usually a few lines)
                data = path.read_bytes()
                lines, budget = data.decode("utf-8", errors="replace").split("\n")[first - 1:], budget - len(data)
            else:
                lines, budget = _tail_lines(path, budget)
        except OSError:
            continue
        for line in reversed(lines):
            parsed = parse_fact_line(line)
            if not parsed:
                continue
            category, content, tags = parsed
            category = category.strip().lower()
            key = _key(content)
            if category not in LEGACY_CATEGORIES or not key or key in seen or forgotten.covers(content):
                continue
            if scope_of_tags(tags):
                continue  # a project's fact (captured with --project): MEMORY.md is the person's, read everywhere
            seen.add(key)
            out.append((category, content))
            if len(out) >= limit:
                return out
        if budget <= 0:
            break
    return out


def _key(text: str) -> str:
    """A fact's or claim's identity for deduplication (:func:`suzent_cli.vault.forgotten.fact_key`)."""
    from suzent_cli.vault.forgotten import fact_key

    return fact_key(text)


LEGACY_READ_BYTES = 512 * 1024


def _tail_lines(path, budget: int) -> tuple[list[str], int]:
    """The last ``budget`` bytes of ``path`` as whole lines (a partial first line dropped), and the budget left."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        start = max(0, size - budget)
        fh.seek(start)
        data = fh.read()
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if start > 0:
        lines = lines[1:]
    return lines, budget - len(data)


def legacy_refresh(settings: Settings, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The per-capture refresh (call it after capturing an important fact). Returns ``{"status", "reason",
    "path", "facts"}``. Once the vault has a personal page, promote owns the zone and only its Recent section is
    refreshed (:func:`refresh_recent`). Before that: ``skipped`` when no qualifying fact exists, else the
    ``write_generated`` status of the most recent facts by category. Raises like ``write_generated``."""
    _check_bounds(max_lines, max_bytes)
    if has_personal_page(settings.paths.vault_dir):
        return refresh_recent(settings, max_lines=max_lines, max_bytes=max_bytes)
    facts = legacy_facts(settings)
    if not facts:
        return {"status": "skipped", "reason": "no personal fact in the daily logs", "path": None, "facts": 0}
    order = {c: i for i, c in enumerate(LEGACY_CATEGORIES)}
    items = sorted(((c.capitalize(), text) for c, text in facts), key=lambda it: order[it[0].lower()])
    lines_budget, bytes_budget = _budget(max_lines, max_bytes)
    body, taken, _ = grouped_body(items, max_lines=lines_budget, max_bytes=bytes_budget)
    write = _write(settings, body, "capture", max_lines, max_bytes)  # the footer names the command that ran it
    return {"status": write.status, "reason": write.reason, "path": str(write.path) if write.path else None,
            "facts": taken}
