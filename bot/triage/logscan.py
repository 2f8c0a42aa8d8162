"""Read a job log of any size in bounded memory, keeping only the lines parsers need.

A `LogScanner` is fed the log's raw bytes chunk by chunk and keeps every line a marker matches
(the union of every parser's `MARKER` and the infrastructure patterns), with `before` lines
above and `after` lines below it, plus the log's last `tail_lines` lines.

Python's regex engine has no fast path for an alternation of anchored patterns (tens of MB/s
at best), so the scan is done in two steps. Each marker alternative holds a word it cannot
match without ("FAIL", "panic", "rootdir", ...); those words are found with one C-level
search each over the whole chunk, and only the lines holding one are cleaned and tried
against the full markers. The cost per megabyte is a handful of memchr-speed passes; Python
only touches candidate lines, kept windows and the tail.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from bot.triage.infra import INFRA_MARKER
from bot.triage.parsers import PARSERS
from bot.triage.parsers.actions_log import clean_log

MIB = 1024 * 1024

# pytest's parser predates the MARKER convention; these are the lines it reads to find a
# failure: section and block headers, outcome words, the rootdir its paths are relative to.
PYTEST_MARKER = re.compile(
    r"^={3,} .*(?:FAILURES|ERRORS|short test summary info|test session starts|failed|error)"
    r".* ={3,}$"
    r"|^_{3,} .+ _{3,}$|^rootdir: |(?:^|\s)(?:FAILED|ERROR)(?:\s|$)"
)
_FALLBACK_MARKERS = {"bot.triage.parsers.pytest": PYTEST_MARKER}

# A line longer than this without a newline is cut; the rest of it is dropped.
_MAX_PARTIAL = MIB
# A candidate line is tried against the markers on its first characters only.
_MAX_CANDIDATE = 4096
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_WORD = re.compile(r"\w{3,}")
_SYMBOLS = re.compile(r"[^\x00-\x7f]+")
# Words most markers share: a word holding one is replaced by it, so one search serves many.
_ROOTS = ("fail", "error", "panic")
# Words on most lines of a passing run: a marker is found by another of its words if it has one.
_COMMON = frozenset(
    {"test", "tests", "pass", "passed", "run", "std", "out", "err", "not"}
    | {"===", "----", "# ", ") "}
)

_sre: Any = importlib.import_module("re._parser")


def parser_markers() -> list[re.Pattern[str]]:
    """Every registered log parser's MARKER, and the infrastructure patterns."""
    markers: list[re.Pattern[str]] = []
    for name, parse in PARSERS.items():
        module = sys.modules[parse.__module__]
        marker = getattr(module, "MARKER", None) or _FALLBACK_MARKERS.get(module.__name__)
        if not isinstance(marker, re.Pattern):
            raise TypeError(f"log parser {name!r} ({module.__name__}) has no MARKER regex")
        markers.append(marker)
    markers.append(INFRA_MARKER)
    return markers


class _Triggers:
    """Where marker lines may be, found fast, and the marker alternatives to try there.

    Every top-level alternative of every marker is compiled alone. Most hold a word they
    cannot match without: those words are searched case-folded, and a line holding one is
    tried against the alternatives that word stands for. An alternative without such a word
    is searched in full (slowly) over the bytes read as latin-1, which keeps byte offsets.
    """

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        self.checks: list[re.Pattern[str]] = []
        self.slow: list[tuple[re.Pattern[str], int]] = []
        options_of: list[list[set[str]]] = []
        for pattern in patterns:
            flags = pattern.flags & ~re.MULTILINE
            for source in _split_top(pattern.pattern):
                index = len(self.checks)
                self.checks.append(re.compile(source, flags))
                options = _options(_sre.parse(source, flags))
                options_of.append(options)
                if not options:
                    wide = source.encode().decode("latin-1")
                    self.slow.append((re.compile(wide, flags | re.MULTILINE), index))
        words = _cover([o for o in options_of if o])
        self.words = [re.compile(re.escape(w.encode())) for w in words]
        self.stands_for = [
            [i for i, options in enumerate(options_of) if any(w in x for o in options for x in o)]
            for w in words
        ]

    def hits(self, buf: bytes, start: int) -> list[tuple[int, list[int]]]:
        """(offset, alternatives to try on its line), in log order."""
        folded = buf.lower()
        found = [
            (m.start(), self.stands_for[i])
            for i, r in enumerate(self.words)
            for m in r.finditer(folded, start)
        ]
        if self.slow:
            text = buf.decode("latin-1")
            found.extend((m.start(), [i]) for r, i in self.slow for m in r.finditer(text, start))
        found.sort(key=lambda hit: hit[0])
        return found


