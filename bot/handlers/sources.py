"""Read what a failed test imports, economically: gather for the footprint.

One recursive tree per commit, then one GraphQL query per level of the walk for every
file still unread (all the job's failed tests together), contents cached by blob SHA,
which never changes. With the default depth of 2, the first triage of a head spends at
most 3 calls (the tree, the test files with their configuration, then what they import);
a language whose configuration names more files that run for the test (jest's setup
files) may spend one more round. A further failure of the same test on the same head
spends none, in any replica: finished walks and blob texts are kept in the store too.

A changed manifest that steers a test's imports (a package.json, a composer.json) is read at
the PR's base commit too, by `commit:path` in the first round's query (no call of its own),
so that a change to its `version` alone is told from one to its `exports`
(`inert_changes`); only when every walk was kept does that read cost a query.

A failure that names no file (a Go package's test, a JVM class) is found in the tree first
(`imports.locate`, no further call, but one query for the go.mod files of a repository with
several Go modules); so is a file the failure names that the tree does not hold as printed
(a GOPATH checkout's `src/github.com/...`). When nothing the PR changes could be imported
its file is only located (the tree, no file read), so that its footprint is not empty.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import cachetools
from gidgethub.abc import GitHubAPI

from bot.github import api
from bot.handlers.offloop import in_thread
from bot.store import Store
from bot.triage import manifests
from bot.triage.footprint import WalkPlan, plan_walk
from bot.triage.imports import ImportWalk, Source, Tree, Unreadable, WalkLimits, walk
from bot.triage.imports.languages import language_of
from bot.triage.imports.locate import Located, go_mods_for_locating, locate_in_tree
from bot.triage.imports.walk import cache_key
from bot.triage.models import Failure
from bot.triage.placement import SuffixIndex

log = logging.getLogger(__name__)

TREES_KEPT = 256
WALKS_KEPT = 4096
BLOB_CACHE_BYTES = 64 * 1024 * 1024
# One GraphQL query reads at most this much: GitHub stops a query after 10 seconds (and
# counts the timeout against the rate limit), so a large read is split into queries sent
# together rather than risked as one.
QUERY_BLOBS = 100
QUERY_BYTES = 4 * 1024 * 1024
# Changed manifests read at the base commit per triage; past it, a change counts as one
# that can steer resolution (`manifests.inert_change` is not asked).
COMPARED_MANIFESTS = 20


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


@dataclass(frozen=True)
class Compared:
    """The PR's changed manifests whose versions at `base_sha` and at the head are compared
    (`manifests.compared`, changed in place)."""

    base_sha: str
    paths: tuple[str, ...]

    @classmethod
    def of(cls, base_sha: str, modified: Sequence[str]) -> Compared:
        found = [path for path in modified if manifests.compared(path)]
        return cls(base_sha, tuple(found[:COMPARED_MANIFESTS]))

    def names(self) -> list[str]:
        return [api.at_commit(self.base_sha, path) for path in self.paths]


async def import_walks(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    sha: str,
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    changed_complete: bool,
    cache: SourceCache,
    compared: Compared | None = None,
) -> dict[str, ImportWalk] | None:
    """The walk of each failed test's imports at `sha`, keyed by `walk_key` (its test file,
    or its id when the file was found in the tree); none for the tests where it cannot
    change the verdict (`plan_walk`). None when the walk is off (depth 0): then every test
    keeps the name-and-folder rules (`verdict.py`). The `compared` manifests' base versions
    are read with the first round's files."""
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
    go_mods = sorted({p for plan in plans for p in _go_mods_to_read(plan, tree)})
    sources: dict[str, Source] = {}
    if go_mods:  # which module holds a package is theirs to say
        await _read(gh, store, repo, tree, go_mods, sources, cache)
    located = _locate(plans, tree, sources)
    to_walk = sorted({f.path for p, f in located if not p.skip and f.path not in done})
    done |= await _kept_walks(store, repo, sha, to_walk, cache)
    todo = [f for f in to_walk if f not in done]
    also = compared.names() if compared else []
    done |= await _walk_all(gh, store, repo, sha, tree, todo, cache, also)
    return {p.key: _result(p, found, done) for p, found in located}


def _go_mods_to_read(plan: WalkPlan, tree: Tree) -> list[str]:
    if plan.test_file is not None and plan.test_file in tree.files:
        return []
    return go_mods_for_locating(plan.failure, tree)


def _locate(
    plans: Sequence[WalkPlan], tree: Tree, go_mods: dict[str, Source]
) -> list[tuple[WalkPlan, Located]]:
    """Each plan with its test file: named by the failure and in the tree, else found (or
    placed) in the tree. A named file the tree does not hold stays as named (its walk says
    so); a plan with no file found in the tree is dropped (`verdict.py` says it could not
    be located)."""
    found = []
    index: SuffixIndex | None = None
    for plan in plans:
        named = plan.test_file
        if named is not None and (named in tree.files or tree.truncated):
            found.append((plan, Located(named, "")))  # a cut list proves no uniqueness
        elif (located := locate_in_tree(plan.failure, tree, named, go_mods)) is not None:
            found.append((plan, located))
        elif named is not None:
            index = index or SuffixIndex.of(tree.files)
            found.append((plan, _placed(index, plan.failure, named)))
    return found


