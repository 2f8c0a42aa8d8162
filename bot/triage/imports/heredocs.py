"""Ruby heredocs: where each body is and which method holds it, read from the text; why a
heredoc's loads wait for its method is ruby.py's module doc.

A body starts on the line after its opener (`<<~ID`, `<<-ID`, the ID quoted or not) and ends
at the first later line holding only ID; two openers on one line have their bodies one after
the other. Not read as heredocs, so their lines are read as code (an over-count): the plain
`<<ID` (`list <<ITEM` may be a shift) and an opener whose terminator never comes.

The method holding a body is found by indentation, the way Ruby is written: the nearest line
above the opener indented less than it, then the one above that indented less again, up to a
`def` line (not a one-line or endless `def`), whose first later line not indented deeper is
its `end`, below the body. Anything else (a heredoc outside a method, indentation that does
not show it plainly) names no method. Each question is answered from two tables built in one
pass over the lines, so a file of many heredocs is read in linear time.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

_OPENER = re.compile(r"<<[~-](?P<quote>['\"`]?)(?P<id>[A-Za-z_]\w*)(?P=quote)")
_DEF = re.compile(
    r"[ \t]*def[ \t]+(?:self\.)?(?P<name>[A-Za-z_]\w*[?!=]?)"
    r"(?:\([^()\n]*\)|[ \t]+[\w*&:, \t]*)?[ \t]*(?:#.*)?$"
)
_END = re.compile(r"[ \t]*end\b")
_CLAUSE = re.compile(r"[ \t]*(?:rescue|ensure|else)\b")
_CHAIN = 100  # enclosing lines followed up from an opener before giving up (no method)


@dataclass(frozen=True)
class _Body:
    token: int  # the index of its token in the list
    opener_line: int
    first: int  # its first and last line (last < first: empty)
    last: int


def tokens(text: str, pattern: re.Pattern[str], bodies: bool = True) -> list[tuple[str, str]]:
    """`pattern`'s tokens of `text` as (group name, text); with `bodies`, each heredoc's body
    one token ("heredoc:NAME", body) at its opener, NAME the method holding it or empty."""
    lines = _Lines(text)
    found: list[tuple[str, str]] = []
    read: list[_Body] = []
    pending: list[tuple[str, int, int]] = []  # (id, token index, line) of the line's openers
    position, line_end = 0, -1
    while True:
        match = pattern.search(text, position)
        if pending and (match is None or match.start() > line_end):
            position = _close(text, lines, pending, line_end + 1, found, read)
            pending = []
            continue
        if match is None:
            break
        opener = _OPENER.match(text, match.start()) if bodies and match.group() == "<" else None
        if opener is None:
            kind = match.lastgroup or "other"
            found.append((kind, match.group(kind)))
            position = match.end()
            continue
        if not pending:
            line_end = _line_end(text, opener.end())
        pending.append((opener["id"], len(found), lines.number(opener.start())))
        found.append(("other", opener.group()))  # replaced by the body when it ends
        position = opener.end()
    _name_methods(text, lines, found, read)
    return found


def _close(
    text: str,
    lines: _Lines,
    pending: list[tuple[str, int, int]],
    start: int,
    found: list[tuple[str, str]],
    bodies: list[_Body],
) -> int:
    """Read the bodies of one line's openers from `start`; where reading goes on."""
    for ident, index, line in pending:
        ends = lines.terminator(ident, start)
        if ends is None:
            break
        found[index] = ("heredoc:", text[start : ends[0]])
        bodies.append(_Body(index, line, lines.number(start), lines.number(ends[0]) - 1))
        start = ends[1]
    return start


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _name_methods(
    text: str, lines: _Lines, found: list[tuple[str, str]], bodies: list[_Body]
) -> None:
    if not bodies:
        return
    inside = {number for body in bodies for number in range(body.first, body.last + 1)}
    shape = _Shape.of(text.split("\n"), inside)
    for body in bodies:
        method = shape.method_around(body.opener_line, body.last)
        found[body.token] = (f"heredoc:{method}", found[body.token][1])


class _Lines:
    """Line numbers of offsets, and where each possible terminator line is."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(match.end() for match in re.finditer("\n", text))]
        self.terminators: dict[str, list[tuple[int, int]]] = {}
        for match in re.finditer(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\r?$", text, re.MULTILINE):
            after = min(match.end() + 1, len(text))
            self.terminators.setdefault(match.group(1), []).append((match.start(), after))

    def number(self, offset: int) -> int:
        return bisect_left(self.starts, offset + 1) - 1

    def terminator(self, ident: str, start: int) -> tuple[int, int] | None:
        """The first line holding only `ident` at or after `start`: (its start, the next
        line's start)."""
        found = self.terminators.get(ident, [])
        index = bisect_left(found, (start, -1))
        return found[index] if index < len(found) else None


@dataclass(frozen=True)
class _Shape:
    """The file's code lines (heredoc bodies, blank and comment lines left out): for each,
    the nearest code line above indented less (`up`) and the nearest below not indented
    deeper (`down`), -1 when there is none."""

    lines: list[str]
    indent: dict[int, int]
    up: dict[int, int]
    down: dict[int, int]

    @classmethod
    def of(cls, lines: list[str], skipped: set[int]) -> _Shape:
        indent: dict[int, int] = {}
        for number, line in enumerate(lines):
            stripped = line.expandtabs(8).lstrip()
            if number not in skipped and stripped and not stripped.startswith("#"):
                indent[number] = len(line.expandtabs(8)) - len(stripped)
        up: dict[int, int] = {}
        stack: list[int] = []
        for number, depth in indent.items():
            while stack and indent[stack[-1]] >= depth:
                stack.pop()
            up[number] = stack[-1] if stack else -1
            stack.append(number)
        down: dict[int, int] = {}
        stack = []
        for number in reversed(indent):
            while stack and indent[stack[-1]] > indent[number]:
                stack.pop()
            down[number] = stack[-1] if stack else -1
            stack.append(number)
        return cls(lines, indent, up, down)

    def method_around(self, opener: int, last: int) -> str:
        """The method whose body holds the opener's line and the body ending at `last`."""
        if opener not in self.indent:
            return ""
        line = self.up[opener]
        for _ in range(_CHAIN):
            if line < 0:
                return ""
            declared = _DEF.match(self.lines[line])
            if declared is not None:
                return declared["name"] if self._ends_after(line, last) else ""
            line = self.up[line]
        return ""

    def _ends_after(self, line: int, last: int) -> bool:
        """Whether the `def` on `line` has its `end`, at its own indentation, below `last`."""
        end = self.down[line]
        for _ in range(_CHAIN):
            if end < 0 or self.indent[end] != self.indent[line]:
                return False
            if _END.match(self.lines[end]):
                return end > last
            if not _CLAUSE.match(self.lines[end]):
                return False
            end = self.down[end]
        return False
