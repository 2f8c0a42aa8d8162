"""What one delivery's handler works with on one repository.

A handler makes one `Scope` from its event: the bot's context, the installation's client,
the repository, and the repository's settings (`.github/flaky.yml`), read the first time a
step asks and then shared by every step of the delivery (the triage, its rerun, its
tracking issues, its comment), with the file's problems logged once per version of it;
likewise its CODEOWNERS, read only when a tracking issue is written.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import cachetools

from bot.config import REPO_CONFIG_PATH, LoadedRepoConfig, RepoConfig
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.handlers.offloop import read_repo_config
from bot.handlers.owners import read_codeowners
from bot.store import Store
from bot.triage.owners import Codeowners

log = logging.getLogger(__name__)

_CONFIG_WARNED: cachetools.LRUCache[str, tuple[str, ...]] = cachetools.LRUCache(4096)


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


def config_problems(config: LoadedRepoConfig) -> list[str]:
    return config.errors + [f"unknown key {key!r}" for key in config.unknown_keys]


async def read_settings(gh: GitHubClient, repo: str) -> LoadedRepoConfig:
    config = await read_repo_config(gh, repo)
    problems = tuple(config_problems(config))
    # Logged once per repository and version of the file, not on every delivery that reads
    # it; the PR comment's footer names them for as long as they stand.
    if problems and _CONFIG_WARNED.get(repo) != problems:
        _CONFIG_WARNED[repo] = problems
        for problem in problems:
            log.warning("%s %s: %s (ignored)", repo, REPO_CONFIG_PATH, problem)
    return config
