"""Regexes a repository writes in `.github/flaky.yml`, run by RE2 in time linear in the text.

The patterns come from the repository, the text they run on from any pull request's log, so
Python's backtracking engine must never run them: `(?P<test>(a|a)*)!` took it 19 s on a line
of 26 characters, holding the event loop. RE2 has no backtracking, so a search costs time
proportional to the text and the pattern whatever either holds; it refuses what only
backtracking can do (backreferences, lookaround, atomic groups, possessive repeats), and a
pattern whose program would outgrow MAX_MEM, so compiling one also stays cheap.

`\\w` (and `\\W` outside a character class) is made to match a letter or digit of any script,
as in Python: test names are not all ASCII. RE2's own `\\d`, `\\s` and `\\b` are ASCII only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import re2

# The memory RE2 may use for one pattern: its compiled program and its lazily built DFA
# (past it, RE2 searches with its slower NFA, still in linear time). A pattern needing a
# larger program is refused; at this size compiling the largest one takes about 0.1 s.
MAX_MEM = 1024 * 1024
_WORD = r"\p{L}\p{N}_"
# Patterns kept compiled, each holding at most MAX_MEM: every job of a repository reuses its own.
_CACHED = 256
# RE2's complaints about the constructs only a backtracking engine has.
_BACKTRACKING = re.compile(
    r"invalid perl operator: \(\?(?:[=!>]|<[=!]|P(?!<))|invalid escape sequence: \\[1-9]"
    r"|bad repetition operator: [*+?]\+"
)


class UserRegexError(ValueError):
    """Why a repository's pattern is refused, in words fit for the PR comment."""


class UserRegex:
    """A compiled repository pattern: `search` and `fullmatch` as `re.Pattern`'s, by RE2."""

    def __init__(self, source: str, ignore_case: bool) -> None:
        self.source = source
        options = re2.Options()
        options.log_errors = False  # RE2 would write every refusal to stderr
        options.max_mem = MAX_MEM
        options.case_sensitive = not ignore_case
        try:
            self._regex: Any = re2.compile(_unicode_words(source), options)
        except re2.error as exc:
            raise UserRegexError(_reason(exc, source, options)) from None

    @property
    def groupindex(self) -> Mapping[str, int]:
        groups: Mapping[str, int] = self._regex.groupindex
        return groups

    def search(self, text: str) -> UserMatch | None:
        found = self._regex.search(text)
        return None if found is None else UserMatch(found)

    def fullmatch(self, text: str) -> UserMatch | None:
        found = self._regex.fullmatch(text)
        return None if found is None else UserMatch(found)


class UserMatch:
    """A match of a UserRegex: its named groups, as `re.Match.groupdict`."""

    def __init__(self, match: Any) -> None:
        self._match = match

    def groupdict(self) -> dict[str, str | None]:
        groups: dict[str, str | None] = self._match.groupdict()
        return groups


@lru_cache(maxsize=_CACHED)
def compile_user(source: str, *, ignore_case: bool = False) -> UserRegex:
    """The pattern compiled by RE2; UserRegexError says why it cannot be.

    Cached: every job of a repository runs the same patterns (a refusal is not cached, and
    is only met when the settings are read)."""
    return UserRegex(source, ignore_case)


def _reason(exc: Exception, source: str, options: Any) -> str:
    text = _said(exc)
    try:
        # RE2 quotes the pattern it was given: the pattern as written, where it fails too.
        re2.compile(source, options)
    except re2.error as plain:
        text = _said(plain)
    if "too large" in text:
        return "too large to run in bounded time and memory; make it shorter or simpler"
    if _BACKTRACKING.search(text):
        text += (
            " (backreferences, lookaround, atomic groups and possessive repeats need "
            "backtracking, which can take hours on one line of a log)"
        )
    return f"not a regular expression RE2 can run: {text}"


def _said(exc: Exception) -> str:
    said = exc.args[0] if exc.args else ""
    return said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)


def _unicode_words(source: str) -> str:
    r"""`source` with `\w` and `\W` standing for any script's letters and digits."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(source):
        char = source[i]
        if source.startswith("\\Q", i):
            # RE2's quoted text runs to `\E`: literal, to be copied as it is.
            end = source.find("\\E", i)
            end = len(source) if end < 0 else end + 2
            out.append(source[i:end])
            i = end
            continue
        if in_class and source.startswith("[:", i):
            # A POSIX class, `[:alpha:]`: its `]` does not end the enclosing class.
            end = source.find(":]", i)
            end = len(source) if end < 0 else end + 2
            out.append(source[i:end])
            i = end
            continue
        if char == "\\" and i + 1 < len(source):
            escaped = source[i + 1]
            if escaped == "w":
                out.append(_WORD if in_class else f"[{_WORD}]")
            elif escaped == "W" and not in_class:
                out.append(f"[^{_WORD}]")
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            # `]` first in a class (after an optional `^`) is a literal, not its end.
            rest = source[i + 1 :]
            lead = "^" if rest.startswith("^") else ""
            if rest[len(lead) :].startswith("]"):
                lead += "]"
            out.append(lead)
            i += 1 + len(lead)
            continue
        out.append(char)
        i += 1
    return "".join(out)
