"""Find a failed test's file in the commit's tree when the failure names none: pure.

`go test` names a package and a test (`github.com/acme/bus/wire.TestParse`); Maven, Gradle
and JUnit XML name a class (`org.example.orders.OrderRepositoryTest#saves`), at most with a
bare file name. Neither is a path, but the commit's file list holds the answer: the
package's folder, the class's file in one of the source roots.
"""

from __future__ import annotations

from bot.shared import Tree
from bot.triage.imports.golang import GO, go_import_path, locate_package_test
from bot.triage.imports.jvm import JVM, jvm_class, locate_class
from bot.triage.imports.language import Language
from bot.triage.models import Failure

GO_FRAMEWORK = "go"


def locating_language(failure: Failure) -> Language | None:
    """The language whose file `locate_in_tree` can find for a failure that names no file."""
    if failure.framework == GO_FRAMEWORK and go_import_path(failure):
        return GO
    if jvm_class(failure):
        return JVM
    return None


def locate_in_tree(failure: Failure, tree: Tree) -> str | None:
    """The failed test's file in `tree`, found from the package or class its id names;
    None when it is in no folder of the tree (or the failure names neither)."""
    if failure.framework == GO_FRAMEWORK:
        package = go_import_path(failure)
        return locate_package_test(package, tree, failure.name) if package else None
    qualified = jvm_class(failure)
    return locate_class(qualified, tree) if qualified else None


def how_located(failure: Failure) -> str:
    """How `locate_in_tree` found the file, for the evidence."""
    if failure.framework == GO_FRAMEWORK:
        return f"found from the package {go_import_path(failure)}"
    return f"found from the class {jvm_class(failure)}"
