"""Project scopes at the entry points: which project a capture or a recall is in, the projects the memory knows,
and what ``--project NAME`` names (issue 26; the rules themselves are :mod:`suzent_cli.scope`'s).

The **known projects** are derived, never stored: the distinct scopes of the index's rows (one narrow column scan)
and of the daily-log lines not indexed yet (:mod:`suzent_cli.index.pending`). So there is no registry to keep in
step, to sync between machines or to repair: a project is known once one of its facts was captured, on any machine
whose logs this home holds. The scan runs only for a short name (``--project tax-client``, ``project --list``); a
key or a directory is resolved without it.
"""

from __future__ import annotations

from pathlib import Path

from suzent_cli.config import Settings
from suzent_cli.errors import InputInvalid
from suzent_cli.scope import ALL_PROJECTS, PERSON, SCOPE_MODES, resolve_project, scopes_for, session_project


def known_projects(settings: Settings) -> dict[str, int]:
    """``{project key: facts}``: every project scope of the index's rows and of the pending daily-log lines (the
    person's scope left out), with how many rows or lines each holds. ``{}`` without an index and nothing pending.
    Raises what opening the index raises (:class:`~suzent_cli.errors.IndexIncompatible`, …)."""
    from suzent_cli.index.pending import pending_rows
    from suzent_cli.index.store import ReadStore, table_exists

    counts: dict[str, int] = {}
    store = None
    if table_exists(settings.paths.index_dir):
        store = ReadStore.open_existing(settings.paths.index_dir, home=settings.paths.home)
        counts.update(store.scope_counts())
    for row in pending_rows(settings, store).rows:
        key = row.get("scope") or PERSON
        counts[key] = counts.get(key, 0) + 1
    counts.pop(PERSON, None)
    return dict(sorted(counts.items()))


def project_key(settings: Settings, name: str, cwd: Path | str | None = None) -> str:
    """The key ``--project NAME`` (or an MCP ``project``) names (:func:`suzent_cli.scope.resolve_project`): a key
    as written, a directory, or the short name of one known project (:func:`known_projects`, scanned only then).
    Raises :class:`InputInvalid` (one line) for an unknown or ambiguous name."""
    try:
        return resolve_project(name, lambda: list(known_projects(settings)), cwd)
    except ValueError as exc:
        raise InputInvalid(str(exc)) from None


def recall_scopes(settings: Settings, *, project: str | None = None, all_projects: bool = False,
                  cwd: Path | str | None = None,
                  transcript: Path | str | None = None) -> tuple[tuple[str, ...] | None, str | None]:
    """``(scopes, current project key)`` of a recall: ``all_projects`` → ``(None, None)`` (every project);
    ``project`` NAME → the person's and that project's; else the person's and the project of ``cwd``
    (:func:`suzent_cli.scope.session_project`: a scratch folder's is the project its session's ``transcript``
    started in; the person's only outside any project). Raises :class:`InputInvalid`
    for both options at once or a name :func:`project_key` cannot resolve."""
    if all_projects and project is not None:
        raise InputInvalid("give --project NAME or --all-projects, not both")
    if all_projects or project == ALL_PROJECTS:
        return None, None
    if project is not None:
        key = project_key(settings, project, cwd)
    else:
        found = session_project(cwd, transcript)
        key = found.key if found is not None else None
    return scopes_for(key), key


def capture_scope(settings: Settings, *, project: str | None = None, global_: bool = False,
                  cwd: Path | str | None = None, warnings: list[str] | None = None,
                  transcript: Path | str | None = None) -> tuple[str | None, str]:
    """``(project key, mode)`` of a capture (:func:`suzent_cli.scope.scope_for`'s arguments): ``--global`` →
    ``(None, "global")``; ``--project NAME`` → ``(its key, "project")``; else the setting ``capture.scope``
    (``auto`` by default) and the project of ``cwd`` (None outside any; a scratch folder's: the project its
    session's ``transcript`` started in, :func:`suzent_cli.scope.session_project`). A setting that is not a mode is read as
    ``auto`` with one line in ``warnings`` (a capture is never refused over it). Raises :class:`InputInvalid` for
    both flags at once or an unknown name."""
    if global_ and project is not None:
        raise InputInvalid("give --project NAME or --global, not both")
    if global_:
        return None, "global"
    if project is not None:
        return project_key(settings, project, cwd), "project"
    raw = getattr(settings, "capture_scope", "auto")
    mode = str(raw).strip().lower() if raw is not None else "auto"
    if mode not in SCOPE_MODES:
        if warnings is not None:
            warnings.append(f"capture.scope must be one of {', '.join(SCOPE_MODES)}, got {str(raw)[:40]!r}: read as auto")
        mode = "auto"
    if mode == "global":
        return None, "global"
    found = session_project(cwd, transcript)
    return (found.key if found is not None else None), mode
