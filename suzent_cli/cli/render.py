"""What the CLI prints: rich on a terminal, plain text when piped, JSON with ``--json`` (``NO_COLOR`` is honoured).

The library returns data; the results several commands show are worded here, once: a dream tick and its follow-up
steps (``dream``, ``lint``, ``dry-run``, ``run``), a pass's rows (``run``, ``loop``), the status, a dry run."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from rich.console import Console

from suzent_cli.cli.plain import clip, emit_json  # re-exported (the capture fast path uses them without rich)

# The process's consoles, on sys.stdout/sys.stderr as they are at each print. A command relayed to a running server
# (suzent_cli.cli.relayed) prints through consoles of its own instead, built as its client's process would build
# these (request_consoles); `out` and `err` stand for whichever is the current one.
_process_out = Console(highlight=False, soft_wrap=True)
_process_err = Console(stderr=True, highlight=False, soft_wrap=True)
_request: ContextVar[tuple[Console, Console] | None] = ContextVar("suzent_request_consoles", default=None)


class _CurrentConsole:
    """``out``/``err``: every attribute and method is the current console's: the process's, or, inside
    :func:`request_consoles`, the relayed request's (the current context's: a thread a command starts itself sees
    the process's, so pass :meth:`current` to anything that prints from its own thread, such as a live display)."""

    __slots__ = ("_index", "_process")

    def __init__(self, index: int, process: Console) -> None:
        self._index, self._process = index, process

    def current(self) -> Console:
        """The :class:`~rich.console.Console` this context prints through."""
        request = _request.get()
        return self._process if request is None else request[self._index]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current(), name)

    def __repr__(self) -> str:
        return f"<current {'stderr' if self._index else 'stdout'} console: {self.current()!r}>"


out: Any = _CurrentConsole(0, _process_out)
err: Any = _CurrentConsole(1, _process_err)


def request_console(file: Any, *, stderr: bool, environ: Mapping[str, str],
                    terminal_size: tuple[int, int] | None) -> Console:
    """A console printing to ``file`` as the module's would in another process whose environment is ``environ``
    and whose first standard stream that is a terminal has ``terminal_size`` (columns, lines; None: none is):
    terminal detection from ``file.isatty()`` and ``environ`` (``TTY_COMPATIBLE``, ``FORCE_COLOR``), colours
    (``NO_COLOR``, ``TERM``, ``COLORTERM``), and the size exactly as rich works it out (``COLUMNS``/``LINES``
    over the terminal's, 80×25 by default or on a dumb terminal), never from this process's own terminal."""
    console = Console(file=file, stderr=stderr, highlight=False, soft_wrap=True, _environ=dict(environ))
    if not console.is_dumb_terminal:
        width, height = terminal_size or (None, None)
        columns, lines = environ.get("COLUMNS"), environ.get("LINES")
        width = int(columns) if columns is not None and columns.isdigit() else width
        height = int(lines) if lines is not None and lines.isdigit() else height
        console.size = (console._width if console._width is not None else width or 80,
                        console._height if console._height is not None else height or 25)
    return console


@contextmanager
def request_consoles(stdout: Console, stderr: Console) -> Iterator[None]:
    """Inside, in this context, ``out`` and ``err`` are ``stdout`` and ``stderr`` (a relayed request's)."""
    from suzent_cli.cli.plain import RELAYED

    token, relayed = _request.set((stdout, stderr)), RELAYED.set(True)
    try:
        yield
    finally:
        RELAYED.reset(relayed)
        _request.reset(token)


def escape(text: str) -> str:
    """``text`` with rich markup neutralised (paths and user content may contain ``[…]``)."""
    from rich.markup import escape as _escape

    return _escape(text)


def warn(message: str) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(message)}", markup=True)


def plural(count: int, word: str) -> str:
    """``1 page``, ``2 pages``."""
    return f"{count} {word}" + ("" if count == 1 else "s")


# --- the dream: one tick, its follow-up steps, a lint ----------------------------------------------------------

