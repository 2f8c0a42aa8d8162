"""Which `.github/flaky.yml` files make a repository's settings, and how they merge (pure).

As Probot's config does: the repository's own file; when it has none, its organisation's
`.github` repository's; either may name a base with `_extends` (`.github`, `other-repo`,
`other-org/repo`, `other-org/repo:path.yml`), whose keys the extending file overrides.
`SettingsChain` is told what each read gave and names the next file to read, so the reading
(handlers/scope.py) holds no decision and this module no I/O.

Who may extend what: a file may name any repository of the repository's own owner that the
installation can read, and only a public repository of another owner (`crosses_owner`: the
reader checks its visibility first, and `refuse` names it as a problem, unread). What the PR
comment may say of a file in a private repository other than the repository's own, when the
repository is public (`result(hidden=...)`): not its name, keys or problems, only that
settings came from such a repository and how many problems it has.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.config import (
    REPO_CONFIG_PATH,
    LoadedRepoConfig,
    ParsedSettings,
    parse_settings_file,
    validate_leniently,
)

ORG_REPO = ".github"
# A settings file larger than this is refused unread: PyYAML reads about a megabyte in 5 to
# 10 s of CPU, and a file with every list at its limit is a few kilobytes.
MAX_SETTINGS_BYTES = 64 * 1024
# `_extends` followed this many times at most; a further one is named and not read.
MAX_HOPS = 3
# Probot's `_extends` syntax: [owner/]repo[:path.yml], GitHub's rules for owner names.
_EXTENDS = re.compile(
    r"(?:(?P<owner>[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38})/)?"
    r"(?P<repo>[-_.\w]+)"
    r"(?::(?P<path>[-_./\w]+\.ya?ml))?",
    re.IGNORECASE | re.ASCII,
)


@dataclass(frozen=True)
class SettingsFile:
    repo: str  # owner/name
    path: str = REPO_CONFIG_PATH

    @property
    def key(self) -> tuple[str, str]:
        """GitHub's names are not case-sensitive; paths are."""
        return self.repo.lower(), self.path

    @property
    def label(self) -> str:
        """`owner/repo`, with `:path` when it is not `.github/flaky.yml` (`_extends` syntax)."""
        return self.repo if self.path == REPO_CONFIG_PATH else f"{self.repo}:{self.path}"


def extends_target(value: object, owner: str) -> SettingsFile | None:
    """The file an `_extends` value names (an owner left out is `owner`), None if none."""
    if not isinstance(value, str):
        return None
    match = _EXTENDS.fullmatch(value.strip())
    if match is None or match["repo"] in (".", ".."):
        return None
    path = match["path"] or REPO_CONFIG_PATH
    # Each segment a name: `..` or an empty one would leave the repository's contents.
    if any(part in ("", ".", "..") for part in path.split("/")):
        return None
    return SettingsFile(f"{match['owner'] or owner}/{match['repo']}", path)


