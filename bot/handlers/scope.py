"""What one delivery's handler works with on one repository.

A handler makes one `Scope` from its event: the bot's context, the installation's client,
the repository, and the repository's settings (`.github/flaky.yml`, or its organisation's, and
what they `_extends`), read the first time a
step asks and then shared by every step of the delivery (the triage, its rerun, its
tracking issues, its comment), with the file's problems logged once per version of it;
likewise its CODEOWNERS, read only when a tracking issue is written.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field

import cachetools
from gidgethub import BadRequest

from bot.config import REPO_CONFIG_PATH, LoadedRepoConfig, ParsedSettings, RepoConfig
from bot.github import api
from bot.github.client import GitHubClient
from bot.github.errors import rate_limited
from bot.handlers.context import BotContext
from bot.handlers.offloop import in_thread
from bot.handlers.owners import read_codeowners
from bot.repo_settings import MAX_SETTINGS_BYTES, SettingsChain, SettingsFile, parse_settings
from bot.store import Store
from bot.triage.owners import Codeowners

log = logging.getLogger(__name__)

_CONFIG_WARNED: cachetools.LRUCache[str, tuple[tuple[str, ...], tuple[str, ...]]] = (
    cachetools.LRUCache(4096)
)
# Settings files parsed, by their text's digest: an unchanged file (answered 304), or one
# that many repositories extend, is not parsed again. Bounded by an estimate of the bytes
# each holds parsed: PARSED_BYTES_PER_CHAR per character of its text (measured with
# tracemalloc: 5 for plain keys, 22 for patterns each with a problem) and
# PARSED_BYTES_EACH besides.
PARSED_SETTINGS_BYTES = 16 * 1024 * 1024
PARSED_BYTES_PER_CHAR = 24
PARSED_BYTES_EACH = 16 * 1024
_PARSED: cachetools.LRUCache[bytes, tuple[ParsedSettings, int]] = cachetools.LRUCache(
    PARSED_SETTINGS_BYTES, getsizeof=lambda entry: entry[1]
)

# Whether a repository is private (None: not readable), by API, installation and lower-case
# name.
VISIBILITY_SECONDS = 600
_VISIBILITY: cachetools.TTLCache[tuple[str, int | None, str], bool | None] = cachetools.TTLCache(
    4096, ttl=VISIBILITY_SECONDS
)


@dataclass
class Scope:
    ctx: BotContext
    gh: GitHubClient
    repo: str
    _settings: asyncio.Task[LoadedRepoConfig] | None = field(default=None, init=False, repr=False)
    _codeowners: asyncio.Task[Codeowners] | None = field(default=None, init=False, repr=False)

    @property
    def store(self) -> Store:
        return self.ctx.store

    async def settings(self) -> LoadedRepoConfig:
        """The repository's settings as read, problems included: read once per delivery."""
        if self._settings is None:
            self._settings = asyncio.ensure_future(read_settings(self.gh, self.repo))
        return await asyncio.shield(self._settings)

    async def config(self) -> RepoConfig:
        return (await self.settings()).config

    async def codeowners(self) -> Codeowners:
        """The repository's CODEOWNERS: read the first time a tracking issue of the delivery
        asks, then shared by its other issues."""
        if self._codeowners is None:
            self._codeowners = asyncio.ensure_future(read_codeowners(self.gh, self.repo))
        return await asyncio.shield(self._codeowners)


def settings_from(config: LoadedRepoConfig) -> list[str]:
    """The files to name in the comment's footer: any, when a key came from outside; a
    private repository's other than the PR's own not by name when the PR's is public."""
    return config.shown_from if config.outside else []


async def read_settings(gh: GitHubClient, repo: str) -> LoadedRepoConfig:
    """The repository's settings: its `.github/flaky.yml`, else its organisation's, and the
    files they `_extends` (bot/repo_settings.py decides which), each read conditionally;
    another owner's only when its repository is public."""
    chain = SettingsChain(repo)
    target: SettingsFile | None = chain.first()
    while target is not None:
        if chain.crosses_owner(target) and await _private(gh, target.repo) is not False:
            chain.refuse(target)
            break
        text, status = await _read_file(gh, repo, target)
        parsed = None if text is None else await _parsed(text)
        target = chain.take_parsed(target, parsed, status)
    config = await in_thread(chain.result, await _hidden(gh, repo, chain.outside_repos()))
    _log_once(repo, config)
    return config


async def _hidden(gh: GitHubClient, repo: str, others: list[str]) -> set[str]:
    """The repositories among `others` whose files a reader of `repo`'s PRs may not see
    named: every private one, when `repo` is public."""
    if not others:
        return set()
    private = await asyncio.gather(*(_private(gh, name) for name in [repo, *others]))
    if private[0]:
        return set()
    # One whose visibility cannot be read counts as private.
    return {name for name, hidden in zip(others, private[1:], strict=True) if hidden is not False}


async def _private(gh: GitHubClient, repo: str) -> bool | None:
    """Whether the repository is private (None: the App cannot read it), remembered a few
    minutes per installation: one read per repository, not per delivery."""
    key = (gh.base_url, gh.installation_id, repo.lower())
    if key not in _VISIBILITY:
        _VISIBILITY[key] = await api.repo_private(gh, repo)
    return _VISIBILITY[key]


async def _parsed(text: str) -> ParsedSettings:
    """The file's text parsed, once per content."""
    key = hashlib.sha256(text.encode("utf-8", errors="replace")).digest()
    kept = _PARSED.get(key)
    if kept is not None:
        return kept[0]
    # In a thread: a file can hold up to 70 regexes to compile.
    parsed = await in_thread(parse_settings, text)
    size = PARSED_BYTES_EACH + PARSED_BYTES_PER_CHAR * min(len(text), MAX_SETTINGS_BYTES)
    _PARSED[key] = parsed, size
    return parsed


async def _read_file(gh: GitHubClient, repo: str, file: SettingsFile) -> tuple[str | None, int]:
    """The file's text, or None and GitHub's status: another repository the installation
    cannot read (404, or 403 from a token without access) is not fatal, only named."""
    try:
        text = await api.get_file(gh, file.repo, file.path)
    except BadRequest as exc:
        if file.repo.lower() == repo.lower() or exc.status_code != 403 or rate_limited(exc):
            raise
        return None, 403
    return text, 200 if text is not None else 404


def _log_once(repo: str, config: LoadedRepoConfig) -> None:
    """Logged once per repository and version of its settings, not on every delivery that
    reads them; the PR comment's footer names the problems for as long as they stand."""
    problems = tuple(config.errors)
    if _CONFIG_WARNED.get(repo) == (problems, tuple(config.notes)):
        return
    _CONFIG_WARNED[repo] = (problems, tuple(config.notes))
    for problem in problems:
        log.warning("%s %s: %s (ignored)", repo, REPO_CONFIG_PATH, problem)
    for note in config.notes:
        log.info("%s settings: %s; the built-in defaults apply", repo, note)