def _span(result) -> str:
    """The days a tick folded: ``2026-06-01..2026-06-12``, plus its late lines."""
    b = result.batch
    late = (result.decision.late if result.decision else ()) or ()
    return (f"{b[0].isoformat()}..{b[-1].isoformat()}" if b else "") + (
        f"{' + ' if b else ''}late lines of {len(late)} consolidated day(s)" if late else "")


def describe_tick(result) -> str:
    """One line for a :class:`~suzent_cli.dream.runner.TickResult` (``suzent dream``, ``lint``, ``dry-run``, and the
    dream and lint rows of ``suzent run``)."""
    span = _span(result)
    mark = result.watermark_after.isoformat() if result.watermark_after else "none"
    if result.outcome == "ingested" and not result.pages_changed and not result.facts:
        return f"ingested {span}: {result.summary}"
    if result.outcome == "ingested":
        return (f"ingested {span} ({result.engine}): {result.facts} facts, {len(result.pages_changed)} pages changed, "
                f"{result.superseded} new superseded lines handed off; watermark {mark}")
    if result.outcome == "unproductive" and result.retry_after:
        return f"run {span} ({result.engine}) not attempted: {result.error}; watermark stays {mark}"
    if result.outcome == "unproductive":
        return (f"run {span} ({result.engine}) not productive, attempt {result.failures}: {result.error}; "
                f"watermark stays {mark}")
    if result.outcome == "skipped":
        return result.summary
    if result.outcome == "linted":
        return f"{result.summary}; {len(result.pages_changed)} pages changed"
    if result.outcome == "lint_failed":
        return f"lint failed ({result.engine}): {result.error}"
    if result.outcome == "busy":
        return f"busy: {result.summary}"
    return f"idle: {result.summary}"


def step_summary(step) -> str:
    """One line saying what a follow-up step (:class:`~suzent_cli.dream.runner.StepResult`) did."""
    d = step.detail
    if not step.ok:
        return f"failed: {step.error}"
    if d.get("skipped"):
        return f"skipped, {d['skipped']}"
    if step.name == "reconcile":
        frag = d.get("fragments_compacted")
        return (f"retired {d.get('lines_retired', 0)} superseded lines, {len(d.get('days_reindexed') or [])} days "
                f"reindexed, rows {d.get('rows_removed', 0)} out / {d.get('rows_reembedded', 0)} in"
                + (f", fragments {frag[0]} → {frag[1]}" if frag else "")
                + ("" if d.get("index_built", True) else " (no index yet)"))
    if step.name == "promote":
        status = d.get("status")
        return {"written": f"MEMORY.md generated zone rewritten from {d.get('claims')} claims"
                              f" and {d.get('recent') or 0} recent facts",
                "unchanged": "MEMORY.md unchanged",
                "manual": "MEMORY.md is manual (no marker suzent wrote): left untouched",
                "nothing": "nothing to promote to MEMORY.md"}.get(status, f"MEMORY.md {status}")
    return str(d.get("summary") or "done")


def print_tick(result, json_out: bool) -> None:
    """A tick on stdout: its JSON, or its line, one line per follow-up step and its warnings (stderr)."""
    if json_out:
        emit_json(result.to_json())
        return
    out.print(escape(describe_tick(result)))
    for step in result.steps:
        if not step.ok:
            warn(f"follow-up {step.name} failed: {step.error}")
            continue
        out.print(escape(f"  {step.name}: {step_summary(step)}"))
        if step.name == "promote":
            for message in step.detail.get("warnings") or []:
                warn(message)
    for message in result.warnings:
        warn(message)


def print_lint_findings(lint: dict | None) -> None:
    """What a lint pass found, one line each (``suzent lint``)."""
    for path, target in (lint or {}).get("broken_links", []):
        out.print(escape(f"  broken link in {path}: [[{target}]]"))
    for page in (lint or {}).get("orphans", []):
        out.print(escape(f"  orphan page: {page}"))
    for page in (lint or {}).get("stale", []):
        out.print(escape(f"  past stale_after, flagged needs-review: {page}"))
    for line in (lint or {}).get("contradictions", []):
        out.print(escape(f"  contradiction: {line}"))


