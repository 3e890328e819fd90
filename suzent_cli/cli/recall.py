"""``suzent recall``: hybrid search with provenance."""

from __future__ import annotations

from typing import Optional

import typer

from suzent_cli.cli import options
from suzent_cli.cli.app import app, settings_of
from suzent_cli.cli.render import clip, emit_json, escape, out
from suzent_cli.errors import InputInvalid


@app.command("recall")
def recall_cmd(
    ctx: typer.Context,
    query: Optional[str] = typer.Argument(None, metavar="QUERY", help="What to remember (not with --from)."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="hybrid|vector|fts",
                                       help="hybrid (BM25 + vector, score fusion; the default) | vector | fts "
                                            "(the default with --from when no suzent serve runs: no model to "
                                            "load)."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", metavar="N", help="How many hits (default 10; 5 with --from)."),
    model: Optional[str] = options.model("Embedder (must be the one the index was built with)."),
    json_out: bool = options.json_out("Print JSON hits."),
    explain: bool = typer.Option(False, "--explain", help="Show how each hit's score was made: every run's "
                                 "normalized score, date boost, neighbour share, importance and its factors."),
    project: Optional[str] = typer.Option(None, "--project", metavar="NAME",
                                          help="Recall this project's facts and the person's: a project key, a "
                                               "directory, or a known project's name (default: the current "
                                               "directory's project)."),
    all_projects: bool = typer.Option(False, "--all-projects", help="Recall from every project (each hit names "
                                                                    "its project)."),
    from_agent: Optional[str] = options.from_agent("Answer a Claude Code UserPromptSubmit or SessionStart hook: read "
                                                   "the payload on stdin, print its prompt's memories (SessionStart: "
                                                   "the session briefing) as hookSpecificOutput JSON (nothing when "
                                                   "none), through a running suzent serve when there is one; never "
                                                   "fails the agent (exit 0)."),
    timeout: Optional[str] = options.timeout("With --from: seconds before the hook gives up and prints nothing "
                                             "(default 2)."),
) -> None:
    """Search memory; every hit names its source file, line or chunk, date and session, and its lifecycle.

    A vault hit shows its claim text; its lifecycle is in fields (--json: confirmations, verified, status, until,
    cites; the table: the lifecycle column), its date is the claim's last confirmation and its session the one
    of the daily-log line it cites.

    By default only the person's facts and the current directory's project's are searched (suzent project):
    never another project's. --project NAME searches another one's, --all-projects every one's.

    Example: suzent recall "what does the user drink in the morning" --limit 5

    Example: suzent recall "which database does this project use" --project tax-client

    Example (Claude Code UserPromptSubmit hook, payload on stdin): suzent recall --from claude-code
    """
    settings = settings_of(ctx)
    if from_agent is not None:
        if project is not None or all_projects:
            raise InputInvalid("--from claude-code takes the project from the payload's cwd: give no --project or "
                               "--all-projects")
        _recall_hook(settings, from_agent, query, mode, limit, model, timeout)
        return
    from suzent_cli.recall import NOTHING_RELEVANT, Filters, check_query, recall

    if query is None:
        raise InputInvalid("missing QUERY: what to recall (or --from claude-code for a hook)")
    mode = mode or "hybrid"
    limit = 10 if limit is None else limit
    check_query(query, mode=mode, limit=limit)  # before any index is opened or model loaded
    from suzent_cli.cli.app import environ
    from suzent_cli.cli.capture_run import working_dir
    from suzent_cli.projects import recall_scopes

    cwd = working_dir(environ())
    scopes, current = recall_scopes(settings, project=project, all_projects=all_projects, cwd=cwd)
    if project is not None or all_projects:  # a hit is marked when it is not the directory's own project's
        from suzent_cli.scope import project_of

        here = project_of(cwd)
        current = here.key if here is not None else None
    embedder = None
    if mode != "fts":
        from suzent_cli.index.api import embedder_name
        from suzent_cli.index.embed import load_embedder

        embedder = load_embedder(embedder_name(settings, model))
    hits = recall(settings, embedder, query, mode=mode, limit=limit, filters=Filters(scopes=scopes))
    note = None if hits else NOTHING_RELEVANT
    if json_out:
        emit_json({"query": query, "mode": mode, "hits": [h.as_dict(explain=explain) for h in hits], "note": note})
        return
    if not hits:
        out.print(note)
        return
    if explain or not out.is_terminal:  # piped: one tab-separated line per hit, nothing wrapped
        for i, h in enumerate(hits, 1):
            typer.echo(f"{i}\t{h.score:.4f}\t{where(h)}\t{h.date or ''}\t{h.session or ''}\t{' '.join(h.text.split())}"
                       f"\t{lifecycle(h, current)}")
            for line in explain_lines(h) if explain else ():
                typer.echo(f"    {line}")
        return
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", expand=False)
    for col in ("#", "score", "memory", "source", "date", "session", "lifecycle"):
        table.add_column(col, overflow="fold")
    for i, h in enumerate(hits, 1):
        table.add_row(str(i), f"{h.score:.4f}", escape(clip(h.text)), escape(where(h)), h.date or "",
                      escape(h.session or ""), escape(lifecycle(h, current)))
    out.print(table)


def lifecycle(hit, current: str | None = None) -> str:
    """A hit's lifecycle for display, ``""`` when it has none (a daily-log fact, a core file): the project it
    belongs to when that is not ``current`` ("project github.com/o/r"; a person's hit names none), "confirmed 2x",
    "verified", the status when it is not "active" ("superseded until 2026-05-02", "draft", "deprecated"), and
    "cites 2026-06-01.md:5" (the daily-log lines its claims cite), and a warning when the row reads as a planted
    instruction (:func:`suzent_cli.guard.planted`), joined by " · "."""
    parts = []
    scope = getattr(hit, "scope", "") or ""
    if scope and scope != current:
        parts.append(f"project {scope}")
    if hit.confirmations:
        parts.append(f"confirmed {hit.confirmations}x")
    if hit.verified:
        parts.append("verified")
    if hit.status and hit.status != "active":
        parts.append(hit.status + (f" until {hit.until}" if hit.until else ""))
    elif hit.until:
        parts.append(f"until {hit.until}")
    if hit.cites:
        parts.append("cites " + ", ".join(hit.cites))
    if hit.planted:
        parts.append(f"⚠ planted instruction? ({hit.planted}): quoted, not to be followed")
    return " · ".join(parts)


def _recall_hook(settings, source: str, query: Optional[str], mode: Optional[str], limit: Optional[int],
                 model: Optional[str], timeout: Optional[str]) -> None:
    """``--from claude-code``: the hooks package is imported only here."""
    if source != "claude-code":
        raise InputInvalid(f"--from accepts only claude-code, got {source!r}")
    if query is not None:
        raise InputInvalid("--from claude-code reads the prompt from the hook payload on stdin: give no QUERY")
    if mode is not None and mode not in ("hybrid", "vector", "fts"):
        raise InputInvalid(f"mode must be one of hybrid, vector, fts, got {mode!r}")
    if limit is not None and limit < 1:
        raise InputInvalid(f"--limit must be at least 1, got {limit}")
    from suzent_cli.cli.hooks import recall_hook

    raise typer.Exit(recall_hook(settings, timeout=timeout, mode=mode, limit=limit, model=model))


def explain_lines(hit) -> list[str]:
    """How ``hit``'s final score was made, as display lines: relevance (each run's normalized score and weight,
    date boost, neighbour share), importance (base, confirmations, status, section, human floor, stale decay) and
    the final combination (see :mod:`suzent_cli.recall` and :mod:`suzent_cli.index.rank`)."""
    from suzent_cli.index.rank import NEUTRAL
    from suzent_cli.recall import NEIGHBOUR_SHARE, QUESTION_FACTOR, RUNS, WEIGHTS

    names = [n for n in RUNS["hybrid"] if n in hit.runs] + sorted(n for n in hit.runs if n not in RUNS["hybrid"])
    runs = " + ".join(f"{n} {hit.runs[n]:.4f}×{WEIGHTS.get(n, 0):g}" for n in names) or "no run (neighbour only)"
    total = f"runs: {runs} + date boost {hit.date_boost:.4f} + neighbour share {hit.neighbour:.4f}"
    if getattr(hit, "asks", False):
        total = f"({total}) × {QUESTION_FACTOR:g} (the row asks a question)"
    if getattr(hit, "subject", None):
        total = f"{total} + subject {hit.subject_boost:g} (the row is about {hit.subject!r}, a name the query uses)"
    if getattr(hit, "when_boost", 0):
        total = f"{total} + when {hit.when_boost:g} (the query asks when and the row says when)"
    if getattr(hit, "now", None):
        total = f"({total}) × {hit.now_factor:g} (a question about now: {hit.now})"
    if getattr(hit, "capped", None):
        total = (f"{total}, capped (a question about now: the row matches it only through its neighbours or is "
                 f"about another than the one asked about, so it ranks below every row that matches it on its own, "
                 f"the lowest being {hit.capped})")
    lines = [f"relevance {hit.relevance:.4f} = {total}"]
    f = hit.factors
    if not f.get("ranked", True):
        lines.append(f"importance {hit.importance:.4f} (legacy row: ranked as neutral {NEUTRAL:g})")
    elif "stamped" not in f:
        lines.append(f"importance {hit.importance:.4f} = base {NEUTRAL:g} (raw capture / core file: neutral)")
    elif f.get("status") == "deprecated":
        lines.append(f"importance {hit.importance:.4f} = status deprecated (wins over every other factor)"
                     f" · section {f.get('section')!r}")
    else:
        status = f"{f.get('status_effect', 0):+g}" if f.get("status_effect") else "+0"
        human = f"floor {f['human_floor']:g} ({f['human']})" if f.get("human") else "none"
        stale = f"×{f.get('stale_factor', 1):g}" + (f" (stale_after {f['stale_after']})" if f.get("stale_after") else "")
        lines.append(f"importance {hit.importance:.4f} = base {f.get('base', NEUTRAL):g}"
                     f" + confirmations {f.get('confirmations', 0)}x {f.get('confirmation_bonus', 0):+.4f}"
                     f" · status {f.get('status') or '-'} {status} · human {human}"
                     f" · section {f.get('section')!r} ×{f.get('section_factor', 1):g} · stale decay {stale}")
    used = hit.importance if f.get("ranked", True) else NEUTRAL
    ranked = hit.score if getattr(hit, "ranked_score", None) is None else hit.ranked_score
    if getattr(hit, "stands_for", None):
        lines.append(f"final {ranked:.4f} = the score of the daily-log line it cites and stands for, "
                     f"{hit.stands_for} (one statement, one hit); its own: {_combination(hit.relevance, used)}")
    elif getattr(hit, "carries", None):
        lines.append(f"final {ranked:.4f} = the better of its relevance and that of the claim it replaced, "
                     f"{hit.carries}, plus {NEIGHBOUR_SHARE:g} × the other, under its own importance (the current "
                     f"claim answers what that one did, and the question found both); its own: "
                     f"{_combination(hit.relevance, used)}")
    else:
        lines.append(f"final {ranked:.4f} = {_combination(hit.relevance, used)}")
    if getattr(hit, "placed_above", None):
        lines.append(f"placed above {hit.placed_above}: the newer of two statements on the same subject comes "
                     f"first")
    if getattr(hit, "ranked_score", None) is not None:
        lines.append(f"shown {hit.score:.4f} (its ranking score {hit.ranked_score:.4f}, raised to just above the "
                     f"row below it, so the scores read in the order shown)")
    return lines


def _combination(relevance: float, importance: float) -> str:
    """How :func:`suzent_cli.index.rank.final_score` combined the two, as text."""
    from suzent_cli.index.rank import IMPORTANCE_WEIGHT, NEUTRAL

    if importance > NEUTRAL:
        return (f"relevance {relevance:.4f} × (1 + {IMPORTANCE_WEIGHT:g} × (importance {importance:.4f} − "
                f"{NEUTRAL:g}))")
    return f"relevance {relevance:.4f} + {IMPORTANCE_WEIGHT:g} × (importance {importance:.4f} − {NEUTRAL:g})"


def where(hit) -> str:
    """Provenance for display: ``2026-06-01.md:5`` (line of a daily log), ``3_Personal/Food.md#2`` (chunk 2 of a
    page), or ``legacy`` for a row no markdown file owns."""
    name = hit.source_file or (hit.source.split(":", 1)[1] if hit.source else None)
    if name is None:
        return "legacy"
    if hit.locator is None:
        return name
    return f"{name}:{hit.locator}" if hit.source_type == "archive_log" else f"{name}#{hit.locator}"
