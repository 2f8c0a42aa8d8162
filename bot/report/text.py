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

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# Where those characters are in the Basic Multilingual Plane (a generous superset; a test
# checks it against every code point), and every character beyond it, which are few in
# ordinary text: the rest is passed over without a look at each character. (Listing the
# few hidden ones beyond the BMP instead makes the regex engine several times slower.)
CANDIDATES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u089f"
    "\u08e2\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ud800-\udfff\ufeff\uffa0\ufff0-\ufffb\U00010000-\U0010ffff]"
)


def reveal(text: str) -> str:
    """``text`` with every hidden character written as ``<U+XXXX>``."""
    return CANDIDATES.sub(_shown, text)


def _shown(found: re.Match[str]) -> str:
    char = found[0]
    if char in BLANK_LETTERS or unicodedata.category(char) in HIDDEN_CATEGORIES:
        return f"<U+{ord(char):04X}>"
    return char
