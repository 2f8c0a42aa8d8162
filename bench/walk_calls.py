"""What the import walk costs on real repositories: GraphQL calls, rounds, files and bytes.

For each git mirror named (a bare repository, as `fetch` brings or `git clone --mirror`
makes), the commit's tree and blob texts are read with git, and the walk of a sample of its
test files is driven as `bot/handlers/sources.py` drives it, without GitHub: each round,
`walk()` says what it wants and `plan_reads()` what to read, split into queries by
`batches()`. One walk per test, from an empty cache (a head's first triage, the worst case).

Strategies (`--strategies`):
  wanted   each round reads only the files the walk wants (no prefetching)
  fill1    the wanted files, the query they need filled with the likeliest next files
           (the default, `QueryBounds()`)
  fill2    the same, but each round fills at least two queries (sent together)
  fill4    at least four

Prints JSON: per repository and strategy, [median, 90th percentile, max] over the tests of
calls (the tree plus the GraphQL queries), rounds, files and bytes fetched, files the walk
used, its depth, whether it was cut and by what, and the wall time of the pure walk.

`--e2e`: also the same tests walked by `handlers/sources.import_walks` against the simulator
serving the commit's files over HTTP (the default strategy), each from an empty cache and an
empty store, as a head's first triage in a new installation: the calls the simulator counted
and the wall time.

    .venv/bin/python bench/walk_calls.py MIRROR[@COMMIT] ... [--tests 30] [--strategies ...]
        [--e2e] [--warm ~1 ~20]

`--warm REV ...`: also each test walked at the commit after its walk at `COMMIT` + `REV`
(an earlier commit: `~20`), with the blobs that walk fetched kept by SHA, as the bot's cache
keeps them: a later head's first triage in a repository the bot already triages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from typing import Any

import aiohttp

from bot.handlers.sources import SourceCache, import_walks
from bot.metrics import Metrics
from bot.shared import Source, Tree, TreeFile, Unreadable
from bot.sim import Simulator
from bot.sim.scenario import Scenario
from bot.store import open_store
from bot.triage.imports.languages import language_of
from bot.triage.imports.plan import QueryBounds, batches, plan_reads
from bot.triage.imports.walk import ImportsMemo, WalkLimits, walk
from bot.triage.models import Failure
from bot.tryout import ReadOnlyClient

STRATEGIES = {"wanted": 0, "fill1": 1, "fill2": 2, "fill4": 4}
# Files named as test runners find tests (pytest, jest/vitest/mocha, go, ...): the sample.
TEST_NAME = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|[^/]*\.(test|spec)\.[cm]?[jt]sx?"
    r"|(test|__tests__)/[^/]+\.[cm]?[jt]sx?)$"
)


def read_tree(git_dir: str, commit: str) -> tuple[Tree, dict[str, str]]:
    """The commit's tree as GitHub lists it, and each path's blob SHA."""
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-l", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    files: dict[str, TreeFile] = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        if kind == "blob":
            files[path] = TreeFile(sha=sha, size=int(size))
    return Tree(files), {path: entry.sha for path, entry in files.items()}


class Blobs:
    """Blob texts read with `git cat-file --batch`, as GitHub's GraphQL answers them."""

    def __init__(self, git_dir: str) -> None:
        self.proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.known: dict[str, Source] = {}

    def text(self, sha: str) -> Source:
        if sha not in self.known:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(sha.encode() + b"\n")
            self.proc.stdin.flush()
            size = int(self.proc.stdout.readline().split()[2])
            data = self.proc.stdout.read(size + 1)[:-1]
            try:
                self.known[sha] = Unreadable("binary") if b"\0" in data else data.decode()
            except UnicodeDecodeError:
                self.known[sha] = Unreadable("not text")
        return self.known[sha]


