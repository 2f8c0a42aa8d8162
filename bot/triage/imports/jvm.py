"""Java, Kotlin, Scala and Groovy: a test class's file, the repository's classes it imports,
and the classes of its own package it names.

Classes are looked up by path in every source root at once: the class `a.b.C` is any file
of the tree ending in `a/b/C.java` (or `.kt`, `.scala`, `.groovy`), so `src/main/java/`,
`src/test/kotlin/` and every module of a multi-module build count alike. A Kotlin file
need not sit in its package's folder: the package `a.b`'s files also include the `.kt`
files directly in any `kotlin` folder (a multiplatform build's `actual`s, as in
`src/jvmMain/kotlin/CommonDefsImplJvm.kt` of package `org.intellij.markdown.html`) and in
folders below one that end in its last names (`kotlin/b/`: Kotlin's convention leaves the
common root package out). What a file imports, read by `jvm_scan`:

- `import a.b.C` (also `static`, Kotlin's `as`): the file of the longest prefix that is a
  class (`a.b.C.method` is `C`, `a.b.Outer.Inner` is `Outer`);
- `import a.b.*` and Scala's `a.b._`: every class file of the package `a.b`, or of the
  class `a.b` when that is a class;
- an import whose name is in no class file but whose package is the repository's (a
  Kotlin top-level function, a Scala object's member): every file of that package; from a
  Kotlin file, a Kotlin file of it only when it declares that name at its top level (each
  is read to know), and for `import a.b.*` a word of the importing file;
- a dotted name in the code whose longest prefix is a class (`new scopt.OptionParser()`:
  a class named by its package, no import);
- Scala's relative imports (`import SpecUtil._` in package `scopttest`), tried against the
  file's package when they name no class from the root;
- every identifier that is the name of a class file of the file's own package, in any
  source root (`OrderRepository` in `src/test/java/org/example/orders/` is
  `src/main/java/org/example/orders/OrderRepository.java`): Java names them unimported;
- a Kotlin file's package's other Kotlin files that declare a name it has: a top-level
  function, or a class of a file named otherwise, needs no import there, and its file
  cannot be told from the name (each is read to know what it declares).

What a file the pull request removed could have been (`removed.py`): a class of the
package of any file read that the file names (a Java file: by the rule above, at any depth;
a Kotlin, Scala or Groovy file's package folder whole, whose top-level declarations need
not be in a file of their name), and a class, or a package's file, that an import or a
dotted name names and the tree no longer holds.

Not followed: Scala's top-level declarations of the file's own package named without an
import, reflection, annotation processors and generated sources (not in the tree).

A Maven, Gradle or JUnit failure names the class (`org.example.orders.OrderRepositoryTest`),
not its file: `locate_class` finds it in the commit's tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.shared import Tree
from bot.triage.imports.jvm_scan import WILDCARD, kotlin_declared, kotlin_words, scan_jvm
from bot.triage.imports.language import ANYWHERE, Start, Target, Unplaced
from bot.triage.imports.paths import parent
from bot.triage.models import Failure

SUFFIXES = (".java", ".kt", ".scala", ".groovy")
JVM_FRAMEWORKS = frozenset({"maven", "gradle", "junit"})
SAME_CLASS = "a file with the test class's name in another source root"
_NESTED_COMMENTS = (".kt", ".scala")


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


@dataclass(frozen=True)
class Classes:
    """The tree's class files by folder (directly in it, sorted), and the folders by their
    last name, so that a package (`a.b`: every folder ending in `a/b`) is found fast."""

    folders: Mapping[str, list[str]]
    by_leaf: Mapping[str, list[str]]

    @classmethod
    def of(cls, tree: Tree) -> Classes:
        folders: dict[str, list[str]] = {}
        for path in sorted(tree.files):
            if path.endswith(SUFFIXES):
                folders.setdefault(parent(path), []).append(path)
        by_leaf: dict[str, list[str]] = {}
        for folder in folders:
            by_leaf.setdefault(folder.rsplit("/", 1)[-1], []).append(folder)
        return cls(folders, by_leaf)

    def package(self, package: str) -> list[str]:
        """Every class file of the package, in every source root; none for the default
        package (its folders, the source roots, are not known)."""
        tail = package.replace(".", "/")
        if not tail:
            return []
        leaf = tail.rsplit("/", 1)[-1]
        found = [
            path
            for folder in self.by_leaf.get(leaf, [])
            if folder == tail or folder.endswith("/" + tail)
            for path in self.folders[folder]
        ]
        return list(dict.fromkeys(found + self._kotlin_elsewhere(tail, leaf)))

    def _kotlin_elsewhere(self, tail: str, leaf: str) -> list[str]:
        """The Kotlin files that may hold the package `tail` outside its folder: those
        directly in a `kotlin` source root, and in a folder below one that ends in the
        package's last names (Kotlin's convention leaves the common root package out)."""
        return [
            path
            for folder in [*self.by_leaf.get("kotlin", []), *self.by_leaf.get(leaf, [])]
            if _under_kotlin_root(folder, tail)
            for path in self.folders[folder]
            if path.endswith(".kt")
        ]

    def named(self, package: str, name: str) -> list[str]:
        """The files of the class `package.name` in every source root."""
        return [path for path in self.package(package) if _stem(path) == name]


class Jvm:
    name = "Java/Kotlin/Scala"
    sources = SUFFIXES
    configs = ()

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(SUFFIXES)

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        return []

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> JvmResolver:
        return JvmResolver(test_file, Classes.of(tree))

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        return []  # classes are found by name in the tree: no configuration is read

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`src/a/b/C` for `src/a/b/C.java`: a class's path."""
        return [path.rpartition(".")[0] if path.endswith(SUFFIXES) else path]


