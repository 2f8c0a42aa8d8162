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
# `\t/abs/x_test.go:6 +0x27`. A drive letter may lead (not the `e:` of `file:///x.mjs`);
# spaces, quotes and brackets end a path, and one starts only after them: tried from every
# character of a long word instead, the search is quadratic in its length.
_STARTS = r"(?<![^\s()'\"<>:,|])"
_FRAME = re.compile(
    r'File "(?P<py>[^"\n]+)", line (?P<pyline>\d+)'
    rf"|(?P<path>(?:(?<!\w)[A-Za-z]:)?{_STARTS}[^\s()'\"<>:,|]*\.(?:{SOURCE_EXT}))"
    r":(?:line )?(?P<line>\d+)\b"
)


# Node's own modules, as older Node versions print them in stacks (`internal/timers.js:554`).
_NODE_INTERNAL = re.compile(r"^internal/.*\.js$")
# A JVM frame: `at org.acme.FooTest.saves(FooTest.java:29)`. Its class's package and its
# file name make a path (`org/acme/FooTest.java`) that a source root of the tree ends with.
_JVM_FRAME = re.compile(
    r"\bat (?P<method>[\w.$/<>]+)\((?P<file>[\w$]+\.(?:java|kt|kts|scala|groovy)):(?P<line>\d+)\)"
)
# The JVM's and the usual test libraries' packages: never the repository's.
_JVM_LIBRARIES = re.compile(
    r"^(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|org\.junit|junit|"
    r"org\.testng|org\.opentest4j|org\.assertj|org\.hamcrest|org\.mockito|org\.gradle|"
    r"org\.apache\.maven|org\.codehaus\.groovy|org\.spockframework)\."
)
# Folders of installed packages and toolchains: a frame in them is never the repository's.
_INSTALLED = re.compile(
    r"/(?:site-packages|dist-packages|node_modules|hostedtoolcache|gems|\.nuget|\.cargo|"
    r"\.rustup|pkg/mod|lib/python[\d.]*|\.pyenv|Microsoft\.NET|dotnet/shared)/"
)
# System folders: toolchains and their standard libraries (`/usr/local/go/src/testing`,
# `/rustc/<sha>/library`, `/opt/hostedtoolcache`, `C:/Program Files/dotnet`).
_SYSTEM = re.compile(
    r"^(?:/usr/|/opt/|/nix/|/snap/|/rustc/|/Library/|/System/|/Applications/|"
    r"[A-Za-z]:/(?:Program Files|Program Files \(x86\)|Windows)/)"
)
_MAX_UNPLACED = 8


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


def unplaced_frames(text: str, paths: PathMap) -> list[str]:
    """The frames of `text` that may be the repository's though no known checkout says so,
    as printed (`path:line`, separators made `/`), innermost first, at most a few: a path
    outside every known checkout (a developer's machine, another CI's folders), one printed
    relative to a folder above the working one (`../lib/a.rb`), a JVM frame's package and
    file (`org/acme/FooTest.java`). Only the commit's tree can place them (`locations.py`);
    installed packages' and the JVM's own frames are left out."""
    frames: list[str] = []
    python_order = False
    for match in _FRAME.finditer(text[:_MAX_TRACE]):
        printed = (match.group("py") or match.group("path")).replace("\\", "/")
        python_order = python_order or printed.endswith(".py")
        if _is_unplaced(printed, paths):
            frames.append(f"{printed}:{match.group('pyline') or match.group('line')}")
    if python_order:
        frames.reverse()
    for match in _JVM_FRAME.finditer(text[:_MAX_TRACE]):
        # `[module/]package.Class.method`: the package's folders, then the file's name.
        package = match.group("method").rpartition("/")[2].split(".")[:-2]
        if package and not _JVM_LIBRARIES.match(".".join(package) + "."):
            frames.append(f"{'/'.join(package)}/{match.group('file')}:{match.group('line')}")
    return list(dict.fromkeys(frames))[:_MAX_UNPLACED]


def _is_unplaced(printed: str, paths: PathMap) -> bool:
    """A frame's path that the repository may hold, though neither a known checkout nor the
    working folder places it."""
    if _INSTALLED.search("/" + printed) or _SYSTEM.match(printed) or _NODE_INTERNAL.match(printed):
        return False
    is_absolute = printed.startswith("/") or printed[1:3] == ":/"
    if is_absolute:
        return paths.to_repo(printed) is None
    return printed.startswith("../")


def trace_paths(frames: list[Frame]) -> list[str]:
    return list(dict.fromkeys(frame.path for frame in frames))
