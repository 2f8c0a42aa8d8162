"""Repository paths as the walks handle them: POSIX, relative, no trailing slash."""

from __future__ import annotations

import posixpath


def parent(path: str) -> str:
    """The folder holding `path`; "" for a file at the repository root."""
    return path.rpartition("/")[0]


def join(*parts: str) -> str:
    """The parts joined by "/", empty parts (the repository root) left out."""
    return "/".join(part for part in parts if part)


def ancestors(path: str) -> list[str]:
    """The folders above `path`, nearest first, the repository root ("") last."""
    found: list[str] = []
    folder = parent(path)
    while folder:
        found.append(folder)
        folder = parent(folder)
    return [*found, ""]


def resolved(path: str) -> str | None:
    """`path` with its `.` and `..` segments resolved ("" for the root); None when it climbs
    out of the repository or is absolute."""
    cleaned = posixpath.normpath(path) if path else "."
    if cleaned == ".":
        return ""
    if cleaned == ".." or cleaned.startswith(("../", "/")):
        return None
    return cleaned
