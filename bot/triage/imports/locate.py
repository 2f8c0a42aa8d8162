"""Find a failed test's file in the commit's tree when the failure names none, or names
one the tree does not hold: pure.

`go test` names a package and a test (`github.com/acme/bus/wire.TestParse`); Maven, Gradle
and JUnit XML name a class (`org.example.orders.OrderRepositoryTest#saves`), at most with a
bare file name. Neither is a path, but the commit's file list holds the answer: the
package's folder (by the modules' paths, when their go.mod files were read), the class's
file in one of the source roots.

A path printed under a prefix that is not the repository's (a GOPATH checkout:
`src/github.com/acme/bus/wire/parse_test.go`, `/go/src/github.com/acme/bus/...`) is placed
by the module path it holds (the rest of the path is in that module's folder), else by
the one file of the tree that is a tail of it; the evidence says how.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

from bot.shared import Source, Tree
from bot.triage.imports.csharp import CSHARP
from bot.triage.imports.golang import (
    GO,
    GO_MODS_READ,
    TEST_SUFFIX,
    go_import_path,
    go_mod_files,
    locate_package_test,
    module_folder,
    repository_modules,
)
from bot.triage.imports.javascript import JAVASCRIPT
from bot.triage.imports.jvm import JVM, jvm_class, locate_class
from bot.triage.imports.language import Language
from bot.triage.imports.paths import join
from bot.triage.imports.php import PHP
from bot.triage.imports.python import PYTHON
from bot.triage.imports.ruby import RUBY
from bot.triage.imports.rust import RUST
from bot.triage.models import Failure

GO_FRAMEWORK = "go"
# The language a framework's tests are written in, for a failure that names no test file
# (a JUnit XML report's "junit" is any tool's: JVM only for a failure naming a class).
_FRAMEWORK_LANGUAGES: Mapping[str, Language] = {
    GO_FRAMEWORK: GO,
    **{name: JVM for name in ("maven", "gradle")},
    **{name: PYTHON for name in ("pytest", "unittest")},
    **{name: JAVASCRIPT for name in ("jest", "vitest", "mocha", "bun", "node_test")},
    **{name: RUBY for name in ("rspec", "minitest")},
    "phpunit": PHP,
    "dotnet": CSHARP,
    "cargo": RUST,
}


@dataclass(frozen=True)
class Located:
    path: str
    how: str  # for the evidence: "found from the package a/b", "placed in the tree by ..."


def locating_language(failure: Failure) -> Language | None:
    """The language whose file `locate_in_tree` can find for a failure that names no file."""
    if failure.framework == GO_FRAMEWORK and go_import_path(failure):
        return GO
    if jvm_class(failure):
        return JVM
    return None


def failure_language(failure: Failure) -> Language | None:
    """The walked language of a failure's test, whether or not it names a file."""
    return locating_language(failure) or _FRAMEWORK_LANGUAGES.get(failure.framework)


def go_mods_for_locating(failure: Failure, tree: Tree) -> list[str]:
    """The go.mod files to read before locating a Go failure: every one, when the tree has
    several (up to `GO_MODS_READ`): which module a package path is in is theirs to say.
    With one, the tree alone places a package in it."""
    if failure.framework != GO_FRAMEWORK:
        return []
    go_mods = go_mod_files(tree)
    return go_mods if 1 < len(go_mods) <= GO_MODS_READ else []


def locate_in_tree(
    failure: Failure, tree: Tree, named: str | None, go_mods: Mapping[str, Source]
) -> Located | None:
    """The failed test's file in `tree`: `named` (the file the failure names) placed in the
    tree when the tree does not hold it as printed, else found from the package or class
    its id names; None when neither is in the tree. `go_mods` are the go.mod files read
    (path -> text; `go_mods_for_locating`)."""
    modules = repository_modules({p: t for p, t in go_mods.items() if isinstance(t, str)})
    if named is not None:
        return _placed(named, tree.files.keys(), modules)
    if failure.framework == GO_FRAMEWORK:
        package = go_import_path(failure)
        # Go prints where a test failed by the file's name only (`clock_test.go:41`).
        printed = (failure.location or "").rpartition(":")[0]
        printed = printed if "/" not in printed and printed.endswith(TEST_SUFFIX) else ""
        if not package:
            return None
        found = locate_package_test(package, tree, failure.name, modules, printed)
        return Located(found, f"found from the package {package}") if found else None
    qualified = jvm_class(failure)
    found = locate_class(qualified, tree) if qualified else None
    return Located(found, f"found from the class {qualified}") if found else None


def _placed(named: str, files: Set[str], modules: Mapping[str, str]) -> Located | None:
    """A printed path the tree does not hold, placed by a Go module path in it, else by
    the one tree file that is a tail of it: a folder and a name at least, or only the name
    when what it drops holds a host (`src/github.com/acme/bus/clock_test.go`)."""
    segments = named.split("/")
    if named.endswith(GO.sources):
        for start in range(len(segments) - 1):
            package = "/".join(segments[start:-1])
            folder = module_folder(package, modules)
            if folder is not None and (placed := join(folder, segments[-1])) in files:
                how = f"printed as {named}, placed in the tree by its Go package {package}"
                return Located(placed, how)
    hosted = any("." in segment for segment in segments[:-1])
    ends = range(1, len(segments) if hosted else len(segments) - 1)
    tails = [t for i in ends if (t := "/".join(segments[i:])) in files]
    if len(tails) != 1:
        return None
    return Located(tails[0], f"printed as {named}, placed in the tree by its unique tail")
