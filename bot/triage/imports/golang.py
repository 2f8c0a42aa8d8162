"""Go: a test runs its whole package, and the packages of its module that package imports.

What runs for a `_test.go` test: every `.go` file of its package's directory, test files
(`package foo` and `package foo_test` alike: `go test` builds them into one binary) and
the others, build-tagged files included (`//go:build`, `_linux.go`: which of them a CI
job builds is not known to the walk, so all are followed; each such file's constraint is
kept, `BuiltOn`, and a job whose log names its runner's system leaves out the files no
build on that runner includes, `go_build.py`); and, transitively, the packages they import
from the repository's modules. The test's module is the nearest `go.mod` up from the test;
every `go.mod` of the repository maps its `module` path to its folder (all of them are
read when there are at most `GO_MODS_READ`, else only the test's), and the test's go.mod
`replace`s a module by a folder of the repository (`replace example.com/b => ../b`). An
import path equal to a module path or under it names the directory at the rest of the
path in that module's folder, the longest module path winning (`example.com/m/sub/x` is in
the nested module `example.com/m/sub` when there is one), every non-test `.go` file of
which is imported. A module's `vendor/` folder holds the other packages it builds with;
those are followed too. Anything else (the standard library, other modules) is not the
repository's and is left out. Go ignores `testdata/` folders and files whose names start
with "." or "_", and so does this. `go.work` workspaces are not read.
Each import also names its package's folder in the repository (and in `vendor/`) whether
or not files are left there: a file the pull request removed from it was built with the
test (`removed.py`).

A `go test` failure names a package and a test (`github.com/acme/bus/wire.TestParse`),
rarely a file: `locate_package_test` finds the package's directory in the commit's tree
from the import path, by the modules' paths when their go.mod files were read.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.shared import Tree
from bot.triage.imports.go_build import TARGETS, constraint, systems_building
from bot.triage.imports.go_scan import go_imports
from bot.triage.imports.language import BuiltOn, Start, Target, Unplaced
from bot.triage.imports.paths import ancestors, join, parent
from bot.triage.models import Failure

ALL_RUNNERS = frozenset(TARGETS)
GO_MOD = "go.mod"
GO_MODS_READ = 40  # more go.mod files than this: only the test's own is read
TEST_SUFFIX = "_test.go"
PACKAGE_FILE = "a file of the test's Go package"

# Spaces within a line only: a `\s*` after `^` would run over every following blank line,
# from each line start (a go.mod of 64 KB of newlines took 70 s).
_MODULE = re.compile(r"^[ \t]*module[ \t]+(?P<path>\"[^\"\n]+\"|`[^`\n]+`|\S+)", re.MULTILINE)
# `replace a/b => ../b` and `replace a/b v1.2.0 => ./b`, alone or inside a `replace (...)`
# block: another module of the same repository, at a path relative to the go.mod.
_REPLACE = re.compile(
    r"^[ \t]*(?:replace[ \t]+)?(?P<old>[^\s()]+)(?:[ \t]+v\S+)?[ \t]*=>[ \t]*"
    r"(?P<new>\.\.?(?:/\S*)?)[ \t]*(?://.*)?$",
    re.MULTILINE,
)
_TEST_NAME = re.compile(r"^(?:Test|Benchmark|Example|Fuzz)")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def module_path(go_mod: str) -> str | None:
    """The `module` directive's path (quoted or not); None when go.mod has none."""
    match = _MODULE.search(go_mod)
    if match is None:
        return None
    return match.group("path").strip('"`').split("//")[0].strip() or None


def local_replacements(go_mod: str, root: str) -> dict[str, str]:
    """The modules go.mod replaces with a folder of the repository, each with that folder
    (`root` is go.mod's own folder); a path that climbs out of the repository is left out."""
    found: dict[str, str] = {}
    for match in _REPLACE.finditer(go_mod):
        folder = posixpath.normpath(posixpath.join(root or ".", match.group("new")))
        if folder != ".." and not folder.startswith("../"):
            found[match.group("old")] = "" if folder == "." else folder
    return found


