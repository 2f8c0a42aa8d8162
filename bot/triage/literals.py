"""Every place where one of many byte literals ends in a buffer, ASCII letters case-folded.

The log pre-filter (`logscan`) asks this of every block of a job log. Two engines answer it
with the same set of places:

- `hyperscan`: Hyperscan's multi-literal matcher, one pass over the block (GB/s). It is an
  optional dependency: its wheels cover Linux x86_64, Linux aarch64 with glibc 2.28 or
  later, macOS and Windows, not Linux on ARM with an older glibc (pyproject.toml).
- `re2`: google-re2 (a dependency already, with wheels for every platform) finds the lines
  holding a literal, and `bytes.find` every literal on them. Slower (README's figures).

`default_engine()` is Hyperscan when it can be imported, else RE2.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol

import re2

HYPERSCAN = "hyperscan"
RE2 = "re2"
ENGINES = (HYPERSCAN, RE2)


class LiteralSearch(Protocol):
    """Literals compiled once; `hits` may run in several threads at once, each with its own
    `scratch()`."""

    def scratch(self) -> object: ...

    def hits(self, buf: bytes, lo: int, hi: int, scratch: object) -> set[tuple[int, int]]:
        """(offset of the match's last byte, literal's id) for every match of a literal,
        case-folded for ASCII letters, whose end lies in buf[lo:hi]. A match may begin
        before lo: every byte of buf may be read."""
        ...


def hyperscan_installed() -> bool:
    try:
        importlib.import_module(HYPERSCAN)
    except ImportError:
        return False
    return True


def default_engine() -> str:
    return HYPERSCAN if hyperscan_installed() else RE2


def compile_literals(literals: Sequence[tuple[bytes, int]], engine: str) -> LiteralSearch:
    """The search for these (literal, id) pairs by `engine`, one of ENGINES."""
    if engine == HYPERSCAN:
        return _Hyperscan(literals)
    if engine == RE2:
        return _RE2(literals)
    raise ValueError(f"unknown literal search engine {engine!r}: one of {', '.join(ENGINES)}")


class _Hyperscan:
    def __init__(self, literals: Sequence[tuple[bytes, int]]) -> None:
        # Imported here: the module is optional, and importing it costs nothing twice.
        self._hs: Any = importlib.import_module(HYPERSCAN)
        self._database = self._hs.Database(mode=self._hs.HS_MODE_BLOCK)
        self._database.compile(
            expressions=[literal for literal, _ in literals],
            ids=[i for _, i in literals],
            elements=len(literals),
            flags=self._hs.HS_FLAG_CASELESS,
            literal=True,
        )

    def scratch(self) -> object:
        return self._hs.Scratch(self._database)

    def hits(self, buf: bytes, lo: int, hi: int, scratch: object) -> set[tuple[int, int]]:
        found: set[tuple[int, int]] = set()

        def on_match(word: int, begin: int, end: int, flags: int, context: object) -> None:
            if lo < end <= hi:
                found.add((end - 1, word))

        # The whole buffer is searched: the binding reads a memoryview slice from the start
        # of its buffer, and copying the slice costs more than the bytes around it.
        self._database.scan(buf, on_match, scratch=scratch)
        return found


class _RE2:
    """Lines holding a literal are found by one RE2 search of the literals' alternation (a
    DFA: hundreds of MB/s, where Python's `re` manages a few), then each such line is
    searched for every literal. A literal holding a newline spans lines: it gets a pass of
    its own over the block (the scanner's words hold none)."""

    def __init__(self, literals: Sequence[tuple[bytes, int]]) -> None:
        # bytes.lower() folds ASCII letters only, as Hyperscan's caseless mode does.
        folded = [(literal.lower(), i) for literal, i in literals]
        self._inline = [(literal, i) for literal, i in folded if b"\n" not in literal]
        self._spanning = [(literal, i) for literal, i in folded if b"\n" in literal]
        self._reach = max((len(literal) for literal, _ in folded), default=1) - 1
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1  # bytes, not UTF-8 characters
        self._any = re2.compile(
            b"|".join(_byte_pattern(literal) for literal, _ in self._inline), options
        )

    def scratch(self) -> object:
        return None

    def hits(self, buf: bytes, lo: int, hi: int, scratch: object) -> set[tuple[int, int]]:
        # A match ending in buf[lo:hi] starts at most `_reach` bytes before lo.
        base = max(lo - self._reach, 0)
        found: set[tuple[int, int]] = set()
        if self._spanning:
            _find_all(self._spanning, buf[base:hi].lower(), base, lo, found)
        if not self._inline:
            return found
        pos = base
        while pos < hi:
            match = self._any.search(buf, pos, hi)
            if match is None:
                break
            line_start = buf.rfind(b"\n", pos, match.start()) + 1 or pos
            line_end = buf.find(b"\n", match.start(), hi) + 1 or hi
            _find_all(self._inline, buf[line_start:line_end].lower(), line_start, lo, found)
            pos = line_end
        return found


def _find_all(
    literals: Sequence[tuple[bytes, int]],
    text: bytes,
    offset: int,
    lo: int,
    found: set[tuple[int, int]],
) -> None:
    """Add every match in `text` (buf[offset:...], folded) that ends after buf[lo]."""
    for literal, word in literals:
        size = len(literal)
        at = text.find(literal, max(lo - offset - size + 1, 0))
        while at >= 0:
            found.add((offset + at + size - 1, word))
            at = text.find(literal, at + 1)


def _byte_pattern(literal: bytes) -> bytes:
    """RE2 syntax matching `literal`'s bytes, ASCII letters in either case."""
    return b"".join(
        b"[%c%c]" % (byte, byte - 32) if 0x61 <= byte <= 0x7A else b"\\x%02x" % byte
        for byte in literal
    )
