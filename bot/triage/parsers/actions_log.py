"""Turn a raw GitHub Actions job log into plain lines.

GitHub serves job logs with an ISO-8601 timestamp on every line, the tools' ANSI colour and
cursor codes intact, CRLF or bare CR line ends, and the runner's own workflow-command lines
(`##[group]`, `##[error]`, ...) interleaved with the job's output. Every pattern here is a
single pass with no nested quantifiers, so cleaning is linear in the size of the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# "2026-07-30T10:55:18.2467887Z " at the start of a line (GitHub writes 7 fractional digits).
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?", re.MULTILINE)

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) ended by BEL or
# ST, and the remaining two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")

_WORKFLOW_COMMAND = re.compile(r"##\[([a-z]+)\]")


def clean_log(text: str) -> list[str]:
    """The log's lines without timestamps, ANSI escapes or carriage returns.

    A bare CR means the tool redrew its line (progress bars): the last non-empty redraw wins,
    as a terminal would show it.
    """
    if not text:
        return []
    text = text.replace("\r\n", "\n")
    text = _TIMESTAMP.sub("", text)
    text = _ANSI.sub("", text)
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [_last_redraw(line) if "\r" in line else line for line in lines]


def _last_redraw(line: str) -> str:
    for part in reversed(line.split("\r")):
        if part:
            return part
    return ""


def workflow_command(line: str) -> tuple[str, str] | None:
    """`("error", "message")` for a `##[error]message` line; None for ordinary output."""
    match = _WORKFLOW_COMMAND.match(line)
    if match is None:
        return None
    return match.group(1), line[match.end() :]


def is_workflow_command(line: str) -> bool:
    """True for the runner's own lines (`##[group]`, `##[endgroup]`, `##[error]`, ...).

    The runner also prefixes a job's output line with `##[error]` when a problem matcher
    fires on it, so such a line may sit inside a test's output: parsers skip it rather than
    read it as the job's own text.
    """
    return _WORKFLOW_COMMAND.match(line) is not None


def output_lines(lines: Iterable[str], max_line: int = 4096) -> Iterator[str]:
    """The test runner's own lines: workflow commands left out, each line cut to `max_line`
    characters (a longer line is output, not the runner's) and stripped of trailing blanks."""
    for line in lines:
        if line.startswith("##[") and is_workflow_command(line):
            continue
        yield line[:max_line].rstrip()
