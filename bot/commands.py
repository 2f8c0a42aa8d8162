"""Read `/flaky` commands out of a comment's markdown, and answer refused ones (pure).

One command per line, at the start of the line (up to three spaces in, as markdown allows),
case-insensitive. Lines inside fenced or indented code blocks and quoted (`>`) lines are
never commands: quoting someone's `/flaky rerun` in a reply must not run it again.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

PREFIX = "/flaky"
MAX_PER_COMMENT = 5  # commands read from one comment; the rest are ignored and said so
MAX_ARGUMENT = 300  # characters: longer arguments are cut (test ids and check names are short)

_COMMAND = re.compile(r" {0,3}/flaky(?:\s+(?P<rest>.*))?$", re.IGNORECASE)
_FENCE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_QUOTE = re.compile(r" {0,3}>")
_ISSUE = re.compile(r"#?(?P<number>[1-9][0-9]{0,9})$")


class Name(StrEnum):
    RERUN = "rerun"
    STATUS = "status"
    HELP = "help"
    TRACK = "track"
    WRONG = "wrong"
    QUARANTINE = "quarantine"
    UNQUARANTINE = "unquarantine"


# A refused comment (not permitted, or over the hourly limit) costs writes anyone can cause:
# its author gets one reply on a PR in an hour, then reactions, then silence; and a PR's
# refusals, whoever gave them, are answered only so often in an hour.
REFUSAL_ANSWERS_PER_PERSON = 3  # a reply, then reactions
REFUSAL_REPLIES_PER_PR = 3
REFUSAL_ANSWERS_PER_PR = 10


class Answer(StrEnum):
    REPLY = "reply"  # the one-line reply and 😕
    REACTION = "reaction"  # 😕 only
    NOTHING = "nothing"


class Command(BaseModel):
    name: Name
    # rerun: a check name; wrong, track, unquarantine: a test id; quarantine: a test id and
    # an expiry, both optional (the handler tells them apart)
    argument: str = ""
    issue: int | None = None  # track: the issue to adopt
    # Why this became HELP: an unknown subcommand, or a command missing what it needs.
    problem: str | None = None


def parse_commands(body: str) -> list[Command]:
    """Every command in the comment, in order (the handler reads MAX_PER_COMMENT of them)."""
    commands: list[Command] = []
    fence: str | None = None
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if fence is not None:
            closing = _FENCE.match(line)
            if closing and _closes(fence, closing.group("fence"), closing.group("info")):
                fence = None
            continue
        opening = _FENCE.match(line)
        # A backtick fence's info string holds no backtick (else it is an inline code span).
        if opening and not (opening.group("fence")[0] == "`" and "`" in opening.group("info")):
            fence = opening.group("fence")
            continue
        if _QUOTE.match(line):
            continue
        # Four spaces or a tab in is an indented code block (or a paragraph's continuation):
        # the pattern allows three at most, so such lines are never commands.
        found = _COMMAND.match(line.rstrip())
        if found:
            commands.append(_command(found.group("rest") or ""))
    return commands


def _closes(opening: str, candidate: str, info: str) -> bool:
    return candidate[0] == opening[0] and len(candidate) >= len(opening) and not info.strip()


def _command(rest: str) -> Command:
    word, argument = _first_word(rest)
    argument = _unquote(argument.strip())[:MAX_ARGUMENT]
    try:
        name = Name(word.lower())
    except ValueError:
        problem = f"unknown command {PREFIX} {word}" if word else None
        return Command(name=Name.HELP, problem=problem)
    if name is Name.TRACK:
        number, test_id = _first_word(argument)
        issue = _ISSUE.match(number)
        test_id = _unquote(test_id.strip())
        if issue is None or not test_id:
            return Command(name=Name.HELP, problem=f"usage: {PREFIX} track #ISSUE TEST-ID")
        return Command(name=name, argument=test_id, issue=int(issue.group("number")))
    if name in (Name.STATUS, Name.HELP):
        argument = ""
    return Command(name=name, argument=argument)


def _first_word(text: str) -> tuple[str, str]:
    """The first word and the rest, split at the first run of whitespace."""
    parts = text.split(None, 1)
    return (parts[0], parts[1]) if len(parts) == 2 else (text.strip(), "")


def _unquote(text: str) -> str:
    """Drop one pair of surrounding backticks or quotes: `/flaky wrong `tests/a.py::t``."""
    for mark in ("`", '"', "'"):
        if len(text) >= 2 and text[0] == mark and text[-1] == mark:
            return text[1:-1].strip()
    return text


def refusal_answer(refused_by_login: int, refused_on_pr: int) -> Answer:
    """How to answer a refused comment, given how many comments were refused in the hour
    before it: the same person's on any PR of the repository, and anyone's on this PR."""
    if refused_by_login == 0 and refused_on_pr < REFUSAL_REPLIES_PER_PR:
        return Answer.REPLY
    if refused_by_login < REFUSAL_ANSWERS_PER_PERSON and refused_on_pr < REFUSAL_ANSWERS_PER_PR:
        return Answer.REACTION
    return Answer.NOTHING
