"""The caches kept across deliveries are bounded by their bytes, and their estimates of
bytes hold to what tracemalloc measures (issue #25.3: bounded by count, 36 heads of a
25,000-file repository took `serve` past its 768 Mi limit)."""

from __future__ import annotations

import gc
import hashlib
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from bot.config import CacheMemory
from bot.github.client import ResponseCache, answer_bytes
from bot.handlers.cache_memory import tree_bytes, walk_bytes
from bot.handlers.sources import SourceCache
from bot.triage.imports import ImportWalk, Reached, Tree, TreeFile, WalkLimits
from bot.triage.models import ImportStep

MIB = 1024 * 1024


def tree_answer(files: int, head: int = 0) -> dict[str, Any]:
    """A recursive tree as GitHub's JSON reads, parsed."""
    entries = []
    for i in range(files):
        path = f"src/pkg{i % 97}/sub{i % 13}/module_{head}_{i}.py"
        sha = hashlib.sha1(path.encode()).hexdigest()
        entries.append({"path": path, "mode": "100644", "type": "blob", "sha": sha, "size": i})
    parsed: dict[str, Any] = json.loads(json.dumps({"tree": entries, "truncated": False}))
    return parsed


def as_tree(answer: dict[str, Any]) -> Tree:
    """As `api.commit_tree` makes it."""
    files = {e["path"]: TreeFile(sha=e["sha"], size=int(e["size"])) for e in answer["tree"]}
    return Tree(files=files)


def measured(make: Callable[[], object]) -> tuple[object, int]:
    """What `make()` returns, and the bytes it holds by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        made = make()
        gc.collect()
        return made, tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def a_walk(n: int) -> ImportWalk:
    steps = tuple(
        ImportStep(importer=f"tests/test_{n}.py", module=f"pkg.mod{i}", path=f"src/pkg/mod{i}.py")
        for i in range(40)
    )
    reached = tuple(Reached(step.path, (step,)) for step in steps)
    read = tuple(step.path for step in steps)
    return ImportWalk(f"tests/test_{n}.py", "python", reached, read, (), ())


def test_a_trees_estimate_holds_to_what_tracemalloc_measures() -> None:
    # Made from GitHub's answer inside the measure: the tree holds the answer's strings.
    tree, size = measured(lambda: as_tree(tree_answer(20_000)))
    assert isinstance(tree, Tree)
    assert 0.8 <= tree_bytes(tree) / size <= 1.3, (tree_bytes(tree), size)


def test_a_walks_estimate_holds_to_what_tracemalloc_measures() -> None:
    walks, size = measured(lambda: [a_walk(n) for n in range(50)])
    assert isinstance(walks, list)
    estimate = sum(walk_bytes(walk) for walk in walks)
    assert 0.8 <= estimate / size <= 1.5, (estimate, size)


def test_trees_of_many_heads_hold_no_more_than_their_share() -> None:
    memory = CacheMemory(8)  # 4 MiB of trees
    cache = SourceCache.within(WalkLimits(), memory)

    def many_heads() -> None:
        for head in range(12):  # some 1.7 MB each: 20 MB in all
            cache.trees[("acme/big", f"{head:040d}")] = as_tree(tree_answer(5_000, head))

    _, held = measured(many_heads)
    assert cache.trees.currsize <= memory.trees
    assert held <= memory.trees * 1.2, held / MIB
    assert 0 < len(cache.trees) < 12
    assert ("acme/big", f"{11:040d}") in cache.trees  # the newest is kept


def test_a_tree_larger_than_its_share_is_kept_alone() -> None:
    """A caller stores a tree and reads it back: the cache never refuses one."""
    cache = SourceCache.within(WalkLimits(), CacheMemory(8))
    cache.trees[("acme/a", "1" * 40)] = as_tree(tree_answer(100))
    huge = as_tree(tree_answer(15_000))
    cache.trees[("acme/b", "2" * 40)] = huge
    assert list(cache.trees.values()) == [huge]


def test_githubs_answers_are_bounded_in_bytes_for_all_installations_together() -> None:
    responses = ResponseCache(max_bytes=MIB)
    one, two = responses.partition(1), responses.partition(2)
    answer = ('"etag"', None, {"content": "x" * 40_000}, None)
    for n in range(20):
        one[f"https://api.github.com/repos/o/r/contents/f{n}"] = answer
        two[f"https://api.github.com/repos/o/r/contents/f{n}"] = answer
    assert responses.answers.currsize <= MIB
    assert len(one) + len(two) == MIB // answer_bytes(answer)
    # ETags are the token's: each installation has its own answer for a URL.
    assert len(one) == len(two)
    assert "https://api.github.com/repos/o/r/contents/f19" in one
    del one["https://api.github.com/repos/o/r/contents/f19"]
    assert "https://api.github.com/repos/o/r/contents/f19" in two


def test_a_commits_tree_is_never_kept_as_an_answer() -> None:
    """The walks keep it parsed; its JSON kept as well was 70 MB for 100,000 files."""
    answers = ResponseCache().partition(1)
    url = "https://api.github.com/repos/o/r/git/trees/" + "a" * 40 + "?recursive=1"
    answers[url] = ('"etag"', None, tree_answer(10), None)
    with pytest.raises(KeyError):
        answers[url]