def _split_top(source: str) -> list[str]:
    """A regex's top-level alternatives, as source text."""
    parts: list[str] = []
    depth = 0
    in_class = False
    begin = i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if source[i + 1 : i + 2] == "^":
                i += 1
            if source[i + 1 : i + 2] == "]":
                i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(source[begin:i])
            begin = i + 1
        i += 1
    parts.append(source[begin:])
    return parts


def _options(items: Any) -> list[set[str]]:
    """Ways to find a match of `items`: each is a set of case-folded words, one of which
    every match holds. A sequence offers one option per required piece; an alternation one
    option, taking a word from each branch."""
    options: list[set[str]] = []
    run = ""
    for op, av in items:
        kind = str(op)
        if kind == "LITERAL":
            run += chr(av)
            continue
        if kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _, sub = av
            if low >= 1 and len(sub) == 1 and str(sub[0][0]) == "LITERAL":
                run += chr(sub[0][1]) * min(low, 8)
        options.extend(_run_words(run))
        run = ""
        if kind == "SUBPATTERN":
            options.extend(_options(av[-1]))
        elif kind == "ATOMIC_GROUP":
            options.extend(_options(av))
        elif kind == "IN" and all(str(o) == "LITERAL" and v > 0x7F for o, v in av):
            options.append({chr(v).lower() for _, v in av})
        elif kind == "BRANCH":
            picks = [_best(_options(branch)) for branch in av[1]]
            if all(picks):
                options.append(set().union(*(p for p in picks if p)))
    options.extend(_run_words(run))
    return options


def _run_words(run: str) -> list[set[str]]:
    """The required pieces of a literal run: its words (a shared root standing for a word
    that holds it), else its non-ASCII symbols, else the run itself. A run of words and
    punctuation is also offered whole: rarer than its words, though colour codes could
    split it, so it is chosen only when its words are all common."""
    folded = run.lower()
    pieces = _WORD.findall(folded) or _SYMBOLS.findall(folded)
    whole = folded.strip()
    if not pieces and len(folded.lstrip()) >= 2:
        pieces = [folded.lstrip()]
    options = [{next((r for r in _ROOTS if r in p), p)} for p in pieces]
    if len(whole) >= 5 and _WORD.fullmatch(whole) is None and all(p in _COMMON for p in pieces):
        options.append({whole})
    return options


def _best(options: list[set[str]]) -> set[str] | None:
    return max(options, key=_score) if options else None


def _score(words: set[str]) -> tuple[bool, bool, int, int]:
    rare = not any(w in _COMMON for w in words)
    shared = all(w in _ROOTS for w in words)
    return rare, shared, min(len(w.encode()) for w in words), -len(words)


def _cover(alternatives: list[list[set[str]]]) -> list[str]:
    """Few words that find every alternative: the most constrained alternatives choose
    first, and an alternative already found by the chosen words adds none."""
    popularity: dict[str, int] = {}
    for options in alternatives:
        for word in set().union(*options):
            popularity[word] = popularity.get(word, 0) + 1
    chosen: list[str] = []
    for options in sorted(alternatives, key=len):
        if any(all(any(c in w for c in chosen) for w in option) for option in options):
            continue
        best = max(
            options,
            key=lambda o: (_score(o)[0], sum(popularity[w] for w in o) / len(o), _score(o)),
        )
        chosen.extend(best)
    kept: list[str] = []
    for word in sorted(set(chosen), key=len):
        if not any(k in word for k in kept):
            kept.append(word)
    return kept


