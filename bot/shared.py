"""Values shared by parts of bot/ that must not import each other (tests/test_layering.py
holds the rule): a pull request as github/ reads it and the store keeps it, an issue as github/
reads it and the tracking decision weighs it, the pace of writes the store keeps for github/'s
client, a limit of GitHub's that github/ and the verdict both speak of, and a commit's files and
sources as github/ reads them and the import walk follows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel

GITHUB_FILES_LIMIT = 3000  # GET /pulls/{n}/files lists at most this many


class PullSummary(BaseModel):
    """A pull request as triage reads it: from GitHub's REST answer or a pull_request event."""

    number: int
    state: str
    author: str
    head_sha: str
    base_sha: str
    base_ref: str
    changed_files: int
    updated_at: float = 0.0  # GitHub's, in epoch seconds: orders what the store keeps
    # Its issue comments as GitHub counted them then (None: not said). 0 means the bot's own
    # comment was not there either, so a first comment needs no search for it.
    comments: int | None = None


class GitHubIssue(BaseModel):
    """An issue as GitHub's REST API shows it (`GET /repos/{owner}/{repo}/issues/{number}`),
    in the fields the bot reads."""

    number: int
    title: str = ""
    body: str | None = None
    state: str = "open"  # "open" or "closed"
    state_reason: str | None = None  # "completed", "not_planned", "reopened"
    locked: bool = False
    labels: frozenset[str] = frozenset()  # their names
    created_at: float = 0.0  # epoch seconds; 0 when GitHub gave none
    closed_at: float | None = None  # epoch seconds while it is closed; None while open
    is_pull_request: bool = False  # the issues API answers for pull requests too


class WriteSchedule(Protocol):
    """When each installation's next content-creating GitHub request may start, kept where
    every replica sees it, by one clock (the database's)."""

    async def reserve_write(
        self, installation_id: int, interval: float, not_before: float, max_wait: float
    ) -> float:
        """Take the installation's next write slot: at least `not_before` seconds from now
        and `interval` after the slot taken before it. Returns the seconds to wait for it.

        A slot more than `max_wait` seconds away (writes held back by a rate limit) is not
        taken, so no one waits behind a slot no one will use: the seconds until it are
        returned, more than `max_wait`."""

    async def defer_writes(self, installation_id: int, seconds: float) -> None:
        """Start no write of the installation sooner than `seconds` from now."""


@dataclass(frozen=True)
class TreeFile:
    sha: str  # the blob's SHA: its contents never change
    size: int


@dataclass(frozen=True)
class Tree:
    """A commit's files as `GET /git/trees/{sha}?recursive=1` lists them."""

    files: Mapping[str, TreeFile]
    truncated: bool = False
    directories: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        folders = {
            path.rsplit("/", i)[0] for path in self.files for i in range(1, path.count("/") + 1)
        }
        object.__setattr__(self, "directories", frozenset(folders))


@dataclass(frozen=True)
class Unreadable:
    """A file that was not read, and why: "binary", "not UTF-8", "cut by GitHub"."""

    reason: str


Source = str | Unreadable