def walk_one(
    test_file: str,
    tree: Tree,
    blobs: Blobs,
    limits: WalkLimits,
    bounds: QueryBounds,
    cached: set[str] | None = None,
) -> dict[str, Any]:
    """One test's walk, the rounds as sources.py makes them (`bounds.queries` 0: only the
    wanted files, no filling), from an empty cache, or with the blobs of `cached` (SHAs)
    kept from an earlier head's walks: those cost no call, as `SourceCache` keeps blobs by
    SHA. The SHAs fetched are added to `cached`."""
    sources: dict[str, Source] = {}
    memo: ImportsMemo = {}
    calls = rounds = fetched_bytes = 0
    spent = 0.0
    started = time.perf_counter()
    found = walk(test_file, tree, sources, limits, memo)
    while found.wanted:
        kept = [p for p in found.wanted if cached is not None and tree.files[p].sha in cached]
        if kept:
            sources.update((path, blobs.text(tree.files[path].sha)) for path in kept)
            if len(kept) == len(set(found.wanted)):
                found = walk(test_file, tree, sources, limits, memo)
                continue
        if bounds.queries == 0:
            plan = [p for p in dict.fromkeys(found.wanted) if p not in sources]
            queries = len(batches(plan, tree, bounds))
        else:
            plan = plan_reads([test_file], found.wanted, tree, sources.keys(), bounds)
            queries = len(batches(plan, tree, bounds))
        rounds += 1
        calls += queries
        fetch_started = time.perf_counter()
        for path in plan:
            sources[path] = blobs.text(tree.files[path].sha)
            fetched_bytes += tree.files[path].size
            if cached is not None:
                cached.add(tree.files[path].sha)
        spent += time.perf_counter() - fetch_started  # git's time, not the walk's
        found = walk(test_file, tree, sources, limits, memo)
    return {
        "calls": 1 + calls,  # the tree, then the queries
        "rounds": rounds,
        "fetched_files": len(sources),
        "fetched_bytes": fetched_bytes,
        "used_files": len(found.read),
        "used_bytes": sum(tree.files[p].size for p in found.read if p in tree.files),
        "depth": found.depth,
        "partial": found.partial,
        "cut": list(found.cut[:2]),
        "walk_seconds": time.perf_counter() - started - spent,
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("calls", "rounds", "fetched_files", "fetched_bytes", "used_files", "depth"):
        values = sorted(row[key] for row in rows)
        out[key] = [statistics.median(values), values[int(0.9 * (len(values) - 1))], values[-1]]
    out["used_bytes_max"] = max(row["used_bytes"] for row in rows)
    out["walk_seconds_median"] = round(statistics.median(r["walk_seconds"] for r in rows), 4)
    out["partial"] = sum(1 for row in rows if row["partial"])
    cuts = Counter(c.split(" not read (")[-1] for row in rows for c in row["cut"])
    out["cut_reasons"] = dict(cuts.most_common(5))
    return out


async def end_to_end(
    git_dir: str, tree: Tree, sample: list[str], limits: WalkLimits
) -> dict[str, Any]:
    """Each sampled test walked by the handler against the simulator, from nothing."""
    files: dict[str, str | bytes] = {}
    for path, entry in tree.files.items():
        files[path] = _raw(git_dir, entry.sha)
    sha = "0" * 39 + "1"
    changed = next(p for p in sorted(tree.files) if p.endswith((".py", ".js", ".ts")))
    scenario = Scenario.model_validate(
        {
            "name": "walk-calls",
            "repo": {"owner": "bench", "name": "repo"},
            "files": files,
            "pull_requests": [
                {
                    "number": 1,
                    "title": "t",
                    "author": "a",
                    "head_sha": "f" * 40,
                    "base_sha": sha,
                    "head_ref": "b",
                    "files": [{"filename": changed}],
                }
            ],
        }
    )
    rows: list[dict[str, Any]] = []
    async with Simulator(scenario, webhook_secret="-") as sim, aiohttp.ClientSession() as s:
        gh = ReadOnlyClient(
            s, base_url=sim.url, metrics=Metrics(), oauth_token=sim.personal_token()
        )
        for test in sample:
            failure = Failure(test_id=f"{test}::t", name="t", file=test, framework="pytest")
            with tempfile.TemporaryDirectory() as folder:
                store = await open_store(f"sqlite:///{folder}/bench.sqlite3")
                before = sim.calls.copy()
                started = time.perf_counter()
                await import_walks(
                    gh, store, "bench/repo", sha, [failure], [changed], False, SourceCache(limits)
                )
                took = time.perf_counter() - started
                await store.close()
            spent = sim.calls - before
            rows.append({"calls": sum(spent.values()), "seconds": took})
    calls = sorted(row["calls"] for row in rows)
    times = sorted(row["seconds"] for row in rows)
    return {
        "calls": [statistics.median(calls), calls[int(0.9 * (len(calls) - 1))], calls[-1]],
        "seconds": [round(statistics.median(times), 2), round(times[-1], 2)],
    }


def _raw(git_dir: str, sha: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "blob", sha], capture_output=True, check=True
    ).stdout


