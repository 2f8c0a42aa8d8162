"""Read a job log of any size in bounded memory, keeping only the lines parsers need.

A `LogScanner` is fed the log's raw bytes chunk by chunk and keeps every line a marker matches
(the union of every registered parser's marker and the infrastructure patterns), with `before` lines
above and `after` lines below it, plus the log's last `tail_lines` lines.

Python's regex engine has no fast path for an alternation of anchored patterns (tens of MB/s
at best), so the scan is done in two steps. Each marker alternative holds a word it cannot
match without ("FAIL", "panic", "rootdir", ...); all those words are found case-folded in ONE
pass of Hyperscan's multi-literal matcher over the raw chunk (GB/s), and only the lines
holding one are cleaned and tried against the alternatives that word stands for. Python only
touches candidate lines, kept windows and the tail; positions are byte offsets, so no pass
counts the lines of the log. Where Hyperscan is not installed, RE2 finds the same words
(`literals.py`), slower; `use_engine` picks one for the process.
"""

from __future__ import annotations

import functools
import importlib
import re
import string
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from bot.triage.infra import INFRA_MARKER
from bot.triage.literals import (
    ENGINES,
    HYPERSCAN,
    LiteralSearch,
    compile_literals,
    default_engine,
    hyperscan_installed,
)
from bot.triage.parsers import REGISTRY
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.custom import MAX_LINE
from bot.triage.user_regex import UserRegex

MIB = 1024 * 1024

# A line longer than this without a newline is cut; the rest of it is dropped.
_MAX_PARTIAL = MIB
# The scanned text held back for the tail before it is cut to its last lines.
_RECENT_BYTES = 16 * MIB
# The log's first bytes are kept as they are: where the runner describes itself.
HEAD_BYTES = 32 * 1024
# A candidate line is tried against the markers on its first characters only.
_MAX_CANDIDATE = 4096
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_WORD = re.compile(r"\w{3,}")
_COMMAND = re.compile(r"##\[[a-z]+\]")
_LINE_START = re.compile(rb"^(?=[\s\S])", re.MULTILINE)
_SYMBOLS = re.compile(r"[^\x00-\x7f]+")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_JOIN = "\x00"  # between a word and the literal text that must follow it
# Words most markers share: a word holding one is replaced by it, so one search serves many.
_ROOTS = ("fail", "error", "panic")
# Words on most lines of a passing run: a marker is found by another of its words if it has one.
_COMMON = frozenset({"test", "tests", "pass", "passed", "run", "std", "out", "err", "not", "----"})

_sre: Any = importlib.import_module("re._parser")


# What a line is kept for: a registered parser's marker, or a repository's own pattern (run by RE2).
Marker = re.Pattern[str] | UserRegex

# What the infrastructure patterns stand for among `parser_marker_names()`.
INFRA = "infra"


# The literal search LogScanners use unless told otherwise; None: `default_engine()`.
_chosen_engine: str | None = None


def use_engine(name: str) -> str:
    """Make the LogScanners made from now on search with `name`, one of ENGINES or "auto"
    (Hyperscan when it is installed), and return the engine chosen. ValueError names what
    is wrong: an unknown name, or Hyperscan asked for and not installed."""
    global _chosen_engine
    engine = default_engine() if name == "auto" else name
    if engine not in ENGINES:
        raise ValueError(f"unknown log scanner {name!r}: auto, {', '.join(ENGINES)}")
    if engine == HYPERSCAN and not hyperscan_installed():
        raise ValueError("the hyperscan log scanner is not installed: pip install hyperscan")
    _chosen_engine = engine
    return engine


def engine_in_use() -> str:
    """The literal search a LogScanner made now uses."""
    return _chosen_engine or default_engine()


def parser_markers() -> list[re.Pattern[str]]:
    """Every registered log parser's marker in REGISTRY order, then the infrastructure
    patterns: `parser_marker_names()` names them."""
    return [*(parser.marker for parser in REGISTRY), INFRA_MARKER]


def parser_marker_names() -> list[str]:
    """What each of `parser_markers()` stands for, in its order: a REGISTRY name, or INFRA."""
    return [*(parser.name for parser in REGISTRY), INFRA]


