"""``suzent export``: the memory out again, read-only over the vault, the daily logs and the state.

What is exported (:func:`collect`):

* every **claim** of every content page (``## Claims``: ``current``, or ``superseded`` once it carries an
  ``(until D)``; ``## Previously``: ``superseded``), with its lifecycle (``confirmed`` count, ``last``
  confirmation, ``since``: the day of its ``source:``, ``until``), provenance (``source``: ``YYYY-MM-DD.md:N``),
  scope (the page's frontmatter ``project:``, else the person's), page and category (the page's: the inverse of
  the dream's routing, :func:`category_of_page`);
* every **daily-log fact the dream has not folded yet** (status ``unfolded``): the logs after the ledger's watermark
  (all logs when there is none) and the late lines of days at or below it, as the dream's gate counts them; with
  its ``day``, ``time``, ``session``, ``source`` (``YYYY-MM-DD.md:N``), category, tags and scope (its
  ``project:`` tag).

Never exported: a text a person forgot (:class:`suzent_cli.vault.forgotten.Forgotten`: claims holding it, facts in
its words), a tombstoned log line, and a fact tagged ``planted`` (it stays in the log; no reader passes it on).

Formats (:func:`render`): ``jsonl`` (one JSON object per record, the fields above plus ``kind``), ``markdown`` (a
page per scope: ``person.md`` and ``projects/<name>.md``; to stdout they are one document), ``claude-code`` (a
Claude Code auto-memory folder per project, ``<sanitized project path>/memory/MEMORY.md`` plus a topic file per
category with frontmatter ``name``/``description``/``type``, :mod:`suzent_cli.transfer.claude_code`; the person's
memories go into every project's folder, typed ``user``). A folder output refuses a non-empty folder unless
``force``; files are written atomically, 0600, folders 0700.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.errors import InputInvalid

FORMATS = ("jsonl", "markdown", "claude-code")
_SOURCE_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md:\d+$")


@dataclass
class ExportReport:
    """What was collected: ``records`` (dicts, module doc), ``left_out`` (reason → count), ``warnings``."""

    records: list[dict] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def leave(self, reason: str) -> None:
        self.left_out[reason] = self.left_out.get(reason, 0) + 1

    def to_json(self) -> dict:
        counts: dict[str, int] = {}
        for r in self.records:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        return {"records": len(self.records), "by_status": counts, "left_out": self.left_out,
                "files": self.files, "warnings": self.warnings}


def category_of_page(rel: str) -> str:
    """The category the dream routes to page ``rel`` (:func:`suzent_cli.vault.claims.page_for` inverted):
    ``3_Personal/Profile.md`` → ``personal``, ``1_Projects/Context.md`` → ``context``, ``2_Wiki/Concepts/Tools.md``
    → ``tools``; a page elsewhere: its title, lower-cased."""
    from suzent_cli.vault.claims import PERSONAL_PAGES, PROJECT_PAGES, WIKI_PAGES

    title = Path(rel).stem
    for table in (PERSONAL_PAGES, PROJECT_PAGES, WIKI_PAGES):
        for category, page in table.items():
            if page == title:
                return category
    return title.lower().replace(" ", "-") or "general"


def _claims(settings: Settings, report: ExportReport, forgotten) -> None:
    from suzent_cli.errors import SuzentError
    from suzent_cli.vault import content_pages
    from suzent_cli.vault.pages import CLAIMS, PREVIOUSLY, read_page

    vault = settings.paths.vault_dir
    for path in content_pages(vault):
        rel = path.relative_to(vault).as_posix()
        try:
            page = read_page(path)
        except (SuzentError, OSError) as exc:
            report.warnings.append(f"{rel}: not exported ({exc})")
            continue
        scope = page.meta.get("project") if isinstance(page.meta.get("project"), str) else ""
        category = category_of_page(rel)
        for section in (CLAIMS, PREVIOUSLY):
            for claim in page.claims(section):
                if forgotten.covers(claim.text):
                    report.leave("forgotten")
                    continue
                m = _SOURCE_DAY.match(claim.source or "")
                superseded = section == PREVIOUSLY or claim.until is not None
                report.records.append({
                    "kind": "claim", "text": claim.text, "category": category, "scope": scope,
                    "status": "superseded" if superseded else "current", "superseded": superseded,
                    "confirmed": claim.count, "last": claim.last.isoformat() if claim.last else None,
                    "since": m.group(1) if m else None, "until": claim.until.isoformat() if claim.until else None,
                    "source": claim.source, "page": rel, "section": section})


def _unfolded_logs(settings: Settings) -> list[tuple[dt.date, Path, int]]:
    """``(day, log, first line)`` of what the dream has not folded (module doc), oldest first."""
    from suzent_cli.archive import list_logs
    from suzent_cli.vault import ledger
    from suzent_cli.vault.dream_state import peek_state
    from suzent_cli.vault.state.handoff import late_days, read_late_lines

    paths = settings.paths
    mark = ledger.watermark(ledger.read_ledger(paths.vault_dir))
    out = [(day, path, 1) for day, path in list_logs(paths.archive_dir) if mark is None or day > mark]
    if mark is not None:
        late = late_days(read_late_lines(paths.state_dir), mark, settings.today,
                         peek_state(paths.state_dir, settings.clock).logs_read)
        out += [(day, paths.log_path(day), first) for day, first in late.items() if paths.log_path(day).is_file()]
    return sorted(out)


def _log_facts(settings: Settings, report: ExportReport, forgotten, tombstones: frozenset[str]) -> None:
    from suzent_cli.archive import read_log
    from suzent_cli.guard.instructions import TAG as PLANTED
    from suzent_cli.scope import scope_of_tags, without_scope_tags
    from suzent_cli.text import normalize

    for day, path, first in _unfolded_logs(settings):
        for fact in read_log(path):
            if fact.line < first:
                continue
            if PLANTED in fact.tags:
                report.leave("planted")
                continue
            if normalize(fact.content) in tombstones or forgotten.same(fact.content) or forgotten.covers(fact.content):
                report.leave("forgotten or tombstoned")
                continue
            report.records.append({
                "kind": "log", "text": fact.content, "category": fact.category, "scope": scope_of_tags(fact.tags),
                "status": "unfolded", "superseded": False, "day": day.isoformat(), "time": fact.time,
                "session": fact.session, "source": f"{day.isoformat()}.md:{fact.line}",
                "tags": list(without_scope_tags(fact.tags))})


def collect(settings: Settings) -> ExportReport:
    """Every record to export (module doc), claims first (by page), then unfolded log facts (oldest first).
    Read-only. Raises TombstonesUnreadable when the tombstones cannot be read (an export must not show what was
    forgotten)."""
    from suzent_cli.vault.forgotten import Forgotten
    from suzent_cli.vault.state import read_tombstones

    report = ExportReport()
    state = settings.paths.state_dir
    forgotten = Forgotten.from_state(state)
    tombstones = read_tombstones(state, torn_ok=True)
    _claims(settings, report, forgotten)
    _log_facts(settings, report, forgotten, tombstones)
    return report


# --- rendering -----------------------------------------------------------------------------------------------------

def to_jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def _scope_name(scope: str) -> str:
    from suzent_cli.vault.claims import safe_title

    if not scope:
        return "person"
    return safe_title(scope.rstrip("/").rsplit("/", 1)[-1]).lower().replace(" ", "-") or "project"


def _line(r: dict) -> str:
    bits = []
    if r["status"] == "superseded":
        bits.append(f"until {r['until']}" if r.get("until") else "superseded")
    if r.get("confirmed"):
        bits.append(f"confirmed {r['confirmed']}x, last {r['last']}")
    if r["kind"] == "log":
        bits.append(f"not yet consolidated, {r['day']}")
    if r.get("source"):
        bits.append(f"source {r['source']}")
    return f"- {r['text']}" + (f" ({'; '.join(bits)})" if bits else "")


def to_markdown(records: list[dict]) -> dict[str, str]:
    """A page per scope, ``{relative file name: text}``: ``person.md`` and ``projects/<name>.md``, a ``##``
    section per category, current claims and unfolded facts first, then the superseded ones."""
    by_scope: dict[str, list[dict]] = {}
    for r in records:
        by_scope.setdefault(r["scope"], []).append(r)
    pages: dict[str, str] = {}
    for scope in sorted(by_scope):
        name = _scope_name(scope)
        rel = "person.md" if not scope else f"projects/{name}.md"
        while rel in pages:
            rel = rel[:-3] + "-2.md"
        title = "The person's memory" if not scope else f"Project {name}"
        lines = [f"# {title}", ""]
        if scope:
            lines += [f"Scope: `{scope}`", ""]
        by_cat: dict[str, list[dict]] = {}
        for r in by_scope[scope]:
            by_cat.setdefault(r["category"], []).append(r)
        for cat in sorted(by_cat):
            rows = sorted(by_cat[cat], key=lambda r: r["status"] == "superseded")
            lines += [f"## {cat}", "", *(_line(r) for r in rows), ""]
        pages[rel] = "\n".join(lines)
    return pages


def _project_path(scope: str, here) -> str:
    """The absolute path a Claude Code project folder is named after, for ``scope``: a ``git:``/``dir:``/``file:``
    key's path; a remote key's local clone when the current directory is in it; else ``/<key>``."""
    for prefix in ("git:", "dir:", "file:"):
        if scope.startswith(prefix):
            return scope[len(prefix):]
    if here is not None and here.key == scope:
        return str(here.root)
    return "/" + scope


_TYPE = {"personal": "user", "preference": "user", "goal": "user", "interaction": "feedback",
         "context": "project", "reference": "reference"}


def to_claude_code(records: list[dict], here=None) -> dict[str, str]:
    """Claude Code auto-memory folders, ``{relative file name: text}`` (module doc). Superseded claims are left
    out (Claude Code has no lifecycle to keep them in). ``here``: the current directory's project (a remote key's
    local path)."""
    from suzent_cli.scope import PERSON_CATEGORIES
    from suzent_cli.transfer.claude_code import sanitize
    from suzent_cli.vault.claims import safe_title

    live = [r for r in records if r["status"] != "superseded"]
    person = [r for r in live if not r["scope"]]
    scopes = sorted({r["scope"] for r in live if r["scope"]}) or ([here.key] if here is not None else [])
    files: dict[str, str] = {}
    for scope in scopes:
        folder = sanitize(_project_path(scope, here)) + "/memory"
        # a topic file per (category, whose): the type and metadata.project follow the records' own scope, never
        # the category alone (a person's [method] fact stays the person's; a project's [preference], the project's)
        by_cat: dict[tuple[str, bool], list[dict]] = {}
        for r in [r for r in live if r["scope"] == scope] + person:
            by_cat.setdefault((r["category"], not r["scope"]), []).append(r)
        index = ["# Memory", ""]
        for cat, mine in sorted(by_cat):
            usual = _TYPE.get(cat, "user" if cat in PERSON_CATEGORIES else "project")
            persons = usual in ("user", "feedback")
            kind = usual if persons == mine else ("user" if mine else "project")
            stem = safe_title(cat).lower().replace(" ", "_") or "general"
            name = f"{stem}.md" if persons == mine else f"{stem}_{'person' if mine else 'project'}.md"
            records = by_cat[(cat, mine)]
            desc = f"{len(records)} {cat} memories exported by suzent"
            project = json.dumps("" if mine else scope)
            body = [f"---\nname: {json.dumps(safe_title(cat) or 'General')}\ndescription: {json.dumps(desc)}\n"
                    f"type: {kind}\nmetadata:\n  type: {kind}\n  category: {json.dumps(cat)}\n"
                    f"  project: {project}\n---", "", *(f"- {r['text']}" for r in records), ""]
            files[f"{folder}/{name}"] = "\n".join(body)
            index.append(f"- [{safe_title(cat) or 'General'}]({name}) — {desc}")
        files[f"{folder}/MEMORY.md"] = "\n".join(index) + "\n"
    return files


def render(records: list[dict], fmt: str, here=None) -> dict[str, str] | str:
    """The export of ``records`` in ``fmt``: a text (jsonl) or ``{relative file name: text}``."""
    if fmt == "jsonl":
        return to_jsonl(records)
    if fmt == "markdown":
        return to_markdown(records)
    if fmt == "claude-code":
        return to_claude_code(records, here)
    raise InputInvalid(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")


def check_out(out: Path, fmt: str, force: bool) -> None:
    """Refuse an output that would overwrite: a non-empty folder without ``force``; an existing file for jsonl
    without ``force``, and anything but a regular file even with it (a device or FIFO, ``/dev/stdout``: the atomic
    write would replace the node itself); a file where a folder belongs. Raises InputInvalid."""
    if fmt == "jsonl":
        if out.is_dir():
            raise InputInvalid(f"{out}: a folder; jsonl is written to a file")
        if out.exists() and not out.is_file():  # --force would rename a file over the device node or FIFO itself
            raise InputInvalid(f"{out}: not a regular file (a device, FIFO or socket); the jsonl export replaces a "
                               "file: give a file path, or no --out for stdout")
        if out.exists() and not force:
            raise InputInvalid(f"{out} exists; use --force to replace it")
        return
    if out.exists() and not out.is_dir():
        raise InputInvalid(f"{out}: a file; the {fmt} export is a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise InputInvalid(f"{out} is not empty; use --force to write into it")


def write_out(out: Path, rendered: dict[str, str] | str) -> list[str]:
    """Write the rendered export under ``out`` (a file for jsonl, else a folder): each file atomically, private.
    Returns the paths written."""
    from suzent_cli.files import atomic_write

    if isinstance(rendered, str):
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, rendered)
        return [str(out)]
    written = []
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    if made:
        os.chmod(out, 0o700)  # a folder of the person's memory, whatever the umask (an existing one is left as is)
    for rel, text in sorted(rendered.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(target, text)
        written.append(str(target))
    return written
