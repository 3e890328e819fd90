"""Regression: the extractor's pre-processing is linear in the turn's size (a 23 MB turn took ~40 s).

Two steps copied the rest of the text once per item: ``_trim_leading`` re-made the sentence for every leading
marker ("oh oh oh … I live in Lisbon."), ``_persona`` re-joined the run for every persona paragraph. These tests
check the result and the shape of the work (how much text is copied or how many messages are built), never a time.
"""

from __future__ import annotations

from suzent_cli.capture.extract import offline, turns
from suzent_cli.capture.extract.offline import OfflineExtractor
from suzent_cli.capture.extract.turns import Message, Turn


def test_trim_leading_reads_the_sentence_once(monkeypatch):
    seen: list[int] = []
    plain = offline._plain

    def counting(text: str) -> str:
        seen.append(len(text))
        return plain(text)

    monkeypatch.setattr(offline, "_plain", counting)
    sentence = "oh " * 5000 + "Update: Hey Sam, I live in Lisbon now."
    assert offline._trim_leading(sentence) == "I live in Lisbon now."
    assert seen == [len(sentence)]  # one pass: the 5,002 markers are matched in place, the text is copied once


def test_many_markers_still_give_the_fact():
    # Markers are trimmed before the sentence length is judged, as before the fix: the fact after them is kept.
    turn = Turn((Message("user", "ok so " * 2000 + "I live in Lisbon now."),))
    assert [f.content for f in OfflineExtractor().extract(turn, [])] == ["I live in Lisbon now."]


def test_persona_paragraphs_are_joined_once(monkeypatch):
    built: list[str] = []

    class Counting(Message):
        def __init__(self, role: str, text: str) -> None:
            built.append(role)
            super().__init__(role, text)

    monkeypatch.setattr(turns, "Message", Counting)
    pasted = "\n\n".join(["You are a helpful assistant."] * 3000 + ["I live in Lisbon.", "I have two cats."])
    parts = turns._persona(pasted)
    assert [(m.role, m.text.count("\n\n") + 1) for m in parts] == [("system", 3000), ("user", 2)]
    assert built == ["system", "user"]  # one message per run of paragraphs, not one per paragraph