def bench_repo(
    spec: str,
    tests: int,
    strategies: list[str],
    limits: WalkLimits,
    query: QueryBounds,
    e2e: bool,
    warm: list[str],
) -> dict[str, Any]:
    git_dir, _, commit = spec.partition("@")
    commit = commit or "HEAD"
    resolved = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree, _ = read_tree(git_dir, resolved)
    candidates = sorted(p for p in tree.files if TEST_NAME.search(p) and language_of(p))
    sample = random.Random(20261206).sample(candidates, min(tests, len(candidates)))
    blobs = Blobs(git_dir)
    result: dict[str, Any] = {
        "repository": os.path.basename(os.path.dirname(git_dir.rstrip("/"))) or git_dir,
        "commit": resolved,
        "tree_files": len(tree.files),
        "test_files": len(candidates),
        "sampled": len(sample),
        "languages": dict(Counter(lang.name for p in sample if (lang := language_of(p)))),
    }
    for name in strategies:
        queries = STRATEGIES[name]
        bounds = replace(query, queries=queries)
        rows = [walk_one(test, tree, blobs, limits, bounds) for test in sample]
        result[name] = summary(rows)
        print(f"{result['repository']} {name}: {json.dumps(result[name])}", file=sys.stderr)
    for rev in warm:
        warmed = warm_walks(git_dir, resolved, rev, sample, blobs, limits, query)
        result[f"warm_from_{rev}"] = warmed
        print(f"{result['repository']} warm {rev}: {warmed}", file=sys.stderr)
    if e2e:
        result["end_to_end"] = asyncio.run(end_to_end(git_dir, tree, sample, limits))
        print(f"{result['repository']} e2e: {result['end_to_end']}", file=sys.stderr)
    return result


def warm_walks(
    git_dir: str,
    commit: str,
    rev: str,
    sample: list[str],
    blobs: Blobs,
    limits: WalkLimits,
    query: QueryBounds,
) -> dict[str, Any]:
    """Each test walked at `commit` (default strategy) after the same test was walked at
    the earlier commit `rev` (`~20`: twenty commits before), whose blobs the cache kept: a
    later head's first triage in a repository the bot already triages."""
    earlier = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", f"{commit}{rev}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    before, _ = read_tree(git_dir, earlier)
    tree, _ = read_tree(git_dir, commit)
    rows = []
    for test in sample:
        cached: set[str] = set()
        if test in before.files:
            walk_one(test, before, blobs, limits, query, cached)
        rows.append(walk_one(test, tree, blobs, limits, query, cached))
    changed = sum(1 for p, f in tree.files.items() if before.files.get(p) != f)
    return {"earlier": earlier, "files_changed_since": changed, **summary(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirrors", nargs="+", help="GIT_DIR[@COMMIT]")
    parser.add_argument("--tests", type=int, default=30, help="test files sampled per repo")
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--files", type=int, default=WalkLimits().files)
    parser.add_argument("--bytes", type=int, default=WalkLimits().bytes)
    parser.add_argument("--e2e", action="store_true", help="also against the simulator")
    parser.add_argument(
        "--warm",
        nargs="*",
        default=[],
        help="also walk each test after its walk at these earlier revisions (~1, ~20)",
    )
    parser.add_argument(
        "--query-blobs",
        type=int,
        default=QueryBounds().blobs,
        help="blobs per query (GitHub: untested past 100)",
    )
    args = parser.parse_args()
    limits = replace(WalkLimits(), files=args.files, bytes=args.bytes)
    query = QueryBounds(blobs=args.query_blobs)
    load = os.getloadavg()
    results = [
        bench_repo(m, args.tests, args.strategies, limits, query, args.e2e, args.warm)
        for m in args.mirrors
    ]
    print(
        json.dumps(
            {
                "limits": {"files": limits.files, "bytes": limits.bytes},
                "load_before": load,
                "load_after": os.getloadavg(),
                "repositories": results,
            }
        )
    )


if __name__ == "__main__":
    main()
