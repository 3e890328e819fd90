"""The ``suzent`` root: global options, settings resolved once, and the one place errors become messages."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import typer

from suzent_cli import __version__, errors
from suzent_cli.config import OLD_NAMES, Settings, resolve_home, resolve_settings, setting
from suzent_cli.errors import SuzentError
from suzent_cli.privacy import private_umask

app = typer.Typer(
    name="suzent",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# The environment a command line is run under: this process's, or a relayed request's (suzent_cli.cli.relayed: the
# client's, so settings resolve as they would in the client's own process).
_request_env: ContextVar[Mapping[str, str] | None] = ContextVar("suzent_request_env", default=None)


def environ() -> Mapping[str, str]:
    """The environment the current command resolves its settings from: ``os.environ``, or inside
    :func:`request_environ` the relayed request's."""
    env = _request_env.get()
    return os.environ if env is None else env


@contextmanager
def request_environ(env: Mapping[str, str]) -> Iterator[None]:
    """Inside, in this context, :func:`environ` is ``env`` (a relayed command's client environment)."""
    token = _request_env.set(env)
    try:
        yield
    finally:
        _request_env.reset(token)


def settings_of(ctx: typer.Context) -> Settings:
    """The :class:`Settings` resolved by the root callback (flags of subcommands override through ``replace``)."""
    return ctx.find_root().obj


