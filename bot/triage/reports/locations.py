"""Where a failure happened, as a report states it: kept, made repository-relative when the
runner's checkout folder is known (`PathMap`), and placed in the commit's tree when only the
tree can say where it is.

A location says where it came from (`Failure.location_source`): a repository frame of the
failure's stack, the line that raised ("stack"); the test case's own file and line, when no
frame is the repository's ("attribute"; kept as `declared_at` either way); a `file:line` in
its message ("message"); or a bare file name, or a frame printed outside every known checkout,
placed in the commit's tree by its unique suffix ("tree", `placement.py`). Without the tree, a
bare name is kept as printed, and so is a frame printed elsewhere, with a note saying so.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from bot.shared import Tree
from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.placement import SuffixIndex
from bot.triage.reports.traces import SOURCE_EXT, Frame, unplaced_frames

ATTRIBUTE = "attribute"
STACK = "stack"
MESSAGE = "message"
TREE = "tree"

_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:/")
_LINE = re.compile(r"^\d{1,9}$")
# A `file:line` opening a line: how Go's `t.Errorf`, XCTest and compilers state where a check
# failed. A frame inside a stack (`at x.Y(Class.java:169)`) names a file of any library,
# placed in the repository only by its path (`repo_frames`), never by its bare name.
_LEADING = re.compile(
    rf"^[ \t]*(?P<path>[^\s()'\"<>:,|]+\.(?:{SOURCE_EXT})):(?:line )?(?P<line>\d+)\b", re.MULTILINE
)
_MAX_SCAN = 64 * 1024
_UPWARD = re.compile(r"^(?:\.\.?/)+")
# A JVM frame's class made a path (`org/acme/FooTest.java:29`): never kept as printed, since
# the innermost is a library's as often as not; the tree places the repository's.
_JVM_PATH = re.compile(r"^[a-z_][\w$]*/.*\.(?:java|kt|kts|scala|groovy):\d+$")
UNPLACED_NOTE = "printed outside the repository's checkout: kept as printed, not placed in a tree"


@dataclass(frozen=True)
class Located:
    """A failure's location (`path:line`), where it came from, and a note when a bare name
    could not be placed."""

    location: str | None = None
    source: str | None = None
    note: str = ""
    unplaced: tuple[str, ...] = ()  # frames only the commit's tree can place (`choose`)
    declared: str | None = None  # the test case's own line, as the report states it


@functools.lru_cache(maxsize=4096)
def stated_path(printed: str, *, keep_name: bool = False) -> str | None:
    """A path as a report states it, repository-relative when it can be: URL escapes
    decoded, Windows separators made `/`, the runner's checkout prefix (hosted, container,
    self-hosted `_work`, `$GITHUB_WORKSPACE`) dropped. A bare file name is kept as it is.
    Cached: a report names one file for each of its many cases.
    An absolute path outside every known checkout is None, or with `keep_name` (a test
    case's own file) its file name, to be placed by `place_in_tree`."""
    path = printed.strip()
    if _ESCAPED.search(path):
        path = unquote(path)
    path = path.replace("\\", "/")
    if not path:
        return None
    mapped = PathMap().to_repo(path)
    if mapped is not None:
        return mapped
    path = path.removeprefix("file://")
    if keep_name and (path.startswith("/") or _DRIVE.match(path)):
        return path.rsplit("/", 1)[-1] or None
    return None


def is_bare(path: str) -> bool:
    """A file name with no directory: printed relative to a directory nobody named."""
    return "/" not in path


def attribute_location(file: str | None, line: str | None) -> str | None:
    """`file:line` from a `<testcase>`'s attributes; None without both (a file alone is
    the test's file, already `Failure.file`, not where it failed)."""
    line = (line or "").strip()
    if not file or not _LINE.match(line) or int(line) == 0:
        return None
    path = stated_path(file, keep_name=True)
    return f"{path}:{int(line)}" if path is not None else None


def choose(*, stack: list[Frame], attribute: str | None, message: str, stack_text: str) -> Located:
    """The best stated location: a repository frame of the stack (the line that raised),
    the test case's own attributes (the line that declares it), a `file:line` in the
    message, a bare frame of the stack kept as printed, then a frame printed outside every
    known checkout kept as printed, and said so. Without a repository frame, the frames
    only the commit's tree can place go with it (`Located.unplaced`, `resolve_in_tree`)."""
    if stack:
        return Located(f"{stack[0].path}:{stack[0].line}", STACK, declared=attribute)
    unplaced = tuple(unplaced_frames(stack_text, PathMap()))
    if attribute:
        return Located(attribute, ATTRIBUTE, unplaced=unplaced, declared=attribute)
    for text, source in ((message, MESSAGE), (stack_text, STACK)):
        for match in _LEADING.finditer(text[:_MAX_SCAN]):
            path = stated_path(match.group("path"))
            if path is not None:
                return Located(f"{path}:{match.group('line')}", source, unplaced=unplaced)
    printed = next((frame for frame in unplaced if not _JVM_PATH.match(frame)), None)
    if printed is not None:
        return Located(printed, STACK, UNPLACED_NOTE, unplaced)
    return Located(unplaced=unplaced)


def place_in_tree(
    location: str, tree: Tree, index: Callable[[], SuffixIndex] | None = None
) -> Located | None:
    """A bare `name.ext:line` placed in the commit's tree: the one file of that name, or
    None with a note when there are several (the bare name is kept) or none. A path with a
    folder that is not in the tree (printed relative to a workspace package) is placed by
    its unique suffix (`placement.py`, with the `index` given), else left as it is."""
    path, sep, line = location.rpartition(":")
    if not sep or not _LINE.match(line):
        path, line = location, ""
    suffix = f":{line}" if line else ""
    # Printed relative to a folder above one nobody named (`../lib/a.rb`): like a bare
    # name, only its tail is known, and only one file of the tree ending with it places it.
    upward = path.startswith("../")
    printed, path = path, _UPWARD.sub("", path)
    if not is_bare(path) and not upward:
        if path in tree.files and path != printed:
            return Located(f"{path}{suffix}", TREE)  # `./pkg/a.go`
        if path in tree.files or tree.truncated:
            return None
        placed = (index() if index else SuffixIndex.of(tree.files)).place(path)
        found = placed.path if placed is not None else None
        return Located(f"{found}{suffix}", TREE) if found else None
    matches = sorted(p for p in tree.files if p == path or p.endswith("/" + path))
    if len(matches) == 1:
        return Located(f"{matches[0]}{suffix}", TREE)
    if matches:
        shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
        note = f"{path} is {len(matches)} files in the tree ({shown}): kept as printed"
        return Located(location, None, note)
    return Located(location, None, f"{path} is not in the commit's tree: kept as printed")


def resolve_in_tree(failures: Iterable[Failure], tree: Tree) -> list[Failure]:
    """The failures with each location placed in `tree`: a frame printed outside the
    checkout (`Failure.unplaced_frames`, innermost first) that the tree places is the line
    that raised, and wins over the test case's own line; a bare name is placed where it
    names one file; one found several times, or not at all, stays as printed and says so."""
    resolved: list[Failure] = []
    index = functools.cache(lambda: SuffixIndex.of(tree.files))  # built once, when needed
    for failure in failures:
        found = _raised_in_tree(failure, tree, index)
        placed = None
        if found is None and failure.location:
            placed = place_in_tree(failure.location, tree, index)
            found = placed.location if placed is not None and placed.source == TREE else None
        if found is not None:
            update = {"location": found, "location_source": TREE, "location_note": ""}
            resolved.append(failure.model_copy(update=update))
        elif placed is not None:
            resolved.append(failure.model_copy(update={"location_note": placed.note}))
        else:
            resolved.append(failure)
    return resolved


def _raised_in_tree(failure: Failure, tree: Tree, index: Callable[[], SuffixIndex]) -> str | None:
    """The innermost of the failure's unplaced frames that `tree` holds, when its location
    is not a repository frame already (a frame of a known checkout, a message's line)."""
    printed = (failure.location or "").rpartition(":")[0]
    settled = failure.location_source in (STACK, MESSAGE) and not (
        failure.location_note or is_bare(printed)
    )
    if settled or tree.truncated:
        return None
    for frame in failure.unplaced_frames:
        if frame.rpartition(":")[0] in tree.files:
            return frame  # a JVM frame's path from the root: rare, but the tree says so
        placed = place_in_tree(frame, tree, index)
        if placed is not None and placed.source == TREE:
            return placed.location
    return None