class _Triggers:
    """Where marker lines may be, found fast, and the marker alternatives to try there.

    Every top-level alternative of every marker is compiled alone. Most hold a word they
    cannot match without: those words are searched case-folded, and a line holding one is
    tried against the alternatives that word stands for. An alternative without such a word
    is tried on every line: correct, and slow (no parser's marker needs it; a repository's
    pattern may).
    """

    def __init__(self, patterns: Iterable[Marker], engine: str) -> None:
        self.checks: list[_Check] = []
        self.owner: list[int] = []  # per check, the index of the pattern it comes from
        self.slow: list[int] = []
        options_of: list[list[set[str]]] = []
        for owner, pattern in enumerate(patterns):
            for check, options in _checks(pattern):
                index = len(self.checks)
                self.checks.append(check)
                self.owner.append(owner)
                options_of.append(options)
                if not options:
                    self.slow.append(index)
        words = _cover([o for o in options_of if o])
        self.stands_for = [
            [i for i, options in enumerate(options_of) if any(w in x for o in options for x in o)]
            for w in words
        ]
        self._search: LiteralSearch | None = None
        literals = [(literal, i) for i, word in enumerate(words) for literal in _literals(word)]
        if literals:
            self._search = compile_literals(literals, engine)

    def scratch(self) -> object:
        """The search's working memory for one scan at a time: the compiled search is shared
        by every scanner of the same markers, which may run in several threads at once."""
        return None if self._search is None else self._search.scratch()

    def hits(self, buf: bytes, lo: int, hi: int, scratch: object) -> list[tuple[int, int]]:
        """(offset, word) for every word found in buf[lo:hi], in log order; the offset is
        inside the line holding the word, and the word -1 stands for every line. `scratch`
        is the caller's own, from `scratch()`."""
        found = [] if self._search is None else list(self._search.hits(buf, lo, hi, scratch))
        if self.slow:
            found.extend((m.start(), -1) for m in _LINE_START.finditer(buf, lo, hi))
        found.sort()
        return found

    def alternatives(self, words: Iterable[int]) -> set[int]:
        """The alternatives to try on a line holding these words (-1: a line of any text)."""
        tries: set[int] = set()
        for word in words:
            tries.update(self.slow if word < 0 else self.stands_for[word])
        return tries


class _Check(Protocol):
    def search(self, line: str, /) -> object | None: ...


class _LineCheck:
    """A repository's pattern on a candidate line, as parse_custom runs it: on the line's
    first MAX_LINE characters, without its newline (RE2's `$` is only the text's end)."""

    def __init__(self, regex: UserRegex) -> None:
        self.regex = regex

    def search(self, line: str, /) -> object | None:
        return self.regex.search(line.removesuffix("\n")[:MAX_LINE])


def _checks(pattern: Marker) -> list[tuple[_Check, list[set[str]]]]:
    """What to try on a candidate line for `pattern`, each with the words one of which every
    line it matches holds (none: every line is a candidate)."""
    if isinstance(pattern, UserRegex):
        return [(_LineCheck(pattern), _user_options(pattern.source))]
    flags = pattern.flags & ~re.MULTILINE
    return [
        (re.compile(source, flags), _needed(_sre.parse(source, flags), flags))
        for source in _alternatives(pattern)
    ]


def _user_options(source: str) -> list[set[str]]:
    """The words a repository's pattern needs, read by Python's parser from RE2 syntax, which
    is near enough: a word misread only loses lines to its own pattern, and syntax Python
    does not know (`\\pL`, `\\Q...\\E`) leaves none, so the pattern is tried on every line."""
    try:
        parsed = _sre.parse(source)
    except (re.error, RecursionError):
        return []
    return _needed(parsed, parsed.state.flags)


def _needed(parsed: Any, flags: int) -> list[set[str]]:
    options = _options(parsed)
    if flags & re.IGNORECASE:
        # The search folds ASCII only: a word with other cased letters may be written in
        # another case than the pattern's.
        options = [o for o in options if not any(map(_has_other_case, o))]
    return options


