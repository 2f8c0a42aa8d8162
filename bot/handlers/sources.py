"""Read what a failed test imports, economically: gather for the footprint.

One recursive tree per commit, then one GraphQL query per level of the walk for every
file still unread (all the job's failed tests together), contents cached by blob SHA,
which never changes. With the default depth of 2, the first triage of a head spends at
most 3 calls (the tree, the test files with their configuration, then what they import);
a language whose configuration names more files that run for the test (jest's setup
files) may spend one more round. A further failure of the same test on the same head
spends none.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import cachetools
from gidgethub.abc import GitHubAPI

from bot.github import api
from bot.triage.footprint import worth_walking
from bot.triage.imports import ImportWalk, Source, Tree, Unreadable, WalkLimits, walk
from bot.triage.models import Failure

log = logging.getLogger(__name__)

TREES_KEPT = 256
WALKS_KEPT = 4096
BLOB_CACHE_BYTES = 64 * 1024 * 1024


def _size(source: Source) -> int:
    return len(source) if isinstance(source, str) else 1


@dataclass
class SourceCache:
    """What the walks read, kept across deliveries: trees by commit, texts by blob SHA
    (immutable, so never stale: bounded by size only), walks by commit and test file."""

    limits: WalkLimits = field(default_factory=WalkLimits)
    trees: cachetools.LRUCache[tuple[str, str], Tree | None] = field(
        default_factory=lambda: cachetools.LRUCache(TREES_KEPT)
    )
    blobs: cachetools.LRUCache[str, Source] = field(
        default_factory=lambda: cachetools.LRUCache(BLOB_CACHE_BYTES, getsizeof=_size)
    )
    walks: cachetools.LRUCache[tuple[str, str, str], ImportWalk] = field(
        default_factory=lambda: cachetools.LRUCache(WALKS_KEPT)
    )


async def import_walks(
    gh: GitHubAPI,
    repo: str,
    sha: str,
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    changed_complete: bool,
    cache: SourceCache,
) -> dict[str, ImportWalk] | None:
    """The walk of each failed test file's imports at `sha`, keyed by test file; none for
    the tests where it cannot change the verdict (`worth_walking`). None when the walk is
    off (depth 0): then every test keeps the name-and-folder rules (`verdict.py`)."""
    test_files = sorted(
        {
            test_file
            for failure in failures
            if (test_file := worth_walking(failure, changed_paths, changed_complete))
        }
    )
    if cache.limits.depth == 0:
        return None
    done = {f: w for f in test_files if (w := cache.walks.get((repo, sha, f))) is not None}
    todo = [f for f in test_files if f not in done]
    if not todo:
        return done
    key = (repo, sha)
    if key not in cache.trees:
        cache.trees[key] = await api.commit_tree(gh, repo, sha)
    tree = cache.trees[key]
    if tree is None:
        log.info("no tree for %s at %s: imports not followed", repo, sha)
        return done
    sources: dict[str, Source] = {}
    # Round n reads the files at depth n - 1: the test files (with the configuration and
    # what runs for them) first, then what they import; files that only the configuration
    # names (setup files) can take one more round.
    for _ in range(cache.limits.depth + 1):
        wanted = {p for f in todo for p in walk(f, tree, sources, cache.limits).wanted}
        if not wanted:
            break
        await _read(gh, repo, tree, sorted(wanted), sources, cache)
    for test_file in todo:
        found = walk(test_file, tree, sources, cache.limits)
        if found.wanted:  # a read failed, or the rounds ran out: the walk could not finish
            unread = f"{len(found.wanted):,} file(s) not read"
            found = dataclasses.replace(found, wanted=(), cut=(*found.cut, unread))
        else:
            cache.walks[(repo, sha, test_file)] = found
        done[test_file] = found
    return done


def files_at(cache: SourceCache, repo: str, sha: str) -> AbstractSet[str] | None:
    """The commit's file paths when a walk already read its tree (no call is spent for them
    alone); None otherwise, and when GitHub truncated the list."""
    tree = cache.trees.get((repo, sha))
    if tree is None or tree.truncated:
        return None
    return tree.files.keys()


async def _read(
    gh: GitHubAPI,
    repo: str,
    tree: Tree,
    paths: list[str],
    sources: dict[str, Source],
    cache: SourceCache,
) -> None:
    """Fill `sources` with the paths' texts: from the cache, the rest in one query."""
    shas = {path: tree.files[path].sha for path in paths}
    missing = sorted({sha for sha in shas.values() if sha not in cache.blobs})
    answered = await api.read_blobs(gh, repo, missing) if missing else {}
    for sha, text in (answered or {}).items():
        cache.blobs[sha] = text
    for path, sha in shas.items():
        known = cache.blobs.get(sha)
        if known is not None:
            sources[path] = known
        elif answered is None:  # the query failed: unread this time, not remembered
            sources[path] = Unreadable("GitHub did not answer the query")
