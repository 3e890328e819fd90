"""What a person said is not dropped (issue 27, the trial's leftovers): a change told without its subject, one
more pet named after a comma, a bad byte or a control character next to a sentence break, a bidi override, and
a sentence longer than :data:`~suzent_cli.capture.extract.offline.MAX_SENTENCE_CHARS`. Each is checked on the
extractor and, for the turn-level ones, through ``suzent capture --turn-from -``."""

from __future__ import annotations

import json

import pytest

from conftest import invoke
from suzent_cli.archive import list_logs, read_log
from suzent_cli.capture.extract.offline import OfflineExtractor
from suzent_cli.capture.extract.turns import Message, Turn


def contents(*user_texts: str) -> list[str]:
    return [f.content for f in OfflineExtractor().extract(Turn(tuple(Message("user", t) for t in user_texts)), [])]


# --- 1. a change told without its subject; one more pet, named after a comma ----------------------------------

@pytest.mark.parametrize("text", [
    "Switched to light mode.",  # the trial's
    "Just switched from VS Code to Zed.",
    "Moved to Lisbon last month.",
    "Moved back to Ohio in 2021.",
    "Quit smoking in March.",
    "Gave up sugar.",
    "Stopped drinking coffee.",
    "Went vegan last year.",
    "Changed my name to Sam.",
    "Upgraded to Python 3.12.",
])
def test_a_change_told_without_its_subject_is_kept(text):
    assert contents(text) == [text]


@pytest.mark.parametrize("text", [
    "Switched to the other branch.",  # a step of this conversation
    "Moved to the next question.",
    "Moved the file to src.",  # a one-off edit
    "Stopped the server.",  # an action on a thing, not a habit given up
    "Quit the app.",
    "Switched to light mode today.",  # of the day
    "Stopped doing that.",  # a pointer into the conversation
    "Changed my password to hunter2.",  # a credential is never a fact
])
def test_a_subject_less_step_or_one_off_is_still_dropped(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "We got a second dog, Pepper.",  # the trial's
    "We got another cat, Tofu.",
    "Got a second dog, Pepper.",
    "We just got a rescue dog, Bowie.",
    "We got two cats, Salt and Pepper.",
    "We've got a second dog, Pepper.",
])
def test_one_more_pet_named_after_a_comma_is_kept(text):
    assert contents(text) == [text]


@pytest.mark.parametrize("text", ["I got a dog bed.", "We got a second opinion.", "We got a coffee.",
                                  "I got another coffee, a flat white."])
def test_a_purchase_or_a_second_of_no_pet_is_not_a_life_event(text):
    assert contents(text) == []


def logged(settings) -> list[str]:
    """Every fact content written to the daily logs of ``settings``' home, oldest first."""
    return [f.content for _, path in list_logs(settings.paths.archive_dir) for f in read_log(path)]


def captured(home, turn: str | bytes) -> list[str]:
    """The fact contents ``suzent capture --turn-from - --json`` reports for ``turn`` (exit 0 asserted)."""
    result = invoke(home, "capture", "--turn-from", "-", "--json", input=turn)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode() if isinstance(result.stdout, bytes) else result.stdout
    return [f["content"] for f in json.loads(out)["facts"]]


def test_the_trial_turn_keeps_both_through_the_cli(home, settings):
    kept = ["Switched to light mode.", "We got a second dog, Pepper."]
    assert captured(home, " ".join(kept)) == kept
    assert logged(settings) == kept
