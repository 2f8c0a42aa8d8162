"""Repository regexes compiled for RE2: `\\w` widened to every script, nothing else changed."""

from __future__ import annotations

import pytest
import re2
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.user_regex import UserRegexError, compile_user

# Pieces that exercise the rewrite: escapes, classes (with `]` and `^` first), POSIX classes
# and RE2's quoting.
PIECES = st.sampled_from(
    [
        "\\w",
        "\\W",
        "\\\\",
        "\\Q",
        "\\E",
        "[",
        "]",
        "^",
        "[:alpha:]",
        "-",
        "a",
        " ",
        "+",
        "*",
        "(",
        ")",
        "|",
        "x",
        "_",
        "1",
        "?",
    ]
)


def _plain(source: str) -> re2._Regexp | None:
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(source, options)
    except re2.error:
        return None


@given(pieces=st.lists(PIECES, max_size=12), text=st.text("ax_1 -]^[:\\", max_size=20))
def test_on_ascii_text_a_pattern_finds_what_re2_finds_as_written(
    pieces: list[str], text: str
) -> None:
    source = "".join(pieces)
    plain = _plain(source)
    try:
        ours = compile_user(source)
    except UserRegexError:
        assert plain is None, f"{source!r} compiles as written"
        return
    assert plain is not None, f"{source!r} only compiles rewritten"
    found, expected = ours.search(text), plain.search(text)
    assert (found is None) == (expected is None)


@pytest.mark.parametrize(
    ("regex", "text", "found"),
    [
        (r"^\w+$", "Überfüllt", True),
        (r"^[\w-]+$", "dock-überfüllt", True),
        (r"^[^\w]+$", "ü", False),
        (r"^\W$", "ж", False),
        (r"^[\W]$", "ж", True),  # inside a class `\W` keeps RE2's ASCII meaning
        (r"^\Q\w\E$", "\\w", True),  # quoted: a backslash and a w
        (r"^[[:alpha:]\w]+$", "aü1", True),
    ],
)
def test_word_classes_take_letters_of_any_script(regex: str, text: str, found: bool) -> None:
    assert (compile_user(regex).search(text) is not None) is found