class LogScanner:
    """Streams a raw job log; `finish()` returns the clean lines worth parsing.

    At most `max_kept_bytes` of matched windows are held: past that the oldest windows are
    dropped (`truncated` becomes True), since runners print their summaries last.
    """

    def __init__(
        self,
        markers: re.Pattern[str] | Sequence[re.Pattern[str]] | None = None,
        before: int = 40,
        after: int = 300,
        tail_lines: int = 2000,
        max_kept_bytes: int = 16 * MIB,
    ) -> None:
        if markers is None:
            markers = parser_markers()
        self._triggers = _Triggers([markers] if isinstance(markers, re.Pattern) else markers)
        self.before = before
        self.after = after
        self.tail_lines = tail_lines
        self.max_kept_bytes = max_kept_bytes
        self.truncated = False
        self.bytes_read = 0
        self._partial = b""
        self._skipping_long_line = False
        # Windows kept so far: (number of their first line, whole raw lines).
        self._kept: deque[tuple[int, bytes]] = deque()
        self._kept_bytes = 0
        self._after_left = 0
        self._lines_done = 0  # complete lines scanned before the current block
        self._history = b""  # the last `before` lines scanned, for windows crossing a chunk
        self._history_emitted = 0  # how much of _history is already kept
        self._tail = b""

    def feed(self, chunk: bytes) -> None:
        self.bytes_read += len(chunk)
        if self._skipping_long_line:
            newline = chunk.find(b"\n")
            if newline < 0:
                return
            self._skipping_long_line = False
            chunk = chunk[newline + 1 :]
        data = self._partial + chunk if self._partial else chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if cut:
            self._scan(data[:cut])
        if len(self._partial) > _MAX_PARTIAL:
            self._scan(self._partial[:_MAX_PARTIAL] + b"\n")
            self._partial = b""
            self._skipping_long_line = True

    def finish(self) -> list[str]:
        """The kept lines, in log order, cleaned as `clean_log` cleans them."""
        if self._partial:
            self._scan(self._partial + b"\n")
            self._partial = b""
        tail_first = self._lines_done - self._tail.count(b"\n")
        lines: list[str] = []
        for first, piece in self._kept:
            if first >= tail_first:
                break
            overlap = first + piece.count(b"\n") - tail_first
            if overlap > 0:
                piece = piece[: _back(piece, len(piece), overlap, 0)]
            lines.extend(_clean(piece))
        lines.extend(_clean(self._tail))
        return lines

    def _scan(self, block: bytes) -> None:
        history = self._history
        buf = history + block
        base = len(history)
        window = _Window(self, buf, self._lines_done - history.count(b"\n"), self._history_emitted)
        if self._after_left:
            end, consumed = _forward(buf, base, self._after_left)
            window.keep(base, end)
            self._after_left -= consumed
        hits = self._triggers.hits(buf, base)
        n = 0
        while n < len(hits):
            hit, tries = hits[n]
            line_start = buf.rfind(b"\n", 0, hit) + 1
            line_end = buf.find(b"\n", hit) + 1
            n += 1
            if n < len(hits) and hits[n][0] < line_end:
                tries = list(tries)
                while n < len(hits) and hits[n][0] < line_end:
                    tries.extend(hits[n][1])
                    n += 1
            if not self._is_marker(buf[line_start:line_end], tries):
                continue
            if line_start < window.emitted:
                # Inside a kept window: only lengthen it to `after` lines past this one.
                need = self.after - buf.count(b"\n", line_end, window.emitted)
                if need <= 0:
                    continue
                end, consumed = _forward(buf, window.emitted, need)
                window.keep(window.emitted, end)
                self._after_left = need - consumed
                continue
            start = _back(buf, line_start, self.before, window.emitted)
            end, consumed = _forward(buf, line_end, self.after)
            window.keep(start, end)
            self._after_left = self.after - consumed

        self._lines_done += block.count(b"\n")
        cut = _back(buf, len(buf), self.before, 0)
        self._history = buf[cut:]
        self._history_emitted = max(window.emitted - cut, 0)
        tail = self._tail + block
        self._tail = tail[_back(tail, len(tail), self.tail_lines, 0) :]

    def _is_marker(self, raw_line: bytes, alternatives: list[int]) -> bool:
        line = raw_line[:_MAX_CANDIDATE].decode("utf-8", errors="replace")
        line = _TIMESTAMP.sub("", line, count=1)
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if "\r" in line:
            line = line.replace("\r\n", "\n")
        if not line.endswith("\n"):
            line += "\n"
        checks = self._triggers.checks
        return any(checks[i].search(line) is not None for i in alternatives)

    def _keep(self, first_line: int, piece: bytes) -> None:
        self._kept.append((first_line, piece))
        self._kept_bytes += len(piece)
        while self._kept_bytes > self.max_kept_bytes and len(self._kept) > 1:
            self._kept_bytes -= len(self._kept.popleft()[1])
            self.truncated = True


class _Window:
    """Keeps pieces of one scanned buffer, never twice, numbering their lines as it goes."""

    def __init__(self, scanner: LogScanner, buf: bytes, first_line: int, emitted: int) -> None:
        self.scanner = scanner
        self.buf = buf
        self.emitted = emitted
        self._pos = 0
        self._line = first_line

    def keep(self, start: int, end: int) -> None:
        start = max(start, self.emitted)
        if end <= start:
            return
        self._line += self.buf.count(b"\n", self._pos, start)
        self._pos = start
        self.scanner._keep(self._line, self.buf[start:end])
        self.emitted = end


def _clean(piece: bytes) -> list[str]:
    return clean_log(piece.decode("utf-8", errors="replace"))


def _back(text: bytes, pos: int, lines: int, floor: int) -> int:
    """The start of the line `lines` lines above the one starting at `pos`, not below floor."""
    for _ in range(lines):
        if pos <= floor:
            return floor
        pos = text.rfind(b"\n", 0, pos - 1) + 1
    return max(pos, floor)


def _forward(text: bytes, pos: int, lines: int) -> tuple[int, int]:
    """The end of `lines` whole lines from `pos` (or of the text), and how many there were."""
    for count in range(lines):
        newline = text.find(b"\n", pos)
        if newline < 0:
            return pos, count
        pos = newline + 1
    return pos, lines
