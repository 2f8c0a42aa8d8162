"""The first lines of an error as reports record it, without its stack."""

from __future__ import annotations

import re

MAX_MESSAGE_LINES = 5
# Words some reporters put in `message` when they have nothing to say (go-junit-report,
# Bazel): the element's text says more.
_GENERIC = frozenset({"", "failed", "failure", "error", "runtime error"})
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_PYTEST_E = re.compile(r"^\s*E\s+(?P<text>.*\S)")
_STACK_LINE = re.compile(
    r"^\s*(?:at\s|File \"|Traceback \(most recent call last\)|goroutine \d+ |-{3,}|_{3,}|={3,}"
    r"|(?:[A-Za-z]:)?[\w./\\-]+\.\w+:\d+\s*(?:\+0x|$))"
)


def head(text: str) -> str:
    """The first non-empty lines of `text` before its stack trace starts."""
    lines: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if _STACK_LINE.match(line):
            if lines:
                break
            continue
        if line.strip():
            lines.append(line.strip())
        if len(lines) == MAX_MESSAGE_LINES:
            break
    return "\n".join(lines)


def pytest_e_lines(text: str) -> str:
    """pytest's `E   ...` lines (the last group of them), "" when there are none."""
    groups: list[list[str]] = []
    previous_was_e = False
    for line in text.splitlines():
        match = _PYTEST_E.match(line)
        if match:
            if not previous_was_e:
                groups.append([])
            groups[-1].append(match.group("text"))
        previous_was_e = match is not None
    return "\n".join(groups[-1][:MAX_MESSAGE_LINES]) if groups else ""


def python_exception(text: str) -> str:
    """The exception line(s) closing a Python traceback, "" when `text` holds none."""
    _, marker, trace = text.rpartition("Traceback (most recent call last):")
    if not marker:
        return ""
    lines = trace.strip().splitlines()
    tail: list[str] = []
    for line in reversed(lines):
        if line.startswith((" ", "\t")):
            break
        tail.insert(0, line.strip())
    return "\n".join([t for t in tail if t][:MAX_MESSAGE_LINES])


def error_message(message: str, kind: str, text: str) -> str:
    """The message of one `<failure>`-like element: its `message` and `type` attributes
    and its text (a stack trace, pytest's report, or a Go test's output)."""
    e_lines = pytest_e_lines(message) or pytest_e_lines(text)
    if e_lines:
        return e_lines
    raised = python_exception(text)
    if raised:
        return raised
    if message.strip().lower() in _GENERIC:
        return head(text) or message.strip()
    first = head(message)
    if kind and " " not in kind and not first.startswith(kind) and kind not in first:
        return f"{kind}: {first}"
    return first
