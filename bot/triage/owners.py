"""Who owns a file, by the repository's CODEOWNERS, read as GitHub reads it.

GitHub looks for the file in `.github/`, then at the root, then in `docs/`, and uses the first
it finds (CODEOWNERS_PATHS). Each line is a pattern and its owners (`@user`, `@org/team`, an
email address); `#` starts a comment (at the start of a line, or after a space); the last
line whose pattern matches a path wins, and a pattern with no owners leaves the path unowned.
Patterns follow gitignore's rules (a leading or inner `/` anchors at the root, a trailing `/`
names a directory, `*` stays within a segment, `**` spans them) with GitHub's exceptions:
`docs/*` owns the files directly in `docs/`, not deeper ones; `!` negation, `[ ]` ranges and
`\\` escapes do not work, so a line using them is invalid. An invalid line is skipped, the
rest read, as GitHub does, and each is named once in `Codeowners.problems`. Paths are case
sensitive. A file of 3 MB or more is not loaded at all (GitHub's limit).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum

from bot.triage.user_regex import UserRegex, UserRegexError, compile_user

CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
MAX_BYTES = 3 * 1024 * 1024
# Problems named per file: a file of thousands of bad lines is named by its first ones.
MAX_PROBLEMS = 20
MAX_PATTERN = 4096  # characters: longer than any path GitHub keeps

_USER = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_TEAM = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_UNSUPPORTED = {"!": "`!` negation", "[": "`[ ]` ranges", "]": "`[ ]` ranges", "\\": "escapes"}


class OwnerKind(StrEnum):
    USER = "user"
    TEAM = "team"
    EMAIL = "email"


@dataclass(frozen=True)
class Owner:
    """One owner as written: `@octocat`, `@octo-org/octocats` or `docs@example.com`."""

    text: str

    @property
    def kind(self) -> OwnerKind:
        if "@" in self.text[1:]:
            return OwnerKind.EMAIL
        return OwnerKind.TEAM if "/" in self.text else OwnerKind.USER

    @property
    def name(self) -> str:
        """Without the `@`: shown without notifying anyone."""
        return self.text.removeprefix("@")


def owner_of(token: str) -> Owner | None:
    """The owner a token names, or None when it names none GitHub accepts."""
    for shape in (_TEAM, _USER, _EMAIL):
        if shape.fullmatch(token):
            return Owner(token)
    return None


@dataclass(frozen=True)
class Rule:
    line: int  # 1-based, as people count lines
    pattern: str
    owners: tuple[Owner, ...]
    source: str = field(compare=False, repr=False)  # the regex of the paths it owns
    # What every path it owns starts with ("" for a pattern that may match at any depth):
    # most lines of a large file are rooted paths, ruled out by this alone.
    prefix: str = field(compare=False, repr=False)

    @functools.cached_property
    def regex(self) -> UserRegex | None:
        """Compiled the first time a path passes the prefix (a file of thousands of lines
        is read for a few paths); None when RE2 cannot compile it (too large), which then
        matches nothing."""
        try:
            return compile_user(self.source)
        except UserRegexError:
            return None

    def matches(self, path: str) -> bool:
        if not path.startswith(self.prefix):
            return False
        regex = self.regex
        return regex is not None and regex.fullmatch(path) is not None


@dataclass(frozen=True)
class Codeowners:
    path: str  # where it was read, e.g. ".github/CODEOWNERS"; "" when there is none
    rules: tuple[Rule, ...] = ()
    problems: tuple[str, ...] = ()  # one per invalid line: "line 3: ..."

    def owners(self, path: str) -> tuple[Owner, ...]:
        """The owners of `path` (repository-relative, `/`-separated): the last matching
        line's, none when no line matches or that line names nobody."""
        for rule in reversed(self.rules):
            if rule.matches(path):
                return rule.owners
        return ()

    def owners_of_all(self, paths: list[str]) -> list[Owner]:
        """The owners of any of `paths`, each once, in the order first named."""
        seen: dict[Owner, None] = {}
        for path in paths:
            seen.update(dict.fromkeys(self.owners(path)))
        return list(seen)


NO_CODEOWNERS = Codeowners(path="")


def parse(text: str, path: str) -> Codeowners:
    """Read a CODEOWNERS file (`path`: where it was found, for the problems' wording)."""
    if len(text.encode("utf-8", errors="replace")) >= MAX_BYTES:
        return Codeowners(path, problems=(f"{path} is 3 MB or more; GitHub does not load it",))
    rules: list[Rule] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        parsed = _parse_line(raw, number)
        if isinstance(parsed, Rule):
            rules.append(parsed)
        elif parsed:
            problems.append(f"line {number}: {parsed}")
    shown = problems[:MAX_PROBLEMS]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"and {len(problems) - MAX_PROBLEMS:,} more invalid lines")
    return Codeowners(path, tuple(rules), tuple(shown))


def _parse_line(raw: str, number: int) -> Rule | str:
    """A line's rule, or why it is invalid; "" for a blank or comment line."""
    tokens: list[str] = []
    for token in raw.split():
        if token.startswith("#"):
            break  # a comment, to the end of the line
        tokens.append(token)
    if not tokens:
        return ""
    pattern, named = tokens[0], tokens[1:]
    unsupported = sorted({why for char, why in _UNSUPPORTED.items() if char in pattern})
    if unsupported:
        return f"{_quoted(pattern)} uses {' and '.join(unsupported)}, which CODEOWNERS lacks"
    owners = [owner_of(token) for token in named]
    bad = [token for token, owner in zip(named, owners, strict=True) if owner is None]
    if bad:
        return f"{_quoted(bad[0])} is not a user, team or email address"
    if len(pattern) > MAX_PATTERN:
        return f"{_quoted(pattern)}... is longer than {MAX_PATTERN:,} characters"
    # Run by RE2, in time linear in the path: a pattern of many `**` and `*` would make a
    # backtracking engine's time grow as a power of the path's length.
    return Rule(
        number, pattern, tuple(o for o in owners if o), _translate(pattern), _prefix(pattern)
    )


def _prefix(pattern: str) -> str:
    """The literal start of a rooted pattern's paths; "" when it may match at any depth."""
    body = pattern.strip("/")
    if "/" not in body and not pattern.startswith("/"):
        return ""
    literal = re.match(r"[^*?]*", body)
    return literal[0] if literal else ""


def _quoted(text: str) -> str:
    return repr(text[:80])


def _translate(pattern: str) -> str:
    """The paths of files `pattern` owns, as one regex."""
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    anchored = "/" in body or pattern.startswith("/")
    segments = body.split("/")
    parts: list[str] = ["(?s)"] if anchored else ["(?s)(?:.*/)?"]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:.*/)?")
        else:
            parts.append(_segment(segment) + ("" if last else "/"))
    if directory:
        parts.append("/.+")  # a directory: everything under it
    elif segments[-1] != "*":
        parts.append("(?:/.+)?")  # a file, or a directory and everything under it
    return "".join(parts)


def _segment(segment: str) -> str:
    return "".join(
        "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in segment
    )
