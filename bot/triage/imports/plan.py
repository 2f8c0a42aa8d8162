"""Which files the next round of the import walks reads: no I/O here.

A GraphQL query of 7 blobs costs one call like a query of 100, and the queries of a round
are sent together: what costs calls is the number of rounds. So a round reads every file
the walks want and fills the queries that needs, up to their bounds, with the files likeliest
to be wanted next: the other source files of the walks' languages nearest (in the folder
tree) to the files wanted, tests last. On a small repository that is the whole source set
in the first round; on a large one the packages the walk is entering, a round ahead.
bench/walk_calls.py measured this against reading round by round without filling, and
against filling more queries than the wanted files need (bench/README.md).

`handlers/sources.py` does the reading; `walk.walk` says what is wanted.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from bot.shared import Tree
from bot.triage.imports.language import Language
from bot.triage.imports.languages import language_of
from bot.triage.imports.walk import DEFAULT_FILE_BYTES


@dataclass(frozen=True)
class QueryBounds:
    """What one GraphQL query reads at most. GitHub stops a query after 10 seconds (and
    counts the timeout against the rate limit), so a large read is split into queries sent
    together rather than risked as one. `queries`: how many queries a round may fill even
    when the files wanted need fewer (1: never a call for prefetching alone)."""

    blobs: int = 100
    bytes: int = 4 * 1024 * 1024
    queries: int = 1


def plan_reads(
    test_files: Collection[str],
    wanted: Sequence[str],
    tree: Tree,
    read: AbstractSet[str],
    bounds: QueryBounds | None = None,
    file_bytes: int = DEFAULT_FILE_BYTES,
) -> list[str]:
    """The paths to read this round: `wanted` (what the walks of `test_files` want, in
    their order), then the likeliest next files of their languages that fit in the queries
    `wanted` fills (at least `bounds.queries`); `read`: the paths already read, or known."""
    first = list(dict.fromkeys(p for p in wanted if p in tree.files and p not in read))
    if not first:
        return []
    bounds = bounds or QueryBounds()
    queries = max(bounds.queries, len(batches(first, tree, bounds)))
    room_blobs = queries * bounds.blobs - len(first)
    room_bytes = queries * bounds.bytes - sum(tree.files[p].size for p in first)
    chosen = set(first)
    languages = {lang for f in test_files if (lang := language_of(f)) is not None}
    for path in _likeliest(first, tree, languages):
        if room_blobs <= 0:
            break
        size = tree.files[path].size
        if path in read or path in chosen or size > file_bytes or size > room_bytes:
            continue
        first.append(path)
        chosen.add(path)
        room_blobs -= 1
        room_bytes -= size
    return first


def batches(paths: Sequence[str], tree: Tree, bounds: QueryBounds) -> list[list[str]]:
    """`paths` split into queries within the bounds, in order."""
    split: list[list[str]] = []
    spent = 0
    for path in paths:
        size = tree.files[path].size
        if not split or len(split[-1]) >= bounds.blobs or spent + size > bounds.bytes:
            split.append([])
            spent = 0
        split[-1].append(path)
        spent += size
    return split


def _likeliest(wanted: Sequence[str], tree: Tree, languages: set[Language]) -> list[str]:
    """The source files of `languages`, nearest to a wanted file's folder first (the same
    folder, then one folder away, ...), files the languages call tests after all others."""
    suffixes = tuple(s for language in languages for s in language.sources)
    near = {_parts(path) for path in wanted}
    distance: dict[tuple[str, ...], int] = {}
    ranked: list[tuple[bool, int, str]] = []
    for path in tree.files:
        if not path.endswith(suffixes):
            continue
        folder = _parts(path)
        if folder not in distance:
            distance[folder] = min(_apart(folder, other) for other in near)
        is_test = any(language.tests(path) for language in languages)
        ranked.append((is_test, distance[folder], path))
    ranked.sort()
    return [path for _, _, path in ranked]


def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("/")[:-1])


def _apart(one: tuple[str, ...], other: tuple[str, ...]) -> int:
    """Folders between two folders: up from one to their common folder, then down."""
    common = 0
    for a, b in zip(one, other, strict=False):
        if a != b:
            break
        common += 1
    return len(one) + len(other) - 2 * common
