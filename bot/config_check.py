"""`flakybot config check FILE|OWNER/REPO` and `flakybot config schema`.

A settings file's problems and the settings that then apply, seen before a pull request
meets them (as Renovate's and Mergify's validators show theirs), usable as a CI step: exit
status 1 when there is a problem. A file is read alone; a repository is read as the bot reads
it, with a token: its own file, else its organisation's `.github` one, and what they
`_extends`, merged. The JSON Schema of `.github/flaky.yml` is made from the same model, so
editors check the file as the bot does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.config import (
    EXTENDS_KEY,
    REPO_CONFIG_PATH,
    LoadedRepoConfig,
    RepoConfig,
    api_url_from_env,
)
from bot.handlers.scope import read_settings
from bot.logs import configure
from bot.repo_settings import parse_settings
from bot.tryout import DEFAULT_API_URL, TryoutError, read_only_github

_REPO = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass
class Checked:
    """What `config check` found: the problems, and the settings that apply despite them."""

    source: str
    config: RepoConfig
    problems: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "problems": self.problems,
            "applied": self.applied,
            "notes": self.notes,
            "settings": self.config.model_dump(mode="json"),
        }

    def describe(self) -> str:
        count = len(self.problems)
        lines = [f"{self.source}: {count or 'no'} problem{'' if count == 1 else 's'}"]
        lines += [f"  problem: {problem}" for problem in self.problems]
        lines += [f"  note: {note}" for note in self.notes]
        where = f" (from {', '.join(self.applied)})" if self.applied else " (the defaults)"
        lines.append(f"effective settings{where}:")
        dumped = yaml.safe_dump(self.config.model_dump(mode="json"), sort_keys=False)
        lines += ["  " + line for line in dumped.splitlines()]
        return "\n".join(lines)


def check_file(path: Path) -> Checked:
    """One file alone; an `_extends` it holds is named, not followed (no repository to
    follow it in)."""
    parsed = parse_settings(path.read_text(encoding="utf-8", errors="replace"))
    notes = []
    if parsed.extends is not None:
        notes.append(
            f"{EXTENDS_KEY}: {str(parsed.extends)[:100]!r} is not followed for a file: check "
            "the repository (OWNER/REPO with a token) to see the settings merged"
        )
    applied = [str(path)] if parsed.values else []
    return Checked(str(path), parsed.config, parsed.problems(), applied, notes)


def from_loaded(repo: str, loaded: LoadedRepoConfig) -> Checked:
    return Checked(
        f"{repo} {REPO_CONFIG_PATH}", loaded.config, loaded.errors, loaded.applied, loaded.notes
    )


async def check_repository(repo: str, *, token: str, api_url: str) -> Checked:
    async with read_only_github(token=token, api_url=api_url, seconds=120) as gh:
        return from_loaded(repo, await read_settings(gh, repo))


def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of `.github/flaky.yml`, from RepoConfig."""
    doc = RepoConfig.model_json_schema()
    doc["properties"][EXTENDS_KEY] = {
        "type": "string",
        "description": "A file whose keys this one overrides: [owner/]repo[:path.yml]",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **doc,
        "title": ".github/flaky.yml",
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def command(target: str, *, token: str | None, api_url: str | None, as_json: bool) -> int:
    """`flakybot config check`: 0 with no problem, 1 with problems (both print the
    settings), 2 with one line on stderr when nothing could be read."""
    token = token or os.environ.get("GITHUB_TOKEN")
    configure("text", "WARNING", [token] if token else [])
    try:
        checked = _check(target, token, api_url)
    except TryoutError as exc:
        print(f"flakybot config check: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(checked.record(), indent=2) if as_json else checked.describe())
    return 1 if checked.problems else 0


def _check(target: str, token: str | None, api_url: str | None) -> Checked:
    path = Path(target)
    if path.is_file():
        try:
            return check_file(path)
        except OSError as exc:
            raise TryoutError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not _REPO.fullmatch(target):
        raise TryoutError(f"{target}: no such file, and not OWNER/REPO")
    if not token:
        raise TryoutError("no token to read a repository: set GITHUB_TOKEN or pass --token")
    api_url = api_url or api_url_from_env(os.environ) or DEFAULT_API_URL
    return asyncio.run(check_repository(target, token=token, api_url=api_url))
