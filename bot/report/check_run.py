"""The bot's own check run, "flaky-triage": what the Checks tab and "Files changed" show.

Its summary is the sticky comment's verdict table (`comment.render_comment`, without the
comment's hidden marker), its annotations point at each failure's `file:line`, and its
conclusion never blocks a merge unless the repository asks for `strict`. Pure: the handler
(`handlers/check_report.py`) sends what this returns.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel

from bot.report.comment import MARKER, headline, render_comment, verdict_words
from bot.report.markdown import one_line, shorten
from bot.report.models import CheckReport, CommentInput
from bot.triage.models import Decision, Verdict

CHECK_NAME = "flaky-triage"
MAX_SUMMARY = 65_535  # characters GitHub takes in `output.summary`
MAX_TITLE = 255  # an annotation's title, and kept for the output's title too
MAX_MESSAGE = 4_000  # an annotation's message (GitHub takes 64 KB: this is for reading)
ANNOTATIONS_PER_REQUEST = 50  # GitHub refuses more in one create or update (422)
# GitHub keeps an annotation's line in a 32-bit integer and refuses one beyond it (422).
MAX_LINE = 2**31 - 1
# At most this many per head (ten requests): past it a mass failure would spend calls on
# notices the summary already counts.
MAX_ANNOTATIONS = 500

# The start of the stored output hash of a run last sent in progress (the merge gate waiting).
IN_PROGRESS = "in-progress:"

Level = Literal["notice", "warning", "failure"]
# Flaky or unrelated: worth a look, not the author's fault; related: the change broke it.
_LEVELS: dict[Verdict, Level] = {
    Verdict.FLAKY: "warning",
    Verdict.UNRELATED: "warning",
    Verdict.RELATED: "failure",
}
_RANK: dict[str, int] = {"failure": 0, "warning": 1, "notice": 2}
_LOCATION = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)?$")


class Annotation(BaseModel):
    path: str
    start_line: int
    end_line: int
    annotation_level: Level
    title: str
    message: str

    @property
    def key(self) -> str:
        """Which annotation this is, to send it once: GitHub appends the annotations of every
        update to those already there and has no way to remove one. The message is left
        out: a failure whose verdict changes within its level (unrelated, then flaky) keeps
        its first annotation, and the summary says what holds now; one that changes level
        gets a new one."""
        return annotation_key(self.path, self.start_line, self.annotation_level, self.title)


def annotation_key(path: str, line: int, level: str, title: str) -> str:
    """An annotation's key from its fields, as sent or as GitHub lists them back."""
    fields = (path, str(line), level, title)
    return hashlib.sha256("\0".join(fields).encode()).hexdigest()[:32]


def listed_keys(listed: Sequence[Mapping[str, object]]) -> set[str]:
    """The keys of the annotations GitHub lists on a check run."""
    return {
        annotation_key(
            str(note.get("path")),
            int(str(note.get("start_line") or 0)),
            str(note.get("annotation_level")),
            str(note.get("title") or ""),
        )
        for note in listed
    }


class CheckRunReport(BaseModel):
    title: str
    summary: str
    # None: in progress (the merge gate waits for a check).
    conclusion: Literal["neutral", "success", "failure"] | None
    annotations: list[Annotation]

    @property
    def output_sha(self) -> str:
        """What an update would change besides annotations: equal means nothing to send.
        A run sent in progress is marked (IN_PROGRESS), so the next write knows GitHub still
        lets it change its status."""
        text = "\0".join((self.conclusion or "in_progress", self.title, self.summary))
        mark = IN_PROGRESS if self.conclusion is None else ""
        return mark + hashlib.sha256(text.encode()).hexdigest()


def check_run_report(inp: CommentInput, *, strict: bool) -> CheckRunReport:
    """The check run for the PR's head: the comment's table as its summary, one annotation
    per failure with a location, and its conclusion."""
    return CheckRunReport(
        title=shorten(headline(inp.checks).strip("*"), MAX_TITLE),
        summary=summary(inp),
        conclusion=conclusion(inp.checks, strict=strict),
        annotations=annotations_of(inp.checks),
    )


def summary(inp: CommentInput) -> str:
    """The comment's text without its hidden marker: the comment keeps to 65,536 characters
    with the marker, so this keeps to GitHub's 65,535 for a summary."""
    return render_comment(inp).removeprefix(MARKER).lstrip("\n")


def conclusion(
    checks: Sequence[CheckReport], *, strict: bool
) -> Literal["neutral", "success", "failure"]:
    """`neutral` (never blocks a merge on its own) unless `strict`: then `success` only when
    every failure is flaky (unrelated to the PR) and its check passed on rerun."""
    if not strict:
        return "neutral"
    return "success" if all(_cleared(check) for check in checks) else "failure"


def _cleared(check: CheckReport) -> bool:
    return (
        check.conclusion == "success"
        and bool(check.decisions)
        and all(d.failure is not None and d.verdict is Verdict.FLAKY for d in check.decisions)
    )


def annotations_of(checks: Sequence[CheckReport]) -> list[Annotation]:
    """One annotation per failure whose file is known (its location, else its test file's
    first line), in the table's order; the same test at the same place once; at most
    MAX_ANNOTATIONS, the failures related to the PR first."""
    found: dict[str, Annotation] = {}
    for check in checks:
        for decision in check.decisions:
            note = _annotation(check, decision)
            if note is not None:
                found.setdefault(note.key, note)
    ranked = sorted(found.values(), key=lambda note: _RANK[note.annotation_level])
    return ranked[:MAX_ANNOTATIONS]


def _annotation(check: CheckReport, decision: Decision) -> Annotation | None:
    failure = decision.failure
    if failure is None:
        return None
    placed = _LOCATION.match(failure.location or "")
    if placed is not None:
        path, line = placed.group("path"), _line(placed.group("line"))
    elif failure.file:
        path, line = failure.file, 1
    else:
        return None
    verdict = verdict_words(check, decision)
    lines = [f"{check.check_name}: {verdict}. {one_line(decision.evidence)}"]
    if failure.message:
        lines.append(one_line(failure.message))
    return Annotation(
        path=path.lstrip("/"),
        start_line=line,
        end_line=line,
        annotation_level=_LEVELS.get(decision.verdict, "notice"),
        title=shorten(one_line(failure.test_id), MAX_TITLE),
        message=shorten("\n".join(lines), MAX_MESSAGE),
    )


def _line(digits: str) -> int:
    """A location's line as GitHub takes it; the file's first line when the log's number is
    none a file has (0, 23 digits). Digits are counted first: `int` refuses over 4,300."""
    line = int(digits) if len(digits) <= len(str(MAX_LINE)) else 0
    return line if 1 <= line <= MAX_LINE else 1


def batches(notes: Sequence[Annotation]) -> list[list[Annotation]]:
    """The annotations in requests of at most ANNOTATIONS_PER_REQUEST."""
    size = ANNOTATIONS_PER_REQUEST
    return [list(notes[i : i + size]) for i in range(0, len(notes), size)]