def _version(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:  # not when main() only parses a command line (_hook_of)
        typer.echo(f"suzent {__version__}")
        raise typer.Exit()


def _root_help(key: str) -> str:
    """A root option's help, from its row of the settings table: its doc, variables and (for the home) default."""
    row = setting(key)
    default = f"; default {row.default}" if key == "home" else ""
    return f"{row.doc.rstrip('.')} [env {', '.join(row.env)}{default}]."


# The root options are the rows of the settings table that have a root flag (tests/test_config.py checks both ways).
@app.callback()
def root(
    ctx: typer.Context,
    home: str = typer.Option(None, "--home", metavar="DIR", help=_root_help("home")),
    memory_dir: str = typer.Option(None, "--memory-dir", metavar="DIR", help=_root_help("paths.memory_dir")),
    vault_dir: str = typer.Option(None, "--vault-dir", metavar="DIR", help=_root_help("paths.vault_dir")),
    index_dir: str = typer.Option(None, "--index-dir", metavar="DIR", help=_root_help("paths.index_dir")),
    now: str = typer.Option(None, "--now", metavar="TIME", help=_root_help("now")),
    today: str = typer.Option(None, OLD_NAMES["now"][2], metavar="YYYY-MM-DD", hidden=True,
                              help="Old name of --now (a date only)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Long-term memory for AI agents: capture buffer → markdown vault → LanceDB search index.

    Example: suzent --home /tmp/mem capture --fact "[preference] Prefers tea"
    """
    # A wrong-typed setting capture does not need only warns; config show lists the problem; status shows the home
    # with the warning; serve refuses it itself, but `serve stop` must stop a server whatever the file says.
    lenient = ctx.invoked_subcommand in LENIENT
    ctx.obj = resolve_settings(home=home, memory_dir=memory_dir, vault_dir=vault_dir, index_dir=index_dir, now=now,
                               today=today, lenient=lenient, env=environ())
    if ctx.obj.config_errors:
        if not lenient:
            from suzent_cli.errors import ConfigInvalid

            raise ConfigInvalid(ctx.obj.config_errors[0])
        from suzent_cli.cli.capture_run import warn_config  # capture never loses a fact over another stage's setting

        if ctx.invoked_subcommand != "serve":  # serve refuses the file, or (stop) warns itself
            warn_config(ctx.obj)


LENIENT = ("capture", "config", "status", "serve")  # the commands a broken config.toml only warns (see root)


def _plain_coercion() -> None:
    """Keep pydantic out of every run: without this, pydantic is about a third of a ``suzent capture --fact``.

    typer ≥ 0.2x coerces each option value through a pydantic ``TypeAdapter``, built on first use, so merely
    parsing ``--home`` imports pydantic. Our options are plain ``str``/``bool``/``list[str]``, whose values click
    already hands over as exactly that: those get a pass-through coercion; any other annotation or value goes to
    typer's own. A no-op when typer's internals are not the ones this was written against.

    Why it stays (issue 14, decided on evidence): ``benchmarks/capture_speed.py`` times the same CLI with this
    patch undone, interleaved with it in one run; undone, a capture process costs 1.4–1.6× the wall time and
    about 1.5× the CPU (0.29 → 0.42–0.46 s CPU on the loaded machine), the same as the pre-fix chain that measured
    0.232 s median (p90 0.288 s) on a quiet one: no margin left under the 0.25 s budget of ``capture --fact``
    (BENCHMARKS.md, capture speed). It reaches into typer internals, hence the ``typer<0.30`` pin in
    pyproject.toml and ``tests/test_typer_coercion.py``, which fails when an installed typer no longer lets it
    engage.
    """
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer.core import _TyperParameter
    except ImportError:
        return
    original = getattr(_TyperParameter, "get_runtime_param", None)
    if original is None or not hasattr(RuntimeParam, "_coerce_value"):
        return
    plain = (str, bool, list[str], list[str])

    class _Plain(RuntimeParam):
        def _coerce_value(self, value, param, ctx):
            if self.annotation is str or self.annotation is bool:
                if isinstance(value, self.annotation):
                    return value
            elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return list(value)
            return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self):
        desc = getattr(self, "type_descriptor", None)
        if (getattr(self, "_runtime_param", None) is None and desc is not None and desc.annotation in plain
                and getattr(desc, "file_annotation", None) is None and getattr(desc.parameter_info, "parser", None) is None):
            self._runtime_param = _Plain(parameter_info=desc.parameter_info, annotation=desc.annotation)
        return original(self)

    _TyperParameter.get_runtime_param = get_runtime_param


_plain_coercion()


# One module per command (or command group); importing one adds its commands to `app`. The order is the order
# `suzent --help` lists them in.
COMMAND_MODULES = ("capture", "dream", "lint", "status", "dryrun", "index", "init", "paths", "legacy", "promote",
                   "recall", "reconcile", "forget", "run", "loop", "serve", "mcp", "verify", "config",
                   "project", "transfer", "sync")


def _register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"suzent_cli.cli.{name}")


_register()


def _hook_of(argv: list[str]) -> tuple[str | None, dict]:
    """``(command, root options)`` when ``suzent ARGV`` is an agent hook (a command run with ``--from
    claude-code``), else ``(None, {})``. ARGV is parsed by the app's own click parser (the root options as
    :func:`root` receives them, the command's ``--from`` as the command does) without running anything; a command
    line that does not parse is no hook. Only called on an error path: building the parser costs a few ms."""
    import typer.main
    from typer._click.exceptions import ClickException  # typer vendors click

    try:
        group = typer.main.get_command(app)
        root_ctx = group.make_context("suzent", list(argv), resilient_parsing=True)
        rest = [*(getattr(root_ctx, "_protected_args", None) or getattr(root_ctx, "protected_args", None) or []),
                *root_ctx.args]
        if not rest:
            return None, {}
        name, command, args = group.resolve_command(root_ctx, rest)
        if command is None:
            return None, {}
        params = command.make_context(name, args, parent=root_ctx, resilient_parsing=True).params
    except (ClickException, typer.Exit, typer.Abort):  # e.g. `suzent --home capture run --from …`: no hook
        return None, {}
    source = next((p.name for p in command.params if "--from" in getattr(p, "opts", ())), None)
    return (name, dict(root_ctx.params)) if source and params.get(source) == "claude-code" else (None, {})


def capture_hook_home(argv: list[str], env: Mapping[str, str] | None = None) -> Path | None:
    """For ``suzent [ROOT OPTIONS] capture … --from claude-code …``: the home, resolved as every command resolves
    it (:func:`suzent_cli.config.resolve_home`: ``--home`` > ``SUZENT_HOME`` > ``SUZENT_DATA_DIR`` >
    ``~/.suzent``) but without reading the config, which may be what is broken. None for any other command line
    (or one that does not parse). Never raises."""
    name, root_params = _hook_of(argv)
    if name != "capture":
        return None
    return resolve_home(root_params.get("home"), env)[0]


@private_umask  # everything a command creates is its user's alone (suzent_cli.privacy)
def main(argv: list[str] | None = None) -> int:
    """Run ``suzent ARGV`` (default ``sys.argv[1:]``) and return its exit code; never raises for a suzent error.

    The console script and ``python -m suzent_cli`` exit with the returned code; tests call it in-process. A
    :class:`SuzentError` becomes ``Error: …`` on stderr and its exit code; an agent hook (``--from claude-code``)
    warns and returns 0 instead, since Claude Code reads exit 2 as "block". ``SUZENT_DEBUG`` re-raises.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    from suzent_cli.cli.fasthook import attempt  # a hook answered by a running server (docs/hooks.md)

    if (code := attempt(argv)) is not None:
        return code
    for stream in (sys.stdout, sys.stderr):
        try:  # a console that cannot encode "→" or a user's text must not fail a command after its work is done
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    try:
        app(args=argv, prog_name="suzent")
    except SystemExit as exc:  # click's standalone mode ends every run this way
        return _exit_code(exc.code)
    except SuzentError as exc:
        if environ().get("SUZENT_DEBUG"):
            raise
        if _hook_of(argv)[0]:  # an agent hook never fails its agent (Claude Code reads exit 2 as "block"): warn, exit 0
            from suzent_cli.hooks.spool import rescue_unread_payload  # keeps an unread capture payload

            kept = rescue_unread_payload(capture_hook_home(argv))  # "" unless a capture hook left stdin unread
            print(f"suzent: {' '.join(str(exc).split())}{kept}", file=sys.stderr)
            return errors.OK
        message, code = errors.report(exc)
        print(message, file=sys.stderr)
        return code
    except OSError as exc:
        if environ().get("SUZENT_DEBUG"):
            raise
        if _hook_of(argv)[0] is not None:
            print(f"suzent: {errors.message_of(exc)}", file=sys.stderr)
            return errors.OK
        message, code = errors.report(exc)
        print(message, file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return errors.INTERRUPTED
    return errors.OK


def _exit_code(code: object) -> int:
    """The process exit code ``sys.exit(code)`` would give: None → 0, an int as is, anything else (a message) → 1."""
    if code is None:
        return errors.OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return errors.FAILED
