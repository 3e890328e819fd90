"""The ``claude`` dream engine: a tool-use agent on the Anthropic Messages API, confined to the vault.

An ingest sends the ingest runbook plus the vault's ``schema.md`` as the system prompt and the batch (its logs
with line numbers, the confirmation and revisit queues) as the first user message, then runs the tool-use loop:
each ``tool_use`` block goes through :class:`~.vault_tools.VaultTools` and comes back as a ``tool_result``, until
the model stops asking for tools. Lint runs the same loop with the lint runbook and no logs.

Bounds: at most ``max_turns`` model calls and the job's monotonic ``deadline`` (each request's timeout is the
time left, at most ``request_timeout``; the SDK retries transient failures ``max_retries`` times, none in the last
minute). A timeout, an API error, the turn limit, or a final reply without text raises
:class:`~suzent_cli.errors.DreamFailed`; an API that cannot be reached or will not serve now (a connection error or
connect timeout, 429, 5xx: :func:`suzent_cli.claude.transient`) raises its subclass
:class:`~suzent_cli.errors.EngineUnreachable`, which the runner backs off from instead of counting. Pages already
written stay (the runner judges the run by what changed).

The client comes from :mod:`suzent_cli.claude` (``anthropic`` is imported only when an engine is built).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from suzent_cli import claude
from suzent_cli.config import DEFAULT_CLAUDE_MODEL, Settings
from suzent_cli.dream.engine import IngestBatch, IngestResult, LintFindings, LintJob
from suzent_cli.dream.vault_tools import VaultTools
from suzent_cli.errors import DreamFailed, EngineUnreachable
from suzent_cli.files import read_text

SUMMARY_CAP = 600
REQUEST_TIMEOUT = 300.0
NO_RETRY_WINDOW = 60.0  # seconds: this close to the deadline a failed request is not retried
USER, INSTEAD = "the claude dream engine", "--engine offline"  # how a missing key is worded

_DETAILS_RE = re.compile(r"<details\b[^>]*>.*?(?:</details>|\Z)", re.IGNORECASE | re.DOTALL)
_CONTRADICTION_RE = re.compile(r"^\s*(?:[-*]\s*)?\**CONTRADICTION:\**\s*(.+?)\s*$", re.MULTILINE)
_FACT_LINE_RE = re.compile(r"^\s*-\s*\[")


def _data_text(name: str) -> str:
    return resources.files("suzent_cli").joinpath(f"data/{name}").read_text(encoding="utf-8")


def vault_schema(vault_dir: Path) -> str:
    """The vault's ``schema.md`` text; the packaged schema when the vault has none (or it is a symlink/unreadable)."""
    path = Path(vault_dir) / "schema.md"
    try:
        if path.is_file() and not path.is_symlink():
            text = read_text(path)
            if text.strip():
                return text
    except OSError:
        pass
    return _data_text("schema.md")


def system_prompt(runbook: str, vault_dir: Path) -> str:
    """The runbook (``ingest_runbook.md`` or ``lint_runbook.md`` from the package data) followed by the vault's
    schema, under a ``# The vault's schema.md`` heading."""
    return f"{_data_text(runbook).rstrip()}\n\n---\n\n# The vault's schema.md\n\n{vault_schema(vault_dir).strip()}\n"


