"""The caches the walks keep across deliveries (`SourceCache`), bounded by their bytes.

Bounded by count, a cache of trees held whatever the repositories made it: 36 heads of a
25,000-file repository took `serve` past a 768 Mi memory limit. Each cache here is bounded
by an estimate of the bytes its entries hold in Python objects, calibrated with tracemalloc
(tests/test_cache_memory.py holds the estimates to the measure), within its share of
CACHE_MEMORY_MB (`bot.config.CacheMemory`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import cachetools
from pydantic import BaseModel

from bot.triage.imports import ImportWalk, Source, Tree

K = TypeVar("K")
V = TypeVar("V")

# A tree's file: its path's string, its TreeFile with the blob SHA's string and the size,
# and its place in the mapping. A folder: its path's string in a frozenset.
TREE_FILE_BYTES = 300
TREE_FOLDER_BYTES = 110
TREE_BYTES = 1024
STR_BYTES = sys.getsizeof("")


class BoundedCache(cachetools.LRUCache[K, V]):
    """An LRU cache of at most `maxsize` bytes by `getsizeof`. An entry larger than the
    whole bound is kept alone (everything else goes), so a caller that stores and then
    reads it back finds it: over the bound by that one entry, at most what GitHub sends."""

    def __init__(self, max_bytes: int, getsizeof: Callable[[V], int]) -> None:
        super().__init__(max_bytes, getsizeof=lambda value: min(getsizeof(value), max_bytes))


def tree_bytes(tree: Tree | None) -> int:
    """What a tree holds in memory, by estimate (`TREE_FILE_BYTES` each file, with its path)."""
    if tree is None:
        return TREE_BYTES
    return (
        TREE_BYTES
        + sum(TREE_FILE_BYTES + len(path) for path in tree.files)
        + sum(TREE_FOLDER_BYTES + len(folder) for folder in tree.directories)
    )


def source_bytes(source: Source) -> int:
    return STR_BYTES + len(source) if isinstance(source, str) else STR_BYTES


def object_bytes(value: Any, seen: set[int] | None = None) -> int:
    """The bytes of `value` and what it holds (strings, numbers, tuples, lists, mappings,
    dataclasses and pydantic models), each object counted once."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return size
    if isinstance(value, dict):
        items: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, tuple | list | set | frozenset):
        items = list(value)
    elif isinstance(value, BaseModel):
        items = [value.__dict__, value.__pydantic_fields_set__]
    elif dataclasses.is_dataclass(value):
        items = [getattr(value, f.name) for f in dataclasses.fields(value)]
    else:
        items = []
    return size + sum(object_bytes(item, seen) for item in items)


def walk_bytes(walk: ImportWalk) -> int:
    return object_bytes(walk)


def tree_cache(max_bytes: int) -> BoundedCache[tuple[str, str], Tree | None]:
    return BoundedCache(max_bytes, tree_bytes)


def blob_cache(max_bytes: int) -> BoundedCache[str, Source]:
    return BoundedCache(max_bytes, source_bytes)


def walk_cache(max_bytes: int) -> BoundedCache[tuple[str, str, str, str], ImportWalk]:
    return BoundedCache(max_bytes, walk_bytes)
