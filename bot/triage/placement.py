"""Place a printed path that is not in the commit's tree: pure.

Runners print paths relative to where they ran, which is not always the repository's root:
jest run in a monorepo's workspace package prints `src/a.test.ts` for
`packages/x/src/a.test.ts`; a GOPATH-style checkout prints
`src/github.com/owner/repo/pkg/a_test.go` for `pkg/a_test.go`. Such a path is placed in the
tree by a unique suffix, in this order:

1. relative to a workspace package the log names (`workspaces`: the folders of the package
   whose script ran, `package_folders`): the folder's file of that path, when exactly one of
   them has it;
2. the one file of the tree whose path ends with the printed path (`/src/a.test.ts`);
3. the longest tail of the printed path, of a folder and a file at least, that is a file of
   the tree (the printed path carries an extra prefix).

A printed path that several files end with is not placed (`Placement.note` says so), nor is
one found nowhere: a guess between two files could clear a failure of the wrong test. The
evidence says how a path was placed ("placed at packages/x/src/a.test.ts by its suffix").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_SHOWN = 3  # candidates named in a note before "..."
_MANIFEST = "package.json"


@dataclass(frozen=True)
class Placement:
    """Where a printed path was placed (`path`, None when it was not) and how (`note`: why
    not, when several files end with it; empty when no file does)."""

    printed: str
    path: str | None
    note: str


@dataclass(frozen=True)
class SuffixIndex:
    """A tree's files by file name, built once for many placements (a mass failure's)."""

    files: frozenset[str]
    by_name: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        named: dict[str, list[str]] = defaultdict(list)
        for path in self.files:
            named[path.rpartition("/")[2]].append(path)
        object.__setattr__(self, "by_name", {k: tuple(sorted(v)) for k, v in named.items()})

    @classmethod
    def of(cls, files: Iterable[str]) -> SuffixIndex:
        return cls(frozenset(files))

    def package_folders(self, name: str | None) -> list[str]:
        """The folders that may hold the workspace package `name` (`@acme/web`): those with
        a package.json named like its last segment (`web`) or scope-last (`acme-web`), as
        the import walk finds workspace packages (`imports/javascript.py`)."""
        if not name:
            return []
        scope, _, last = name.rpartition("/")
        names = {last, f"{scope.lstrip('@')}-{last}"} if scope else {last}
        manifests = self.by_name.get(_MANIFEST, ())
        folders = (path.removesuffix("/" + _MANIFEST) for path in manifests if "/" in path)
        return [folder for folder in folders if folder.rpartition("/")[2] in names]

    def place(self, printed: str, workspaces: Sequence[str] = ()) -> Placement | None:
        """`printed` placed in the tree (module doc); None when it is in the tree as it is."""
        printed = printed.strip("/")
        if not printed or printed in self.files:
            return None
        under = {f"{w.strip('/')}/{printed}" for w in workspaces if w.strip("/")}
        hinted = sorted(under & self.files)
        if len(hinted) == 1:
            return Placement(
                printed,
                hinted[0],
                _placed(printed, hinted[0], "in the workspace package the log names"),
            )
        ending = [
            p for p in self.by_name.get(printed.rpartition("/")[2], ()) if p.endswith("/" + printed)
        ]
        if len(ending) == 1:
            return Placement(printed, ending[0], _placed(printed, ending[0], "by its suffix"))
        if ending:
            shown = ", ".join(ending[:_SHOWN]) + (", ..." if len(ending) > _SHOWN else "")
            note = (
                f"{printed} is not in the tree and ends {len(ending):,} files ({shown}): not placed"
            )
            return Placement(printed, None, note)
        parts = printed.split("/")
        tails = ("/".join(parts[i:]) for i in range(1, len(parts) - 1))
        found = next((tail for tail in tails if tail in self.files), None)
        if found is not None:
            return Placement(printed, found, _placed(printed, found, "by its suffix"))
        return Placement(printed, None, "")


def _placed(printed: str, path: str, how: str) -> str:
    return f"printed {printed}, placed at {path} {how}"
