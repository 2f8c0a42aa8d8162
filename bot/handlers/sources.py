"""Read what a failed test imports, economically: gather for the footprint.

One recursive tree per commit, then GraphQL queries round by round for every file the
walks (all the job's failed tests together) still want, each round's queries filled up to
their bounds with the files likeliest to be wanted next (`imports.plan.plan_reads`): on a
small repository the whole source set comes in the first round, on a large one the walk
reads its packages a round ahead. Texts are cached by blob SHA, which never changes, in
memory and in the store: a later commit re-reads only what changed. A further failure of
the same test on the same head spends no call, in any replica: finished walks are kept in
the store too. A walk cut by a fault (a 5xx, a rate limit) raises, so the delivery is
retried; it is never kept.

A changed manifest that steers a test's imports (a package.json, composer.json, go.mod,
Cargo.toml, pyproject.toml, .csproj) is read at the PR's base commit too, by `commit:path` in
the first round's query (no call of its own), so that a change to a dependency's version
alone is told from one to its `exports` or `replace`s (`inert_changes`); only when every
walk was kept does that read cost a query.

A failure that names no file (a Go package's test, a JVM class) is found in the tree first
(`imports.locate`, no further call, but one query for the go.mod files of a repository with
several Go modules); so is a file the failure names that the tree does not hold as printed
(a GOPATH checkout's `src/github.com/...`, a path printed from a workspace package). When
nothing the PR changes could be imported its file is only located (the tree, no file read),
so that its footprint is not empty.
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

from bot.config import CacheMemory
from bot.github import api
from bot.handlers.cache_memory import blob_cache, tree_cache, walk_cache
from bot.handlers.offloop import in_thread
from bot.store import Store
from bot.triage import manifests
from bot.triage.footprint import WalkPlan, plan_walk
from bot.triage.imports import ImportWalk, Source, Tree, Unreadable, WalkLimits, walk
from bot.triage.imports.languages import language_of
from bot.triage.imports.locate import Located, go_mods_for_locating, locate_in_tree
from bot.triage.imports.plan import QueryBounds, batches, plan_reads
from bot.triage.imports.walk import ImportsMemo, cache_key
from bot.triage.models import Failure
from bot.triage.placement import SuffixIndex

log = logging.getLogger(__name__)

QUERY = QueryBounds()
# Changed manifests read at the base commit per triage; past it, a change counts as one
# that can steer resolution (`manifests.inert_change` is not asked).
COMPARED_MANIFESTS = 20


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
    walks: cachetools.LRUCache[tuple[str, str, str, str], ImportWalk] = field(
        default_factory=lambda: walk_cache(CacheMemory().walks)
    )

    @classmethod
    def within(cls, limits: WalkLimits, memory: CacheMemory) -> SourceCache:
        return cls(
            limits, tree_cache(memory.trees), blob_cache(memory.blobs), walk_cache(memory.walks)
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
    limits: WalkLimits | None = None,
    compared: Compared | None = None,
) -> dict[str, ImportWalk] | None:
    """The walk of each failed test's imports at `sha`, keyed by `walk_key` (its test file,
    or its id when the file was found in the tree); none for the tests where it cannot
    change the verdict (`plan_walk`). `limits`: the repository's budgets, when they are not
    the cache's (the App's). None when the walk is off (a budget of 0 files): then every
    test keeps the name-and-folder rules (`verdict.py`). The `compared` manifests' base
    versions are read with the first round's files."""
    if limits is not None:  # the same caches, walked under the repository's budgets
        cache = dataclasses.replace(cache, limits=limits)
    if cache.limits.files == 0:
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
    """Walk every test file of `todo` to the end of its closure (or its budget), reading
    what they want round by round, together, each round's queries filled with the files
    likeliest to be wanted next (`plan_reads`). Each round adds at least one file to
    `sources`, and the budgets bound what a walk wants: the rounds end. The first query
    also reads the blobs `also` names (manifests at the base commit)."""
    sources: dict[str, Source] = {}
    memo: ImportsMemo = {}  # each file parsed once, whatever the rounds
    # The walks parse what was read (up to the bytes budget a test): off the event loop.
    walks = await in_thread(_walks, todo, tree, dict(sources), cache.limits, memo)
    while wanted := [path for found in walks for path in found.wanted]:
        await _recall(store, tree, wanted, sources, cache)
        missing = [path for path in wanted if path not in sources]
        if missing:  # ranking a large tree's files takes a moment: off the loop too
            size = cache.limits.file_bytes
            plan = await in_thread(plan_reads, todo, missing, tree, set(sources), QUERY, size)
            await _read(gh, store, repo, tree, plan, sources, cache, also)
            also = []
        walks = await in_thread(_walks, todo, tree, dict(sources), cache.limits, memo)
    return {found.test_file: await _finish(store, repo, sha, found, cache) for found in walks}


def _walks(
    todo: list[str],
    tree: Tree,
    sources: dict[str, Source],
    limits: WalkLimits,
    memo: ImportsMemo,
) -> list[ImportWalk]:
    return [walk(test_file, tree, sources, limits, memo) for test_file in todo]


