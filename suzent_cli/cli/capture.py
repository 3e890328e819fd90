"""``suzent capture``: append facts (given, or extracted from a turn) to today's daily log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from suzent_cli import errors
from suzent_cli.capture import (
    extract_and_write,
    index_after_capture,
    parse_fact_args,
    parse_fact_lines,
    repair_input,
    resolve_day,
    write_facts,
)
from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import clip, emit_json, err, escape, out, warn
from suzent_cli.errors import InputInvalid


def _read_source(spec: str) -> bytes:
    if spec == "-":
        return sys.stdin.buffer.read()
    path = Path(spec)
    if path.is_dir():
        raise InputInvalid(f"{spec} is a directory, not a file")
    try:  # a regular file, or a pipe: `<(…)`, a named pipe, /dev/stdin
        return path.read_bytes()
    except FileNotFoundError:
        raise InputInvalid(f"no such file: {spec}") from None
    except PermissionError:
        raise InputInvalid(f"cannot read {spec}: permission denied") from None


@app.command("capture")
def capture_cmd(
    ctx: typer.Context,
    fact: Optional[list[str]] = typer.Option(None, "--fact", metavar="FACT", help="A fact line: '[category] content `tags`' (repeatable)."),
    facts_from: Optional[str] = typer.Option(None, "--facts-from", metavar="FILE|-", help="File of fact lines, one per line ('-' = stdin)."),
    turn_from: Optional[str] = typer.Option(None, "--turn-from", metavar="FILE|-",
                                            help="A turn/transcript to extract facts from: text, {user, assistant} "
                                                 "JSON or a list of {role, content} ('-' = stdin). Over "
                                                 "capture.max_turn_chars only its newest part is read (a warning "
                                                 "says how much was skipped)."),
    extractor: Optional[str] = typer.Option(None, "--extractor", metavar="auto|offline|claude", help="auto | offline | claude (for --turn-from)."),
    session: str = typer.Option("cli", "--session", metavar="ID", help="Session id written in the entry heading."),
    date: Optional[str] = typer.Option(None, "--date", metavar="YYYY-MM-DD", help="Backfill into this day's log (YYYY-MM-DD)."),
    time: Optional[str] = typer.Option(None, "--time", metavar="HH:MM", help="Entry time HH:MM (UTC; default now)."),
    index: bool = typer.Option(False, "--index", help="Reindex the touched log right after appending."),
    json_out: bool = options.json_out("Print a JSON summary."),
    from_agent: Optional[str] = options.from_agent("Read a Claude Code hook payload (Stop, PreCompact, SessionEnd) on "
                                                   "stdin and capture the session's new complete turns; spooled "
                                                   "first, never fails the agent (exit 0, warnings on stderr)."),
    timeout: Optional[str] = options.timeout("With --from: seconds before the hook gives up and leaves the payload "
                                             "spooled for the next run (default 10)."),
) -> None:
    """Append facts to the day's log in the capture buffer (fast: ready fact lines load no model).

    Facts extracted from a turn are classified against the memory recalled for it: a word-for-word restatement
    of a logged or vault claim is recorded as a confirmation instead of a new log line, a changed one is logged
    tagged `revision`. Fact lines are always logged as given.

    Example: suzent capture --fact "[preference] Prefers compact dashboards `ui`"

    Example (Claude Code Stop hook, payload on stdin): suzent capture --from claude-code
    """
    settings = settings_of(ctx)
    if from_agent is not None:
        _capture_hook(settings, from_agent, timeout, extractor, json_out, bool(fact or facts_from or turn_from))
        return
    if turn_from and (fact or facts_from):
        raise InputInvalid("give either fact lines (--fact/--facts-from) or a turn (--turn-from), not both")
    if not (turn_from or fact or facts_from):
        raise InputInvalid("no input: give --fact, --facts-from or --turn-from")
    day = resolve_day(settings, date)
    warnings: list[str] = []
    session = _session(session, warnings)
    rejected: list[str] = []
    if turn_from:
        text = repair_input(_read_source(turn_from), warnings)
        from suzent_cli.capture.known import recall_set_for

        result = extract_and_write(settings, text, extractor_name=extractor, known_facts=recall_set_for(settings),
                                   day=day, time=time, session=session, warnings=warnings)
    else:
        parsed = parse_fact_args(fact or [], warnings)
        facts = [f for f, _ in parsed if f is not None]
        rejected += [f"--fact: {why}" for _, why in parsed if why]
        if facts_from:
            lines: list[str] = []
            facts += parse_fact_lines(repair_input(_read_source(facts_from), warnings), lines, warnings)
            rejected += [f"--facts-from {facts_from} {why}" for why in lines]
        result = write_facts(settings, facts, day=day, time=time, session=session, warnings=warnings)
    report = None
    if index and result.path is not None:
        report, problem = index_after_capture(settings, result.path)
        if problem:
            result.warnings.append(problem)
    _render(result, report, json_out, rejected)
    if rejected:  # the good lines are captured; the exit status says that some were not
        raise typer.Exit(errors.BAD_INPUT)


def _session(raw: str, warnings: list[str]) -> str:
    """The ``--session`` id as it will be written: bad UTF-8 replaced, control characters dropped, one line
    (:func:`suzent_cli.archive.clean_session`), with a warning when it had to be changed."""
    from suzent_cli.archive import clean_session  # light

    found: list[str] = []
    cleaned = clean_session(repair_input(raw, found))
    if found or (cleaned != raw.strip() and raw.strip()):
        from suzent_cli.guard import strip_markup  # stdlib only

        why = list(found)
        if "[redacted: " in cleaned and "[redacted: " not in raw:
            why.append("a secret redacted")
        if strip_markup(raw)[1]:
            why.append("an HTML comment or stamp cut")
        warnings.append(f"--session {cleaned!r} written instead of the given id "
                        f"({'; '.join(why) or 'folded to one line'})")
    return cleaned


def _capture_hook(settings, source: str, timeout: Optional[str], extractor: Optional[str], json_out: bool,
                  other_input: bool) -> None:
    """``--from claude-code``: the hooks package is imported only here, so plain captures stay as fast as before."""
    if source != "claude-code":
        raise InputInvalid(f"--from accepts only claude-code, got {source!r}")
    if other_input:
        raise InputInvalid("--from claude-code reads its payload on stdin: give no --fact, --facts-from or --turn-from")
    from suzent_cli.cli.hooks import capture_hook

    raise typer.Exit(capture_hook(settings, timeout=timeout, extractor=extractor, json_out=json_out))


def _outcome(fact, c, logged: bool) -> dict:
    return {"category": fact.category, "content": fact.content, "tags": list(fact.tags), "logged": logged,
            "outcome": c.outcome if c else "new", "matched": c.matched if c else None,
            "source": c.source if c else None, "locator": c.locator if c else None,
            "score": c.score if c else None, "reason": c.reason if c else "fact line: not classified"}


def _render(result, report, json_out: bool, rejected: list[str]) -> None:
    """Print what was captured (``--json``: one object); ``rejected`` fact lines go to stderr, one line each."""
    outcomes = result.outcomes or [None] * len(result.facts)
    if json_out:
        emit_json({
            "captured": len(result.facts), "confirmations": len(result.confirmations),
            "path": str(result.path) if result.path else None,
            "date": result.day.isoformat() if result.day else None, "time": result.time, "session": result.session,
            "extractor": result.extractor, "known_facts": result.known_facts,
            "facts": [_outcome(f, c, True) for f, c in zip(result.facts, outcomes, strict=False)]
                     + [_outcome(f, c, False) for f, c in result.confirmations],
            "warnings": result.warnings, "index": report.as_dict() if report else None,
            "refresh": result.refresh, "rejected": rejected,
        })
        for why in rejected:
            err.print(f"Error: {escape(why)} (not captured)", markup=True)
        return
    for w in result.warnings:
        warn(w)
    for why in rejected:
        err.print(f"Error: {escape(why)} (not captured)", markup=True)
    confirmed = result.confirmations
    if not result.facts and not confirmed:
        if not rejected:  # every line rejected: the Error lines above said it all; "nothing to capture" means exit 0
            out.print("nothing to capture")
        return
    head = (f"captured {len(result.facts)} fact(s) → {escape(str(result.path))}" if result.facts
            else "captured 0 fact(s): nothing new to log")
    if confirmed:
        head += f"; {len(confirmed)} confirmation(s) recorded (not logged)"
    out.print(head)
    for f, c in zip(result.facts, outcomes, strict=False):
        tags = f" `{' '.join(f.tags)}`" if f.tags else ""
        note = f"  (revises {escape(clip(c.matched or '', 120))})" if c and c.outcome == "revision" else ""
        out.print(f"  - \\[{escape(f.category)}] {escape(clip(f.content + tags, 400))}{note}")
    for f, c in confirmed:
        out.print(f"  = \\[{escape(f.category)}] {escape(clip(f.content, 400))}  (confirms {escape(c.source or '')}"
                  f":{c.locator}, {c.score:.2f})")
    if result.refresh and result.refresh.get("status") == "written":
        out.print("MEMORY.md refreshed (generated zone)")
    if report is not None:
        out.print(f"indexed: +{report.rows_added} rows, {report.embeddings} embeddings")
