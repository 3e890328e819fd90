"""``suzent forget``: make a fact disappear everywhere a person could see it again (a tombstone, the only removal
mechanism, with its reindex)."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import clip, emit_json, escape, out, warn


@app.command("forget")
def forget_cmd(
    ctx: typer.Context,
    text: Optional[str] = typer.Argument(None, metavar="[TEXT]", help="The fact's exact text (case and spacing aside)."),
    row_id: Optional[str] = typer.Option(None, "--id", metavar="ROW_ID", help="Forget the text of this index row (from recall --json)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would disappear; change nothing."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Make a fact disappear everywhere a person could see it again.

    A tombstone for its text, its vault claims (and claims containing it) removed, MEMORY.md's generated lines holding it removed, its recall-log entries
    dropped, and a reindex of every file holding it. The daily logs keep the line (append-only, hidden from
    recall); a line in MEMORY.md's manual zone is named, never edited. Waits for a running dream (exit 3 if it
    does not finish within lock_timeout). The same words captured later stay hidden. A TEXT that matches no
    whole fact lists the closest rows (score, source, row id, text) and exits 1: pick one with --id.

    Example: suzent forget "Lives in Berlin" --dry-run
    """
    from suzent_cli.errors import InputInvalid
    from suzent_cli.forget import NoExactMatch, forget, plan_forget, text_of_row

    settings = settings_of(ctx)
    if (text is None) == (row_id is None):
        raise InputInvalid("give either TEXT or --id ROW_ID")
    try:
        plan = plan_forget(settings, text if text is not None else text_of_row(settings, row_id))
    except NoExactMatch as exc:  # the closest rows on stdout, then the one `Error:` line; exit 1
        if json_out:
            emit_json(exc.to_json())
        for c in [] if json_out else exc.closest:
            more = f" (+{c.copies - 1} more)" if c.copies > 1 else ""
            out.print(escape(f"  {c.score:3d}%  {c.source} {c.where}{more}  id {c.id}: {clip(c.content, 160)}"))
        raise
    report = forget(settings, plan, dry_run=dry_run)
    if json_out:
        emit_json(report.to_json())
        return
    for m in plan.matches:
        out.print(escape(f"  {m.source} {m.where}: {m.content}"))
    for c in plan.claims:
        kept = f" -> kept as: {c['now'].strip()}" if c.get("now") else ""
        out.print(escape(f"  vault claim {c['page']} ## {c['section']}: {c['line'].strip()}{kept}"))
    for m in plan.memory_generated:
        out.print(escape(f"  MEMORY.md line {m['line']} (generated zone): {m['text'].strip()}"))
    for m in plan.memory_manual:
        out.print(escape(f"  MEMORY.md line {m['line']} (your part, below the marker; not edited): {m['text'].strip()}"))
    for name in plan.mentions:
        out.print(escape(f"  {name}: a longer line holds it (hidden from recall; the text stays on the page)"))
    if plan.recall_log:
        out.print(escape(f"  recall log: {plan.recall_log} entr{'y' if plan.recall_log == 1 else 'ies'}"))
    held = f"{len(plan.matches)} fact(s) or chunk(s) in {len({m.path for m in plan.matches})} file(s) hold this text"
    in_index = (f"{report.rows_indexed} of them in the search index" if report.index_built else "no index yet")
    rewritten = sum(1 for c in plan.claims if c.get("now"))
    places = (f"{len(plan.claims) - rewritten} vault claim(s), {len(plan.memory_generated)} generated MEMORY.md "
              "line(s)" + (f" and the old value from {rewritten} current claim(s)" if rewritten else ""))
    if dry_run:
        out.print(escape(f"{held}; {in_index}; would remove {places}; nothing changed (--dry-run)"))
    else:
        state = "tombstone recorded" if report.tombstone_added else "it was already forgotten"
        out.print(escape(f"forgotten: {held}; {state}; {report.rows_indexed} index row(s) removed"
                         + ("" if report.index_built else " (no index yet)")
                         + f"; {report.claims_removed} vault claim(s) and "
                         f"{len(plan.memory_generated)} generated MEMORY.md line(s) removed"
                         + (f"; {report.claims_rewritten} current claim(s) kept without the old value"
                            if report.claims_rewritten else "")
                         + (f"; {report.recall_log_purged} recall-log line(s) dropped" if report.recall_log_purged else "")))
    if any(m.source.startswith("archive:") for m in plan.matches):
        out.print("the daily logs keep the line (append-only history); recall no longer shows it")
    for message in report.warnings:
        warn(message)