@functools.lru_cache(maxsize=64)
def _triggers_for(patterns: tuple[Marker, ...], engine: str) -> _Triggers:
    """Built once per set of markers: compiling them costs tens of milliseconds, and every
    job of a repository uses the same set. Sharing is safe, across threads too: a scan keeps
    no state in them, and each scanner has its own scratch."""
    return _Triggers(patterns, engine)


def _literals(word: str) -> list[bytes]:
    """What to search for a word. A word joined to the text that must follow it is also
    searched with an escape sequence after it, since colour codes may close between the two
    (`PASS\\x1b[0m [`)."""
    head, joined, tail = word.partition(_JOIN)
    if not joined:
        return [word.encode()]
    return [(head + tail).encode(), (head + "\x1b").encode()]


def _fold(text: str) -> str:
    """Lower case for ASCII letters only, as the search folds them."""
    return text.translate(_ASCII_LOWER)


def _has_other_case(word: str) -> bool:
    return any(ord(c) > 0x7F and c.lower() != c.upper() for c in word)


def _alternatives(pattern: re.Pattern[str]) -> list[str]:
    """The pattern's top-level alternatives, or the whole pattern when they do not stand
    alone (a backreference to another alternative's group)."""
    parts = _split_top(pattern.pattern)
    flags = pattern.flags & ~re.MULTILINE
    for part in parts:
        try:
            re.compile(part, flags)
        except re.error:
            return [pattern.pattern]
    return parts


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


def _options(items: Any, suffix: str = "") -> list[set[str]]:
    """Ways to find a match of `items`: each is a set of case-folded words, one of which
    every match holds. A sequence offers one option per required piece; an alternation one
    option, taking a word from each branch. `suffix` is the literal text that follows
    `items` in the enclosing pattern: a word ending a branch is searched with it."""
    items = list(items)
    options: list[set[str]] = []
    run = ""
    after_digit = False  # the run started right after a required digit (`\d+`)
    for k, (op, av) in enumerate(items):
        kind = str(op)
        after = _following(items, k) if k + 1 < len(items) else suffix
        if kind == "LITERAL":
            run += chr(av)
            continue
        if kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _, sub = av
            if low >= 1 and len(sub) == 1 and str(sub[0][0]) == "LITERAL":
                run += chr(sub[0][1]) * min(low, 8)
        options.extend(_digit_led(run) if after_digit else _run_words(run))
        after_digit = _is_digits(kind, av)
        run = ""
        if kind == "SUBPATTERN":
            options.extend(_options(av[-1], after))
        elif kind == "ATOMIC_GROUP":
            options.extend(_options(av, after))
        elif kind == "ASSERT" and av[0] == 1:  # a lookahead: what it needs, the line holds
            options.extend(_options(av[1]))
        elif kind == "IN" and all(str(o) == "LITERAL" and v > 0x7F for o, v in av):
            options.append({chr(v) for _, v in av})
        elif kind == "BRANCH":
            picks = [_best(_options(branch, after)) for branch in av[1]]
            if all(picks):
                options.append(set().union(*(p for p in picks if p)))
    options.extend(_run_words(run, suffix))
    return options


def _is_digits(kind: str, av: Any) -> bool:
    r"""A repeat, at least once, of `\d` alone."""
    if kind not in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") or av[0] < 1:
        return False
    sub = list(av[2])
    if len(sub) != 1 or str(sub[0][0]) != "IN":
        return False
    return [(str(o), str(v)) for o, v in sub[0][1]] == [("CATEGORY", "CATEGORY_DIGIT")]


def _digit_led(run: str) -> list[set[str]]:
    r"""A run after a digit: punctuation alone (`\d+\) `) is searched with each digit before
    it, or the end of a colour code (`m`: `1\x1b[0m) `). Two bytes such as `) ` are on many
    lines of real logs, and a literal that short also slows the multi-literal search down
    (twice, on the bench's log and on the corpus's)."""
    folded = _fold(run)
    if not folded or folded[0].isspace() or _WORD.search(folded) or len(folded.encode()) > 2:
        return _run_words(run)
    return [{lead + folded for lead in string.digits + "m"}]


