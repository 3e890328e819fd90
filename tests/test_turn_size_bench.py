"""benchmarks/turn_size.py: its shapes and its arguments (the timings themselves are never asserted)."""

from __future__ import annotations

import random

import pytest

from tests.conftest import load_script

B = load_script("benchmarks/turn_size.py", "turn_size_bench")


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--mb", "-1"], ["--small-mb", "0"], ["--mb", "nan"],
                                  ["--runs", "two"]])
def test_a_size_or_run_count_not_above_zero_is_a_one_line_usage_error(argv, monkeypatch, capsys):
    # Regression: --runs 0 ended in a traceback (min() of no runs); sizes ≤ 0 printed rows of empty turns.
    monkeypatch.setattr("sys.argv", ["turn_size.py", *argv])
    with pytest.raises(SystemExit) as exit_:
        B.main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("turn_size.py: error: argument")


def test_every_shape_keeps_its_fact_whole_and_through_the_bound():
    # The blanks shape: leading spaces then a fact; the bound reads the fact (it used to drop it). The markers
    # shape, a 300 KB "sentence" of "oh " then a fact, gave nothing through the bound while the cap cut only at
    # sentence breaks; it now cuts at a word start, so the newest part, which holds the fact, is read.
    for name, make in B.SHAPES.items():
        text = make(300_000, random.Random(1))
        whole, bounded = B.read(text, None), B.read(text, 200_000)
        assert whole >= 1, name
        assert bounded == whole, name
