"""Turn input shapes, and broken JSON that must be an error rather than silently nothing."""

from __future__ import annotations

import json

import pytest

from suzent_cli.capture.extract.turns import parse_turn
from suzent_cli.errors import InputInvalid


def roles(turn):
    return [(m.role, m.text) for m in turn.messages]


def test_shapes():
    assert roles(parse_turn("I live in Porto.")) == [("user", "I live in Porto.")]
    assert roles(parse_turn("[Monday] I moved to Porto.")) == [("user", "[Monday] I moved to Porto.")]
    assert roles(parse_turn(json.dumps({"user": "u", "assistant": "a"}))) == [("user", "u"), ("assistant", "a")]
    assert roles(parse_turn(json.dumps({"messages": [{"role": "user", "content": "u"}]}))) == [("user", "u")]
    blocks = [{"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "image", "source": {}},
                                           {"type": "tool_result", "content": "secret output"}, {"type": "text", "text": "two"}]}]
    assert roles(parse_turn(json.dumps(blocks))) == [("user", "one\ntwo")]
    jsonl = "\n".join(json.dumps(m) for m in [{"role": "user", "content": "u"},
                                              {"type": "assistant", "message": {"role": "assistant", "content": "a"}}])
    assert roles(parse_turn(jsonl)) == [("user", "u"), ("assistant", "a")]
    assert roles(parse_turn("\ufeff" + json.dumps({"user": "bom"}))) == [("user", "bom")]


@pytest.mark.parametrize("text, message", [
    ('{"user": "I live in Paris.", }', "line 1, column"),
    ("{'user': 'python quotes'}", "does not parse"),
    ('[{"role": "user", "content": "x"},]', "does not parse"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"text": "no role"}', "must be"),
    ('[{"content": "no role"}]', "needs a role"),
    ("42", None),
])
def test_broken_json_is_an_error(text, message):
    if message is None:
        assert roles(parse_turn(text)) == [("user", "42")]
        return
    with pytest.raises(InputInvalid, match=message):
        parse_turn(text)
