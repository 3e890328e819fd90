"""``suzent verify``: prove the home's invariants (``--repair`` the safe ones); and ``suzent verify-fact``: a person's
verification of a fact, stamped into MEMORY.md's manual zone."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import emit_json, escape, out


@app.command("verify")
def verify_cmd(
    ctx: typer.Context,
    repair: bool = typer.Option(False, "--repair", help="Do what is safe (a reindex of stale, missing or unbacked "
                                "rows; private file modes), verify again, and name what needs a person."),
    reseal: Optional[list[str]] = typer.Option(None, "--reseal", metavar="YYYY-MM-DD.md",
                                               help="After inspecting a daily log verify reported as rewritten: "
                                                    "record it as it is now (repeatable). Run it yourself."),
    json_out: bool = options.json_out('Print {"ok", "checks": {name: {"ok", "checked", "violations"}}, "repaired", '
                                      '"needs_person"}.'),
) -> None:
    """Prove the home's invariants, as git fsck does: every index row is backed by a line or chunk that exists now;
    every live fact line is indexed; no tombstoned text is recallable; no daily log was rewritten since it was
    indexed (each log's sealed length and sha256); every vault claim's source exists; the watermark, state files,
    locks, index files and file modes are sane. One line per violation (`<check>: <where>: <what>`) and exit 7 when
    any fails, else 0. --repair never touches a log or a page.

    Example: suzent verify --repair
    """
    from suzent_cli import errors
    from suzent_cli import verify as stage

    settings = settings_of(ctx)
    resealed = stage.reseal(settings, list(reseal)) if reseal else []
    report = stage.verify(settings)
    report = stage.repair(settings, report) if repair and not report.ok else stage.needs_person(settings, report)
    if resealed:
        report.repaired.insert(0, "resealed " + ", ".join(resealed))
    if json_out:
        emit_json(report.to_json())
    else:
        for line in report.violations:
            out.print(escape(line), soft_wrap=True)
        for line in report.repaired:
            out.print(escape(f"repaired: {line}"), soft_wrap=True)
        for line in report.needs_person:
            out.print(escape(f"needs a person: {line}"), soft_wrap=True)
        for check in report.checks.values():
            for note in check.notes:
                out.print(escape(f"note: {check.name}: {note}"), soft_wrap=True)
        counts = ", ".join(f"{c.name} {c.checked}" for c in report.checks.values())
        verdict = "ok" if report.ok else f"{len(report.violations)} violation(s)"
        out.print(escape(f"{verdict} ({counts}) in {report.seconds:.2f}s"), soft_wrap=True)
    if not report.ok:
        raise typer.Exit(errors.VIOLATED)


@app.command("verify-fact")
def verify_fact_cmd(
    ctx: typer.Context,
    text: str = typer.Argument(..., metavar="TEXT", help="The fact, one line."),
    by: str = typer.Option(..., "--by", metavar="NAME", help="Who verified it: a person's plain name "
                           "(letters, digits, '.', '_', '-'); names starting with 'agent' are refused."),
    json_out: bool = options.json_out("Print a JSON summary."),
) -> None:
    """Record that a person verified a fact: appends `- TEXT <!-- verified: human:NAME@DATE -->` below the
    <!-- /memory:generated --> marker of MEMORY.md (the manual zone; the generated part is never touched).

    A human verification is the strongest evidence class: recall ranks the line at the 0.9 importance floor and
    never decays it as stale. It must be run by that person, never by an agent on their behalf.

    Example: suzent verify-fact "Drinks oolong tea every morning" --by ana
    """
    from suzent_cli.vault.memory_md import memory_path, verify_fact

    settings = settings_of(ctx)
    line = verify_fact(settings, text, by, day=settings.today)
    path = memory_path(settings)
    if json_out:
        emit_json({"path": str(path), "line": line, "by": by, "date": settings.today.isoformat()})
    else:
        out.print(escape(f"stamped in {path}: {line}"))