# --- suzent run / loop: a pass's rows -------------------------------------------------------------------------

STYLE = {"failed": "red", "busy": "yellow", "stopped": "yellow", "skipped": "dim", "idle": "dim", "unchanged": "dim"}


def _spool_summary(row) -> str:
    d = row.detail
    if row.outcome == "skipped":
        return "nothing pending"
    failed = int(d.get("failed") or 0)
    return (f"drained {d.get('drained', 0)} of {d.get('pending')} ({d.get('turns', 0)} turns, {d.get('facts', 0)} facts)"
            + (f", {d.get('left')} left for the next pass" if d.get("left") else "") + (f", {failed} failed" if failed else ""))


def _index_summary(row) -> str:
    if row.outcome == "busy":
        return f"busy: {row.source}"
    d = row.detail
    return (f"{'built: ' if row.outcome == 'built' else ''}{d['files_checked']} files checked, {d['files_updated']} "
            f"updated, {d['files_removed']} removed; rows +{d['rows_added']} −{d['rows_removed']} "
            f"({d['total_rows']} in all)")


def _dream_summary(row) -> str:
    tick = row.source
    reason = tick.decision.reason if tick.decision else ""
    if tick.outcome in ("linted", "lint_failed"):
        return f"ingest not due ({reason}): the gate chose lint"
    if tick.outcome in ("ingested", "unproductive", "skipped"):
        return describe_tick(tick)
    if tick.outcome == "busy":
        return tick.summary
    return f"ingest not due: {reason}" if reason else (tick.summary or "idle")


def stage_summary(row) -> str:
    """One line for a stage row of a pass (:class:`~suzent_cli.dream.runner.StepResult`); ``run --json`` carries it
    as ``detail.summary``."""
    if row.outcome == "stopped":
        return "stopped by a signal before this stage"
    if isinstance(row.source, BaseException) and not row.ok:  # the stage raised
        return row.error or ""
    if row.name == "spool":
        return _spool_summary(row)
    if row.name == "index":
        return _index_summary(row)
    if row.name == "dream":
        return _dream_summary(row)
    if row.name == "lint" and row.source is not None:
        return describe_tick(row.source)
    if row.detail.get("skipped") and row.ok:
        return str(row.detail["skipped"])
    return step_summary(row)


def pass_json(report, **extra) -> dict:
    """A pass as ``run --json`` prints it: :meth:`PassReport.to_json` with each row's ``detail.summary`` (first in
    the rows a pass makes itself, last after the data of the result a row was made from), then ``extra``."""
    data = report.to_json()
    for row, stage in zip(report.stages, data["stages"], strict=False):
        summary = stage_summary(row)
        leads = row.name in ("spool", "lint") or set(row.detail) <= {"skipped"}
        stage["detail"] = {"summary": summary, **row.detail} if leads else {**row.detail, "summary": summary}
    return data | extra


def row_detail(row) -> str:
    """The detail cell of a row: its summary (or error), and how many warnings it has (printed on stderr below)."""
    text = stage_summary(row)
    if row.error:
        text = f"error: {row.error}" + (f" ({text})" if text and text != row.error else "")
    warnings = len(row.detail.get("warnings") or [])
    if warnings:  # clipped first, so a long summary never hides that there are warnings to read
        return clip(text.replace("\n", " "), 360) + f"; {warnings} warning{'s' if warnings != 1 else ''} (below)"
    return clip(text.replace("\n", " "), 400)


