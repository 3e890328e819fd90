"""The typer question (issue 14, item 10): ``suzent_cli/cli/app.py`` keeps typer's pydantic coercion off plain
options, because pydantic is about a third of a ``suzent capture --fact`` process (BENCHMARKS.md, capture speed).

The patch is written against typer's internals of the pinned series (``typer>=0.29,<0.30`` in pyproject.toml) and
does nothing when they change, so an upgrade would silently put pydantic back into every capture. These tests fail
instead: the patch must still engage on the installed typer. That pydantic stays out of a real ``capture --fact``
process is checked by ``tests/test_capture_fast.py::test_capture_does_not_import_pydantic``.
"""

from __future__ import annotations

from importlib.metadata import version

import typer.core
import typer.main

from suzent_cli.cli.app import app

UPGRADE = ("typer's internals changed: cli/app.py's _plain_coercion no longer engages, so every capture imports "
           "pydantic again; re-run benchmarks/capture_speed.py and adapt or drop the patch (BENCHMARKS.md)")


def _command(name: str):
    return typer.main.get_command(app).commands[name]


def test_the_installed_typer_is_the_series_the_patch_was_written_for():
    major, minor = (int(p) for p in version("typer").split(".")[:2])
    assert (major, minor) == (0, 29), UPGRADE


def test_the_plain_coercion_engages_on_every_capture_option():
    assert typer.core._TyperParameter.get_runtime_param.__module__ == "suzent_cli.cli.app", UPGRADE
    params = [p for p in _command("capture").params if isinstance(p, typer.core._TyperParameter)]
    assert {p.name for p in params} >= {"fact", "facts_from", "session", "time", "index", "json_out", "from_agent"}
    for param in params:
        runtime = param.get_runtime_param()
        assert type(runtime).__name__ == "_Plain", (param.name, UPGRADE)


def test_the_plain_coercion_passes_values_through_unchanged():
    params = {p.name: p for p in _command("capture").params}
    time, fact, index = params["time"], params["fact"], params["index"]
    assert time.get_runtime_param()._coerce_value("10:15", param=time, ctx=None) == "10:15"
    assert fact.get_runtime_param()._coerce_value(("a", "b"), param=fact, ctx=None) == ["a", "b"]
    assert index.get_runtime_param()._coerce_value(True, param=index, ctx=None) is True
