"""Gitignore-style globs (pathspec) as the repo's settings write them, compiled once."""

from __future__ import annotations

from functools import lru_cache

import pathspec


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> pathspec.GitIgnoreSpec | None:
    """The compiled glob, or None when pathspec refuses it (the glob then matches nothing)."""
    try:
        return pathspec.GitIgnoreSpec.from_lines([pattern])
    except ValueError:
        return None


def glob_matches(pattern: str, path: str) -> bool:
    """Whether a repo-relative path matches one gitignore-style glob."""
    spec = compile_glob(pattern)
    return spec is not None and spec.match_file(path)
