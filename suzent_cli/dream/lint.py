"""The dream's lint phase: an editorial audit of the vault.

Two parts. :func:`audit` runs for every engine and is deterministic: it reports broken links in ``index.md`` and
orphan pages, and makes two safe fixes — a missing reciprocal ``## Related`` link is added, and a page past its
``stale_after`` is flagged ``review: needs-review``. The engine then looks for contradictions
(:meth:`Engine.lint`); the rules engine's check is :func:`rules_contradictions`: two *current* claims (``## Claims``,
not ``## Previously``) about the same single-valued subject with different values get a
``> [!warning] Conflicting claims: …`` callout and ``review: needs-review``; so do two current claims the shared
same-subject test (:mod:`suzent_cli.vault.supersede`) cannot decide: near-duplicates with different values and no
change cue, or a change the dream could not place (it matched two claims equally well).

Links resolve the way Obsidian resolves them: a target is a vault-relative path with or without ``.md``, or a page
name (or a trailing part of a page's path) matching exactly one page, case-insensitively; a markdown link is first
tried relative to the linking file. Links inside code spans and fenced code are not links.

Pages are read with :func:`.pages.read_page` and written only through :func:`.pages.write_page`; a page whose
frontmatter cannot be parsed is never written (a warning says so). ``log.md`` and ``.state/`` belong to the runner.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote

from suzent_cli.dream.engine import LintFindings, LintJob
from suzent_cli.errors import DreamFailed
from suzent_cli.files import read_text
from suzent_cli.vault import content_pages, utf8_name
from suzent_cli.vault.claims import conflict_key, is_personal
from suzent_cli.vault.pages import (
    CLAIMS,
    MDLINK_RE,
    RELATED,
    WIKILINK_RE,
    Claim,
    Page,
    meta_date,
    read_page,
    write_page,
)

NEEDS_REVIEW = "needs-review"
CALLOUT = "> [!warning] Conflicting claims: "

_CODE_RE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`", re.S)
_TITLE_RE = re.compile(r"#\s")


@dataclass
class LintReport:
    """What a lint pass found and fixed. Paths are vault-relative POSIX paths.

    ``broken_links``: (file, target) pairs; ``orphans``: pages nothing links to; ``related_fixed``: (page the link
    was added to, page it now links back to); ``stale``: pages past ``stale_after`` (flagged now or before);
    ``contradictions``: one line per conflict (from the engine); ``pages_changed``: pages written."""

    broken_links: list[tuple[str, str]] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    related_fixed: list[tuple[str, str]] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    pages_changed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Finding counts in the fixed order of the ``log.md`` lint entry."""
        return {"broken_links": len(self.broken_links), "orphans": len(self.orphans),
                "missing_related": len(self.related_fixed), "stale": len(self.stale),
                "contradictions": len(self.contradictions)}

    def to_json(self) -> dict:
        """The report as JSON-ready data: every field (pairs as two-item lists) plus ``counts``."""
        data = {k: [list(v) if isinstance(v, tuple) else v for v in vs] for k, vs in asdict(self).items()}
        return {**data, "counts": self.counts()}


# --- links ----------------------------------------------------------------------------------------------------

def _links(text: str) -> list[tuple[str, bool]]:
    """``(target, is_markdown_link)`` for each link in ``text``, code spans and fenced code excluded."""
    text = _CODE_RE.sub("", text)
    return [(m.group(1).strip(), False) for m in WIKILINK_RE.finditer(text)] + \
           [(m.group(1).strip(), True) for m in MDLINK_RE.finditer(text)]