@dataclass(frozen=True)
class JvmResolver:
    test_file: str
    classes: Classes

    def starts(self) -> Sequence[Start]:
        """The other files of the test class's name and package folder: in a multi-module
        build the failure does not say which module's class ran, so each one counts."""
        name = self.test_file.rsplit("/", 1)[-1]
        folder = parent(self.test_file)
        return [
            Start(path, SAME_CLASS)
            for other, paths in self.classes.folders.items()
            if other != folder and _same_package_folder(other, folder)
            for path in paths
            if path.rsplit("/", 1)[-1] == name
        ]

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced] | None:
        scanned = scan_jvm(source, nested_comments=path.endswith(_NESTED_COMMENTS))
        found: list[Target | Unplaced] = []
        package = scanned.package
        words = kotlin_words(source) if path.endswith(".kt") else frozenset()
        for imported in scanned.imports:
            # Scala resolves an import relative to the enclosing package too (`import
            # SpecUtil._` in package scopttest): try both, over-counting.
            relative = f"{package}.{imported}" if package else ""
            found += self._imported(imported, words) or [
                replace(target, module=imported)
                for target in (self._imported(relative, words) if relative else [])
            ]
            if not self._class_of(imported.split(".")):  # a package's member, or gone
                found.append(Unplaced(imported, _named_stems(imported, package=True)))
        for name in dict.fromkeys(scanned.qualified):
            files = self._class_of(name.split("."))
            found += [Target(file, name) for file in files]
            if not files:
                found.append(Unplaced(name, _named_stems(name, package=False)))
        own = _package_stems(package.split(".")) if package else (parent(path) + "/",)
        if package and path.endswith(".java"):
            own = (*own[1:], *_named_classes(own[0], scanned.names))
        found.append(Unplaced(package, own))
        # The default package's classes: those beside the file.
        neighbours = self.classes.package(package) or self.classes.folders.get(parent(path), [])
        for file in neighbours:
            name = _stem(file)
            if file == path:
                continue
            if name in scanned.names:
                found.append(Target(file, f"{package}.{name}" if package else name))
            elif path.endswith(".kt") and file.endswith(".kt"):
                # Kotlin names its package's top-level functions, and classes of files
                # named otherwise, without an import: which file holds one, the name
                # does not tell (JetBrains/markdown's `EmptyStreamingMarkdownFile()`), so
                # each counts once read if it declares a name this file has.
                module = f"{package}.*" if package else "*"
                found.append(Target(file, module, declares=words, declared=kotlin_declared))
        return list(dict.fromkeys(found))

    def _imported(self, imported: str, words: frozenset[str]) -> list[Target]:
        """The files an import names: its class's, or its package's. A Kotlin file's
        (`words`: its words) import of a package's member, or of all of them, counts a
        package's Kotlin file once read if it declares that member, or a word of the file."""
        parts = imported.split(".")
        wildcard = parts[-1] == WILDCARD
        names = parts[:-1] if wildcard else parts
        if classes := self._class_of(names):
            return [Target(file, imported) for file in classes]
        members = words if wildcard else frozenset(names[-1:])
        return [
            Target(file, imported, declares=members, declared=kotlin_declared)
            if words and file.endswith(".kt")
            else Target(file, imported)
            for file in self.classes.package(".".join(names if wildcard else names[:-1]))
        ]

    def _class_of(self, names: list[str]) -> list[str]:
        """The files of the longest prefix of `names` that is a class with a package
        (`a.b.C.method` is `a.b.C`)."""
        for end in range(len(names), 1, -1):
            files = self.classes.named(".".join(names[: end - 1]), names[end - 1])
            if files:
                return files
        return []