def nearest_go_mod(path: str, tree: Tree) -> str | None:
    return next((m for f in ancestors(path) if (m := join(f, GO_MOD)) in tree.files), None)


def go_mod_files(tree: Tree) -> list[str]:
    """The repository's go.mod files, sorted, but those `go test ./...` skips: in folders
    named "_x", ".x" or testdata (chi's _examples/ modules)."""
    return sorted(
        path
        for path in tree.files
        if path.rsplit("/", 1)[-1] == GO_MOD
        and not any(p.startswith(("_", ".")) or p == "testdata" for p in path.split("/")[:-1])
    )


def repository_modules(go_mods: Mapping[str, str]) -> dict[str, str]:
    """Each module path of the read go.mod files (path -> text), with its folder; a module
    path two go.mod files declare is left out (which one a build means is not known)."""
    found: dict[str, list[str]] = {}
    for path, text in go_mods.items():
        module = module_path(text)
        if module is not None:
            found.setdefault(module, []).append(parent(path))
    return {module: folders[0] for module, folders in found.items() if len(folders) == 1}


def module_folder(import_path: str, modules: Mapping[str, str]) -> str | None:
    """The folder of the package at `import_path` in the longest module path it is under,
    None when it is under none."""
    for module in sorted(modules, key=len, reverse=True):
        if import_path == module or import_path.startswith(module + "/"):
            return join(modules[module], import_path[len(module) + 1 :])
    return None


def go_folders(tree: Tree) -> dict[str, list[str]]:
    """Each folder's `.go` files that Go builds (directly in it), sorted: Go skips files
    whose names start with "." or "_", and `testdata/` folders."""
    folders: dict[str, list[str]] = {}
    for path in sorted(tree.files):
        folder, _, name = path.rpartition("/")
        builds = name.endswith(".go") and not name.startswith((".", "_"))
        if builds and "testdata" not in folder.split("/"):
            folders.setdefault(folder, []).append(path)
    return folders


def package_files(folders: Mapping[str, list[str]], folder: str, *, tests: bool) -> list[str]:
    """The package's files in `folder`, its test files only if `tests`."""
    return [p for p in folders.get(folder, []) if tests or not p.endswith(TEST_SUFFIX)]


class Go:
    name = "Go"
    sources = (".go",)
    configs = ("go.mod",)

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(TEST_SUFFIX)

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        go_mod = nearest_go_mod(test_file, tree)
        if go_mod is None:
            return []
        others = go_mod_files(tree)
        if len(others) > GO_MODS_READ:
            return [go_mod]
        return [go_mod, *(p for p in others if p != go_mod)]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> GoResolver:
        go_mod = nearest_go_mod(test_file, tree)
        text = configs.get(go_mod) if go_mod else None
        root = parent(go_mod) if go_mod else ""
        modules = {} if text is None else repository_modules(configs)
        modules.update(local_replacements(text, root) if text is not None else {})
        module = module_path(text) if text is not None else None
        if module is not None:
            modules[module] = root
        return GoResolver(tree, go_folders(tree), test_file, modules, root)

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """A Go file is named by its package's folder alone; None for a go.mod."""
        return None if path.rpartition("/")[2] == GO_MOD else ()

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """The nearest go.mod: the module's path and its local `replace`s."""
        go_mod = nearest_go_mod(test_file, tree)
        return [go_mod] if go_mod is not None and go_mod in configs else []


