"""Paths printed in CI logs, mapped to repository-relative paths: shared by every parser."""

from __future__ import annotations

import re

_DETERMINISTIC = "/_/"
# Where a runner checks a repository out: hosted Linux and macOS, job containers, hosted
# Windows, and self-hosted runners' `_work` directory on any drive
# (`C:/actions-runner/_work`). The repository name appears twice.
_WORKSPACE = re.compile(
    r"^(?:/home/runner/work|/Users/runner/work|/__w|[A-Za-z]:/a|(?:[A-Za-z]:)?/[^\n]*?/_work)"
    r"/([^/]+)/\1/"
)
# A Docker container action sees the checkout at `/github/workspace`.
_CONTAINER_ACTION = "/github/workspace/"
# How workflows spell the checkout directory when a path is written from a template.
_WORKSPACE_VARIABLE = re.compile(
    r"^(?:\$GITHUB_WORKSPACE|\$\{GITHUB_WORKSPACE\}|\$\{\{\s*github\.workspace\s*\}\}|"
    r"%GITHUB_WORKSPACE%|\$env:GITHUB_WORKSPACE)[/\\]"
)
_FILE_URL = re.compile(r"^(?:file:)?//+")
_SLASHED_DRIVE = re.compile(r"^/[A-Za-z]:/")
_NOT_REPO_PARTS = frozenset({"site-packages", "dist-packages", "node_modules"})
_NOT_REPO_ROOTS = (".venv/", "venv/", ".tox/", ".nox/")


class PathMap:
    """Maps paths printed in a log to repository-relative paths (None: outside the repo).

    Relative paths are relative to pytest's rootdir; when that rootdir lies inside a runner's
    workspace its repo-relative part prefixes them. Absolute paths map through the workspace.
    """

    def __init__(self, rootdir: str | None = None) -> None:
        self.rootdir = rootdir.replace("\\", "/").rstrip("/") if rootdir else None
        self.prefix = ""
        if self.rootdir is not None:
            self.prefix = _strip_workspace(self.rootdir + "/") or ""

    def relative(self, path: str) -> str:
        """`path` as pytest prints a test's file: relative to the rootdir when under it."""
        path = path.replace("\\", "/")
        if self.rootdir and path.startswith(self.rootdir + "/"):
            return path[len(self.rootdir) + 1 :]
        return path

    def to_repo(self, path: str) -> str | None:
        """`path` relative to the repository's root; None when it is outside it. The one
        place every reader (logs, reports, traces) maps a printed path."""
        path = _unwrapped(_WORKSPACE_VARIABLE.sub("", path).replace("\\", "/"))
        if not path or path.startswith("<"):
            return None  # <frozen ...>, <string>, <eval_with_key>.N
        rel: str | None
        if path.startswith((_DETERMINISTIC, _CONTAINER_ACTION)):
            # .NET's deterministic builds (`ContinuousIntegrationBuild`) print the
            # repository's root as `/_/` in every stack trace.
            rel = path.removeprefix(_DETERMINISTIC).removeprefix(_CONTAINER_ACTION)
        elif path.startswith("/") or path[1:3] == ":/":
            rel = _strip_workspace(path)
            if rel is None and self.rootdir and path.startswith(self.rootdir + "/"):
                rel = self.prefix + path[len(self.rootdir) + 1 :]
            if rel is None:
                return None
        else:
            rel = self.prefix + path.removeprefix("./")
        parts = rel.split("/")
        if ".." in parts or _NOT_REPO_PARTS.intersection(parts) or rel.startswith(_NOT_REPO_ROOTS):
            return None
        return rel


def _unwrapped(path: str) -> str:
    """`file:///home/x` (Node's ES modules, Dart), `file:///C:/x`, or such a URL's path cut
    from a stack frame after its `file:` (`///home/x`): the path alone."""
    path = _FILE_URL.sub("/", path, count=1)
    return path[1:] if _SLASHED_DRIVE.match(path) else path


def _strip_workspace(path: str) -> str | None:
    match = _WORKSPACE.match(path)
    return path[match.end() :] if match else None
