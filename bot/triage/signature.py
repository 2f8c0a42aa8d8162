"""Normalise error text so the same failure in two runs has the same signature.

What changes from run to run (addresses, ids, temp paths, times, ports, durations, long
numbers) is replaced by a placeholder; what stays (exception type, words, short numbers)
is kept. Only the first lines count: later lines are mostly values and diffs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.triage.user_regex import UserRegexError, compile_user

MAX_LINES = 2
MAX_LENGTH = 240
# Regexes never see more than this; it bounds the work on a pathological message.
_MAX_INPUT = 2000

# Order matters: the specific patterns run before the generic number patterns they contain.
_REPLACEMENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    # <foo.Bar object at 0x7f...> -> <foo.Bar object>
    (re.compile(r"\s+at\s+0x[0-9a-fA-F]+(?=>)"), ""),
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?\b"
        ),
        "<time>",
    ),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"), "<time>"),
    (
        re.compile(
            r"(?:/private)?(?:/tmp|/var/tmp|/var/folders|/dev/shm)/[^\s'\"(),:;]*"
            r"|[A-Za-z]:\\[^\s'\"]*?\\Temp\\[^\s'\"(),;]*"
        ),
        "<tmp>",
    ),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<addr>"),
    (re.compile(r"(?i)\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]|::1):\d+"), r"\1:<port>"),
    (re.compile(r"(?i)\b(port)\s+\d+"), r"\1 <port>"),
    (
        re.compile(
            r"\b\d+(?:\.\d+)?\s*(?:ms|us|µs|ns|s|sec|secs|seconds?|mins?|minutes?|h|hours?)\b"
        ),
        "<duration>",
    ),
    (re.compile(r"\b\d+\.\d{3,}\b"), "<num>"),
    (re.compile(r"\b\d{4,}\b"), "<num>"),
    # Commit shas, content hashes: long hex words that still contain a letter here.
    (re.compile(r"\b[0-9a-fA-F]{12,}\b"), "<hex>"),
    (re.compile(r"[ \t]+"), " "),
)


def signature(message: str) -> str:
    """A short, run-independent form of `message`; "" for an empty message."""
    lines = [line.strip() for line in message[:_MAX_INPUT].splitlines() if line.strip()]
    text = " | ".join(lines[:MAX_LINES])
    for pattern, placeholder in _REPLACEMENTS:
        text = pattern.sub(placeholder, text)
    return text[:MAX_LENGTH]


# Messages that say a step or command failed without saying why: they never count as a
# match on their own, however often they recur.
GENERIC_MESSAGES: tuple[str, ...] = (
    r"(?:##\[error\]|Error: )?Process completed with exit code \d+\.?",
    r"(?:Error: )?(?:exit status|exit code|exited with code) \d+\.?",
    r"(?:Error: )?Command failed(?: with exit code \d+)?(?:: .*)?",
    r"(?:Error: )?\d+ tests? failed\.?",
    r"npm ERR! (?:Test failed\b.*|code ELIFECYCLE|errno \d+)",
    r"(?:make: \*\*\* )?\[[^\]]*\] Error \d+",
    r"(?:fail(?:ed|ure)?|error)[.:!]?",
)
_GENERIC = re.compile("|".join(f"(?:{p})" for p in GENERIC_MESSAGES), re.IGNORECASE)


def is_generic(message: str, extra: Sequence[str] = ()) -> bool:
    """True when `message` only says that something failed, not why.

    Empty messages are generic. `extra` holds a repository's own regexes (config key
    `generic_messages`); like the built-in ones, each must match the whole first line.
    """
    lines = [line.strip() for line in message[:_MAX_INPUT].splitlines() if line.strip()]
    if not lines:
        return True
    first = lines[0]
    if _GENERIC.fullmatch(first):
        return True
    return any(_matches_whole(pattern, first) for pattern in extra)


def _matches_whole(pattern: str, text: str) -> bool:
    """A repository's regex, run by RE2 in linear time (see user_regex), matches all of text."""
    try:
        regex = compile_user(pattern, ignore_case=True)
    except UserRegexError:
        # A pattern the settings refused matches nothing rather than failing the triage.
        return False
    return regex.fullmatch(text) is not None