def parse_settings(text: str) -> ParsedSettings:
    """One settings file's text read (`parse_settings_file`), unless it is over
    MAX_SETTINGS_BYTES: then none of it applies, and the problem says why."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_SETTINGS_BYTES:
        return ParsedSettings(
            errors=[
                f"the file is {size:,} bytes, over the {MAX_SETTINGS_BYTES:,} a settings file "
                "may hold: not read, none of its keys apply"
            ]
        )
    return parse_settings_file(text)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over`'s keys win over `base`'s; a mapping in both is merged key by key, and a list
    under a key of such a mapping in both is the base's followed by `over`'s new items (a
    repository's `footprints` add to its organisation's)."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(below, dict) and isinstance(value, dict):
            merged[key] = {**below, **{k: _added(below.get(k), v) for k, v in value.items()}}
        else:
            merged[key] = value
    return merged


def _added(below: object, value: object) -> object:
    if isinstance(below, list) and isinstance(value, list):
        return below + [item for item in value if item not in below]
    return value


@dataclass
class _Read:
    file: SettingsFile
    values: dict[str, Any]  # the valid values of known keys
    problems: list[str]


@dataclass
class SettingsChain:
    """The files read for one repository's settings, in the order read (the one that wins
    first), and what stopped the chain."""

    repo: str
    reads: list[_Read] = field(default_factory=list)
    # Each problem of following `_extends`, with the file whose `_extends` it is.
    problems: list[tuple[SettingsFile, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _hops: int = 0

    def first(self) -> SettingsFile:
        return SettingsFile(self.repo)

    def _org_default(self) -> SettingsFile | None:
        owner, name = self.repo.split("/", 1)
        return None if name.lower() == ORG_REPO else SettingsFile(f"{owner}/{ORG_REPO}")

    def take(self, file: SettingsFile, text: str | None, status: int = 200) -> SettingsFile | None:
        """Record what reading `file` gave (`text` None: not there, or not readable, with
        GitHub's `status`), and name the next file to read, if any."""
        return self.take_parsed(file, None if text is None else parse_settings(text), status)

    def take_parsed(
        self, file: SettingsFile, parsed: ParsedSettings | None, status: int = 200
    ) -> SettingsFile | None:
        """`take`, with the file already parsed (`parse_settings`), as a cache keeps it."""
        if parsed is None:
            return self._missing(file, status)
        self.reads.append(_Read(file, parsed.values, parsed.problems()))
        return None if parsed.extends is None else self._follow(file, parsed.extends)

    def _missing(self, file: SettingsFile, status: int) -> SettingsFile | None:
        if not self.reads and file.key == self.first().key:
            return self._org_default()
        if not self.reads:  # the organisation's default: often absent, never an error
            why = "not installed or no such file" if status == 404 else f"status {status}"
            self.notes.append(f"{file.label} {file.path}: not read ({why})")
        else:
            self._problem(f"{file.label} is not there or the App cannot read it")
        return None

    def crosses_owner(self, file: SettingsFile) -> bool:
        """Whether `file` is another owner's: read only if its repository is public."""
        return file.repo.split("/", 1)[0].lower() != self.repo.split("/", 1)[0].lower()

    def refuse(self, file: SettingsFile) -> None:
        """`file` is another owner's and its repository is not public (or not readable):
        named, not read."""
        self._problem(f"{file.label} is another owner's and not public: not read")

    def _problem(self, text: str) -> None:
        """A problem of the last file read's `_extends`."""
        file = self.reads[-1].file
        self.problems.append((file, f"{self._name(file)}_extends: {text}"))

    def _follow(self, file: SettingsFile, extends: object) -> SettingsFile | None:
        target = extends_target(extends, self.repo.split("/", 1)[0])
        if target is None:
            self._problem(f"not [owner/]repo[:path.yml]: {str(extends)[:100]!r}")
            return None
        chain = [read.file.key for read in self.reads]
        if target.key in chain:
            files = [read.file for read in self.reads[chain.index(target.key) :]]
            cycle = " → ".join(f.label for f in [*files, target])
            self._problem(f"{cycle} is a cycle; {target.label} not read again")
            return None
        if self._hops >= MAX_HOPS:
            self._problem(f"more than {MAX_HOPS} hops; {target.label} not read")
            return None
        self._hops += 1
        return target

    def _name(self, file: SettingsFile) -> str:
        """How a problem names its file: the repository's own goes unnamed."""
        return "" if file.key == self.first().key else f"{file.label}: "

    def outside_repos(self) -> list[str]:
        """The other repositories read: the reader learns which of them are private."""
        own = self.repo.lower()
        return sorted({r.file.repo.lower() for r in self.reads} - {own})

    def result(self, hidden: Collection[str] = ()) -> LoadedRepoConfig:
        """The merged settings. `hidden`: the repositories (lower case) whose files the PR
        comment may not name: private ones other than the repository's own, when it is
        public."""
        values: dict[str, Any] = {}
        for read in reversed(self.reads):  # the deepest base first
            values = merge(values, read.values)
        # Each file's values were valid alone; merged, a list or mapping may pass its limit.
        config, _, merged = validate_leniently(values)
        problems = [self._name(read.file) + p for read in self.reads for p in read.problems]
        merged_problems = [f"merged settings: {p}" for p in merged]
        applied = [read.file for read in self.reads if read.values]
        return LoadedRepoConfig(
            config=config,
            errors=problems + [text for _, text in self.problems] + merged_problems,
            applied=[file.label for file in applied],
            outside=any(file.repo.lower() != self.repo.lower() for file in applied),
            notes=list(self.notes),
            shown_errors=self._shown_problems(hidden) + merged_problems,
            shown_from=[_shown_label(f, hidden) for f in applied],
        )

    def _shown_problems(self, hidden: Collection[str]) -> list[str]:
        """The problems as the PR comment may say them: a hidden file's only counted, and a
        hidden file named in another's problem (a cycle) not by its name."""
        shown: list[str] = []
        for read in self.reads:
            own = [text for by, text in self.problems if by.key == read.file.key]
            if read.file.repo.lower() not in hidden:
                shown += [self._name(read.file) + p for p in read.problems]
                shown += [_unnamed(text, self.reads, hidden) for text in own]
            elif count := len(read.problems) + len(own):
                many = "problem" if count == 1 else "problems"
                shown.append(f"{_shown_label(read.file, hidden)}: {count} {many}, in the bot's log")
        return shown


def _shown_label(file: SettingsFile, hidden: Collection[str]) -> str:
    """A file's label, or what may be said of it when its repository is hidden."""
    if file.repo.lower() not in hidden:
        return file.label
    if file.repo.split("/", 1)[1].lower() == ORG_REPO:
        return "the organisation's private .github repository"
    return "a private repository of the same owner"


def _unnamed(text: str, reads: list[_Read], hidden: Collection[str]) -> str:
    """`text` with the label of every hidden file read replaced by what may be said."""
    files = sorted({r.file for r in reads}, key=lambda f: -len(f.label))
    for file in files:
        if file.repo.lower() in hidden:
            text = text.replace(file.label, _shown_label(file, hidden))
    return text
