"""Memory of the caches kept across deliveries while many heads of a large repository pass
through them (issue #25.3: 36 heads of a 25,000-file repository took `serve` to 863 MiB).

Each head's tree comes through the real code: `api.commit_tree` on a `GitHubClient` whose
transport alone is canned (it answers the recursive tree's JSON, with an ETag, as GitHub
does), into `SourceCache.trees`, with one finished walk per head into `SourceCache.walks`.
`--mode after` uses the caches `serve` builds (CACHE_MEMORY_MB, `--cache-mb`); `--mode
before` the count-bounded ones they replaced (256 trees, 4096 walks, 500 answers per
installation kept whole). Prints JSON: RSS (and with `--trace` tracemalloc's current and
peak bytes) after every `--every` heads, and what each cache holds. One mode per process.

    python bench/cache_memory.py --mode after --heads 100 --entries 100000 [--trace]
    python bench/cache_memory.py --mode before --heads 10 --entries 100000 [--trace]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import resource
import time
import tracemalloc
from collections.abc import Mapping, MutableMapping
from typing import Any

import aiohttp
import cachetools

from bot.config import CacheMemory
from bot.github import api
from bot.github.client import GitHubClient, ResponseCache
from bot.handlers.sources import SourceCache
from bot.metrics import Metrics
from bot.triage.imports import ImportWalk, Reached, WalkLimits
from bot.triage.imports.walk import cache_key
from bot.triage.models import ImportStep

MIB = 1024 * 1024
REPO = "acme/monorepo"


def tree_json(entries: int) -> bytes:
    """A recursive tree as GitHub answers it: every entry a blob in a few hundred folders."""
    tree = []
    for i in range(entries):
        path = f"src/pkg{i % 200}/sub{i % 37}/module_{i}.py"
        sha = hashlib.sha1(path.encode()).hexdigest()
        tree.append(
            {
                "path": path,
                "mode": "100644",
                "type": "blob",
                "sha": sha,
                "size": 1000 + i % 5000,
                "url": f"https://api.github.com/repos/{REPO}/git/blobs/{sha}",
            }
        )
    return json.dumps({"sha": "0" * 40, "tree": tree, "truncated": False}).encode()


class CannedGitHub(GitHubClient):
    """The real client with its transport canned: every GET answers the tree."""

    body = b""

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        sha = url.rsplit("/", 1)[-1].split("?")[0]
        return 200, {"content-type": "application/json", "etag": f'"{sha}"'}, self.body


def walk_of(head: int) -> ImportWalk:
    steps = tuple(
        ImportStep(importer=f"tests/test_{head}.py", module=f"pkg.m{n}", path=f"src/m{n}.py")
        for n in range(20)
    )
    reached = tuple(Reached(step.path, (step,)) for step in steps)
    return ImportWalk(f"tests/test_{head}.py", "python", reached, (), (), ())


def caches(mode: str, cache_mb: int) -> tuple[SourceCache, MutableMapping[str, Any]]:
    if mode == "before":
        old = SourceCache(
            WalkLimits(),
            trees=cachetools.LRUCache(256),
            blobs=cachetools.LRUCache(
                64 * MIB, getsizeof=lambda s: len(s) if isinstance(s, str) else 1
            ),
            walks=cachetools.LRUCache(4096),
        )
        return old, cachetools.LRUCache(500)
    memory = CacheMemory(cache_mb)
    return SourceCache.within(WalkLimits(), memory), ResponseCache(memory.responses).partition(1)


def sample(head: int, cache: SourceCache, answers: MutableMapping[str, Any]) -> dict[str, Any]:
    """The figures after `head` heads; tracemalloc's when it runs (`--trace`)."""
    figures: dict[str, Any] = {"heads": head, "rss_mib": round(rss_mib(), 1)}
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        figures |= {"traced_mib": round(current / MIB, 1), "traced_peak_mib": round(peak / MIB, 1)}
    return figures | {"trees_kept": len(cache.trees), "answers_kept": len(answers)}


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


async def run(args: argparse.Namespace) -> dict[str, Any]:
    CannedGitHub.body = tree_json(args.entries)
    cache, answers = caches(args.mode, args.cache_mb)
    samples = []
    if args.trace:
        tracemalloc.start()
    started = time.monotonic()
    async with aiohttp.ClientSession() as session:
        gh = CannedGitHub(
            session, base_url="https://api.github.com", metrics=Metrics(), cache=answers
        )
        for head in range(1, args.heads + 1):
            sha = hashlib.sha1(str(head).encode()).hexdigest()
            cache.trees[(REPO, sha)] = await api.commit_tree(gh, REPO, sha)
            cache.walks[(REPO, sha, f"tests/test_{head}.py", cache_key(cache.limits))] = walk_of(
                head
            )
            if head % args.every == 0 or head == args.heads:
                samples.append(sample(head, cache, answers))
    return {
        "mode": args.mode,
        "entries": args.entries,
        "heads": args.heads,
        "cache_memory_mb": args.cache_mb if args.mode == "after" else None,
        "tree_json_mib": round(len(CannedGitHub.body) / MIB, 1),
        "seconds": round(time.monotonic() - started, 1),
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["after", "before"], default="after")
    parser.add_argument("--heads", type=int, default=100)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--cache-mb", type=int, default=CacheMemory().total_mb)
    parser.add_argument("--every", type=int, default=10)
    # tracemalloc's own records of every allocation weigh on the RSS and the time.
    parser.add_argument("--trace", action="store_true", help="also tracemalloc's figures")
    print(json.dumps(asyncio.run(run(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
