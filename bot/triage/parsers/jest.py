"""Failed tests from jest's and vitest's console output.

jest prints a `FAIL path` header per test file, then one `● Suite (U+203A) test` block per
failed test with the error, a code frame and the stack; with `--verbose` it also lists every
test, ticked or crossed, under its describe blocks. vitest lists files with their crossed
(failed) tests, then a `Failed Tests N` section of `FAIL  file > Suite > test` headers, each
followed by its error. The detailed blocks are read first; the one-line crossed entries name
failures only for files whose blocks are missing (a log cut short).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.js_stack import SEPARATOR, Trace, is_frame, repo_path
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "jest"
VITEST = "vitest"

# jest and vitest put spaces after `FAIL`; go test a tab or nothing (`FAIL\tpkg\t0.1s`), so
# a go log does not run these parsers.
MARKER = re.compile(
    r"^\s*(?:FAIL +\S|●\s|Tests:\s|(?:Test Files|Tests)\s+\d+ failed)"
    r"|[✕\u00d7]\s|⎯ Failed (?:Tests|Suites)"
)

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

# jest colours its header as ` FAIL ` in inverse video: cleaned, that leaves a leading space.
# A multi-project run puts the project's display name between the label and the path.
_JEST_HEADER = re.compile(
    r"^\s*(?P<status>FAIL|PASS)\s+(?:\S.*?\s+)?(?P<path>[^\s>]+\.[A-Za-z0-9]+)(?:\s+\([^)]*\))?\s*$"
)
_JEST_BULLET = re.compile(r"^\s*● (?P<title>.+?)\s*$")
_JEST_NOT_A_TEST = re.compile(r"^(?:Validation|Deprecation) (?:Warning|Error)|^Console$")
_JEST_SUMMARY = re.compile(r"^\s*Tests:\s+(?:.*\s)?\d+ failed")
_JEST_END = re.compile(r"^\s*(?:Test Suites:|Tests:|Summary of all failing tests)")
_JEST_TEST_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<mark>[✓✕○✎√\u00d7])\s+(?P<name>.+?)(?:\s+\(\d[^)]*\))?\s*$"
)
_SUITE_FAILED = "Test suite failed to run"
# The banner npm and pnpm print before a package's script: `> @acme/web@1.4.0 test`.
_SCRIPT_BANNER = re.compile(r"^\s*> (?P<name>(?:@[\w.-]+/)?[\w.-]+)@\S+ [\w:.-]+(?:\s|$)")
# The code frame under an error: `  12 |   expect(x)`, `> 12 |`, `     |   ^`.
_CODE_FRAME = re.compile(r"^\s*>?\s*\d*\s*\|")

_VITEST_BANNER = re.compile(r"⎯+ (?P<title>Failed Tests|Failed Suites|Unhandled Errors?)\b.*⎯")
_VITEST_RULE = re.compile(r"^\s*⎯{3,}")
_VITEST_FAIL = re.compile(
    r"^\s*FAIL\s+(?:\|[^|\n]+\|\s+)?(?P<title>\S.*?)(?:\s+\[ [^\]\n]* \])?\s*$"
)
_VITEST_SUMMARY = re.compile(r"^\s*(?:Test Files|Tests)\s+\d+ (?:failed|passed)|^\s*RUN\s+v\d")
_VITEST_FILE = re.compile(
    r"^\s*[\u276f✓\u00d7]\s+(?:\|[^|\n]+\|\s+)?(?P<path>\S+\.[A-Za-z0-9]+)\s+\(\d+ tests?\b.*$"
)
_VITEST_TEST = re.compile(
    r"^\s*(?P<mark>[✓\u00d7])\s+(?:\|[^|\n]+\|\s+)?(?P<title>\S.*?)"
    r"(?:\s+\d+(?:\.\d+)?\s*m?s)?(?:\s+\(retry x(?P<retry>\d+)\))?\s*$"
)
_TEST_FILE = re.compile(r"\.[cm]?[jt]sx?$|\.vue$|\.svelte$")


@dataclass
class _Entry:
    """One failed test and the lines of its error block."""

    file: str | None
    chain: list[str]
    lines: list[str] = field(default_factory=list)
    workspace: str | None = None

    @property
    def key(self) -> str:
        return SEPARATOR.join([self.file, *self.chain] if self.file else self.chain)


def _message(lines: Sequence[str]) -> str:
    """The error's first lines: what comes before its code frame or stack."""
    kept: list[str] = []
    for line in lines:
        if is_frame(line) or _CODE_FRAME.match(line):
            break
        if line.strip():
            kept.append(line.strip())
        if len(kept) == _MAX_MESSAGE_LINES:
            break
    return "\n".join(kept)


def _failure(entry: _Entry, framework: str, paths: PathMap, attempts: int = 1) -> Failure:
    trace = Trace(paths)
    trace.extend(entry.lines)
    message = _message(entry.lines)
    file = repo_path(entry.file, paths) if entry.file else None
    shown_file = file or (entry.file.replace("\\", "/") if entry.file else None)
    # A file that failed as a whole (no test ran) is named by its path alone.
    chain = entry.chain or [shown_file or ""]
    return Failure(
        test_id=SEPARATOR.join([shown_file, *entry.chain] if shown_file else chain),
        name=SEPARATOR.join(chain),
        file=file,
        framework=framework,
        location=trace.location(),
        message=message,
        signature=signature(message),
        trace_paths=trace.trace_paths(),
        attempts_failed=attempts,
        attempts_total=attempts,
        workspace=entry.workspace,
    )


