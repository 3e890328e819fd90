"""benchmarks/scope_leak.py run tiny: real logs, a real index, both paths; no project's fact leaks into another's
top 5 (the figures themselves are BENCHMARKS.md's)."""

from __future__ import annotations

import pytest

from tests.conftest import load_script

B = load_script("benchmarks/scope_leak.py", "scope_leak_bench")


def test_tiny_run_leaks_nothing_and_finds_each_projects_own_answer(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["scope_leak.py", "--projects", "3", "--facts", "12", "--person", "4",
                                     "--modes", "fts"])
    assert B.main() == 0  # non-zero when any scoped hit came from another project
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out if line.startswith(("lance", "resident"))]
    assert [r[:2] for r in rows] == [["lance", "fts"], ["resident", "fts"]]
    for r in rows:
        leak_scoped, leak_all, own_scoped = r[2], r[3], r[4]
        assert leak_scoped == "0.0%" and leak_all != "0.0%" and own_scoped == "100.0%"
    assert out[-1].startswith("command: python benchmarks/scope_leak.py --projects 3")


@pytest.mark.parametrize("argv", [["--projects", "1"], ["--facts", "3"], ["--modes", "semantic"]])
def test_bad_sizes_are_a_one_line_usage_error(argv, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["scope_leak.py", *argv])
    with pytest.raises(SystemExit) as exit_:
        B.main()
    assert exit_.value.code == 2 and "Traceback" not in capsys.readouterr().err
