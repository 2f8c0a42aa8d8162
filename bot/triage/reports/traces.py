"""Repository paths and lines in the stack traces that reports carry, for any language."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.triage.parsers.paths import PathMap

# Traces longer than this are mostly repeated frames: their head is enough.
_MAX_TRACE = 64 * 1024
SOURCE_EXT = (
    r"py|js|mjs|cjs|jsx|ts|mts|cts|tsx|go|rs|java|kt|kts|scala|groovy|cs|fs|vb|rb|php"
    r"|c|cc|cpp|cxx|h|hpp|swift|m|mm|ex|exs|dart"
)
# `File "x.py", line 3`, `x.py:3:`, `(src/a.ts:3:14)`, `at x.js:3`, ` in C:\x\A.cs:line 67`,
# `\t/abs/x_test.go:6 +0x27`. A drive letter may lead; spaces, quotes and brackets end a path.
_FRAME = re.compile(
    r'File "(?P<py>[^"\n]+)", line (?P<pyline>\d+)'
    rf"|(?P<path>(?:[A-Za-z]:)?[^\s()'\"<>:,|]*\.(?:{SOURCE_EXT})):(?:line )?(?P<line>\d+)\b"
)


# Node's own modules, as older Node versions print them in stacks (`internal/timers.js:554`).
_NODE_INTERNAL = re.compile(r"^internal/.*\.js$")


@dataclass(frozen=True)
class Frame:
    path: str  # repository-relative
    line: int


def repo_frames(text: str, paths: PathMap, known_file: str | None = None) -> list[Frame]:
    """The frames of `text` inside the repository, innermost first.

    Python prints the innermost frame last, every other language first. A bare file name
    (`main_test.go:6`, `test_spark.py:821`) is relative to a directory the report does not
    name, so it counts only when it is the tail of `known_file`, the test's own file.
    """
    frames: list[Frame] = []
    python_order = False
    for match in _FRAME.finditer(text[:_MAX_TRACE]):
        printed = match.group("py") or match.group("path")
        line = int(match.group("pyline") or match.group("line"))
        python_order = python_order or printed.endswith(".py")
        path = _to_repo(printed, paths, known_file)
        if path is not None:
            frames.append(Frame(path, line))
    if python_order:
        frames.reverse()
    return list(dict.fromkeys(frames))


def _to_repo(printed: str, paths: PathMap, known_file: str | None) -> str | None:
    printed = printed.replace("\\", "/")
    if known_file and (printed == known_file or known_file.endswith("/" + printed.lstrip("./"))):
        return known_file
    if _NODE_INTERNAL.match(printed):
        return None
    is_absolute = printed.startswith("/") or printed[1:3] == ":/"
    if not is_absolute and "/" not in printed.removeprefix("./"):
        return None
    return paths.to_repo(printed)


def trace_paths(frames: list[Frame]) -> list[str]:
    return list(dict.fromkeys(frame.path for frame in frames))