def print_pass(report, *, title: str | None = None, exit_code: int | None = None) -> None:
    """The pass as a rich table on a terminal, as plain aligned text when piped; warnings on stderr."""
    if out.is_terminal:
        from rich.table import Table

        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("stage", no_wrap=True)
        table.add_column("outcome", no_wrap=True)
        table.add_column("detail", overflow="fold")
        table.add_column("seconds", justify="right", no_wrap=True)
        for s in report.stages:
            style = "red" if not s.ok else STYLE.get(s.outcome, "green")
            table.add_row(s.name, f"[{style}]{escape(s.outcome)}[/{style}]", escape(row_detail(s)), f"{s.seconds:.2f}")
        out.print(table)
    else:
        if title:
            out.print(escape(title))
        width = max(len(s.outcome) for s in report.stages) if report.stages else 7
        out.print(escape(f"{'stage':<10} {'outcome':<{width}} {'seconds':>8}  detail"))
        for s in report.stages:
            out.print(escape(f"{s.name:<10} {s.outcome:<{width}} {s.seconds:>8.2f}  {row_detail(s)}"))
    code = report.exit_code if exit_code is None else exit_code
    out.print(escape(f"exit {code} in {report.seconds:.2f}s" + (" (stopped early)" if report.stopped else "")))
    for s in report.stages:
        for message in s.detail.get("warnings") or []:
            warn(f"{s.name}: {message}")


# --- suzent status ---------------------------------------------------------------------------------------------

