"""``suzent capture``: append facts (given, or extracted from a turn) to today's daily log.

The options are declared here; the work is :func:`suzent_cli.cli.capture_run.run`, which the start-up fast path
of a plain ``capture --fact`` line calls too (:func:`suzent_cli.cli.capture_run.answer`)."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, environ, settings_of
from suzent_cli.cli.capture_run import run, working_dir
from suzent_cli.errors import InputInvalid


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
    project: Optional[str] = typer.Option(None, "--project", metavar="NAME",
                                          help="Record every fact as this project's: a project key "
                                               "(github.com/o/r), a directory, or a known project's name "
                                               "(suzent project --list). Default: the setting capture.scope in "
                                               "the current directory's project."),
    global_: bool = typer.Option(False, "--global", help="Record every fact as the person's (recalled in every "
                                                         "project), whatever its category."),
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

    Each fact is the person's or a project's (docs/FORMAT.md, the `project:` tag): by default a personal,
    preference, goal or interaction fact is the person's, recalled in every project, and any other belongs to the
    current directory's project (suzent project); --global and --project NAME decide for every fact.

    Example: suzent capture --fact "[preference] Prefers compact dashboards `ui`"

    Example: suzent capture --fact "[technical] Uses Postgres 16 on Hetzner" --project github.com/acme/billing

    Example (Claude Code Stop hook, payload on stdin): suzent capture --from claude-code
    """
    settings = settings_of(ctx)
    if from_agent is not None:
        _capture_hook(settings, from_agent, timeout, extractor, json_out, bool(fact or facts_from or turn_from))
        return
    code = run(settings, fact=fact, facts_from=facts_from, turn_from=turn_from, extractor=extractor, session=session,
               date=date, time=time, index=index, json_out=json_out, project=project, global_=global_,
               cwd=working_dir(environ()))
    if code:  # some fact lines were refused (the good ones are captured)
        raise typer.Exit(code)


def _capture_hook(settings, source: str, timeout: Optional[str], extractor: Optional[str], json_out: bool,
                  other_input: bool) -> None:
    """``--from claude-code``: the hooks package is imported only here, so plain captures stay as fast as before."""
    if source != "claude-code":
        raise InputInvalid(f"--from accepts only claude-code, got {source!r}")
    if other_input:
        raise InputInvalid("--from claude-code reads its payload on stdin: give no --fact, --facts-from or --turn-from")
    from suzent_cli.cli.hooks import capture_hook

    raise typer.Exit(capture_hook(settings, timeout=timeout, extractor=extractor, json_out=json_out))
