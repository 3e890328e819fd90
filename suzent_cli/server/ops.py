"""The operations of :class:`~suzent_cli.server.protocol.Backend`, done in this process on warm state
(:class:`~suzent_cli.server.warm.Warm`): :class:`LocalBackend`.

Every operation goes through the library the CLI uses — recall (:mod:`suzent_cli.recall`), the capture write path
(:mod:`suzent_cli.capture`: the archive's appender, the classifier for turns), forget (:mod:`suzent_cli.forget`),
status (:mod:`suzent_cli.status`), the Claude Code hooks (:mod:`suzent_cli.hooks`) — so the server is never a second
writer and its answers are the CLI's. Index work runs on the warm index worker only (one thread, the indexer's lock).
Results are JSON-ready dicts in the shapes of :mod:`~suzent_cli.server.protocol`'s docstring; errors are the CLI's
:class:`~suzent_cli.errors.SuzentError` subclasses with one-line messages (bad input: :class:`InputInvalid`).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
import time
from pathlib import Path
from typing import Any

from suzent_cli.errors import IndexMissing, IndexUnreadable, InputInvalid, describe
from suzent_cli.server.protocol import MAX_PAYLOAD_BYTES
from suzent_cli.server.warm import Warm
from suzent_cli.vault.claims import plain_content

MAX_QUERY_CHARS = 2000
MAX_LIMIT = 100
MAX_FACTS = 100  # per remember call
MAX_FACT_CHARS = 2000
# An explicit remember turn larger than this is refused (its caller chose the text; MCP's schema says the same).
# What the extractor reads of a turn is also bounded by capture.max_turn_chars, as for the CLI and the hooks (which
# hand over whole transcripts): the newest part, with a warning.
MAX_TURN_CHARS = 200_000
MAX_PAGE_BYTES = 1_000_000
MAX_NAME_CHARS = 500
REMEMBER_INDEX_WAIT = 5.0  # seconds remember waits for the reindex of what it wrote
CAPTURE_INDEX_WAIT = 5.0  # at most this long (within the hook's timeout) for the captured turn's reindex
SCORE_DIGITS = 4
NO_INDEX_NOTE = ("no search index yet: memories become searchable after the first index pass (`suzent index`, or "
                 "the server's own)")
MEMORY_PAGE = "MEMORY.md"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_KINDS = {"archive_log": "log", "notebook": "vault", "core_file": "memory", "memory_md": "memory", "legacy": "legacy"}


# --- shapes ------------------------------------------------------------------------------------------------------

def hit_json(hit) -> dict[str, Any]:
    """One recall hit (:class:`~suzent_cli.recall.Hit`) in the protocol's shape: ``content`` the text without
    markers (:attr:`Hit.text <suzent_cli.recall.Hit>`), ``source_type`` log|vault|memory|legacy, ``file``
    (relative to its tier), ``line`` (a daily-log fact) or ``chunk`` (a page), ``date`` the capture date (a vault
    row: its claims' latest confirmation, else the page's ``updated``), ``session`` (a vault row: the session of
    the log line it cites), and the lifecycle fields the hit carries: ``confirmations``, ``verified``,
    ``status``, ``until``, ``cites``; ``planted``: why the row reads as a planted instruction (null when it does
    not); ``scope``: ``""`` (the person's) or the project key the row belongs to."""
    is_log = hit.source_type == "archive_log"
    return {
        "id": hit.id, "content": hit.text, "score": round(float(hit.score), SCORE_DIGITS),
        "source_type": _KINDS.get(hit.source_type or "", hit.source_type or "legacy"),
        "file": hit.source_file, "line": hit.locator if is_log else None,
        "chunk": None if is_log else hit.locator, "date": hit.date, "session": hit.session,
        "category": hit.category, "tags": list(hit.tags),
        "confirmations": hit.confirmations, "verified": hit.verified, "status": hit.status,
        "until": hit.until, "cites": list(hit.cites), "planted": hit.planted, "scope": hit.scope,
    }


def _text(value: Any, name: str, limit: int, *, exact: bool = False, notes: list[str] | None = None) -> str:
    """``value`` as a non-empty one-argument string of at most ``limit`` characters, by the one input rule of
    :func:`suzent_cli.text.clean_input` (as the CLI, the hooks and the importers): control characters that are not
    whitespace and the bidi overrides are dropped, a lone surrogate becomes U+FFFD, the words are kept; what was
    repaired is added to ``notes`` (one line, naming ``name``). ``exact``: a name that must match as given (a
    directory, a page name, a row id, an extractor): a control character or a lone surrogate is refused instead,
    since a repaired name would name something else. Raises :class:`InputInvalid`."""
    from suzent_cli.text import lone_surrogate, repair

    if not isinstance(value, str):
        raise InputInvalid(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise InputInvalid(f"{name} is too long ({len(value)} characters; at most {limit})")
    if exact:
        if bad := _CONTROL.search(value.replace("\n", " ").replace("\r", " ")):
            raise InputInvalid(f"{name} holds a control character (U+{ord(bad.group()):04X})")
        if bad := lone_surrogate(value):
            raise InputInvalid(f"{name} holds half a character (a lone surrogate, U+{ord(bad):04X})")
    else:
        value, found = repair(value)
        if found and notes is not None:
            notes.append(f"{name}: " + "; ".join(found))
    if not value.strip():
        raise InputInvalid(f"{name} is empty")
    return value


def _payload(payload_b64: Any) -> bytes:
    if not isinstance(payload_b64, str):
        raise InputInvalid("payload_b64 must be a base64 string")
    try:
        raw = base64.b64decode(payload_b64.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise InputInvalid("payload_b64 is not valid base64") from None
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise InputInvalid(f"the hook payload is too large ({len(raw)} bytes; at most {MAX_PAYLOAD_BYTES})")
    return raw


def _log_state(archive_dir: Path) -> dict[Path, tuple[int, int]]:
    """``{daily log: (size, mtime in ns)}``: compared before and after a capture to find the logs it appended to."""
    out = {}
    try:
        for path in archive_dir.glob("*.md"):
            try:
                st = path.stat()
            except OSError:
                continue
            out[path] = (st.st_size, st.st_mtime_ns)
    except OSError:
        pass
    return out


def _searchable_meanwhile(settings, error: dict | None) -> tuple[bool, str | None]:
    """After a remember whose reindex has not finished: ``(recallable now, warning or None)``. The facts are
    recallable when recall's pending search covers the log (:func:`suzent_cli.index.pending.searches_logs`): then
    no warning unless the reindex failed (``error``, the index worker's ``last_error``)."""
    from suzent_cli.index.pending import searches_logs

    if searches_logs(settings):
        return True, (f"captured and recallable now; the reindex failed ({error['message']}); the next index pass "
                      "retries") if error else None
    return False, ("captured; not yet searchable: the reindex is still queued" if not error else
                   f"captured; the reindex failed ({error['message']}); the next index pass retries")


def _hidden_by_forget(settings, outcomes: list[dict], warnings: list[str]) -> int:
    """Mark each captured outcome whose words a forget hides (:func:`suzent_cli.capture.forgotten_flags`) with
    ``"hidden": "forgotten"`` and the reason; returns how many."""
    from suzent_cli.capture import HIDDEN_REASON, forgotten_flags

    captured = [o for o in outcomes if o["outcome"] == "captured"]
    hidden = 0
    for o, flag in zip(captured, forgotten_flags(settings, [o["text"] for o in captured], warnings), strict=True):
        if flag:
            hidden += 1
            o["hidden"] = "forgotten"
            o["reason"] = ((o.get("reason") + "; ") if o.get("reason") else "") + HIDDEN_REASON
    return hidden

def _project_arg(project: Any) -> str | None:
    """The ``project`` argument of a request: None, or a string without control characters (``""`` allowed: the
    person's). Raises :class:`InputInvalid`."""
    if project is None or project == "":
        return project
    return _text(project, "project", MAX_NAME_CHARS, exact=True).strip()


def _scoped_filters(settings, filters, project: Any):
    """``filters`` (:class:`~suzent_cli.recall.Filters`) with the scopes of a request's ``project``
    (:meth:`LocalBackend.recall`). Raises :class:`InputInvalid` for a bad or unknown project."""
    from dataclasses import replace

    from suzent_cli.projects import project_key
    from suzent_cli.scope import ALL_PROJECTS, scopes_for

    project = _project_arg(project)
    if project is None or project == ALL_PROJECTS:
        return filters
    return replace(filters, scopes=scopes_for(project_key(settings, project) if project else None))


def _capture_scope(settings, project: Any, warnings: list[str]) -> tuple[str | None, str]:
    """``(project key, mode)`` of a remember (:meth:`LocalBackend.remember`): the setting ``capture.scope`` in the
    request's ``project``; ``""``: global. Raises :class:`InputInvalid` for a bad or unknown project, or ``"*"``."""
    from suzent_cli.projects import capture_scope, project_key
    from suzent_cli.scope import ALL_PROJECTS

    project = _project_arg(project)
    if project == "":
        return None, "global"
    if project == ALL_PROJECTS:
        raise InputInvalid("project \"*\" means every project: a fact is remembered in one (or \"\" for the person's)")
    key = project_key(settings, project) if project is not None else None
    _, mode = capture_scope(settings, cwd=None, warnings=warnings)
    return key, mode


class LocalBackend:
    """:class:`~suzent_cli.server.protocol.Backend` on warm state (module doc). Thread-safe: the transports call
    it from several threads at once (writes serialize on the library's file locks)."""

    def __init__(self, warm: Warm) -> None:
        self.warm = warm

    def prepare(self) -> None:
        """Make ready what the first request needs, so it waits on nothing but its own work: the modules a recall,
        a hook and a remember run (recall, the pending search, the hooks, the write path), the store opened
        (LanceDB and pyarrow imported, the table and its full-text indexes read by one BM25 query per indexed
        column) and the embedder made (not its model: :meth:`~suzent_cli.server.warm.Warm.start_preload` loads
        that in the background, and hybrid requests answer full-text meanwhile). ``suzent serve`` calls it before
        its local socket exists (:func:`suzent_cli.server.serve.serve`), so the socket's appearance means the
        store is ready. Writes nothing. Never raises: a store that cannot be opened now (no index yet, another
        tool's table) is opened, or reported, by the first request that needs it."""
        import suzent_cli.capture  # imported now, not by the first request
        import suzent_cli.hooks.claude_code
        import suzent_cli.hooks.recall
        import suzent_cli.index.pending
        import suzent_cli.recall  # noqa: F401
        from suzent_cli.index.store import CONTENT_FTS_COLUMN, FTS_COLUMN

        try:
            store = self.warm.store()
            for column in (FTS_COLUMN, CONTENT_FTS_COLUMN):
                store.fts_search("suzent", 1, column=column)
        except Exception:  # noqa: BLE001 - the first request that needs the store raises the real error
            pass
        self.warm.embedder_or_none()

    # --- recall --------------------------------------------------------------------------------------------------
    def recall(self, query: str, *, limit: int = 10, mode: str = "hybrid", since: str | None = None,
               until: str | None = None, category: str | None = None, project: str | None = None) -> dict[str, Any]:
        """Search memory (:func:`suzent_cli.recall.recall` on the warm store and embedder): ``mode``
        hybrid|vector|fts, ``since``/``until`` ``YYYY-MM-DD`` inclusive and ``category`` applied before ``limit``
        (1..100; a date range keeps only rows with a capture date, i.e. daily-log facts). Logged to the recall
        log as ``suzent recall`` does. No index yet: no hits and a ``note`` (not an
        error). ``project`` (the scope travels with each request, never from the server's own directory): a
        project key, an absolute directory or a known project's name → the person's memories and that project's;
        ``""`` → the person's only (a caller outside any project); ``"*"`` or None (not given: an HTTP client that
        knows no project) → every project's, each hit naming its ``scope``. Raises :class:`InputInvalid` for bad arguments, :class:`IndexIncompatible` /
        :class:`IndexUnreadable` / :class:`EmbedderUnavailable` as the CLI would."""
        from suzent_cli.index.pending import pending_logs
        from suzent_cli.recall import NOTHING_RELEVANT, check_query, parse_filters, recall

        query = _text(query, "query", MAX_QUERY_CHARS)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise InputInvalid(f"limit must be an integer, got {limit!r}")
        if limit > MAX_LIMIT:
            raise InputInvalid(f"limit must be at most {MAX_LIMIT}, got {limit}")
        check_query(query, mode=mode, limit=limit)
        filters = parse_filters(since, until, category)
        settings = self.warm.settings()
        filters = _scoped_filters(settings, filters, project)
        result = {"query": query, "mode": mode, "hits": [], "note": None}
        for attempt in (1, 2):
            try:
                store = self.warm.store()
            except IndexMissing:
                if not pending_logs(settings):
                    result["note"] = NO_INDEX_NOTE
                    return result
                store = None  # recall searches what was captured meanwhile (the pending lines)
            embedder, loading = self.warm.search_embedder(mode)
            if loading is not None:  # a starting server answers now: full-text hits while the model loads
                result["mode"], result["loading"] = "fts", loading
            try:
                hits = recall(settings, embedder, query, mode=result["mode"], limit=limit, filters=filters,
                              store=store)
                break
            except IndexMissing:
                result["note"] = NO_INDEX_NOTE
                return result
            except IndexUnreadable:
                self.warm.forget_store()  # e.g. old versions cleaned up under a long-lived store: open again once
                if attempt == 2:
                    raise
        result["hits"] = [hit_json(h) for h in hits]
        if not hits:
            result["note"] = NOTHING_RELEVANT + (" with these filters" if filters else "")
        elif len(hits) < limit and filters:
            result["note"] = f"only {len(hits)} hit(s) pass the filters"
        if loading := result.pop("loading", None):
            result["note"] = f"{result['note']}; {loading}" if result["note"] else loading
        return result

    # --- remember ------------------------------------------------------------------------------------------------
    def remember(self, *, facts: list[str] | None = None, turn: str | None = None, session: str | None = None,
                 category: str | None = None, project: str | None = None) -> dict[str, Any]:
        """Record ``facts`` (fact lines, ``[category] content `tags` ``: exactly ``suzent capture --fact``'s path,
        logged as given) or one ``turn`` (extracted by the configured extractor — offline without an API key — and
        classified against what is known, as ``suzent capture --turn-from``: a word-for-word restatement is a
        ``confirmation``, not a new line). ``category``: for facts without a ``[category]`` of their own.
        ``session``: the entry heading's id (default ``mcp``). Then the touched log is reindexed through the
        index worker (waiting up to :data:`REMEMBER_INDEX_WAIT` s); ``indexed`` says whether the facts are
        recallable now: the pass finished, or recall's pending search covers them meanwhile
        (:mod:`suzent_cli.index.pending`). ``hidden`` counts the captured facts a forget hides (the same words as a
        text ``suzent forget`` removed: logged, never recalled; each such outcome has ``"hidden": "forgotten"``);
        when every captured fact is hidden, ``indexed`` is False.

        Control characters are dropped and a lone surrogate becomes U+FFFD in every fact, the turn, the session and
        the category, the words kept, as the CLI does (:func:`_text`; a warning says what was repaired). A bad fact
        (empty, too long, an unclosed ``[``) is ``rejected`` with its reason while
        the good ones are written; when every input is bad, :class:`InputInvalid`. ``project``: the project the
        facts were said in (a key, an absolute directory or a known name; None: none, so every fact is the
        person's); the setting ``capture.scope`` then decides each fact's scope as for ``suzent capture``
        (:func:`suzent_cli.capture.scoped`); ``""`` records every fact as the person's. Raises :class:`LockTimeout` /
        OSError with nothing written (the appender's contract), :class:`ExtractorUnavailable`."""
        if (facts is None) == (turn is None):
            raise InputInvalid("give either facts (a list of fact lines) or a turn, not both and not neither")
        scope_notes: list[str] = []  # the repairs of the input, then the scope's notes
        session_id = _text(session, "session", 200, notes=scope_notes) if session is not None else "mcp"
        if category is not None:
            category = _text(category, "category", 100, notes=scope_notes).strip()
        settings = self.warm.settings()
        decided = _capture_scope(settings, project, scope_notes)
        if facts is not None:
            outcomes, result = self._remember_facts(settings, facts, session_id, category, decided, scope_notes)
        else:
            outcomes, result = self._remember_turn(settings, turn, session_id, decided, scope_notes)
        warnings = scope_notes + (list(result.warnings) if result is not None else [])
        indexed = False
        captured = sum(o["outcome"] == "captured" for o in outcomes)
        hidden = _hidden_by_forget(settings, outcomes, warnings)
        if result is not None and result.path is not None:
            indexed = self.warm.index.reindex([result.path], wait=REMEMBER_INDEX_WAIT)
            if not indexed:
                indexed, note = _searchable_meanwhile(settings, self.warm.index.last_error)
                if note:
                    warnings.append(note)
        if hidden and hidden >= captured:
            indexed = False  # logged, but no recall will show it: not "recallable"
        return {"outcomes": outcomes, "captured": captured, "hidden": hidden, "indexed": indexed,
                "warnings": warnings}

    def _remember_facts(self, settings, facts, session_id: str, category: str | None,
                        decided: tuple[str | None, str] = (None, "auto"), notes: list[str] | None = None):
        from suzent_cli.archive import DEFAULT_CATEGORY, Fact
        from suzent_cli.capture import clean_facts, fact_lines, parse_fact_args, scoped, write_facts
        from suzent_cli.guard import TAG
        from suzent_cli.text import clean_input

        if not isinstance(facts, list) or not facts:
            raise InputInvalid("facts must be a non-empty list of fact lines")
        if len(facts) > MAX_FACTS:
            raise InputInvalid(f"too many facts in one call ({len(facts)}; at most {MAX_FACTS})")
        outcomes: list[dict] = []
        valid: list[int] = []
        facts = list(facts)
        for i, raw in enumerate(facts):
            outcomes.append({"text": clean_input(raw) if isinstance(raw, str) else repr(raw)[:200],
                             "outcome": "rejected", "category": None, "file": None, "line": None, "reason": None})
            try:
                facts[i] = _text(raw, "fact", MAX_FACT_CHARS, notes=notes)
                valid.append(i)
            except InputInvalid as exc:
                outcomes[i]["reason"] = str(exc)
        warnings: list[str] = []
        good: list[tuple[int, Fact]] = []
        for i, (fact, why) in zip(valid, parse_fact_args([facts[i] for i in valid], warnings), strict=True):
            if fact is None:
                outcomes[i]["reason"] = why or "fact has no content"
                continue
            if category and fact.category == DEFAULT_CATEGORY and not facts[i].lstrip("-*+ ").startswith("["):
                fact = Fact(fact.content, category, fact.tags)
            screened = clean_facts([fact], warnings)  # as it will be written: markup cut, secrets redacted, tagged
            if not screened:
                outcomes[i]["reason"] = "nothing left to remember once its HTML comment or stamp was removed"
                continue
            good.append((i, scoped(screened, *decided)[0]))
        if not good:
            reasons = "; ".join(o["reason"] for o in outcomes[:3])
            raise InputInvalid(f"no fact to remember: {reasons}")
        result = write_facts(settings, [f for _, f in good], session=session_id, warnings=warnings)
        lines = fact_lines(result)
        name = result.path.name if result.path is not None else None
        for (i, fact), line in zip(good, lines, strict=False):
            planted = TAG in fact.tags
            outcomes[i].update(outcome="captured", text=fact.content, category=fact.category, file=name, line=line,
                               reason="fact line: logged, tagged planted (reads as a planted instruction: never "
                                      "promoted or injected)" if planted else "fact line: logged as given")
        return outcomes, result

    def _remember_turn(self, settings, turn, session_id: str, decided: tuple[str | None, str] = (None, "auto"),
                       notes: list[str] | None = None):
        from suzent_cli.capture import extract_and_write, fact_lines
        from suzent_cli.capture.known import recall_set_for

        text = _text(turn, "turn", MAX_TURN_CHARS, notes=notes)
        key, mode = decided
        result = extract_and_write(settings, text, known_facts=recall_set_for(settings, store=self.warm.store,
                                                                              project_key=key),
                                   session=session_id, project_key=key, scope_mode=mode)
        name = result.path.name if result.path is not None else None
        outcomes = []
        for fact, c, line in zip(result.facts, result.outcomes or [None] * len(result.facts), fact_lines(result),
                                 strict=False):
            outcomes.append({"text": fact.content, "outcome": "captured", "category": fact.category, "file": name,
                             "line": line, "classification": c.outcome if c else "new",
                             "reason": c.reason if c else None})
        for fact, c in result.confirmations:
            outcomes.append({"text": fact.content, "outcome": "confirmation", "category": fact.category,
                             "file": c.source, "line": c.locator, "classification": "confirmation",
                             "reason": f"restates a recorded claim ({c.score:.2f}): counted, not logged again"})
        return outcomes, result

    # --- forget --------------------------------------------------------------------------------------------------
    def forget(self, *, text: str | None = None, id: str | None = None, apply: bool = False) -> dict[str, Any]:
        """``suzent forget`` (:mod:`suzent_cli.forget`) for ``text`` or the fact text of index row ``id`` (exactly
        one). Without ``apply`` a dry run: nothing is written; ``matches`` lists what would go (no exact match:
        ``matches`` empty and ``closest`` the nearest rows). With ``apply`` the real forget — tombstone, vault and
        MEMORY.md scrub, recall-log purge — and its reindex and compaction on the index worker. Raises
        :class:`InputInvalid`, :class:`NothingToForget` (unknown id; with ``apply``: no exact match),
        :class:`DreamBusy`, :class:`LockTimeout`."""
        from suzent_cli.forget import NoExactMatch, forget, plan_forget, text_of_row

        if (text is None) == (id is None):
            raise InputInvalid("give exactly one of text or id")
        if not isinstance(apply, bool):  # the destructive switch is a JSON boolean on every path, never coerced
            raise InputInvalid(f"apply: must be true or false (a JSON boolean), got {apply!r:.40}")
        settings = self.warm.settings()
        if text is not None:
            target = _text(text, "text", MAX_FACT_CHARS)  # the words a forget matches, repaired as when written
        else:
            target = text_of_row(settings, _text(id, "id", 200, exact=True).strip())
        try:
            plan = plan_forget(settings, target)
        except NoExactMatch as exc:
            if apply:
                raise
            return {"applied": False, "matches": [], "tombstoned": 0, "message": str(exc),
                    "closest": [{"content": c.content, "id": c.id, "file": c.path, "where": c.where,
                                 "score": c.score} for c in exc.closest], "warnings": []}
        if apply:
            report = self.warm.index.call(lambda: forget(settings, plan, embedder=self.warm.embedder_or_none()))
        else:
            report = forget(settings, plan, dry_run=True)
        matches = []
        for m in plan.matches:
            number = int(m.where.split()[-1]) if m.where.split()[-1:] and m.where.split()[-1].isdigit() else None
            is_line = m.where.startswith("line")
            matches.append({"content": m.content, "source": m.source, "file": m.source.split(":", 1)[-1],
                            "line": number if is_line else None, "chunk": None if is_line else number})
        places = (f"{len(plan.matches)} row(s), {len(plan.claims)} vault claim(s), "
                  f"{len(plan.memory_generated)} generated MEMORY.md line(s)")
        if apply:
            message = (f"forgotten: {places}; " + ("tombstone recorded" if report.tombstone_added
                                                    else "it was already forgotten")
                       + f"; {report.rows_removed} index row(s) removed")
        else:
            message = f"dry run, nothing changed: would forget {places}; call again with apply=true to forget it"
        return {"applied": bool(apply), "matches": matches, "tombstoned": int(report.tombstone_added),
                "message": message, "claims": [{"page": c["page"], "line": c["line"].strip()} for c in plan.claims],
                "warnings": list(report.warnings)}

    # --- status and pages ----------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The ``suzent status --json`` object (:func:`suzent_cli.status.status`)."""
        from suzent_cli.config import dream_config
        from suzent_cli.status import status

        settings = self.warm.settings()
        return status(settings, dream_config(settings))

    def list_pages(self) -> dict[str, Any]:
        """Every vault content page (:func:`suzent_cli.vault.content_pages`: hidden folders and symlinks leaving
        the vault left out) and ``MEMORY.md``: ``{"pages": [{"name", "title", "claims", "bytes", "modified"}]}``,
        ``claims`` the bullets of ``## Claims`` (None when the page does not parse), ``modified`` ISO UTC."""
        from suzent_cli.vault import content_pages
        from suzent_cli.vault.memory_md import memory_path

        settings = self.warm.settings()
        vault = settings.paths.vault_dir
        pages = []
        memory = memory_path(settings)
        if memory.is_file():
            pages.append(self._page_entry(memory, MEMORY_PAGE))
        for path in content_pages(vault):
            pages.append(self._page_entry(path, path.relative_to(vault).as_posix()))
        return {"pages": [p for p in pages if p is not None]}

    @staticmethod
    def _page_entry(path: Path, name: str) -> dict | None:
        from suzent_cli.vault.pages import parse_page

        try:
            st = path.stat()
            data = path.read_bytes() if st.st_size <= MAX_PAGE_BYTES else b""
        except OSError:
            return None
        title, claims = Path(name).stem, None
        try:
            page = parse_page(data, name)
            meta_title = page.meta.get("title") if isinstance(page.meta, dict) else None
            heading = next((ln[2:].strip() for ln in page.body.splitlines() if ln.startswith("# ")), None)
            title = str(meta_title or heading or title)
            claims = len(page.claims())
        except Exception:  # noqa: BLE001 - a page that does not parse is still listed, without counts
            pass
        modified = dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).isoformat(timespec="seconds")
        return {"name": name, "title": title, "claims": claims, "bytes": st.st_size, "modified": modified}

    def read_page(self, name: str) -> dict[str, Any]:
        """The text of vault page ``name`` (a vault-relative POSIX path, as :meth:`list_pages` gives) or of
        ``MEMORY.md``: ``{"name", "content"}``. Raises :class:`InputInvalid` (one line) for ``..``, an absolute
        path, a hidden folder (``.state``, ``.obsidian``), a name that is not a ``.md`` content page, a symlink
        leaving the vault, a missing page, or one over :data:`MAX_PAGE_BYTES`."""
        from suzent_cli.vault import inside, is_content_page
        from suzent_cli.vault.memory_md import memory_path

        name = _text(name, "name", MAX_NAME_CHARS, exact=True).strip()
        settings = self.warm.settings()
        if name == MEMORY_PAGE:
            path, root = memory_path(settings), settings.paths.memory_dir
        else:
            if "\\" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
                raise InputInvalid(f"page name must be a vault-relative path like 3_Personal/Profile.md: {name!r}")
            parts = name.split("/")
            if any(p in ("", ".", "..") for p in parts):
                raise InputInvalid(f"page name must not hold '..', '.' or empty parts: {name!r}")
            if any(p.startswith(".") for p in parts):
                raise InputInvalid(f"{name!r} is in a hidden folder: not a vault page")
            if not name.lower().endswith(".md"):
                raise InputInvalid(f"{name!r} is not a markdown page (.md)")
            root = settings.paths.vault_dir
            path = root / name
            if not is_content_page(root, path):
                raise InputInvalid(f"{name!r} is not a vault content page")
        try:
            if not inside(path.resolve(), (root.resolve(),)):
                raise InputInvalid(f"{name!r} is a link leading out of the vault: refused")
            st = path.stat()
        except FileNotFoundError:
            raise InputInvalid(f"no page {name!r} (list_pages names them)") from None
        except OSError as exc:
            raise InputInvalid(f"cannot read {name!r} ({exc.strerror or exc})") from None
        if not path.is_file():
            raise InputInvalid(f"{name!r} is not a file")
        if st.st_size > MAX_PAGE_BYTES:
            raise InputInvalid(f"{name!r} is too large to return ({st.st_size} bytes; at most {MAX_PAGE_BYTES})")
        try:
            content = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            raise InputInvalid(f"cannot read {name!r} ({exc.strerror or exc})") from None
        return {"name": name, "content": content}

    # --- hooks ---------------------------------------------------------------------------------------------------
    def _warm_search(self, mode: str):
        """``(mode, embedder, store)`` for a hook search asked in ``mode``: the warm ones (store None: no index
        yet); while the model is still loading, a hybrid search is answered full-text (``fts``, embedder None)
        at once rather than after the load (:meth:`~suzent_cli.server.warm.Warm.search_embedder`)."""
        try:
            store = self.warm.store()
        except IndexMissing:
            store = None
        embedder, loading = self.warm.search_embedder(mode)
        return ("fts" if loading is not None else mode), embedder, store

    def briefing(self, *, cwd: str | None = None) -> dict[str, Any]:
        """The SessionStart briefing for ``cwd`` (:func:`suzent_cli.hooks.session_start.briefing`, hybrid on the
        warm embedder): ``{"text": str | None}``."""
        from suzent_cli.hooks.session_start import briefing

        if cwd is not None:
            cwd = _text(cwd, "cwd", 4096, exact=True)
        _, embedder, store = self._warm_search("hybrid")
        return {"text": briefing(self.warm.settings(), cwd, embedder=embedder, store=store)}

    def hook_session_start(self, *, payload_b64: str) -> dict[str, Any]:
        """A ``SessionStart`` hook payload → ``{"output", "warning"}``: the hook's stdout line
        (:func:`suzent_cli.hooks.session_start.session_start_output`) or None; a problem is the ``warning`` (the
        hook never fails its agent). Raises :class:`InputInvalid` only for bad base64."""
        from suzent_cli.hooks.session_start import session_start_output

        raw = _payload(payload_b64)
        try:
            _, embedder, store = self._warm_search("hybrid")
            return {"output": session_start_output(self.warm.settings(), raw, embedder=embedder, store=store),
                    "warning": None}
        except Exception as exc:  # noqa: BLE001 - a hook never fails its agent: the warning says why
            return {"output": None, "warning": f"briefing skipped ({describe(exc)})"}

    def hook_recall(self, *, payload_b64: str, mode: str = "hybrid", limit: int = 5) -> dict[str, Any]:
        """A ``UserPromptSubmit`` hook payload → ``{"output", "warning"}``
        (:func:`suzent_cli.hooks.recall.recall_context` on the warm store and embedder). A ``SessionStart`` payload
        gets the briefing (:meth:`hook_session_start`). Raises :class:`InputInvalid` for bad base64, mode or
        limit (None: hybrid, 5); any other problem is the ``warning``."""
        from suzent_cli.hooks.recall import recall_context
        from suzent_cli.hooks.transcript import PayloadInvalid, decode_payload
        from suzent_cli.recall import MODES

        raw = _payload(payload_b64)
        mode = "hybrid" if mode is None else mode
        limit = 5 if limit is None else limit
        if mode not in MODES:
            raise InputInvalid(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InputInvalid(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
        try:
            if decode_payload(raw).get("hook_event_name") == "SessionStart":
                return self.hook_session_start(payload_b64=payload_b64)
        except PayloadInvalid as exc:
            return {"output": None, "warning": f"recall skipped ({describe(exc)})"}
        try:
            mode, embedder, store = self._warm_search(mode)
            output = recall_context(self.warm.settings(), raw, mode=mode, limit=limit, embedder=embedder,
                                    store=store)
            return {"output": output, "warning": None}
        except Exception as exc:  # noqa: BLE001 - a hook never fails its agent: the warning says why
            return {"output": None, "warning": f"recall skipped ({describe(exc)})"}

    def hook_capture(self, *, payload_b64: str, timeout: float, extractor: str | None = None) -> dict[str, Any]:
        """What ``suzent capture --from claude-code`` does, in this process: the payload is spooled before any
        work (:func:`suzent_cli.hooks.claude_code.accept`), the spool drained within ``timeout`` seconds
        (:func:`~suzent_cli.hooks.claude_code.capture_within`), then the daily logs it appended to are reindexed
        on the index worker, waiting at most :data:`CAPTURE_INDEX_WAIT` s and never past the deadline, so the
        next prompt's recall sees the turn. Returns ``{"report", "warnings", "indexed"}``: the drain report (None
        when it did not finish; the payload then stays spooled for the next run), the warning lines, and whether
        the reindex finished. ``timeout`` None: the hook's default (10 s). The capture stops at the deadline, and as
        soon as the request's client has gone (:func:`suzent_cli.server.cancel.client_gone`: the hook gave up or
        was killed): no transcript is read and no turn started for nobody, the payload stays spooled for the next
        run. Raises :class:`InputInvalid` for bad base64 or timeout."""
        from suzent_cli.hooks import claude_code
        from suzent_cli.server.cancel import client_gone

        gone = client_gone()  # taken here: the capture's worker thread does not inherit the request's context

        raw = _payload(payload_b64)
        timeout = claude_code.CAPTURE_TIMEOUT if timeout is None else timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 86400:
            raise InputInvalid(f"timeout must be seconds > 0, got {timeout!r}")
        if extractor is not None:
            extractor = _text(extractor, "extractor", 40, exact=True)
        deadline = time.monotonic() + float(timeout)
        settings = self.warm.settings()
        before = _log_state(settings.paths.archive_dir)
        accepted = claude_code.accept(settings, raw)
        warnings = list(accepted.warnings)
        outcome = claude_code.capture_within(settings, accepted, deadline=deadline, timeout=float(timeout),
                                             extractor=extractor, stop=gone)
        warnings += outcome.warnings
        after = _log_state(settings.paths.archive_dir)
        touched = sorted(p for p, state in after.items() if before.get(p) != state)
        indexed = False
        if touched:  # queued either way; waited for only while someone waits for the answer
            wait = 0.0 if gone() else max(0.0, min(CAPTURE_INDEX_WAIT, deadline - time.monotonic()))
            indexed = self.warm.index.reindex(touched, wait=wait)
        return {"report": outcome.report, "warnings": warnings, "indexed": indexed}


__all__ = ["LocalBackend", "hit_json", "plain_content"]