def _placed(index: SuffixIndex, failure: Failure, named: str) -> Located:
    """A named file the tree does not hold as printed, placed by its suffix (jest run in a
    workspace package prints paths from there); as named when it cannot be (the note says
    why, and its walk says it is not in the tree)."""
    placed = index.place(named, index.package_folders(failure.workspace))
    if placed is None:
        return Located(named, "")
    return Located(placed.path or named, placed.note)


def _result(plan: WalkPlan, found: Located, done: dict[str, ImportWalk]) -> ImportWalk:
    walked = done.get(found.path)
    if walked is None:  # only located: the walk could not change the verdict
        language = language_of(found.path)
        name = language.name if language else ""
        walked = ImportWalk(found.path, name, (), (), (), (), skipped=plan.skip)
    if found.how:
        walked = dataclasses.replace(walked, found_by=found.how)
    return walked


async def _walk_all(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    sha: str,
    tree: Tree,
    todo: list[str],
    cache: SourceCache,
    also: list[str],
) -> dict[str, ImportWalk]:
    """Walk every test file of `todo`, reading what they want round by round, together
    (the first round reads the blobs `also` names as well)."""
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
        await _read(gh, store, repo, tree, sorted(wanted), sources, cache, also)
        also = []
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


def query_batches(shas: Sequence[str], sizes: Mapping[str, int]) -> list[list[str]]:
    """The blobs split into GraphQL queries within QUERY_BLOBS and QUERY_BYTES each, in
    order: one query per batch (`bench/replay.py` counts them)."""
    batches: list[list[str]] = []
    spent = 0
    for sha in shas:
        if not batches or len(batches[-1]) >= QUERY_BLOBS or spent + sizes[sha] > QUERY_BYTES:
            batches.append([])
            spent = 0
        batches[-1].append(sha)
        spent += sizes[sha]
    return batches


async def _query(
    gh: GitHubAPI, repo: str, shas: list[str], sizes: dict[str, int]
) -> dict[str, Source] | None:
    """The blobs' texts in as few queries as the per-query bounds allow, sent together;
    None when every query failed (a part that failed is left out)."""
    batches = query_batches(shas, sizes)
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
    also: Sequence[str] = (),
) -> None:
    """Fill `sources` with the paths' texts (and the cache with the blobs `also` names)."""
    shas = {path: tree.files[path].sha for path in paths}
    sizes = {tree.files[path].sha: tree.files[path].size for path in paths}
    missing = await _fetch(gh, store, repo, [*shas.values(), *also], sizes, cache)
    for path, sha in shas.items():
        known = cache.blobs.get(sha)
        if known is not None:
            sources[path] = known
        elif sha in missing:  # its query failed: unread this time, not remembered
            sources[path] = Unreadable("GitHub did not answer the query")


async def _fetch(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    names: list[str],
    sizes: dict[str, int],
    cache: SourceCache,
) -> set[str]:
    """Put the blobs' texts in the cache: from memory, then the store, the rest in one
    query (whose answers are kept in both). The blobs asked of GitHub come back."""
    missing = sorted({name for name in names if name not in cache.blobs})
    kept = await store.blobs(missing) if missing else {}
    for sha, text in kept.items():
        cache.blobs[sha] = text
    missing = [sha for sha in missing if sha not in kept]
    sizes = {sha: sizes.get(sha, 0) for sha in missing}
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
    return set(missing)


async def inert_changes(
    gh: GitHubAPI,
    store: Store,
    repo: str,
    sha: str,
    walks: Mapping[str, ImportWalk] | None,
    compared: Compared,
    cache: SourceCache,
) -> dict[str, str]:
    """The compared manifests that steer a failed test's imports and whose change cannot
    steer them, each with the fields that changed (`manifests.inert_change`). Their texts
    were read with the walks; a query only when the walks were kept from an earlier triage."""
    steering = {path for found in (walks or {}).values() for path in found.configs}
    paths = [path for path in compared.paths if path in steering]
    if not paths:
        return {}
    # The head's blobs by SHA when this process read the tree (the walk read them), else
    # by `commit:path` (the walks were kept: no tree was read).
    tree = cache.trees.get((repo, sha))
    heads = {
        path: tree.files[path].sha
        if tree is not None and path in tree.files
        else api.at_commit(sha, path)
        for path in paths
    }
    bases = {path: api.at_commit(compared.base_sha, path) for path in paths}
    await _fetch(gh, store, repo, [*heads.values(), *bases.values()], {}, cache)
    found = {
        path: manifests.inert_change(
            path, cache.blobs.get(bases[path]), cache.blobs.get(heads[path])
        )
        for path in paths
    }
    return {path: fields for path, fields in found.items() if fields is not None}