async def _kept_walks(
    store: Store, repo: str, sha: str, test_files: list[str], cache: SourceCache
) -> dict[str, ImportWalk]:
    """The walks already made, in this process or (kept in the store) in any other."""
    key = cache_key(cache.limits)
    done = {f: w for f in test_files if (w := cache.walks.get((repo, sha, f, key))) is not None}
    asked = [f for f in test_files if f not in done]
    kept = await asyncio.gather(*(store.import_walk(repo, sha, f, key) for f in asked))
    for test_file, found in zip(asked, kept, strict=True):
        if found is not None:
            cache.walks[(repo, sha, test_file, key)] = done[test_file] = found
    return done


async def _finish(
    store: Store, repo: str, sha: str, found: ImportWalk, cache: SourceCache
) -> ImportWalk:
    """The finished walk (the rounds end only when no walk wants a file), kept: a fault
    raised before it could be made."""
    key = cache_key(cache.limits)
    cache.walks[(repo, sha, found.test_file, key)] = found
    await store.save_import_walk(repo, sha, key, found, time.time())
    return found


async def _query(
    gh: GitHubAPI, repo: str, tree: Tree, paths: list[str], also: Sequence[str] = ()
) -> tuple[dict[str, Source], set[str], BaseException | None]:
    """The paths' blob texts in as few queries as the per-query bounds allow, sent
    together (the names `also` lists in the last one, or one more when it is full)."""
    shas = [[tree.files[path].sha for path in batch] for batch in batches(paths, tree, QUERY)]
    if also:
        if shas and len(shas[-1]) + len(also) <= QUERY.blobs:
            shas[-1] += also
        else:
            shas.append(list(also))
    return await _ask(gh, repo, shas)


async def _ask(
    gh: GitHubAPI, repo: str, names: list[list[str]]
) -> tuple[dict[str, Source], set[str], BaseException | None]:
    """One query per batch of blob names (SHAs or `commit:path`), sent together: the texts
    answered by name, the names of the queries GitHub refused, and the first fault (5xx,
    rate limit, network) that cut one, if any."""
    answers = await asyncio.gather(
        *(api.read_blobs(gh, repo, batch) for batch in names), return_exceptions=True
    )
    texts: dict[str, Source] = {}
    refused: set[str] = set()
    fault: BaseException | None = None
    for batch, answer in zip(names, answers, strict=True):
        if isinstance(answer, BaseException):
            fault = fault or answer
        elif answer is None:
            refused.update(batch)
        else:
            texts.update(answer)
    return texts, refused, fault


def files_at(cache: SourceCache, repo: str, sha: str) -> AbstractSet[str] | None:
    """The commit's file paths when a walk already read its tree (no call is spent for them
    alone); None otherwise, and when GitHub truncated the list."""
    tree = cache.trees.get((repo, sha))
    if tree is None or tree.truncated:
        return None
    return tree.files.keys()


async def _recall(
    store: Store, tree: Tree, paths: list[str], sources: dict[str, Source], cache: SourceCache
) -> None:
    """Fill `sources` with the paths' texts already read, in this process or (kept in the
    store) in any other: no call."""
    shas = {path: tree.files[path].sha for path in paths}
    missing = sorted({sha for sha in shas.values() if sha not in cache.blobs})
    for sha, text in (await store.blobs(missing) if missing else {}).items():
        cache.blobs[sha] = text
    for path, sha in shas.items():
        known = cache.blobs.get(sha)
        if known is not None:
            sources[path] = known


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
    """Fill `sources` with the paths' texts: those already read (`_recall`), the rest in
    one round of queries (whose answers are kept in memory and in the store), with the
    blobs `also` names that are not kept yet."""
    await _recall(store, tree, paths, sources, cache)
    unread = list({tree.files[p].sha: p for p in paths if p not in sources}.values())
    more = await _unknown(store, also, cache)
    refused = await _keep(store, cache, await _query(gh, repo, tree, unread, more))
    for path in paths:
        sha = tree.files[path].sha
        known = cache.blobs.get(sha)
        if known is not None:
            sources[path] = known
        else:  # unread this time, not remembered
            reason = "GitHub refused the query" if sha in refused else "GitHub did not answer"
            sources[path] = Unreadable(reason)


async def _unknown(store: Store, names: Sequence[str], cache: SourceCache) -> list[str]:
    """The blob names neither this process nor the store knows (the store's are cached)."""
    missing = sorted({name for name in names if name not in cache.blobs})
    for name, text in (await store.blobs(missing) if missing else {}).items():
        cache.blobs[name] = text
    return [name for name in missing if name not in cache.blobs]


async def _keep(
    store: Store,
    cache: SourceCache,
    asked: tuple[dict[str, Source], set[str], BaseException | None],
) -> set[str]:
    """Keep what GitHub answered, in memory and in the store; raise the fault that cut a
    query (the delivery is retried, and what was answered is kept for then); the names of
    the queries GitHub refused."""
    answered, refused, fault = asked
    for name, text in answered.items():
        cache.blobs[name] = text
    lasting = {
        name: text
        for name, text in answered.items()
        if not (isinstance(text, Unreadable) and text.reason == api.BLOB_NOT_FOUND)
    }
    if lasting:
        await store.save_blobs(lasting, time.time())
    if fault is not None:
        raise fault
    return refused


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
    missing = await _unknown(store, [*heads.values(), *bases.values()], cache)
    if missing:
        await _keep(store, cache, await _ask(gh, repo, [missing]))
    walked = manifests.Walked.of((walks or {}).values())
    found = {
        path: manifests.inert_change(
            path, cache.blobs.get(bases[path]), cache.blobs.get(heads[path]), walked
        )
        for path in paths
    }
    return {path: fields for path, fields in found.items() if fields is not None}
