"""errors.describe / one_line: every exception a message or a warning quotes is worded the same way, on one line."""

from __future__ import annotations

import errno

from suzent_cli.errors import InputInvalid, describe, one_line


def test_a_suzent_error_is_its_own_message_anything_else_names_its_type():
    assert describe(InputInvalid("time must be\nHH:MM")) == "time must be HH:MM"
    assert describe(RuntimeError("extractor   exploded\n twice")) == "RuntimeError: extractor exploded twice"
    assert describe(ValueError()) == "ValueError: no details"


def test_an_os_error_names_its_file():
    exc = PermissionError(errno.EACCES, "Permission denied", "/vault/.state/x.lock")
    assert describe(exc) == "PermissionError: Permission denied: /vault/.state/x.lock"
    assert describe(OSError("disk gone")) == "OSError: disk gone"


def test_long_text_is_cut_to_the_limit_with_an_ellipsis():
    text = describe(RuntimeError("x" * 1000), 200)
    assert len(text) == 200 and text.startswith("RuntimeError: xxx") and text.endswith("…")
    assert len(describe(RuntimeError("y" * 1000))) == 500
    assert one_line("a\n\tb  c", 10) == "a b c" and one_line("abcdefghijkl", 5) == "abcd…"