class _Resolver:
    """Resolves link targets to vault files (any non-hidden file; pages are the ``.md`` ones)."""

    def __init__(self, vault_dir: Path):
        files = [p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*") if p.is_file()]
        files = [f for f in files if utf8_name(f)]  # a name that is not UTF-8 is no page (vault.utf8_name)
        files = [f for f in files if not any(part.startswith(".") for part in f.split("/"))]
        self.by_path = {f.lower(): f for f in files}
        self.stems = {f.lower().removesuffix(".md"): f for f in files if f.lower().endswith(".md")}

    def resolve(self, target: str, source: str, markdown: bool) -> str | None:
        """The vault-relative file ``target`` (linked from ``source``) points at, or None when there is none."""
        if markdown:
            if "://" in target:
                return None
            target = unquote(target)
        if markdown or target.startswith(("./", "../")):
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
            if not rel.startswith("../") and (hit := self.by_path.get(rel.lower())):
                return hit
        key = posixpath.normpath(target.lstrip("/")).lower()
        if hit := self.by_path.get(key) or self.by_path.get(key + ".md"):
            return hit
        key = key.removesuffix(".md")
        found = [f for stem, f in self.stems.items() if stem == key or stem.endswith("/" + key)]
        return found[0] if len(found) == 1 else None

    def targets(self, text: str, source: str) -> list[str]:
        """The files the links in ``text`` resolve to (unresolvable links left out), in order."""
        return [hit for t, md in _links(text) if (hit := self.resolve(t, source, md))]


# --- loading --------------------------------------------------------------------------------------------------

def _load(vault_dir: Path, warnings: list[str]) -> tuple[dict[str, str], dict[str, Page]]:
    """Raw text of every content page, and the parsed pages (those whose frontmatter parses; the rest warned)."""
    texts: dict[str, str] = {}
    pages: dict[str, Page] = {}
    for path in content_pages(vault_dir):
        rel = path.relative_to(vault_dir).as_posix()
        try:
            texts[rel] = read_text(path)
            pages[rel] = read_page(path)
        except (DreamFailed, OSError) as exc:
            warnings.append(f"{rel}: skipped, left unchanged ({exc})")
    return texts, pages


def _stale_date(value: object) -> dt.date:
    """``stale_after`` as a date; raises ValueError when it is not one (the caller warns)."""
    found = meta_date(value)
    if found is None:
        raise ValueError(f"not a date: {value!r}")
    return found


def _flag(page: Page) -> bool:
    """Set ``review: needs-review`` (in place when the key exists, else last). True if it changed."""
    if page.meta.get("review") == NEEDS_REVIEW:
        return False
    page.meta["review"] = NEEDS_REVIEW
    return True


# --- the audit ------------------------------------------------------------------------------------------------

def audit(vault_dir: Path, run_date: dt.date) -> LintReport:
    """Deterministic structural checks and safe fixes over the vault at ``vault_dir``.

    Reports broken links in ``index.md`` and orphan content pages (linked from no other page and not from
    ``index.md``, counting the Related links this audit adds). Fixes, on pages whose frontmatter parses: adds
    ``- [[A]]`` to B's ``## Related`` (creating the section at the end) when A's ``## Related`` links to B but not
    back; sets ``review: needs-review`` on pages whose ``stale_after`` is before ``run_date``. Each changed page is
    written once, atomically; unparseable pages and ``stale_after`` values become warnings. Never raises for a
    page's content (OSError on the vault itself may propagate)."""
    report = LintReport()
    texts, pages = _load(vault_dir, report.warnings)
    resolver = _Resolver(vault_dir)
    changed: set[str] = set()

    index = vault_dir / "index.md"
    index_text = read_text(index) if index.is_file() else ""
    for target, md in _links(index_text):
        if not resolver.resolve(target, "index.md", md):
            report.broken_links.append(("index.md", target))

    related = {rel: set(resolver.targets("\n".join(page.section(RELATED) or []), rel))
               for rel, page in pages.items()}
    for a in pages:
        for b in sorted(related[a]):
            if b != a and b in pages and a not in related[b]:
                _add_related(pages[b], a)
                related[b].add(a)
                report.related_fixed.append((b, a))
                changed.add(b)

    linked = set(resolver.targets(index_text, "index.md")) | {a for _, a in report.related_fixed}
    for rel, text in texts.items():
        linked.update(t for t in resolver.targets(text, rel) if t != rel)
    report.orphans = [rel for rel in texts if rel not in linked]

    for rel, page in pages.items():
        if page.meta.get("stale_after") in (None, ""):
            continue
        try:
            until = _stale_date(page.meta["stale_after"])
        except ValueError:
            report.warnings.append(f"{rel}: stale_after {page.meta['stale_after']!r} is not a date")
            continue
        if until < run_date:
            report.stale.append(rel)
            if _flag(page):
                changed.add(rel)

    report.pages_changed = [rel for rel in sorted(changed) if write_page(vault_dir / rel, pages[rel])]
    return report


def _add_related(page: Page, target: str) -> None:
    lines = list(page.section(RELATED) or [])
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    page.set_section(RELATED, lines + [f"- [[{target.removesuffix('.md')}]]"])


# --- contradictions (the rules engine's lint) -----------------------------------------------------------------

def rules_contradictions(vault_dir: Path, run_date: dt.date, judge=None) -> LintFindings:
    """The rules engine's contradiction check (``run_date`` is part of the engine interface, unused; ``judge``: a
    :class:`suzent_cli.vault.supersede.ValueJudge` for the model-close pairs, None for words only).

    Current claims (``## Claims``; not ``## Previously``, nor a bullet marked ``(until DATE)``) with the same
    subject and different values (:func:`.lifecycle.conflict_key`: a single-valued subject such as where the user
    lives, or one statement affirmed and negated) conflict — pooled across all
    ``3_Personal/`` pages of one scope (:func:`_pool`), within one page elsewhere. Every page holding a conflicting claim gets the callout
    ``> [!warning] Conflicting claims: A / B`` after its title heading (or at the top; never twice) and
    ``review: needs-review``. Then the pairs of :func:`_undecided_pairs` the same way. Returns one line per
    conflict, the pages written and warnings for skipped pages."""
    findings = LintFindings()
    _, pages = _load(vault_dir, findings.warnings)
    groups: dict[tuple[str, str], list[tuple[str, str, Claim]]] = {}
    for rel, page in pages.items():
        for claim in page.claims(CLAIMS):
            found = None if claim.until else conflict_key(claim.text)
            if found:
                groups.setdefault((_pool(rel, page), found[0]), []).append((rel, found[1], claim))

    changed: set[str] = set()
    for (_, subject), members in groups.items():
        first: dict[str, tuple[str, Claim]] = {}
        for rel, value, claim in members:
            first.setdefault(value, (rel, claim))
        if len(first) < 2:
            continue
        findings.contradictions.append(
            f"{subject}: " + " / ".join(f"{claim.text} ({rel})" for rel, claim in first.values()))
        callout = CALLOUT + " / ".join(claim.text for _, claim in first.values())
        for rel in dict.fromkeys(rel for rel, _, _ in members):
            if _add_callout(pages[rel], callout) | _flag(pages[rel]):
                changed.add(rel)

    for rel, callout in _undecided_pairs(pages, findings.contradictions, judge):
        if _add_callout(pages[rel], callout) | _flag(pages[rel]):
            changed.add(rel)

    findings.pages = [rel for rel in sorted(changed) if write_page(vault_dir / rel, pages[rel])]
    n = len(findings.contradictions)
    findings.summary = f"{n} contradiction{'s' * (n != 1)}, {len(findings.pages)} page(s) marked"
    return findings


def _pool(rel: str, page: Page) -> str:
    """Which claims a page's claims are compared with: every ``3_Personal/`` page of the same scope (the person's,
    or the project a page records, :mod:`suzent_cli.vault.projects`), else the page alone. Claims of two scopes are
    never compared (a project's "uses Postgres" and another's "uses MySQL" are no contradiction)."""
    from suzent_cli.vault.projects import meta_scope

    return f"3_Personal/ {meta_scope(page.meta)}" if is_personal(rel) else rel


def _undecided_pairs(pages: dict[str, Page], contradictions: list[str], judge=None) -> list[tuple[str, str]]:
    """Pairs of current claims on the same subject that the rules engine could not decide
    (:func:`suzent_cli.vault.supersede.pairs_to_review`), in the same scopes as the single-valued check: an
    ``undecided`` near-duplicate ("Prefers tea in the morning" / "Prefers coffee in the morning"), or a newer claim
    that ``replaces`` an older one but replaced nothing at ingest (it has no ``previously:`` note: two claims
    matched it equally well, or it was folded before this test existed; with ``judge``, a new value the model
    finds close to an older claim's, "switched to coffee" / "likes tea"). Appends one line per pair to
    ``contradictions`` (``same subject: OLD (page) / NEW (page)``, skipping pairs a line already names) and
    returns ``(page, callout)`` for each page holding one of them."""
    from suzent_cli.vault import supersede
    from suzent_cli.vault.claims import base_text
    from suzent_cli.vault.pages import claim_since

    scopes: dict[str, list[tuple[tuple[str, Claim], str, dt.date | None]]] = {}
    for rel, page in pages.items():
        scope = _pool(rel, page)
        for claim in page.claims(CLAIMS):
            if not claim.until:
                scopes.setdefault(scope, []).append(((rel, claim), claim.text, claim_since(claim)))
    out: list[tuple[str, str]] = []
    for members in scopes.values():
        for (old_rel, old), (new_rel, new), verdict in supersede.pairs_to_review(members, judge):
            if verdict.relation == supersede.REPLACES and base_text(new.text) != new.text:
                continue  # the newer claim already replaced the one it matched best
            a, b = base_text(old.text), base_text(new.text)
            if any(a in line and b in line for line in contradictions):
                continue
            contradictions.append(f"same subject ({verdict.why}): {a} ({old_rel}) / {b} ({new_rel})")
            callout = CALLOUT + f"{a} / {b}"
            out.extend((rel, callout) for rel in dict.fromkeys((old_rel, new_rel)))
    return out


def _add_callout(page: Page, callout: str) -> bool:
    """Insert ``callout`` after the title heading (first line, if an H1) or at the top. False if already there."""
    lines = page.body.rstrip("\n").split("\n") if page.body.strip() else []
    if any(line.strip() == callout for line in lines):
        return False
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    at = first + 1 if first is not None and _TITLE_RE.match(lines[first]) else 0
    block = ([""] if at else []) + [callout] + ([""] if at < len(lines) and lines[at].strip() else [])
    lines[at:at] = block
    page.body = "\n".join(lines).strip("\n") + "\n"
    return True


# --- the pass -------------------------------------------------------------------------------------------------

def lint_vault(vault_dir: Path, run_date: dt.date, engine, deadline: float) -> LintReport:
    """A full lint pass: :func:`audit`, then ``engine.lint(LintJob(vault_dir, run_date, deadline))`` (any object
    with ``.lint(job) -> LintFindings``), its contradictions, pages and warnings merged into the report.
    :class:`DreamFailed` from the engine propagates (what the audit wrote stays: each write is atomic)."""
    report = audit(vault_dir, run_date)
    findings = engine.lint(LintJob(vault_dir, run_date, deadline))
    report.contradictions.extend(findings.contradictions)
    report.pages_changed = sorted(set(report.pages_changed) | set(findings.pages))
    report.warnings = list(dict.fromkeys(report.warnings + findings.warnings))
    return report