def _merge(entries: list[_Entry], fallback: list[_Entry]) -> list[_Entry]:
    """Detailed entries, one per test, plus one-line entries of files with no detailed one."""
    merged: dict[str, _Entry] = {}
    for entry in entries:
        kept = merged.setdefault(entry.key, entry)
        if not _message(kept.lines):
            kept.lines = entry.lines
    covered = {e.file for e in entries}
    for entry in fallback:
        if entry.file not in covered:
            merged.setdefault(entry.key, entry)
    return list(merged.values())


def _clean(lines: Sequence[str]) -> list[str]:
    # Only a line starting `##[` can be a workflow command: most lines skip the call.
    return [
        line[:_MAX_LINE].rstrip()
        for line in lines
        if not (line.startswith("##[") and is_workflow_command(line))
    ]


# --- jest -------------------------------------------------------------------------------------


def parse_jest(lines: Sequence[str]) -> list[Failure]:
    """The tests jest reports as failed, one Failure per test id.

    A file that failed before running any test (syntax error, missing module) is one Failure
    with the file as its id and "Test suite failed to run" as its name.
    """
    file: str | None = None
    entry: _Entry | None = None
    entries: list[_Entry] = []
    listed: list[_Entry] = []
    describes: list[tuple[int, str]] = []
    summary_failed = False
    workspace: str | None = None
    for line in _clean(lines):
        if banner := _SCRIPT_BANNER.match(line):
            workspace = banner.group("name")
            continue
        header = _JEST_HEADER.match(line)
        if header:
            file = header.group("path") if header.group("status") == "FAIL" else None
            entry = None
            describes = []
            continue
        if _JEST_END.match(line):
            summary_failed = summary_failed or bool(_JEST_SUMMARY.match(line))
            entry = None
            continue
        bullet = _JEST_BULLET.match(line)
        if bullet and file is not None and not _JEST_NOT_A_TEST.match(bullet.group("title")):
            title = bullet.group("title")
            chain = [] if title == _SUITE_FAILED else title.split(SEPARATOR)
            entry = _Entry(file, chain, workspace=workspace)
            entries.append(entry)
            continue
        if entry is not None:
            entry.lines.append(line)
        elif file is not None:
            _read_verbose(line, file, describes, listed)
    if not entries and not summary_failed:
        return []
    paths = PathMap()
    return [_failure(e, FRAMEWORK, paths) for e in _merge(entries, listed)]


def _read_verbose(
    line: str, file: str, describes: list[tuple[int, str]], listed: list[_Entry]
) -> None:
    """Track `--verbose`'s describe tree and note its `✕` tests."""
    if not line.strip():
        return
    indent = len(line) - len(line.lstrip())
    while describes and describes[-1][0] >= indent:
        describes.pop()
    test = _JEST_TEST_LINE.match(line)
    if test is None:
        describes.append((indent, line.strip()))
    elif test.group("mark") in "\u2715\u00d7":
        listed.append(_Entry(file, [name for _, name in describes] + [test.group("name")]))


# --- vitest -----------------------------------------------------------------------------------


def _vitest_title(title: str) -> tuple[str | None, list[str]]:
    """`src/a.test.ts > Suite > test` as its file and its describe chain."""
    parts = title.split(" > ")
    if _TEST_FILE.search(parts[0]):
        return parts[0], parts[1:]
    return None, parts


def parse_vitest(lines: Sequence[str]) -> list[Failure]:
    """The tests vitest reports as failed, one Failure per test id.

    Several `FAIL` headers in a row share the error printed under them. A test retried within
    the run (`retry` option) carries its attempt count from the `(retry xN)` suffix.
    """
    recognised = False
    section: str | None = None
    group: list[_Entry] = []
    entries: list[_Entry] = []
    listed: list[_Entry] = []
    retries: dict[str, int] = {}
    file: str | None = None
    for line in _clean(lines):
        banner = _VITEST_BANNER.search(line)
        if banner:
            recognised = True
            section = banner.group("title")
            group = []
            continue
        if _VITEST_SUMMARY.match(line):
            recognised = True
            section = None
            continue
        if section in ("Failed Tests", "Failed Suites"):
            if _VITEST_RULE.match(line):
                group = []
                continue
            fail = _VITEST_FAIL.match(line)
            if fail:
                if group and group[-1].lines:
                    group = []
                test_file, chain = _vitest_title(fail.group("title"))
                entry = _Entry(test_file, chain)
                group.append(entry)
                entries.append(entry)
            else:
                for entry in group:
                    entry.lines.append(line)
            continue
        header = _VITEST_FILE.match(line)
        if header:
            file = header.group("path")
            continue
        test = _VITEST_TEST.match(line)
        if test:
            test_file, chain = _vitest_title(test.group("title"))
            entry = _Entry(test_file or file, chain)
            if test.group("retry"):
                retries[entry.key] = int(test.group("retry"))
            if test.group("mark") == "\u00d7":
                listed.append(entry)
    if not recognised:
        return []
    paths = PathMap()
    return [_failure(e, VITEST, paths, retries.get(e.key, 0) + 1) for e in _merge(entries, listed)]
