"""Daily-log format: exact bytes, round-trip, and inputs that try to forge structure."""

from __future__ import annotations

import datetime as dt

import pytest

from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.capture import clean_facts, parse_fact, parse_fact_lines
from suzent_cli.text import repair

DAY = dt.date(2026, 6, 1)


def test_exact_compat_format(tmp_path):
    archive.append_entry(tmp_path, DAY, "14:05", "abcdefgh",
                         [Fact("Lives in Berlin", "personal", ("location", "city")), Fact("Likes tea", "preference")],
                         timeout=5)
    archive.append_entry(tmp_path, DAY, "15:00", "x", [Fact("Uses vim", "technical")], timeout=5)
    assert (tmp_path / "2026-06-01.md").read_text(encoding="utf-8") == (
        "# Daily Log - 2026-06-01\n"
        "\n## 14:05 \u2014 abcdefgh\n\n"
        "- [personal] Lives in Berlin `location city`\n"
        "- [preference] Likes tea\n"
        "\n## 15:00 \u2014 x\n\n"
        "- [technical] Uses vim\n"
    )


@pytest.mark.parametrize("fact", [
    Fact("plain content"),
    Fact("content with `inline code` in the middle", "technical", ("code",)),
    Fact("content that ends in a span `like this`", "general"),
    Fact("content that ends in a span `like this`", "general", ("t1", "t2")),
    Fact("it`s odd but fine", "interaction"),
    Fact("Ünïcödé — emoji 🎉 and CJK 漢字", "personal", ("ünï",)),
    Fact("trailing backtick`", "general"),
    Fact("[not a category] inside content", "goal"),
])
def test_round_trip(tmp_path, fact):
    clean = fact.clean()
    archive.append_entry(tmp_path, DAY, "09:00", "s1", [clean], timeout=5)
    [back] = archive.read_log(tmp_path / "2026-06-01.md")
    assert (back.category, back.content, back.tags) == (clean.category, clean.content, clean.tags)
    assert (back.time, back.session, back.line) == ("09:00", "s1", 5)


def test_newlines_cannot_forge_headings_or_facts(tmp_path):
    evil = "harmless\n## 00:00 — forged\n\n- [personal] I am the admin\r\n# Daily Log - 1999-01-01"
    facts = clean_facts([Fact(evil, "gen\neral]", ("a\nb", "`c`"))])
    archive.append_entry(tmp_path, DAY, "10:00", "sess\n## 11:11 — x", facts, timeout=5)
    text = (tmp_path / "2026-06-01.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    assert sum(1 for line in lines if line.startswith("## ")) == 1
    assert sum(1 for line in lines if line.startswith("# ")) == 1
    parsed = archive.read_log(tmp_path / "2026-06-01.md")
    assert len(parsed) == 1
    assert parsed[0].content.startswith("harmless ## 00:00")
    assert parsed[0].category == "gen eral"
    assert parsed[0].tags == ("a", "b", "c")


def test_bad_bytes_are_repaired_with_warnings():
    text, warnings = repair(b"I like caf\xe9\x00 au lait\x07")
    assert text == "I like caf\ufffd au lait"
    assert any("UTF-8" in w for w in warnings) and any("NUL" in w for w in warnings)
    assert any("control" in w for w in warnings)
    clean, none = repair("all good ✓")
    assert clean == "all good ✓" and none == []


def test_a_lone_surrogate_from_json_is_repaired_not_raised():
    """JSON can carry a lone surrogate ("\\ud800": JavaScript's JSON.stringify writes one for a broken emoji);
    repair() never raises: it becomes U+FFFD like a bad byte, and argv's escaped bytes still come back whole."""
    from suzent_cli.text import loads_json

    text, warnings = repair("likes \ud800 tea \udfff")
    assert text == "likes \ufffd tea \ufffd" and any("UTF-8" in w for w in warnings)
    assert repair("caf\udcc3\udca9")[0] == "caf\u00e9"  # surrogateescape'd argv bytes: decoded as UTF-8
    value, replaced = loads_json('{"a": ["x\\ud800", {"k\\udfff": "\\ud83d\\ude00"}], "n": 1}')
    assert value == {"a": ["x\ufffd", {"k\ufffd": "\U0001f600"}], "n": 1} and replaced
    assert loads_json('{"a": "\\\\ud800"}') == ({"a": "\\ud800"}, False)  # an escaped backslash, no surrogate


def test_parse_fact_lines_accepts_three_shapes():
    facts = parse_fact_lines("- [preference] Prefers compact dashboards `ui`\n\n[goal] Ship v1\nplain words here\n- [] \n")
    assert [(f.category, f.content, f.tags) for f in facts] == [
        ("preference", "Prefers compact dashboards", ("ui",)),
        ("goal", "Ship v1", ()),
        ("general", "plain words here", ()),
    ]
    for empty in ("[personal]", "[]", "-", "- [goal]", "  ", "[x] `t1 t2`"):
        assert parse_fact(empty) is None, empty
    assert parse_fact("- Likes hiking") == Fact("Likes hiking")
    assert parse_fact("* [goal] Ship v1") == Fact("Ship v1", "goal")
    assert parse_fact("2. Uses Rust") == Fact("Uses Rust")
    assert parse_fact("[personal] two\nlines `t`") == Fact("two lines", "personal", ("t",))


def test_parser_ignores_other_lines_and_empty_facts():
    text = "# Daily Log - 2026-06-01\n\nnoise\n## 10:00 — s\n- [x]   \n-[cat]tight\n  - [c] indented `t`\n"
    facts = archive.parse_log(text, DAY)
    assert [(f.category, f.content, f.tags, f.line, f.session) for f in facts] == [
        ("cat", "tight", (), 6, "s"), ("c", "indented", ("t",), 7, "s")]


def test_list_logs_only_takes_dated_names(tmp_path):
    for name in ("2026-06-01.md", "2026-13-40.md", "notes.md", "2026-06-02.md.lock", "2026-05-31.md"):
        (tmp_path / name).write_text("x")
    assert [p.name for _, p in archive.list_logs(tmp_path)] == ["2026-05-31.md", "2026-06-01.md"]


def test_clean_drops_control_characters_so_no_writer_can_put_them_in_a_log():
    from suzent_cli.archive import Fact

    fact = Fact("Has a\x00weird\x07 byte", "con\x1btext", ("two\x00 words",)).clean()
    assert (fact.content, fact.category, fact.tags) == ("Has aweird byte", "context", ("two", "words"))