def _following(items: list[Any], k: int) -> str:
    """The literal text right after item k of a sequence."""
    text = ""
    for op, av in items[k + 1 :]:
        if str(op) != "LITERAL":
            break
        text += chr(av)
    return _fold(text)


def _run_words(run: str, suffix: str = "") -> list[set[str]]:
    """The required pieces of a literal run: its words (a shared root standing for a word
    that holds it), else its non-ASCII symbols, else the run itself. A run of words and
    punctuation is also offered whole: rarer than its words, though colour codes could
    split it, so it is chosen only when its words are all common."""
    folded = _fold(run)
    pieces = _WORD.findall(folded) or _SYMBOLS.findall(folded)
    whole = folded.strip()
    if not pieces and len(folded.lstrip()) >= 2:
        pieces = [folded.lstrip()]
    options = [{next((r for r in _ROOTS if r in p), p)} for p in pieces]
    if suffix.strip() and pieces and folded.endswith(pieces[-1]) and options[-1] == {pieces[-1]}:
        # A word that ends a branch, with the text after the branch: colour codes may
        # close between the two (`PASS\x1b[0m [`), so they are searched with that gap.
        options[-1] = {pieces[-1] + _JOIN + suffix}
    if len(whole) >= 5 and _WORD.fullmatch(whole) is None and all(map(_is_common, pieces)):
        options.append({whole})
    return options


def _is_common(word: str) -> bool:
    """On many lines of any log: the words of passing output, and bits of punctuation."""
    return word in _COMMON or (len(word) < 4 and not any(c.isalnum() for c in word))


def _best(options: list[set[str]]) -> set[str] | None:
    return max(options, key=_score) if options else None


