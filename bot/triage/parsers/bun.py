"""Failed tests from `bun test`'s console output.

bun prints each test file's path on a line of its own (`src/a.test.ts:`), then one line per
test: `(pass) Suite > test [0.12ms]` or `(fail) ...` when its output is not a terminal, a tick
or cross when it is. A failure's error (code frame, `error: ...`, the stack) comes BEFORE its
`(fail)` line. At the end bun repeats the failed tests, without their files, after
`N tests failed:`, and prints its totals (` 3 pass`, ` 1 fail`, `Ran 4 tests across 2 files.`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.js_stack import SEPARATOR, Trace, is_frame, repo_path
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "bun"

MARKER = re.compile(r"^\s*(?:\(fail\)|\u2717) |^\s*\d+ fail\s*$|^\s*\d+ tests? failed:\s*$")

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5


_RESULT = re.compile(
    r"^\s*(?P<mark>\((?:pass|fail|skip|todo)\)|[\u2713\u2717\u00bb\u270e]) (?P<title>\S.*?)"
    r"(?: \[\d+(?:\.\d+)?m?s\])?\s*$"
)
_FILE = re.compile(r"^(?P<path>[^\s:()][^():]*?\.[cm]?[jt]sx?):\s*$")
_BANNER = re.compile(r"^bun test v\d")
_TOTALS = re.compile(r"^\s*\d+ fail\s*$|^Ran \d+ tests? across \d+ files?\b")
_SUMMARY = re.compile(r"^\s*\d+ tests? failed:\s*$")
# Where the error starts: `error: msg` for a thrown value, `TypeError: msg` and the like.
_ERROR_START = re.compile(r"^\s*(?:error: |[A-Z]\w*(?:Error|Exception)\b)")
_FAILED = frozenset({"(fail)", "\u2717"})


def _message(lines: Sequence[str]) -> str:
    """The error's first lines: from its `error:` line to its stack."""
    start = next((i for i, line in enumerate(lines) if _ERROR_START.match(line)), None)
    if start is None:
        return ""
    kept: list[str] = []
    for line in lines[start:]:
        if is_frame(line) or len(kept) == _MAX_MESSAGE_LINES:
            break
        if line.strip():
            kept.append(line.strip())
    return "\n".join(kept)


def _failure(file: str | None, title: str, error: Sequence[str], paths: PathMap) -> Failure:
    chain = title.split(" > ")
    repo_file = repo_path(file, paths) if file else None
    shown = repo_file or (file.replace("\\", "/") if file else None)
    message = _message(error)
    trace = Trace(paths)
    trace.extend(error)
    return Failure(
        test_id=SEPARATOR.join([shown, *chain] if shown else chain),
        name=SEPARATOR.join(chain),
        file=repo_file,
        framework=FRAMEWORK,
        location=trace.location(),
        message=message,
        signature=signature(message),
        trace_paths=trace.trace_paths(),
    )


def parse_bun(lines: Sequence[str]) -> list[Failure]:
    """The tests `bun test` reports as failed, one Failure per test id.

    A failure named only in the closing summary (its own line lay outside the log that was
    read) has no file and no error.
    """
    recognised = False
    file: str | None = None
    error: list[str] = []
    in_summary = False
    found: dict[str, Failure] = {}
    summary_titles: list[str] = []
    paths = PathMap()
    for raw in lines:
        if is_workflow_command(raw):
            continue
        line = raw[:_MAX_LINE].rstrip()
        if _BANNER.match(line) or _TOTALS.match(line):
            recognised = True
            in_summary = False
            continue
        if _SUMMARY.match(line):
            recognised = True
            in_summary = True
            continue
        header = _FILE.match(line)
        if header:
            file, error, in_summary = header.group("path"), [], False
            continue
        result = _RESULT.match(line)
        if result is None:
            if not in_summary:
                error.append(line)
            continue
        if result.group("mark") in _FAILED:
            if in_summary:
                summary_titles.append(result.group("title"))
            else:
                failure = _failure(file, result.group("title"), error, paths)
                found.setdefault(failure.test_id, failure)
        error = []
    if not recognised:
        return []
    named = {f.name for f in found.values()}
    for title in summary_titles:
        failure = _failure(None, title, [], paths)
        if failure.name not in named:
            found.setdefault(failure.test_id, failure)
    return list(found.values())
