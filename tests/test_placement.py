"""A printed path that is not in the commit's tree, placed there by a unique suffix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.shared import Tree, TreeFile
from bot.triage.footprint import footprint
from bot.triage.imports import ImportWalk
from bot.triage.models import Failure, Reason
from bot.triage.placement import Placement, SuffixIndex
from bot.triage.reports.locations import resolve_in_tree

MONOREPO = (
    "packages/web/src/a.test.ts",
    "packages/web/src/a.ts",
    "packages/api/src/b.test.ts",
    "packages/api/src/index.test.ts",
    "packages/web/src/index.test.ts",
    "pkg/store/store_test.go",
)


def test_a_path_printed_relative_to_a_workspace_package_is_placed_by_its_unique_suffix() -> None:
    placed = _place("src/a.test.ts", MONOREPO)

    assert placed is not None
    assert placed.path == "packages/web/src/a.test.ts"
    assert placed.note == (
        "printed src/a.test.ts, placed at packages/web/src/a.test.ts by its suffix"
    )


def test_a_suffix_several_files_end_with_is_not_placed_and_says_which() -> None:
    placed = _place("src/index.test.ts", MONOREPO)

    assert placed is not None and placed.path is None
    assert placed.note == (
        "src/index.test.ts is not in the tree and ends 2 files (packages/api/src/index.test.ts, "
        "packages/web/src/index.test.ts): not placed"
    )


def test_the_workspace_package_the_log_names_places_an_ambiguous_suffix() -> None:
    placed = _place("src/index.test.ts", MONOREPO, workspaces=["packages/api"])

    assert placed is not None
    assert placed.path == "packages/api/src/index.test.ts"
    assert placed.note.endswith(
        "placed at packages/api/src/index.test.ts in the workspace package the log names"
    )


def test_the_folders_a_workspace_package_name_may_be_in() -> None:
    index = SuffixIndex.of(
        ["package.json", "packages/web/package.json", "apps/acme-api/package.json", "web/a.ts"]
    )

    assert index.package_folders("@acme/web") == ["packages/web"]
    assert index.package_folders("@acme/api") == ["apps/acme-api"]
    assert index.package_folders("web") == ["packages/web"]
    assert index.package_folders(None) == []


def test_a_path_under_an_extra_prefix_is_placed_by_its_longest_tail_in_the_tree() -> None:
    placed = _place("src/github.com/acme/bus/pkg/store/store_test.go", MONOREPO)

    assert placed is not None and placed.path == "pkg/store/store_test.go"


def test_a_path_in_the_tree_or_nowhere_is_not_placed() -> None:
    index = SuffixIndex.of(MONOREPO)

    assert index.place("packages/web/src/a.ts") is None
    nowhere = index.place("lib/c.test.ts")
    assert nowhere is not None and (nowhere.path, nowhere.note) == (None, "")
    assert index.place("store_test.go") is not None  # a bare name of one file too


def test_the_footprint_starts_from_the_file_the_walk_placed() -> None:
    failure = Failure(test_id="src/a.test.ts > a", name="a", file="src/a.test.ts", framework="jest")
    how = "printed src/a.test.ts, placed at packages/web/src/a.test.ts by its suffix"
    walk = ImportWalk("packages/web/src/a.test.ts", "TypeScript", (), (), (), (), found_by=how)

    entries = footprint(failure, imports=walk).entries

    assert (entries[0].path, entries[0].reason) == ("packages/web/src/a.test.ts", Reason.TEST_FILE)
    assert "packages/web/src/" in [e.path for e in entries]


def test_a_location_printed_relative_to_a_workspace_package_is_placed() -> None:
    tree = Tree(files={p: TreeFile(sha="0" * 40, size=1) for p in MONOREPO})
    failure = Failure(test_id="t", name="t", framework="jest", location="src/a.test.ts:13")

    [placed] = resolve_in_tree([failure], tree)

    assert (placed.location, placed.location_source) == ("packages/web/src/a.test.ts:13", "tree")


def _place(printed: str, files: Iterable[str], workspaces: Sequence[str] = ()) -> Placement | None:
    return SuffixIndex.of(files).place(printed, workspaces)