def _score(words: set[str]) -> tuple[bool, bool, int, int]:
    rare = not any(_is_common(w) for w in words)
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
    `markers_seen` holds the indices (into `markers`) of the markers that matched a line of
    the log, or may have: a line longer than what is read of it counts for every marker
    its words stand for. It is complete once `finish()` has returned.
    `engine` is the literal search (`literals.ENGINES`) that finds candidate lines; both
    keep the same lines. None: `engine_in_use()`.
    """

    def __init__(
        self,
        markers: Marker | Sequence[Marker] | None = None,
        before: int = 40,
        after: int = 300,
        tail_lines: int = 2000,
        max_kept_bytes: int = 16 * MIB,
        engine: str | None = None,
    ) -> None:
        if markers is None:
            markers = parser_markers()
        self.engine = engine or engine_in_use()
        self._triggers = _triggers_for(
            (markers,) if isinstance(markers, re.Pattern | UserRegex) else tuple(markers),
            self.engine,
        )
        self._scratch = self._triggers.scratch()
        self.before = before
        self.after = after
        self.tail_lines = tail_lines
        self.max_kept_bytes = max_kept_bytes
        self.truncated = False
        self.markers_seen: set[int] = set()
        self.bytes_read = 0
        self._head = b""
        self._partial = b""
        self._skipping_long_line = False
        # Lines are placed by their offset in the scanned text (the log, with cut long lines
        # shortened): numbering them would cost a pass over every byte.
        self._scanned = 0
        # Windows kept so far: (offset of their first byte, whole raw lines).
        self._kept: deque[tuple[int, bytes]] = deque()
        self._kept_bytes = 0
        self._after_left = 0
        self._history = b""  # the last `before` lines scanned, for windows crossing a block
        self._history_emitted = 0  # how much of _history is already kept
        # The blocks scanned last, as (buffer, start, end of the block in it): the tail is
        # cut from them only once they outgrow _trim_at, to walk its lines back rarely.
        self._recent: list[tuple[bytes, int, int]] = []
        self._recent_bytes = 0
        self._trim_at = _RECENT_BYTES

    def feed(self, chunk: bytes) -> None:
        # Blocks are held for the tail: a caller's reused bytearray must not change them.
        chunk = bytes(chunk)
        if self.bytes_read < HEAD_BYTES:
            self._head += chunk[: HEAD_BYTES - self.bytes_read]
        self.bytes_read += len(chunk)
        if self._skipping_long_line:
            newline = chunk.find(b"\n")
            if newline < 0:
                return
            self._skipping_long_line = False
            chunk = chunk[newline + 1 :]
        cut = chunk.rfind(b"\n") + 1
        if cut:
            # The chunk is scanned where it lies, but for the line it finishes: copying a
            # whole chunk behind the previous one's end cost a fifth of the scan.
            first = chunk.find(b"\n") + 1
            if self._partial:
                self._scan_joined(self._partial, chunk[:first])
            else:
                first = 0
            if first < cut:
                self._scan(chunk, first, cut)
            self._partial = chunk[cut:]
        else:
            self._partial += chunk
        if len(self._partial) > _MAX_PARTIAL:
            self._scan_joined(memoryview(self._partial)[:_MAX_PARTIAL], b"\n")
            self._partial = b""
            self._skipping_long_line = True

    def finish(self) -> list[str]:
        """The kept lines, in log order, cleaned as `clean_log` cleans them."""
        if self._partial:
            self._scan_joined(self._partial, b"\n")
            self._partial = b""
        tail = b"".join(memoryview(buf)[start:end] for buf, start, end in self._tail())
        tail_start = self._scanned - len(tail)
        lines: list[str] = []
        for start, piece in self._kept:
            if start >= tail_start:
                break
            lines.extend(_clean(piece[: tail_start - start]))
        lines.extend(_clean(tail))
        return lines

    def head_lines(self) -> list[str]:
        """The whole lines among the log's first HEAD_BYTES, cleaned as `finish` cleans
        them: the runner's header (`runner_header.py`)."""
        whole = (
            self._head
            if len(self._head) < HEAD_BYTES
            else self._head[: self._head.rfind(b"\n") + 1]
        )
        return _clean(whole)

    def _scan_joined(self, *pieces: bytes | memoryview) -> None:
        buf = b"".join(pieces)
        self._scan(buf, 0, len(buf))

    def _scan(self, buf: bytes, lo: int, hi: int) -> None:
        """Scan buf[lo:hi], whole lines, after the history: the lines scanned before it."""
        window = _Window(self, buf, self._scanned - lo, lo)
        if self._after_left:
            stop, consumed = _forward(buf, lo, self._after_left, hi)
            window.keep(lo, stop)
            self._after_left -= consumed
        hits = self._triggers.hits(buf, lo, hi, self._scratch)
        # buf[lo - 1] ends the line before lo, so no line found here starts before lo.
        floor = max(lo - 1, 0)
        n = 0
        while n < len(hits):
            hit = hits[n][0]
            line_start = buf.rfind(b"\n", floor, hit) + 1
            line_end = buf.find(b"\n", hit, hi) + 1
            words = {hits[n][1]}
            n += 1
            while n < len(hits) and hits[n][0] < line_end:
                words.add(hits[n][1])
                n += 1
            if not self._is_marker(buf[line_start:line_end], self._triggers.alternatives(words)):
                continue
            if line_start < window.emitted:
                # Inside a kept window: only lengthen it to `after` lines past this one.
                need = self.after - buf.count(b"\n", line_end, window.emitted)
                if need <= 0:
                    continue
                stop, consumed = _forward(buf, window.emitted, need, hi)
                window.keep(window.emitted, stop)
                self._after_left = need - consumed
                continue
            start, missing = _back_counting(buf, line_start, self.before, window.emitted)
            if missing and window.emitted == lo:
                self._keep_history(missing)
            stop, consumed = _forward(buf, line_end, self.after, hi)
            window.keep(start, stop)
            self._after_left = self.after - consumed

        self._remember(buf, lo, hi, window.emitted)
        self._scanned += hi - lo
        self._recent.append((buf, lo, hi))
        self._recent_bytes += hi - lo
        if self._recent_bytes > self._trim_at:
            self._recent = self._tail()
            self._recent_bytes = sum(end - start for _, start, end in self._recent)
            # A tail of long lines may be most of what is held: let it double before the
            # next walk, so the walks cost a bounded share of the scan.
            self._trim_at = max(_RECENT_BYTES, 2 * self._recent_bytes)

    def _keep_history(self, lines: int) -> None:
        """Keep the history's last `lines` lines not kept yet: a window's start before the
        block being scanned, whose first byte is at `_scanned`."""
        history = self._history
        start = _back(history, len(history), lines, self._history_emitted)
        if start < len(history):
            self._keep(self._scanned - len(history) + start, history[start:])
        self._history_emitted = len(history)

    def _remember(self, buf: bytes, lo: int, hi: int, emitted: int) -> None:
        """Make the last `before` lines of the history and buf[lo:hi] the new history;
        `emitted` is how much of buf is kept."""
        cut, missing = _back_counting(buf, hi, self.before, lo)
        if not missing:
            self._history = buf[cut:hi]
            self._history_emitted = max(emitted - cut, 0)
            return
        history = self._history
        start = _back(history, len(history), missing, 0)
        self._history = history[start:] + buf[lo:hi]
        if emitted > lo:
            self._history_emitted = len(history) - start + emitted - lo
        else:
            self._history_emitted = max(self._history_emitted - start, 0)

    def _tail(self) -> list[tuple[bytes, int, int]]:
        """The recent blocks cut to the last `tail_lines` lines, as (buffer, start, end)."""
        lines = self.tail_lines
        for k in range(len(self._recent) - 1, -1, -1):
            buf, base, end = self._recent[k]
            start, lines = _back_counting(buf, end, lines, base)
            if not lines:
                return [(buf, start, end), *self._recent[k + 1 :]]
        return self._recent

    def _is_marker(self, raw_line: bytes, alternatives: Iterable[int]) -> bool:
        line = raw_line[:_MAX_CANDIDATE].decode("utf-8", errors="replace")
        line = _TIMESTAMP.sub("", line, count=1)
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if "\r" in line:
            line = line.replace("\r\n", "\n")
        if not line.endswith("\n"):
            line += "\n"
        # `##[error]text` carries the job's own output (`echo "::error::text"`), which the
        # repository's patterns read without the command.
        command = _COMMAND.match(line)
        text = line[command.end() :] if command else ""
        checks = self._triggers.checks
        owner = self._triggers.owner
        seen = self.markers_seen
        if len(raw_line) > _MAX_CANDIDATE:
            # A marker may match past the part read: running a parser for nothing costs
            # less than missing its failure.
            seen.update(owner[i] for i in alternatives)

        def matches(i: int) -> bool:
            return checks[i].search(line) is not None or (
                bool(text) and checks[i].search(text) is not None
            )

        # Every alternative of a marker not seen yet is tried, to know which markers fired;
        # those of markers already seen only until one matches.
        hit = False
        for i in alternatives:
            if owner[i] not in seen and matches(i):
                seen.add(owner[i])
                hit = True
        return hit or any(matches(i) for i in alternatives if owner[i] in seen)

    def _keep(self, offset: int, piece: bytes) -> None:
        self._kept.append((offset, piece))
        self._kept_bytes += len(piece)
        while self._kept_bytes > self.max_kept_bytes and len(self._kept) > 1:
            self._kept_bytes -= len(self._kept.popleft()[1])
            self.truncated = True


class _Window:
    """Keeps pieces of one scanned buffer, never twice."""

    def __init__(self, scanner: LogScanner, buf: bytes, offset: int, emitted: int) -> None:
        self.scanner = scanner
        self.buf = buf
        self.offset = offset  # of buf[0] in the scanned text
        self.emitted = emitted

    def keep(self, start: int, end: int) -> None:
        start = max(start, self.emitted)
        if end <= start:
            return
        self.scanner._keep(self.offset + start, self.buf[start:end])
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


def _back_counting(text: bytes, pos: int, lines: int, floor: int) -> tuple[int, int]:
    """`_back`, and how many of the lines were missing above floor."""
    while lines and pos > floor:
        pos = text.rfind(b"\n", floor, pos - 1) + 1
        lines -= 1
    return max(pos, floor), lines


def _forward(text: bytes, pos: int, lines: int, end: int) -> tuple[int, int]:
    """The end of `lines` whole lines from `pos` (or of text[:end]), and how many there were."""
    for count in range(lines):
        newline = text.find(b"\n", pos, end)
        if newline < 0:
            return pos, count
        pos = newline + 1
    return pos, lines
