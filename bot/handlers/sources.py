"""Read what a failed test imports, economically: gather for the footprint.

One recursive tree per commit, then one GraphQL query per level of the walk for every
file still unread (all the job's failed tests together), contents cached by blob SHA,
which never changes. With the default depth of 2, the first triage of a head spends at
most 3 calls (the tree, the test files with their configuration, then what they import);
a language whose configuration names more files that run for the test (jest's setup
files) may spend one more round. A further failure of the same test on the same head
spends none, in any replica: finished walks and blob texts are kept in the store too.

A failure that names no file (a Go package's test, a JVM class) is found in the tree first
(`imports.locate`, no further call); when nothing the PR changes could be imported its file
is only located (the tree, no file read), so that its footprint is not empty.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import cachetools
from gidgethub.abc import GitHubAPI

from bot.config import CacheMemory
from bot.github import api
from bot.handlers.cache_memory import blob_cache, tree_cache, walk_cache
from bot.handlers.offloop import in_thread
from bot.store import Store
from bot.triage.footprint import WalkPlan, plan_walk
from bot.triage.imports import ImportWalk, Source, Tree, Unreadable, WalkLimits, walk
from bot.triage.imports.languages import language_of
from bot.triage.imports.locate import how_located, locate_in_tree
from bot.triage.imports.walk import cache_key
from bot.triage.models import Failure

log = logging.getLogger(__name__)

# One GraphQL query reads at most this much: GitHub stops a query after 10 seconds (and
# counts the timeout against the rate limit), so a large read is split into queries sent
# together rather than risked as one.
QUERY_BLOBS = 100
QUERY_BYTES = 4 * 1024 * 1024


@dataclass
class SourceCache:
    """What the walks read, kept across deliveries: trees by commit, texts by blob SHA
    (immutable, so never stale), walks by commit and test file; each bounded by its bytes
    (bot/handlers/cache_memory.py), its share of CACHE_MEMORY_MB."""

    limits: WalkLimits = field(default_factory=WalkLimits)
    trees: cachetools.LRUCache[tuple[str, str], Tree | None] = field(
        default_factory=lambda: tree_cache(CacheMemory().trees)
    )
    blobs: cachetools.LRUCache[str, Source] = field(
        default_factory=lambda: blob_cache(CacheMemory().blobs)
    )
    walks: cachetools.LRUCache[tuple[str, str, str], ImportWalk] = field(
        default_factory=lambda: walk_cache(CacheMemory().walks)
    )

    @classmethod
    def within(cls, limits: WalkLimits, memory: CacheMemory) -> SourceCache:
        return cls(
            limits, tree_cache(memory.trees), blob_cache(memory.blobs), walk_cache(memory.walks)
        )


async def import_walks(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    sha: str,
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    changed_complete: bool,
    cache: SourceCache,
) -> dict[str, ImportWalk] | None:
    """The walk of each failed test's imports at `sha`, keyed by `walk_key` (its test file,
    or its id when the file was found in the tree); none for the tests where it cannot
    change the verdict (`plan_walk`). None when the walk is off (depth 0): then every test
    keeps the name-and-folder rules (`verdict.py`)."""
    if cache.limits.depth == 0:
        return None
    plans = [p for f in failures if (p := plan_walk(f, changed_paths, changed_complete))]
    if not plans:
        return {}
    known = sorted({p.test_file for p in plans if p.test_file is not None})
    done = await _kept_walks(store, repo, sha, known, cache)
    if all(p.test_file in done for p in plans):
        return {p.key: done[p.test_file] for p in plans if p.test_file is not None}
    key = (repo, sha)
    if key not in cache.trees:
        cache.trees[key] = await api.commit_tree(gh, repo, sha)
    tree = cache.trees[key]
    if tree is None:
        log.info("no tree for %s at %s: imports not followed", repo, sha)
        return {p.key: done[p.test_file] for p in plans if p.test_file in done}
    located = _locate(plans, tree)
    to_walk = sorted({f for p, f in located if not p.skip and f not in done})
    done |= await _kept_walks(store, repo, sha, to_walk, cache)
    todo = [f for f in to_walk if f not in done]
    done |= await _walk_all(gh, store, repo, sha, tree, todo, cache)
    return {p.key: _result(p, test_file, done) for p, test_file in located}


def _locate(plans: Sequence[WalkPlan], tree: Tree) -> list[tuple[WalkPlan, str]]:
    """Each plan with its test file: named by the failure, or found in the tree (a plan
    whose file is in no folder of the tree is dropped: its footprint stays the rules')."""
    found = []
    for plan in plans:
        test_file = plan.test_file or locate_in_tree(plan.failure, tree)
        if test_file is not None:
            found.append((plan, test_file))
    return found


def _result(plan: WalkPlan, test_file: str, done: dict[str, ImportWalk]) -> ImportWalk:
    walked = done.get(test_file)
    if walked is None:  # only located: the walk could not change the verdict
        language = language_of(test_file)
        name = language.name if language else ""
        walked = ImportWalk(test_file, name, (), (), (), (), skipped=plan.skip)
    if plan.test_file is None:
        walked = dataclasses.replace(walked, found_by=how_located(plan.failure))
    return walked


async def _walk_all(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    sha: str,
    tree: Tree,
    todo: list[str],
    cache: SourceCache,
) -> dict[str, ImportWalk]:
    """Walk every test file of `todo`, reading what they want round by round, together."""
    sources: dict[str, Source] = {}
    # Round n reads the files at depth n - 1: the test files (with the configuration and
    # what runs for them) first, then what they import; files that only the configuration
    # names (setup files) can take one more round.
    # The walks parse what was read (up to IMPORT_BYTES a test): off the event loop.
    for _ in range(cache.limits.depth + 1 if todo else 0):
        walks = await in_thread(_walks, todo, tree, dict(sources), cache.limits)
        wanted = {path for found in walks for path in found.wanted}
        if not wanted:
            break
        await _read(gh, store, repo, tree, sorted(wanted), sources, cache)
    walks = await in_thread(_walks, todo, tree, dict(sources), cache.limits)
    return {found.test_file: await _finish(store, repo, sha, found, cache) for found in walks}


def _walks(
    todo: list[str], tree: Tree, sources: dict[str, Source], limits: WalkLimits
) -> list[ImportWalk]:
    return [walk(test_file, tree, sources, limits) for test_file in todo]


async def _kept_walks(
    store: Store, repo: str, sha: str, test_files: list[str], cache: SourceCache
) -> dict[str, ImportWalk]:
    """The walks already made, in this process or (kept in the store) in any other."""
    done = {f: w for f in test_files if (w := cache.walks.get((repo, sha, f))) is not None}
    asked = [f for f in test_files if f not in done]
    key = cache_key(cache.limits)
    kept = await asyncio.gather(*(store.import_walk(repo, sha, f, key) for f in asked))
    for test_file, found in zip(asked, kept, strict=True):
        if found is not None:
            cache.walks[(repo, sha, test_file)] = done[test_file] = found
    return done


async def _finish(
    store: Store, repo: str, sha: str, found: ImportWalk, cache: SourceCache
) -> ImportWalk:
    """The walk as the verdict sees it, kept when it is finished."""
    if found.wanted:  # a read failed, or the rounds ran out: the walk could not finish
        unread = f"{len(found.wanted):,} file(s) not read"
        return dataclasses.replace(found, wanted=(), cut=(*found.cut, unread))
    cache.walks[(repo, sha, found.test_file)] = found
    await store.save_import_walk(repo, sha, cache_key(cache.limits), found, time.time())
    return found


async def _query(
    gh: GitHubAPI, repo: str, shas: list[str], sizes: dict[str, int]
) -> dict[str, Source] | None:
    """The blobs' texts in as few queries as the per-query bounds allow, sent together;
    None when every query failed (a part that failed is left out)."""
    batches: list[list[str]] = []
    spent = 0
    for sha in shas:
        if not batches or len(batches[-1]) >= QUERY_BLOBS or spent + sizes[sha] > QUERY_BYTES:
            batches.append([])
            spent = 0
        batches[-1].append(sha)
        spent += sizes[sha]
    if not batches:
        return {}
    answers = await asyncio.gather(*(api.read_blobs(gh, repo, batch) for batch in batches))
    if all(answer is None for answer in answers):
        return None
    return {sha: text for answer in answers if answer for sha, text in answer.items()}


def files_at(cache: SourceCache, repo: str, sha: str) -> AbstractSet[str] | None:
    """The commit's file paths when a walk already read its tree (no call is spent for them
    alone); None otherwise, and when GitHub truncated the list."""
    tree = cache.trees.get((repo, sha))
    if tree is None or tree.truncated:
        return None
    return tree.files.keys()


async def _read(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    tree: Tree,
    paths: list[str],
    sources: dict[str, Source],
    cache: SourceCache,
) -> None:
    """Fill `sources` with the paths' texts: from memory, then the store, the rest in one
    query (whose answers are kept in both)."""
    shas = {path: tree.files[path].sha for path in paths}
    missing = sorted({sha for sha in shas.values() if sha not in cache.blobs})
    kept = await store.blobs(missing) if missing else {}
    for sha, text in kept.items():
        cache.blobs[sha] = text
    missing = [sha for sha in missing if sha not in kept]
    sizes = {tree.files[path].sha: tree.files[path].size for path in paths}
    answered = await _query(gh, repo, missing, sizes)
    for sha, text in (answered or {}).items():
        cache.blobs[sha] = text
    lasting = {
        sha: text
        for sha, text in (answered or {}).items()
        if not (isinstance(text, Unreadable) and text.reason == api.BLOB_NOT_FOUND)
    }
    if lasting:
        await store.save_blobs(lasting, time.time())
    for path, sha in shas.items():
        known = cache.blobs.get(sha)
        if known is not None:
            sources[path] = known
        elif sha in missing:  # its query failed: unread this time, not remembered
            sources[path] = Unreadable("GitHub did not answer the query")