@dataclass(frozen=True)
class GoResolver:
    tree: Tree
    folders: Mapping[str, list[str]]
    test_file: str
    # The repository's modules, the test's own and those its go.mod replaces with a folder
    # of the repository, each with its folder; empty when go.mod was not read: no import
    # is the repository's then.
    modules: Mapping[str, str]
    module_root: str

    def starts(self) -> Sequence[Start]:
        files = package_files(self.folders, parent(self.test_file), tests=True)
        return [Start(path, PACKAGE_FILE) for path in files if path != self.test_file]

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced | BuiltOn] | None:
        paths = go_imports(source)
        if paths is None:
            return None
        found: list[Target | Unplaced | BuiltOn] = []
        for imported in dict.fromkeys(paths):
            folder = self._folder(imported)
            if folder is not None:
                found += [
                    Target(p, imported) for p in package_files(self.folders, folder, tests=False)
                ]
            found.append(Unplaced(imported, self._folders(imported)))
        if path == self.test_file:
            found.append(Unplaced(PACKAGE_FILE, (parent(path) + "/",)))
        systems = systems_building(path, source)
        if systems != ALL_RUNNERS:
            found.append(BuiltOn(systems, constraint(path, source)))
        return found

    def _folders(self, imported: str) -> tuple[str, ...]:
        """The folders an import path names, whether or not they hold files: in a module
        of the repository, and in the test's module's `vendor/`."""
        folder = module_folder(imported, self.modules)
        vendored = join(self.module_root, "vendor", imported)
        return (*([folder + "/"] if folder is not None else []), vendored + "/")

    def _folder(self, imported: str) -> str | None:
        """The repository folder of an imported package, None when it is not in the tree."""
        folder = module_folder(imported, self.modules)
        if folder is not None:
            return folder
        vendored = join(self.module_root, "vendor", imported)
        return vendored if vendored in self.tree.directories else None


def go_import_path(failure: Failure) -> str | None:
    """The package import path of a `go test` failure: its id is `path.TestName`, or the
    bare path for a package that failed outside any test (a build error, a panic in init)."""
    suffix = "." + failure.name
    if failure.test_id.endswith(suffix):
        return failure.test_id.removesuffix(suffix) or None
    if failure.test_id == failure.name and not _TEST_NAME.match(failure.name):
        return failure.test_id or None
    return None


def locate_package_test(
    import_path: str,
    tree: Tree,
    test_name: str = "",
    modules: Mapping[str, str] | None = None,
    printed: str = "",
) -> str | None:
    """A test file of the package at `import_path`. With the repository's modules (module
    path -> folder, from its go.mod files), the package's folder is the rest of the path in
    the longest module path it is under (a module's root package is the module's folder).
    Without them, or under none of them (a module in a folder `go test ./...` skips), its
    folder is the longest tail of the path that is a folder of the tree holding Go files (the
    module path is a prefix that is no folder: `github.com/acme/bus/internal/wire` is
    `internal/wire/`, or `go/internal/wire/` in a repository whose module sits in `go/`);
    a module's root package, none of whose tails is a folder, is the folder of the tree's
    only go.mod (`go test` ran in this repository, so a package in no folder is a module's
    root; with several modules, which one is not known: None). Of the package's test
    files, the one the failure printed its location in (`printed`, a bare file name) or
    the one named after the test when there is one, else the first: every file of the
    package runs for the test, so which one starts the walk changes no verdict."""
    folders = go_folders(tree)
    folder = module_folder(import_path, modules or {})
    if folder is not None:
        return _test_file(folders, folder, test_name, printed)
    segments = [s for s in import_path.split("/") if s not in ("", ".", "..")]
    for start in range(len(segments)):
        tail = "/".join(segments[start:])
        matched = sorted((d for d in folders if d == tail or d.endswith("/" + tail)), key=len)
        found = [f for d in matched if (f := _test_file(folders, d, test_name, printed))]
        if matched:  # the package's folder, with or without a test file
            return found[0] if found else None
    go_mods = go_mod_files(tree)
    if len(go_mods) != 1:
        return None
    return _test_file(folders, parent(go_mods[0]), test_name, printed)


def _test_file(
    folders: Mapping[str, list[str]], folder: str, test_name: str, printed: str = ""
) -> str | None:
    """The package's test file `printed`, else the one named after the test
    (`TestMuxBasic`: `mux_basic_test.go`, else `mux_test.go`), else its first test file."""
    tests = [p for p in folders.get(folder, []) if p.endswith(TEST_SUFFIX)]
    if printed and join(folder, printed) in tests:
        return join(folder, printed)
    words = [w.lower() for w in _WORDS.findall(_TEST_NAME.sub("", test_name.split("/")[0]))]
    for end in range(len(words), 0, -1):
        named = join(folder, "_".join(words[:end]) + TEST_SUFFIX)
        if named in tests:
            return named
    return tests[0] if tests else None


GO = Go()