def _numbered_log(text: str, facts: Sequence) -> str:
    """A day's log with each fact line prefixed by its line number in the log file (``  12 | - [x] …``).

    Numbers come from the batch's facts (the text has tombstoned lines removed, so positions can differ from the
    file's); a day without parsed facts is numbered by position. Other lines get a blank number column."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    queue = sorted(facts, key=lambda f: f.line)
    out, i = [], 0
    for position, line in enumerate(lines, 1):
        number = ""
        if not queue:
            number = str(position)
        elif i < len(queue) and line.rstrip() == queue[i].raw.rstrip():
            number, i = str(queue[i].line), i + 1
        out.append(f"{number:>5} | {line}".rstrip())
    return "\n".join(out)


def ingest_message(batch: IngestBatch) -> str:
    """The first user message of an ingest: the date range, every log of the batch (numbered, see
    :func:`_numbered_log`) in ``<log file="YYYY-MM-DD.md">`` tags, the confirmation and revisit queues when not
    empty, and what to do."""
    start = batch.start.isoformat() if batch.start else "the beginning"
    days = sorted(batch.logs)
    scope = (f"Fold the daily logs dated after {start} up to and including {batch.end.isoformat()}"
             if batch.days else "Fold the late lines below")
    parts = [
        f"Dream run of {batch.run_date.isoformat()}. {scope} into the vault: {len(days)} log(s), "
        f"{len(batch.facts)} fact line(s).",
        scope_note(batch),
        "The logs are read-only and are given here in full; they are not files in the vault. Each line is shown "
        "as `LINE | text`: LINE is its line number in the log file (cite it as `source: YYYY-MM-DD.md:LINE`), "
        "text is the line exactly as written (hand repeats off with hand_off_superseded by that text alone).",
    ]
    for day in days:
        facts = [f for f in batch.facts if f.day == day]
        name = f"{day.isoformat()}.md"
        late = f' late_from_line="{batch.late[day]}"' if day in batch.late else ""
        parts.append(f'<log file="{name}"{late}>\n{_numbered_log(batch.logs[day], facts)}\n</log>')
    if batch.late:
        parts.append("Logs marked late_from_line were consolidated before; only the lines added since (a backfill or "
                     "an export of old memories) are shown. They are statements of their own date, older than most "
                     "of the vault: fold them like any fact, but where one conflicts with a claim that became true "
                     "after its date, record it under ## Previously (until that claim's date) instead of replacing "
                     "the newer claim.")
    if batch.confirmations:
        rows = "\n".join(json.dumps(c, ensure_ascii=False, sort_keys=True, default=str) for c in batch.confirmations)
        parts.append("Confirmations (repeats the write path recognised and did not log; fold each into its "
                     f"claim's marker):\n<confirmations>\n{rows}\n</confirmations>")
    if batch.revisit:
        rows = "\n".join(f"- {p}" for p in batch.revisit)
        parts.append("Pages to revisit (past their stale_after, or personal pages without one; re-confirm their "
                     f"claims against these logs, never delete):\n<revisit>\n{rows}\n</revisit>")
    parts.append("Follow the runbook: orient (schema.md, index.md, list_files), fold every fact into the right page, "
                 "hand off the log lines of repeats, update index.md, and finish with a one-paragraph summary.")
    return "\n\n".join(parts)


def scope_note(batch: IngestBatch) -> str:
    """The sentence naming the batch's scope and where its pages go (the tools enforce it:
    :class:`~.vault_tools.VaultTools` ``home``/``fenced``)."""
    if batch.scope:
        return (f'Scope: every fact of this batch belongs to the project "{batch.scope}". Write its pages under '
                f"1_Projects/{batch.folder}/ only (the same page names as the person's: Technical.md, Context.md, "
                f"Preferences.md, ...), each with `project: {batch.scope}` in its frontmatter, and fold its facts "
                "only into claims of those pages. Other projects' folders are not visible to you.")
    return ("Scope: every fact of this batch is the person's (recalled in every project). Fold them into the "
            "person's pages as the schema routes them, never into a project's folder under 1_Projects/ (those "
            "are not visible to you) and never into a page with a `project:` key in its frontmatter.")


def lint_message(job: LintJob) -> str:
    """The first user message of a lint pass: the run date and what to report."""
    return (f"Lint pass of {job.run_date.isoformat()} (use this as today's date for stale_after). Audit the vault "
            "with the runbook's checks: contradictions, links, orphans, reciprocal Related links, stale_after "
            "decay, gaps. End with one `CONTRADICTION: ` line per contradiction you found and marked (none when "
            "there is none), then a one-paragraph summary.")


def final_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The run's closing text from its assistant content ``blocks`` (dicts with ``type`` and ``text``, all replies
    in order): the last text block after the final ``tool_use``; failing that, all text blocks joined."""
    last_tool = max((i for i, b in enumerate(blocks) if b.get("type") == "tool_use"), default=-1)
    after = [b["text"] for b in blocks[last_tool + 1:] if b.get("type") == "text" and str(b.get("text", "")).strip()]
    if after:
        return after[-1]
    return "\n\n".join(b["text"] for b in blocks if b.get("type") == "text" and str(b.get("text", "")).strip())


