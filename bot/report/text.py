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


# Grapheme clusters (what a reader sees as one character), after Unicode's rules (UAX #29)
# in the part that matters where text is cut: no cut before a combining mark, a joiner, a
# variation selector, a skin tone or a tag; none after a zero-width joiner (the family and
# profession emoji); none inside a pair of regional indicators (a flag), a Hangul syllable
# or a CR LF. A cut elsewhere is where a reader sees a boundary too.
_EXTEND_CATEGORIES = frozenset({"Mn", "Me", "Mc"})
_ZWJ = "\u200d"


def _extends(char: str) -> bool:
    code = ord(char)
    return (
        char == _ZWJ
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tags (subdivision flags)
        or unicodedata.category(char) in _EXTEND_CATEGORIES  # marks, variation selectors
    )


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _hangul(char: str) -> str:
    """The Hangul syllable type: L, V, T, LV or LVT; "" for any other character."""
    code = ord(char)
    if 0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97C:
        return "L"
    if 0x1160 <= code <= 0x11A7 or 0xD7B0 <= code <= 0xD7C6:
        return "V"
    if 0x11A8 <= code <= 0x11FF or 0xD7CB <= code <= 0xD7FB:
        return "T"
    if 0xAC00 <= code <= 0xD7A3:
        return "LV" if (code - 0xAC00) % 28 == 0 else "LVT"
    return ""


_HANGUL_JOINS = frozenset(
    {("L", "L"), ("L", "V"), ("L", "LV"), ("L", "LVT"), ("LV", "V"), ("V", "V"), ("LV", "T")}
    | {("V", "T"), ("LVT", "T"), ("T", "T")}
)


def is_boundary(text: str, index: int) -> bool:
    """Whether `text` may be cut before `text[index]` without splitting a grapheme cluster."""
    if index <= 0 or index >= len(text):
        return True
    before, after = text[index - 1], text[index]
    if (before, after) == ("\r", "\n") or _extends(after) or before == _ZWJ:
        return False
    if (_hangul(before), _hangul(after)) in _HANGUL_JOINS:
        return False
    if _regional(before) and _regional(after):
        run = 0
        while index - run - 1 >= 0 and _regional(text[index - run - 1]):
            run += 1
        return run % 2 == 0  # an odd run before: `after` completes its flag
    return True


def grapheme_prefix(text: str, limit: int) -> str:
    """The longest start of `text` of at most `limit` code points that ends between
    grapheme clusters."""
    if len(text) <= limit:
        return text
    end = max(limit, 0)
    while end > 0 and not is_boundary(text, end):
        end -= 1
    return text[:end]
