"""`suzent capture --turn-from` with a turn over capture.max_turn_chars, as a real process: the newest part is
captured, one warning says how much was skipped, exit 0, never a traceback. A small bound (set through the
environment) stands in for a huge file."""

from __future__ import annotations

import json

from conftest import run_cli

ENV = {"SUZENT_NOW": "2026-06-10T12:00"}


def _transcript(tmp_path, n: int = 30):
    messages = []
    for i in range(n):
        messages += [{"role": "user", "content": f"I have a dog called Rex{i:02d}."},
                     {"role": "assistant", "content": "What a lovely name! " * 10}]
    path = tmp_path / "turn.json"
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    return path


def test_a_turn_over_the_bound_is_captured_from_its_newest_part(tmp_path):
    home = tmp_path / "home"
    turn = _transcript(tmp_path)
    r = run_cli(home, "capture", "--turn-from", str(turn), "--extractor", "offline",
                env_extra=ENV | {"SUZENT_MAX_TURN_CHARS": "100"})
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    warning = [line for line in r.stderr.splitlines() if "capture.max_turn_chars" in line]
    # 26 characters a user message: three fit in 100; the assistant's replies are not read by offline
    assert warning == ["warning: turn over capture.max_turn_chars (100): extracted its newest 78 of 780 characters "
                       "(3 of 30 messages); the older 702 were skipped"]
    log = (home / "sandbox/shared/memory/archive/2026-06-10.md").read_text(encoding="utf-8")
    assert [f"Rex{i}" in log for i in (26, 27, 28, 29)] == [False, True, True, True]
    assert "captured 3 fact(s)" in r.stdout


def test_json_output_carries_the_warning_and_a_bad_bound_falls_back(tmp_path):
    home = tmp_path / "home"
    turn = _transcript(tmp_path, 5)
    r = run_cli(home, "capture", "--turn-from", str(turn), "--extractor", "offline", "--json",
                env_extra=ENV | {"SUZENT_MAX_TURN_CHARS": "many"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["captured"] == 5  # the default bound (200,000) holds this turn whole
    assert out["warnings"] == ["capture.max_turn_chars must be a whole number, got 'many'; read the turn with the "
                               "default 200,000"]


def test_bad_input_keeps_its_one_line_error(tmp_path):
    home = tmp_path / "home"
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [' + '{"role": "user", "content": "I live in Lisbon."},' * 50, encoding="utf-8")
    r = run_cli(home, "capture", "--turn-from", str(broken), env_extra=ENV | {"SUZENT_MAX_TURN_CHARS": "100"})
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("Error: turn input looks like JSON")
    assert not (home / "sandbox/shared/memory/archive/2026-06-10.md").exists()


def test_blank_padding_before_the_newest_sentence_on_stdin(tmp_path):
    # Regression: a turn whose blank padding before its sentences filled the window was read from the second
    # sentence on (the first, which fits, was dropped; with one sentence nothing was captured). The blanks are
    # counted as skipped.
    home = tmp_path / "home"
    said = "I live in Lisbon now. I have two cats."
    r = run_cli(home, "capture", "--turn-from", "-", "--extractor", "offline", input=" \t" * 5000 + said,
                env_extra=ENV | {"SUZENT_MAX_TURN_CHARS": "100"})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert [line for line in r.stderr.splitlines() if "capture.max_turn_chars" in line] == [
        f"warning: turn over capture.max_turn_chars (100): extracted its newest {len(said)} of {10_000 + len(said):,} "
        f"characters (1 of 1 messages); the older 10,000 were skipped"]
    assert "captured 2 fact(s)" in r.stdout