def clean_summary(text: str) -> str:
    """``text`` without ``<details>…</details>`` (reasoning), stripped, capped at 600 characters (597 + "…")."""
    text = _DETAILS_RE.sub("", text).strip()
    return text if len(text) <= SUMMARY_CAP else text[: SUMMARY_CAP - 3] + "…"


def parse_contradictions(text: str) -> list[str]:
    """The contradictions a lint reply reports: each line starting ``CONTRADICTION:`` (optionally bulleted or
    bold), its text after the prefix, in order, without duplicates or "none"."""
    found: list[str] = []
    for m in _CONTRADICTION_RE.finditer(text):
        item = m.group(1).strip().strip("*").strip()
        if item and item.lower().rstrip(".") not in ("none", "n/a") and item not in found:
            found.append(item)
    return found


def _block_param(block: Any) -> dict:
    """A response content block as a request block, to send the assistant turn back."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(mode="json", exclude_none=True)


class ClaudeEngine:
    """Dream engine ``claude``: folds logs into pages (and lints the vault) through a Messages API tool-use loop.

    Construction raises :class:`~suzent_cli.errors.ClaudeUnavailable` (a ``ConfigInvalid``) without an API key for a remote
    server or
    without the ``anthropic`` package. ``protected`` are the tiers the agent may never touch (the runner passes
    :func:`.vault_tools.tier_paths`).
    """

    name = "claude"

    def __init__(self, api_key: str | None, *, model: str = DEFAULT_CLAUDE_MODEL, base_url: str | None = None,
                 max_turns: int = 60, protected: Iterable[Path | str] = (), max_tokens: int = 4096,
                 max_retries: int = 2, request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.model = model
        self.max_turns = max(1, int(max_turns))
        self.protected = tuple(Path(p) for p in protected)
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.request_timeout = request_timeout
        self._claude = claude.connect(api_key, model=model, base_url=base_url, timeout=request_timeout,
                                      max_retries=max_retries, user=USER, instead=INSTEAD)

    @classmethod
    def from_settings(cls, settings: Settings, *, max_turns: int = 60, protected: Iterable[Path | str] = (),
                      **options: Any) -> ClaudeEngine:
        """From ``anthropic_api_key``, ``anthropic_base_url`` and ``claude_model``; ``options`` go to the
        constructor (max_tokens, max_retries, request_timeout). Raises
        :class:`~suzent_cli.errors.ClaudeUnavailable` without a key for a remote server. ``request_timeout`` and
        ``max_retries`` are decided by :func:`suzent_cli.claude.bounds` (``claude.timeout``, a local server's
        longer default) unless given."""
        timeout, retries = claude.bounds(settings, REQUEST_TIMEOUT, 2)
        options = {"request_timeout": timeout, "max_retries": retries, **options}
        return cls(settings.anthropic_api_key, model=settings.claude_model, base_url=settings.anthropic_base_url,
                   max_turns=max_turns, protected=protected, **options)

    # --- the two jobs ---------------------------------------------------------------------------------------
    def ingest(self, batch: IngestBatch) -> IngestResult:
        """Fold ``batch`` into the vault. Returns the closing summary, the log lines the agent handed off (only
        lines of this batch's logs are accepted) and the pages it wrote (sorted vault-relative paths).
        Raises :class:`DreamFailed` (see the module docstring)."""
        if batch.scope is None:  # not split by scope yet: one scope per conversation (dream.scopes)
            from suzent_cli.dream.scopes import ingest_by_scope

            return ingest_by_scope(self, batch)
        from suzent_cli.vault.projects import project_folders

        allowed = {f.raw for f in batch.facts}
        allowed |= {line for text in batch.logs.values() for line in text.split("\n") if _FACT_LINE_RE.match(line)}
        fenced = [folder for key, folder in project_folders(batch.vault_dir).items() if key != batch.scope]
        tools = VaultTools(batch.vault_dir, protected=self.protected, allowed_superseded=allowed,
                           deadline=batch.deadline, home=batch.folder if batch.scope else None, fenced=fenced,
                           scope=batch.scope)
        blocks = self._loop(system_prompt("ingest_runbook.md", batch.vault_dir), ingest_message(batch), tools,
                            batch.deadline, "ingest")
        return IngestResult(summary=clean_summary(final_text(blocks)), superseded=list(tools.accepted_superseded),
                            pages=sorted(tools.written), warnings=_warnings(tools))

    def lint(self, job: LintJob) -> LintFindings:
        """An editorial pass over ``job.vault_dir``. Returns the contradictions the agent reported on
        ``CONTRADICTION:`` lines, the pages it wrote and its summary. Raises :class:`DreamFailed`."""
        tools = VaultTools(job.vault_dir, protected=self.protected, deadline=job.deadline)
        blocks = self._loop(system_prompt("lint_runbook.md", job.vault_dir), lint_message(job), tools,
                            job.deadline, "lint")
        closing = "\n".join(b["text"] for b in _closing_blocks(blocks))
        contradictions = parse_contradictions(closing)
        summary = clean_summary(_CONTRADICTION_RE.sub("", final_text(blocks)))
        return LintFindings(contradictions=contradictions, pages=sorted(tools.written), summary=summary,
                            warnings=_warnings(tools))

    # --- the loop -------------------------------------------------------------------------------------------
    def _loop(self, system: str, first: str, tools: VaultTools, deadline: float, phase: str) -> list[dict]:
        """Run the tool-use conversation; returns every assistant content block (as request dicts) in order."""
        messages: list[dict] = [{"role": "user", "content": first}]
        blocks: list[dict] = []
        for turn in range(1, self.max_turns + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                raise DreamFailed(f"claude {phase} ran out of time after {turn - 1} model call(s) (deadline passed)")
            try:
                reply = self._claude.create(timeout=min(self.request_timeout, left),
                                            max_retries=self.max_retries if left > NO_RETRY_WINDOW else 0,
                                            max_tokens=self.max_tokens, system=system, messages=messages,
                                            tools=tools.schemas)
            except claude.ClaudeRequestFailed as exc:
                if exc.transient:
                    raise EngineUnreachable(f"claude API unreachable on model call {turn} of the {phase} "
                                            f"({exc.detail})") from exc
                if exc.timed_out:
                    raise DreamFailed(f"claude {phase} timed out on model call {turn} ({exc.detail})") from exc
                raise DreamFailed(f"claude {phase} request failed on model call {turn} ({exc.detail})") from exc
            content = [_block_param(b) for b in (getattr(reply, "content", None) or [])]
            blocks.extend(content)
            stop = getattr(reply, "stop_reason", None)
            uses = [b for b in content if b.get("type") == "tool_use"]
            if uses and stop == "tool_use":
                messages.append({"role": "assistant", "content": content})
                messages.append({"role": "user", "content": [self._run_tool(tools, b) for b in uses]})
                continue
            if uses:
                raise DreamFailed(f"claude {phase} reply was cut off before its tool calls completed "
                                  f"(stop_reason: {stop})")
            if stop in ("refusal", "model_context_window_exceeded"):
                raise DreamFailed(f"claude {phase} stopped on model call {turn} (stop_reason: {stop})")
            if not any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in content):
                raise DreamFailed(f"claude {phase} reply had neither a tool call nor text (stop_reason: {stop})")
            return blocks
        raise DreamFailed(f"claude {phase} did not finish within {self.max_turns} model calls (turn limit)")

    @staticmethod
    def _run_tool(tools: VaultTools, block: Mapping[str, Any]) -> dict:
        text, is_error = tools.call(str(block.get("name")), block.get("input"))
        result = {"type": "tool_result", "tool_use_id": block["id"], "content": text}
        if is_error:
            result["is_error"] = True
        return result


def _closing_blocks(blocks: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The text blocks after the final tool call (all text blocks when there was no tool call)."""
    last_tool = max((i for i, b in enumerate(blocks) if b.get("type") == "tool_use"), default=-1)
    return [b for b in blocks[last_tool + 1:] if b.get("type") == "text"]


def _warnings(tools: VaultTools) -> list[str]:
    if not tools.refusals:
        return []
    first = "; ".join(tools.refusals[:3])
    return [f"claude: {len(tools.refusals)} tool call(s) refused by the vault sandbox ({first})"]
