"""What ``suzent capture`` does once its options are read, without the CLI framework; and the start-up fast path
of a plain ``capture --fact`` line.

:func:`run` is the command's whole work for fact lines and turns (``--fact``, ``--facts-from``, ``--turn-from``,
``--index``, ``--json``): the typer command (:func:`suzent_cli.cli.capture.capture_cmd`) calls it, and so does
:func:`answer`. Both print through the same renderers (:mod:`suzent_cli.cli.render`), so what a capture prints
does not depend on the path it took.

:func:`answer` is the process entry point's shortcut (:func:`suzent_cli.cli.fasthook.main`) for the commonest
command line, recognised exactly (:func:`parse`)::

    suzent [--home H] [--memory-dir D] [--vault-dir D] [--index-dir D] [--now T]
           capture --fact F [--fact F …] [--session ID] [--date D] [--time T] [--json]

(options in any order, ``--opt V`` or ``--opt=V``, values taken as click takes them: the next word whatever it
is, or what follows ``=``; ``--fact`` repeatable, the others once). It skips typer, click and the command
modules (half of a capture's start-up, issue 25) and does what the typer path does, in the same order: the
streams' ``errors="replace"``, the settings resolved leniently with one ``warning: …`` line per wrong-typed
setting (:func:`lenient_settings`, the root callback's), :func:`run`, and an error ending the command worded by
:func:`suzent_cli.errors.report` with its exit code. Anything else — another option or command, ``--help``,
``--index`` (it loads the model anyway), shell completion (``_SUZENT_COMPLETE``), ``SUZENT_DEBUG`` (a
traceback is wanted) — returns None and the normal path runs. ``tests/test_capture_paths.py`` runs both paths
over the same inputs and compares stdout, stderr, exit code and the log byte for byte.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

from suzent_cli.errors import InputInvalid

COMMAND = "capture"
ROOT_OPTIONS = {"--home": "home", "--memory-dir": "memory_dir", "--vault-dir": "vault_dir",
                "--index-dir": "index_dir", "--now": "now"}  # flag -> resolve_settings keyword (app.root's)
VALUE_OPTIONS = {"--session": "session", "--date": "date", "--time": "time"}
COMPLETE_ENV = "_SUZENT_COMPLETE"  # typer's shell completion variable for prog "suzent": its own path answers it


class FactLine:
    """A recognised ``capture --fact`` command line: ``root`` (resolve_settings keywords given), ``facts`` (the
    ``--fact`` values in order), ``session`` (default ``"cli"``), ``date``, ``time`` (None: not given),
    ``json_out``. A plain class (this path avoids :mod:`dataclasses`' import cost)."""

    __slots__ = ("root", "facts", "session", "date", "time", "json_out")

    def __init__(self, root: dict[str, str], facts: list[str], session: str = "cli", date: str | None = None,
                 time: str | None = None, json_out: bool = False):
        self.root, self.facts, self.session, self.date, self.time, self.json_out = (
            root, facts, session, date, time, json_out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FactLine) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return "FactLine(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


def parse(argv: list[str]) -> FactLine | None:
    """The :class:`FactLine` of ``argv`` when it is exactly the form in the module docstring, else None.

    Values are read as click's parser reads them (``typer._click.parser``): after ``--opt=`` whatever follows the
    first ``=`` (possibly empty); after a separate ``--opt`` the next word verbatim, even one starting with ``-``.
    A word that is none of the listed options (``--``, ``-h``, ``--index``, a positional) means None."""
    root: dict[str, str] = {}
    values: dict[str, str] = {}
    facts: list[str] = []
    json_out = False
    command = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not command and arg == COMMAND:
            command, i = True, i + 1
            continue
        if arg[:1] != "-" or len(arg) < 2 or arg == "--":
            return None  # a positional, another command, or the end of options: click's business
        name, eq, value = arg.partition("=")
        if command and name == "--json":
            if eq or json_out:
                return None
            json_out, i = True, i + 1
            continue
        allowed = VALUE_OPTIONS if command else ROOT_OPTIONS
        if not (name in allowed or (command and name == "--fact")):
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None  # click: "requires an argument"
            value, i = argv[i + 1], i + 1
        i += 1
        if name == "--fact":
            facts.append(value)
            continue
        seen = values if command else root
        key = allowed[name]
        if key in seen:
            return None  # click keeps the last; left to it
        seen[key] = value
    if not command or not facts:
        return None
    return FactLine(root, facts, values.get("session", "cli"), values.get("date"), values.get("time"), json_out)


def answer(argv: list[str]) -> int | None:
    """Run ``suzent ARGV`` here when it is a plain ``capture --fact`` line (:func:`parse`): the exit code, exactly
    as the typer path returns it (0; 2 when a fact line was refused or an input is bad; a
    :class:`~suzent_cli.errors.SuzentError`'s own code; 1 for an OS error, or a closed stdout as click reports
    it; 130 on Ctrl-C, as typer maps it). None: not such a line, or one the normal path must answer."""
    line = parse(argv)
    if line is None or os.environ.get(COMPLETE_ENV) or os.environ.get("SUZENT_DEBUG"):
        return None
    from suzent_cli import errors
    from suzent_cli.cli.fasthook import _plain_output

    _plain_output()
    try:
        settings = lenient_settings(**line.root)
        return run(settings, fact=line.facts, session=line.session, date=line.date, time=line.time,
                   json_out=line.json_out)
    except KeyboardInterrupt:
        return errors.INTERRUPTED  # typer: Exit(130), nothing printed
    except errors.SuzentError as exc:
        return _report(exc)
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # click: a reader that went away is a quiet exit 1
            from typer._click.utils import PacifyFlushWrapper

            sys.stdout, sys.stderr = PacifyFlushWrapper(sys.stdout), PacifyFlushWrapper(sys.stderr)
            return errors.FAILED
        return _report(exc)


def _report(exc: BaseException) -> int:
    from suzent_cli import errors

    message, code = errors.report(exc)
    print(message, file=sys.stderr)
    return code


def lenient_settings(**root: str | None):
    """The :class:`~suzent_cli.config.Settings` a ``capture`` (or ``config``) runs with: ``root`` (the root
    options, as :func:`suzent_cli.config.resolve_settings` keywords) resolved leniently, then one
    ``warning: <message>`` line on stderr per setting a capture does not need that holds a wrong-typed value
    (``config_errors``: capture never loses a fact over another stage's setting). Raises
    :class:`~suzent_cli.errors.ConfigInvalid` for a bad path or clock."""
    from suzent_cli.config import resolve_settings

    settings = resolve_settings(**root, lenient=True)
    warn_config(settings)
    return settings


def warn_config(settings) -> None:
    """One ``warning: <message>`` line on stderr per entry of ``settings.config_errors`` (the wrong-typed settings
    a lenient resolution set aside: ``capture`` and ``config`` run on)."""
    for message in settings.config_errors:
        print(f"warning: {message}", file=sys.stderr)


def read_source(spec: str) -> bytes:
    """The bytes of ``--facts-from``/``--turn-from`` ``spec``: stdin for ``-``, else the file (a pipe too).
    Raises :class:`InputInvalid` for a directory, a missing or unreadable file."""
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


def working_dir(env=None) -> str | None:
    """The directory a capture or recall is given in, for its project (:mod:`suzent_cli.scope`): ``SUZENT_CWD``
    of ``env`` when set (a relayed command's: the client's directory, never the server's), else this process's;
    None when it has none (deleted under it)."""
    from suzent_cli.scope import CWD_ENV

    given = (env if env is not None else os.environ).get(CWD_ENV)
    if given:
        return given
    try:
        return os.getcwd()
    except OSError:
        return None


def run(settings, *, fact: list[str] | None = None, facts_from: str | None = None, turn_from: str | None = None,
        extractor: str | None = None, session: str = "cli", date: str | None = None, time: str | None = None,
        index: bool = False, json_out: bool = False, project: str | None = None, global_: bool = False,
        cwd: str | None = None) -> int:
    """``suzent capture`` with ``settings`` and its options (not ``--from``): the facts appended to the day's log
    (:func:`suzent_cli.capture.write_facts`, or extracted from a turn by
    :func:`~suzent_cli.capture.extract_and_write`), optionally reindexed, and printed (:func:`render`). Returns
    the exit code: 0, or :data:`~suzent_cli.errors.BAD_INPUT` when some fact line was refused (the good ones are
    captured; each refused one is an ``Error: … (not captured)`` line). Each fact's scope
    (:func:`suzent_cli.projects.capture_scope`: ``--global``, ``--project NAME``, else the setting
    ``capture.scope`` in the project of ``cwd``, default :func:`working_dir`) is its ``project:`` tag. Raises
    :class:`InputInvalid` for no input, both kinds of input, both scope flags, an unknown project, or a bad
    date, time or source; the write's own errors (``LockTimeout``, ``OSError``) with nothing written."""
    from suzent_cli import errors
    from suzent_cli.capture import (
        extract_and_write,
        index_after_capture,
        parse_fact_args,
        parse_fact_lines,
        repair_input,
        resolve_day,
        scoped,
        write_facts,
    )

    if turn_from and (fact or facts_from):
        raise InputInvalid("give either fact lines (--fact/--facts-from) or a turn (--turn-from), not both")
    if not (turn_from or fact or facts_from):
        raise InputInvalid("no input: give --fact, --facts-from or --turn-from")
    from suzent_cli.projects import capture_scope

    warnings: list[str] = []
    key, mode = capture_scope(settings, project=project, global_=global_,
                              cwd=cwd if cwd is not None else working_dir(), warnings=warnings)
    day = resolve_day(settings, date)
    session = session_id(session, warnings)
    rejected: list[str] = []
    if turn_from:
        text = repair_input(read_source(turn_from), warnings)
        from suzent_cli.capture.known import recall_set_for

        result = extract_and_write(settings, text, extractor_name=extractor,
                                   known_facts=recall_set_for(settings, project_key=key), day=day, time=time,
                                   session=session, warnings=warnings, project_key=key, scope_mode=mode)
    else:
        parsed = parse_fact_args(fact or [], warnings)
        facts = [f for f, _ in parsed if f is not None]
        rejected += [f"--fact: {why}" for _, why in parsed if why]
        if facts_from:
            lines: list[str] = []
            facts += parse_fact_lines(repair_input(read_source(facts_from), warnings), lines, warnings)
            rejected += [f"--facts-from {facts_from} {why}" for why in lines]
        result = write_facts(settings, scoped(facts, key, mode), day=day, time=time, session=session,
                             warnings=warnings)
    from suzent_cli.capture import forgotten_flags

    hidden = forgotten_flags(settings, [f.content for f in result.facts], result.warnings)
    report = None
    if index and result.path is not None:
        report, problem = index_after_capture(settings, result.path)
        if problem:
            result.warnings.append(problem)
    render(result, report, json_out, rejected, hidden)
    return errors.BAD_INPUT if rejected else errors.OK  # the good lines are captured; the status says some were not


def session_id(raw: str, warnings: list[str]) -> str:
    """The ``--session`` id as it will be written: bad UTF-8 replaced, control characters dropped, one line
    (:func:`suzent_cli.archive.clean_session`), with a warning when it had to be changed."""
    from suzent_cli.archive import clean_session  # light
    from suzent_cli.capture import repair_input

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


def _outcome(fact, c, logged: bool, hidden: bool = False) -> dict:
    out = {"category": fact.category, "content": fact.content, "tags": list(fact.tags), "logged": logged,
           "outcome": c.outcome if c else "new", "matched": c.matched if c else None,
           "source": c.source if c else None, "locator": c.locator if c else None,
           "score": c.score if c else None, "reason": c.reason if c else "fact line: not classified"}
    if hidden:  # the same words were forgotten: logged, never recalled (capture.forgotten_flags)
        from suzent_cli.capture import HIDDEN_REASON

        out["hidden"] = "forgotten"
        out["reason"] = f"{out['reason']}; {HIDDEN_REASON}"
    return out


def render(result, report, json_out: bool, rejected: list[str], hidden: list[bool] | None = None) -> None:
    """Print what was captured (``--json``: one object); ``rejected`` fact lines go to stderr, one line each
    (:func:`suzent_cli.cli.plain.emit`: through rich, or the same bytes without it); ``hidden[i]``: the i-th
    captured fact's words were forgotten (shown on its line, ``"hidden": "forgotten"`` in JSON)."""
    hidden = hidden or [False] * len(result.facts)
    from suzent_cli.cli.plain import Line, Raw, clip, emit, emit_json

    errors = [Line("err", "Error: ", Raw(why), " (not captured)") for why in rejected]
    outcomes = result.outcomes or [None] * len(result.facts)
    if json_out:
        emit_json({
            "captured": len(result.facts), "confirmations": len(result.confirmations),
            "path": str(result.path) if result.path else None,
            "date": result.day.isoformat() if result.day else None, "time": result.time, "session": result.session,
            "extractor": result.extractor, "known_facts": result.known_facts,
            "facts": [_outcome(f, c, True, h) for f, c, h in zip(result.facts, outcomes, hidden, strict=False)]
                     + [_outcome(f, c, False) for f, c in result.confirmations],
            "warnings": result.warnings, "index": report.as_dict() if report else None,
            "refresh": result.refresh, "rejected": rejected,
        })
        emit(errors)
        return
    lines = [Line("err", Raw(w), warning=True) for w in result.warnings] + errors
    confirmed = result.confirmations
    if not result.facts and not confirmed:
        if not rejected:  # every line rejected: the Error lines above said it all; "nothing to capture" means exit 0
            lines.append(Line("out", "nothing to capture"))
        emit(lines)
        return
    head = ([f"captured {len(result.facts)} fact(s) → ", Raw(str(result.path))] if result.facts
            else ["captured 0 fact(s): nothing new to log"])
    if confirmed:
        head.append(f"; {len(confirmed)} confirmation(s) recorded (not logged)")
    lines.append(Line("out", *head))
    for f, c, h in zip(result.facts, outcomes, hidden, strict=False):
        tags = f" `{' '.join(f.tags)}`" if f.tags else ""
        note = ("  (revises ", Raw(clip(c.matched or "", 120)), ")") if c and c.outcome == "revision" else ()
        if h:
            note = (*note, "  (hidden: these words were forgotten; recall never shows them)")
        lines.append(Line("out", "  - \\[", Raw(f.category), "] ", Raw(clip(f.content + tags, 400)), *note))
    for f, c in confirmed:
        lines.append(Line("out", "  = \\[", Raw(f.category), "] ", Raw(clip(f.content, 400)), "  (confirms ",
                          Raw(c.source or ""), f":{c.locator}, {c.score:.2f})"))
    if result.refresh and result.refresh.get("status") == "written":
        lines.append(Line("out", "MEMORY.md refreshed (generated zone)"))
    if report is not None:
        lines.append(Line("out", f"indexed: +{report.rows_added} rows, {report.embeddings} embeddings"))
    emit(lines)
