"""Untrusted text shown as it is: characters that hide or reorder it are written out.

A test name can carry a right-to-left override (U+202E) that shows it reversed, an isolate
(U+2066) that moves the text after it, or a zero-width space that makes it look identical to
another name. Wherever the bot shows text from a log, a repository or a person (comments,
issue titles, replies, the dashboard), each such character is shown as ``<U+XXXX>``:
control and format characters (Unicode categories Cc and Cf: the bidi controls, the
zero-width ones, the soft hyphen, the byte order mark), line and paragraph separators (Zl,
Zp), lone surrogates (Cs, which no encoder accepts) and the Hangul fillers, letters that show
as nothing. Ordinary text (accented letters, CJK, emoji and their variation selectors) is
untouched; tab and line feed are left to each output to lay out.
"""

from __future__ import annotations

import re
import unicodedata

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# Everything but printable ASCII, tab and line feed is looked at; the rest cannot hide.
_CANDIDATE = re.compile(r"[^\t\n\x20-\x7e]")


def reveal(text: str) -> str:
    """``text`` with every hidden character written as ``<U+XXXX>``."""
    return _CANDIDATE.sub(_shown, text)


def _shown(found: re.Match[str]) -> str:
    char = found[0]
    if char in _BLANK_LETTERS or unicodedata.category(char) in _HIDDEN_CATEGORIES:
        return f"<U+{ord(char):04X}>"
    return char
