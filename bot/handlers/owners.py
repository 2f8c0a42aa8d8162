"""The repository's CODEOWNERS, read from the default branch when a tracking issue needs it.

GitHub uses the first of `.github/CODEOWNERS`, `CODEOWNERS`, `docs/CODEOWNERS` that exists,
so the reads stop at the first found: each is conditional (its ETag), and a path that does
not exist is remembered by the installation's client for a few minutes, so a repository
costs one revalidation (a 304, free of rate limit) per delivery once the file was read.
Invalid lines are logged once per repository and version of the file, as the settings'
problems are.
"""

from __future__ import annotations

import hashlib
import logging

import cachetools

from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.offloop import in_thread
from bot.triage import owners
from bot.triage.owners import NO_CODEOWNERS, Codeowners

log = logging.getLogger(__name__)

_WARNED: cachetools.LRUCache[str, tuple[str, ...]] = cachetools.LRUCache(4096)
# Files parsed, by location and content: a revalidated (304) file is not compiled again.
# Bounded by an estimate of their bytes: PARSED_BYTES_PER_CHAR per character of the text
# (tracemalloc: 15 before its patterns are compiled for a first match); a file whose
# estimate is over the whole bound is parsed each time, as GitHub's 3 MB one may be.
PARSED_CODEOWNERS_BYTES = 32 * 1024 * 1024
PARSED_BYTES_PER_CHAR = 32
_PARSED: cachetools.LRUCache[tuple[str, str], tuple[Codeowners, int]] = cachetools.LRUCache(
    PARSED_CODEOWNERS_BYTES, getsizeof=lambda entry: entry[1]
)


async def read_codeowners(gh: GitHubClient, repo: str) -> Codeowners:
    """The CODEOWNERS GitHub would use, parsed (in a thread: a file may hold thousands of
    patterns to compile); no rules when the repository has none."""
    for path in owners.CODEOWNERS_PATHS:
        text = await api.get_file(gh, repo, path)
        if text is not None:
            key = (path, hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest())
            kept = _PARSED.get(key)
            parsed = kept[0] if kept else await in_thread(owners.parse, text, path)
            size = PARSED_BYTES_PER_CHAR * len(text)
            if kept is None and size <= PARSED_CODEOWNERS_BYTES:
                _PARSED[key] = parsed, size
            _log_problems(repo, parsed)
            return parsed
    return NO_CODEOWNERS


def _log_problems(repo: str, parsed: Codeowners) -> None:
    named = (parsed.path, *parsed.problems)
    if not parsed.problems or _WARNED.get(repo) == named:
        return
    _WARNED[repo] = named
    for problem in parsed.problems:
        log.warning("%s %s: %s (line skipped, as GitHub does)", repo, parsed.path, problem)
