"""Stack frames printed by JavaScript runtimes (V8, Bun, vitest), mapped into the repository.

Shared by the jest, vitest, mocha, bun and node test-runner parsers. A JavaScript stack lists
the innermost frame first, so the first frame inside the repository is where the failure was
raised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import unquote

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

# Between a test's file and its describe chain, as jest prints it (U+203A).
SEPARATOR = " \u203a "

# `at fn (path:1:2)`, `at path:1:2`, `at async fn (file:///path:1:2)`; node's TAP reporter
# drops the `at `. The location is the last `(...)` group when there is one.
_V8_FRAME = re.compile(
    r"^\s*(?:at\s+)?(?:[^()\n]*\()?(?P<path>[^()\s][^()\n]*?):(?P<line>\d+)(?::\d+)?\)?\s*$"
)
_AT_FRAME = re.compile(r"^\s*at\s")
# vitest, after a U+276F pointer: `src/a.test.ts:7:19` or `fn src/a.ts:3:9`.
_VITEST_FRAME = re.compile(r"^\s*\u276f (?:\S+ )?(?P<path>[^\s()]+):(?P<line>\d+):\d+\s*$")
# Runtime-internal frames: node >= 16 (`node:`), older node (`internal/`), bun (`native`).
_INTERNAL = ("node:", "internal/", "native", "<anonymous>", "bun:", "[native code]")


def is_frame(line: str) -> bool:
    """True for a V8/Bun `at ...` stack line or a vitest pointer `path:line:col` line."""
    return bool(_AT_FRAME.match(line) or _VITEST_FRAME.match(line))


def frame_location(line: str) -> tuple[str, int] | None:
    """The printed path and line of a stack frame line; None for other lines."""
    match = _VITEST_FRAME.match(line)
    if match is None:
        if not _AT_FRAME.match(line):
            return None
        match = _V8_FRAME.match(line)
    if match is None:
        return None
    return match.group("path"), int(match.group("line"))


def tap_frame_location(line: str) -> tuple[str, int] | None:
    """Like `frame_location`, for node's TAP `stack:` lines, which have no `at `."""
    match = _V8_FRAME.match(line)
    return (match.group("path"), int(match.group("line"))) if match else None


def file_path(printed: str) -> str:
    """A printed path or `file://` URL as a plain path (`file:///D:/a/x.js` -> `D:/a/x.js`)."""
    if printed.startswith("file://"):
        path = unquote(printed.removeprefix("file://"))
        return path[1:] if path[2:4] == ":/" else path
    return printed


def repo_path(printed: str, paths: PathMap) -> str | None:
    """The repository-relative form of a path printed by a JavaScript tool, or None."""
    path = file_path(printed.strip())
    if path.startswith(_INTERNAL):
        return None
    return paths.to_repo(path)


class Trace:
    """The repository frames of one failure's stack, innermost first."""

    def __init__(self, paths: PathMap) -> None:
        self.paths = paths
        self.frames: list[tuple[str, int]] = []

    def add(self, location: tuple[str, int] | None) -> None:
        if location is None:
            return
        path = repo_path(location[0], self.paths)
        if path is not None:
            self.frames.append((path, location[1]))

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.add(frame_location(line))

    def location(self) -> str | None:
        if not self.frames:
            return None
        path, line = self.frames[0]
        return f"{path}:{line}"

    def trace_paths(self) -> list[str]:
        return list(dict.fromkeys(path for path, _ in self.frames))


def chain_failure(
    framework: str, file: str | None, chain: Sequence[str], message: str, trace: Trace
) -> Failure:
    """A failed test named by its file (when known) and describe chain, joined by SEPARATOR."""
    return Failure(
        test_id=SEPARATOR.join([file, *chain] if file else chain),
        name=SEPARATOR.join(chain),
        file=file,
        framework=framework,
        location=trace.location(),
        message=message,
        signature=signature(message),
        trace_paths=trace.trace_paths(),
    )