def _named_stems(name: str, *, package: bool) -> tuple[str, ...]:
    """What a dotted name could have named at any depth: each prefix of two parts or more
    as a class, and (`package`: an import, whose last part may be a Kotlin function or a
    wildcard) its package's folder."""
    parts = [part for part in name.split(".") if part != WILDCARD]
    stems = [ANYWHERE + "/".join(parts[:end]) for end in range(2, len(parts) + 1)]
    head = parts if name.endswith(WILDCARD) else parts[:-1]
    if package and head:
        stems += _package_stems(head)
    return tuple(stems)


def _named_classes(folder: str, names: Iterable[str]) -> tuple[str, ...]:
    """The classes of a package folder's stem (`**/a/b/`) that a Java file names: Java names
    its package's classes unimported, by their file's name (the rule the walk follows them
    by), and a Kotlin file's top-level functions as `FileKt`."""
    return tuple(
        folder + stem for name in sorted(names) for stem in dict.fromkeys((name, _kotlin(name)))
    )


def _kotlin(name: str) -> str:
    return name.removesuffix("Kt") if name.endswith("Kt") and len(name) > 2 else name


def _package_stems(parts: list[str]) -> tuple[str, ...]:
    """The folders a package's file could have been directly in: its own at any depth, and
    (Kotlin) a `kotlin` source root or a folder below one ending in its last names."""
    below = ["/".join(parts[start:]) for start in range(1, len(parts) + 1)]
    return (
        ANYWHERE + "/".join(parts) + "/",
        *(ANYWHERE + "/".join(["kotlin", tail] if tail else ["kotlin"]) + "/" for tail in below),
    )


def _under_kotlin_root(folder: str, tail: str) -> bool:
    """Whether `folder` is a `kotlin` source root, or a folder below one whose path there
    is a tail of the package path `tail`."""
    parts = folder.split("/")
    if "kotlin" not in parts:
        return False
    below = "/".join(parts[len(parts) - parts[::-1].index("kotlin") :])
    return not below or tail == below or tail.endswith("/" + below)


def _same_package_folder(one: str, other: str) -> bool:
    """Whether two source-root folders hold the same package, judged by their common tail
    below the roots' `java`/`kotlin`/`scala`/`groovy` folder (or the whole path)."""
    return _package_tail(one) == _package_tail(other)


def _package_tail(folder: str) -> str:
    parts = folder.split("/")
    roots = [i for i, part in enumerate(parts) if part in ("java", "kotlin", "scala", "groovy")]
    return "/".join(parts[roots[-1] + 1 :]) if roots else folder


def jvm_class(failure: Failure) -> str | None:
    """The outer class a Maven, Gradle or JUnit failure names: `a.b.CTest#method` and
    `a.b.CTest$Nested#method` are `a.b.CTest`."""
    if failure.framework not in JVM_FRAMEWORKS or "#" not in failure.test_id:
        return None
    head = failure.test_id.split("#", 1)[0].split("$", 1)[0]
    parts = head.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    return head


def locate_class(qualified: str, tree: Tree) -> str | None:
    """The file of the class `qualified` in the tree, in any source root: of several (a
    multi-module build), the shortest path, then the first in order (the failure does not
    say which module ran); the walk counts the others as files that run for the test
    (`JvmResolver.starts`)."""
    package, _, name = qualified.rpartition(".")
    classes = Classes.of(tree)
    if package:
        files = classes.named(package, name)
    else:  # a log that names the class alone (Gradle without a stack frame): any package
        files = [p for paths in classes.folders.values() for p in paths if _stem(p) == name]
    return min(files, key=lambda path: (len(path), path)) if files else None


JVM = Jvm()