def status_sections(data: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """The status, grouped by tier: ``[(tier title, [(label, value), …]), …]`` for the table and the plain text."""
    logs, pend, vault, queues, mem = data["logs"], data["pending"], data["vault"], data["queues"], data["memory_md"]
    spool = queues["spool"]
    spool_text = (f"unreadable: {spool['error']}" if spool.get("error") else f"{spool['pending']} pending"
                  + (f", {spool['failed']} given up in {spool['failed_dir']}" if spool.get("failed") else ""))
    capture = [
        ("today", f"{data['today']}  (now {data['now']})"),
        ("daily logs", f"{logs['count']}" + (f" ({logs['first']} .. {logs['last']})" if logs["count"] else "")
         + f", {plural(logs['facts'], 'fact line')}, {logs['today_facts']} today"),
        ("spool", spool_text),
    ]
    zones = ", ".join(f"{k} {v}" for k, v in vault.get("by_zone", {}).items())
    knowledge = [
        ("vault", f"{plural(vault['pages'], 'page')}" + (f" ({zones})" if zones else "")
         + f", {plural(vault['claims'], 'current claim')}, {vault['needs_review']} need review, "
           f"{vault['stale']} past stale_after" + (f", {vault['unreadable']} unreadable" if vault["unreadable"] else "")),
        ("MEMORY.md", "missing" if not mem["exists"] else
         (f"generated zone {plural(mem['generated_lines'], 'line')}" if mem["has_marker"] else "no generated zone (unmarked)")
         + (f", manual zone {plural(mem['manual_lines'], 'line')}" if mem["manual"] else ", no manual zone")),
    ]
    dream = [
        ("watermark", f"{data['watermark'] or 'none (nothing ingested yet)'}"),
        ("pending", f"{len(pend['dates'])} days, {pend['facts']} facts" + (f" ({pend['dates'][0]} .. {pend['dates'][-1]})" if pend['dates'] else "")
         + (f"; late lines: {pend['late_facts']} facts in {len(pend['late'])} consolidated days" if pend['late'] else "")),
        ("next tick", f"{data['next_tick']['action']}: {data['next_tick']['reason']}"),
        ("engine", f"{data['engine']}"),
        ("model", _llm_text(data.get("llm"))),
        ("retries", ", ".join(f"{k}: {v}/{data['retries']['max']}" for k, v in data['retries']['failures'].items()) or "none"),
        ("last ingest", _last(data["last_ingest"], data["last_attempt"])),
        ("last lint", f"{data['last_lint'] or 'never'}; " + _last(data["last_lint_result"], data["last_lint_attempt"])),
    ]
    if data["in_flight"]:
        dream.append(("interrupted", f"run of batch ending {data['in_flight'].get('end')} (started "
                                     f"{data['in_flight'].get('started')}) will resume"))
    queue_rows = [("queues", f"spool {spool['pending'] if spool.get('pending') is not None else '-'}, "
                             f"late lines {queues['late_lines']}, superseded {queues['superseded']}, "
                             f"confirmations {queues['confirmations']} (folded with the next batch), "
                             f"tombstones {queues['tombstones']}")]
    locks = [("locks", ", ".join(f"{name} " + (f"held (pid {info['pid']})" if info["held"] and info.get("pid")
                                               else "held" if info["held"] else "unknown" if info["held"] is None
                                               else "free")
                                 for name, info in data["locks"].items()))]
    sections = [("capture buffer", capture), ("vault", knowledge), ("index", _index_rows(data["index"])),
                ("dream", dream), ("queues", queue_rows), ("locks", locks)]
    if (private := data.get("privacy")) is not None:  # suzent_cli.status.privacy_state
        sections.append(("privacy", [("privacy", "private to you (folders 0700, files 0600)" if private["private"]
                                      else "OPEN to other users: " + ", ".join(f"{e['path']} ({e['mode']})"
                                                                               for e in private["exposed"])
                                      + "; run suzent init")]))
    if (checked := data.get("verify")) is not None:  # suzent_cli.status.verify_row
        sections.append(("verify", [("verify", _verify_summary(checked))]))
    if "server" in data:
        sections.append(("server", server_rows(data["server"])))
    return sections


def _verify_summary(row: dict) -> str:
    """status's ``verify`` row: the cheap checks' verdict and their first violations."""
    if row.get("ok") is None:
        return f"could not run: {row.get('error')}"
    if row["ok"]:
        return "logs sealed and unchanged, state sane (`suzent verify` checks the index too)"
    more = f" (and {row['more']} more)" if row.get("more") else ""
    return "; ".join(row["violations"]) + more + "; run `suzent verify`"


def _duration(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    return (f"{days}d {hours}h" if days else f"{hours}h {rest // 60}m" if hours else f"{rest // 60}m {rest % 60}s")


def server_rows(server: dict) -> list[tuple[str, str]]:
    """The server's rows of ``suzent status`` (:func:`suzent_cli.server.runtime.server_state`'s shape, with the
    ``autostart`` block of :func:`suzent_cli.server.autostart.describe` when present)."""
    auto = _autostart_rows(server.get("autostart"))
    if server.get("running") is None:
        return [("server", f"unknown: {server.get('unknown')}"), *auto]
    if not server["running"]:
        return [("server", "not running: hooks and MCP use the cold path"
                 + ("; a stopped server's socket is left (the next suzent serve replaces it)" if server.get("stale")
                    else "")), *auto]
    idle = server.get("idle_exit_seconds")
    rows = [("server", f"running, pid {server.get('pid')}, since {server.get('started')}"
                       + (f", up {_duration(server.get('uptime_s'))}" if "uptime_s" in server else "")),
            ("MCP", f"{server.get('mcp_url')} (bearer token: suzent serve --print-config)")]
    if server.get("started_by"):
        rows.append(("started by", f"{server['started_by']}" + (" (auto-start)" if server.get("auto") else "")
                     + (f"; exits after {idle / 60:g} min without a request" if idle else "; runs until stopped")
                     + (f" (idle {_duration(server['idle_s'])})" if idle and server.get("idle_s") is not None
                        else "")))
    rows += auto
    if server.get("no_answer"):
        return [*rows, ("answer", f"none: {server['no_answer']}")]
    requests = server.get("requests") or {}
    by_op = ", ".join(f"{op} {n}" for op, n in (requests.get("by_op") or {}).items())
    last = server.get("last_error")
    chain, watcher = server.get("chain") or {}, server.get("watcher") or {}
    rows += [("requests", f"{requests.get('total', 0)}" + (f" ({by_op})" if by_op else "")),
             ("last error", f"{last['time']} {last['op']}: {last['message']}" if last else "none"),
             ("chain", f"{chain.get('state')}" + (f", {chain['passes']} pass{'es' if chain['passes'] != 1 else ''}" if chain.get("passes") else "")
              + (f", next at {chain['next_pass']}" if chain.get("state") == "waiting" and chain.get("next_pass")
                 else "")),
             ("watcher", f"{watcher.get('state')}" + (f", {watcher['events']} change batch{'es' if watcher['events'] != 1 else ''}"
                                                      if watcher.get("events") else ""))]
    return rows


def _autostart_rows(auto: dict | None) -> list[tuple[str, str]]:
    """The ``autostart`` row: on/off and why, the failed starts in a row when there are any; when the last server
    is gone without a clean exit (``failed``, :func:`suzent_cli.server.autostart.last_failure`), a ``last start``
    row (its pid, exit code, the error) and a ``next start`` row (the back-off's end, or the next caller; the log)."""
    if not auto:
        return []
    text = "on" if auto.get("enabled") else "off"
    if auto.get("reason") and auto["reason"] != "default":
        text += f" ({auto['reason']})"
    last, failed = auto.get("last") or {}, auto.get("failed")
    if failed:  # the last server is gone without a clean exit: why, and when auto-start tries again
        n = failed.get("failures") or 1
        rows = [("autostart", text),
                ("last start", f"failed: pid {failed.get('pid')}"
                 + (f" exited {failed['exit']}" if failed.get("exit") is not None else "")
                 + f": {failed.get('error')}; {n} failed start{'s' if n != 1 else ''} in a row"),
                ("next start", (f"not before {failed['retry_at']} (back-off)" if failed.get("retry_at")
                                else "at the next hook or command that needs a server")
                 + f"; see {failed.get('log') or auto.get('log')}")]
        return rows
    if last.get("failures"):
        text += f"; {last['failures']} failed start{'s' if last['failures'] != 1 else ''} in a row, see {auto.get('log')}"
    return [("autostart", text)]


def _index_rows(idx: dict | None) -> list[tuple[str, str]]:
    if idx is None:
        return [("index", "not read (--no-index)")]
    if not idx.get("built"):
        return [("index", "not built (run `suzent index` or `suzent run`)")]
    if idx.get("error"):
        return [("index", f"unreadable: {idx['error']}")]
    return [("index", f"{idx['rows']} rows (" + ", ".join(f"{k} {v}" for k, v in idx["by_source"].items())
             + f"), {plural(idx['fragments'], 'fragment')}, embedder {idx.get('embedder') or '?'}"
             + (f" (dim {idx['dim']})" if idx.get("dim") else ""))]


def _last(record, attempt) -> str:
    if not record:
        return f"none (last attempt {attempt})" if attempt else "none"
    return f"{record.get('outcome')} at {attempt}: {record.get('summary') or record.get('error') or ''}"[:300]


def print_status(data: dict) -> None:
    """The status as one table per tier on a terminal, ``label  value`` lines when piped; warnings on stderr."""
    sections = status_sections(data)
    if out.is_terminal:
        from rich import box
        from rich.table import Table

        for title, rows in sections:
            table = Table(title=title, title_justify="left", title_style="bold", show_header=False,
                          box=box.SIMPLE, pad_edge=False)
            table.add_column("what", style="cyan", no_wrap=True)
            table.add_column("value", overflow="fold")
            for label, value in rows:
                table.add_row(escape(label), escape(value))
            out.print(table)
    else:
        for _title, rows in sections:
            for label, value in rows:
                out.print(escape(f"{label:<15}{value}"))
    for message in data["warnings"]:
        warn(message)


# --- suzent dry-run ------------------------------------------------------------------------------------------

def print_dry_run(report, json_out: bool, target=None) -> None:
    """A dry run: the tick (as ``suzent dream``), the files it changed, the patch (coloured on a terminal, byte for
    byte when piped), the index rows per source, where the clone and the patch file are; or all of it as JSON."""
    if json_out:
        emit_json(report.to_json())
        return
    print_tick(report.result, False)
    if not report.files:
        out.print("no file changed")
    else:
        out.print(escape(f"{len(report.files)} files changed:"))
        for f in report.files:
            what = "binary file changed" if f.binary else f"+{f.added_lines} -{f.removed_lines}"
            out.print(escape(f"  {f.status:<8} {f.path}  {what}"))
    if report.patch:
        _print_patch(report.patch)
    _print_index_changes(report.index)
    if report.clone is not None:
        out.print(escape(f"clone kept at {report.clone} (its config: {report.clone / 'home' / 'config.toml'})"))
    if target is not None:
        out.print(escape(f"patch written to {target}"))
    if report.live_changed:
        return  # the error line follows on stderr
    out.print(escape(f"live home unchanged ({report.verified_files} files verified)"))


def _print_patch(patch: str) -> None:
    if out.is_terminal and not out.no_color:
        from rich.text import Text

        # the terminal's own colour for context lines (readable on light and dark themes)
        for line in patch.splitlines():
            style = ("bold" if line.startswith(("--- ", "+++ ")) else "green" if line.startswith("+")
                     else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
            out.print(Text(line, style=style), soft_wrap=True)
    else:  # piped or NO_COLOR: the patch byte for byte
        out.file.flush()
        sys.stdout.write(patch)
        sys.stdout.flush()


def _print_index_changes(index) -> None:
    if index.note and not index.by_source:
        out.print(escape(f"index: {index.note}"))
        return
    rows = f"{index.rows_before} → {index.rows_after} rows" if index.rows_before is not None else f"{index.rows_after} rows"
    if not index.by_source:
        out.print(escape(f"index: no rows added or removed ({rows})"))
        return
    out.print(escape(f"index: {rows}" + (f"; {index.note}" if index.note else "")))
    if out.is_terminal:
        from rich.table import Table

        table = Table(show_header=True, header_style="bold", expand=False)
        for col in ("source", "added", "removed"):
            table.add_column(col, justify="left" if col == "source" else "right")
        for source, d in index.by_source.items():
            table.add_row(escape(source), f"+{d['added']}", f"-{d['removed']}")
        out.print(table)
        return
    for source, d in index.by_source.items():
        out.print(escape(f"  {source}\t+{d['added']}\t-{d['removed']}"))


def patch_file_text(report, settings) -> str:
    """The ``dry-run --output`` file: a ``#`` comment header (what ran, index rows added/removed per source) that
    ``patch`` and ``git apply`` skip, then the unified diff."""
    head = [f"suzent dry-run of {settings.paths.home} at {settings.clock.isoformat(timespec='seconds')}",
            describe_tick(report.result)]
    index = report.index
    if index.note:
        head.append(f"index: {index.note}")
    for source, d in index.by_source.items():
        head.append(f"index {source}: +{d['added']} -{d['removed']} rows")
    head.append("apply with: patch -p1 (paths are home/…, memory/…, vault/…)")
    return "".join(f"# {' '.join(line.split())}\n" for line in head) + "\n" + report.patch


class Progress:
    """A one-line spinner naming the running stage of a pass, on a terminal only (``enabled``); call it with the
    stage's name as each stage starts."""

    def __init__(self, enabled: bool) -> None:
        self.status = out.status("starting") if enabled else None

    def __enter__(self):
        if self.status is not None:
            self.status.start()
        return self

    def __call__(self, stage: str) -> None:
        if self.status is not None:
            self.status.update(f"{stage} …")

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.stop()


def _llm_text(llm: dict | None) -> str:
    """The status row of the model endpoint: which stages use it, where, which model, the key's state (never the
    key itself)."""
    if not llm:
        return "-"
    users = [name for name, engine in (("extraction", llm["extractor"]), ("dream", llm["dream"])) if engine == "claude"]
    where = ("local server " if llm["local"] else "") + str(llm["url"])
    text = f"{llm['model']} at {where}, key {llm['key']}"
    if llm.get("timeout"):
        text += f", {llm['timeout']:g} s a request"
    if users:
        return f"{text} (used by {' and '.join(users)})"
    if llm["key"] == "missing":
        return "none: the offline rules (a model needs ANTHROPIC_API_KEY or a local claude.base_url: docs/local-models.md)"
    return f"none used (offline chosen); configured: {text}"
