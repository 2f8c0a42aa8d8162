"""Java, Kotlin, Scala and Groovy: a test class's file, the repository's classes it imports,
and the classes of its own package it names.

Classes are looked up by path in every source root at once: the class `a.b.C` is any file
of the tree ending in `a/b/C.java` (or `.kt`, `.scala`, `.groovy`), so `src/main/java/`,
`src/test/kotlin/` and every module of a multi-module build count alike. A Kotlin file
need not sit in its package's folder: the package `a.b`'s files also include the `.kt`
files directly in any `kotlin` folder (a multiplatform build's `actual`s, as in
`src/jvmMain/kotlin/CommonDefsImplJvm.kt` of package `org.intellij.markdown.html`) and in
folders below one that end in its last names (`kotlin/b/`: Kotlin's convention leaves the
common root package out). What a Java, Scala or Groovy file imports, read by `jvm_scan`:

- `import a.b.C` (also `static`): the file of the longest prefix that is a class
  (`a.b.C.method` is `C`, `a.b.Outer.Inner` is `Outer`);
- `import a.b.*` and Scala's `a.b._`: every class file of the package `a.b`, or of the
  class `a.b` when that is a class;
- an import whose name is in no class file but whose package is the repository's (a
  Scala object's member): every file of that package;
- a dotted name in the code whose longest prefix is a class (`new scopt.OptionParser()`:
  a class named by its package, no import);
- Scala's relative imports (`import SpecUtil._` in package `scopttest`), tried against the
  file's package when they name no class from the root;
- every identifier that is the name of a class file of the file's own package, in any
  source root (`OrderRepository` in `src/test/java/org/example/orders/` is
  `src/main/java/org/example/orders/OrderRepository.java`): Java names them unimported;
- Kotlin's files by what Java sees of them: `FooKt` is Foo.kt's class (its top-level
  functions), and a Kotlin file of the package counts once read if it declares a name
  the file has (a class of a file named otherwise, `@file:JvmName("Cash")`'s `Cash`).

A Kotlin file names declarations, not files: a file may declare any number of classes,
objects, interfaces, type aliases, functions and properties at its top level, whatever its
name, and an `expect` declaration's `actual` sits in a file of another source set. So a
Kotlin file of a package counts for a Kotlin importer only once read, when it declares at
its top level, in that package, a name the importer uses (`Target.declares`,
`jvm_scan.kotlin_declared`: qualified names, `a.b.isPunctuation`):

- `import a.b.C` (an alias: `as D`): the Kotlin files of `a.b` that declare `C`, and,
  taking each shorter prefix for a package, those that declare the part after it
  (`import a.b.Registry.register`: an object's member, in a file named otherwise); Java's
  and Scala's class files by their path, as above. An import whose name the rest of the
  file never uses loads nothing and is not followed, unless it is an operator's name
  (`plus`, `getValue`, `component1`, ...: called without it);
- `import a.b.*`: the Kotlin files of `a.b` that declare a word the file's code uses
  (identifiers and the words of its strings, for templates; not its comments, its
  imports, the name a declaration declares nor a modifier such as `expect`);
- its own package's other Kotlin files (in any source root), likewise;
- a dotted name in the code (`a.b.helper()`, no import) as an import, for a package of
  two parts or more (`lexer.start` is a variable's member) or a class's file's name;
- a file that declares a top-level `operator fun` declares `a.b.()` too, which every
  importer of its package uses (`x + y` calls `plus` without naming it);
- what it cannot read (braces that do not balance, a string that never ends) declares
  anything, and a file that cannot be read, or that the budgets leave unread, counts;
- reflection (`Class.forName`, `loadClass`, `ServiceLoader`): the files of the file's own
  package and of its wildcard imports count whatever they declare, and each string that
  reads as a qualified name (`"a.b.Plugin"`) is looked up as one;
- a file of a main source set (`main`, `commonMain`, `jvmMain`) never reaches one of a test
  source set (`test`, `jvmTest`, `testFixtures`): Gradle compiles main without them.

An `expect` declaration, a `const val` and a type alias leave no class that kotlinc's
label would see, and count when named; an opt-in marker (`@RequiresOptIn annotation
class`) gates compilation only and declares nothing. What runs without being named is in
the files that are counted: top-level property initialisers, companion objects and `init`
blocks run with their file's or class's declarations.

What a file the pull request removed could have been (`removed.py`): a class of the
package of any file read that the file names (a Java file: by the rule above, at any depth;
a Kotlin, Scala or Groovy file's package folder whole, whose top-level declarations need
not be in a file of their name), and a class, or a package's file, that an import or a
dotted name names and the tree no longer holds (an unused Kotlin import too).

Classes that run without being named: the `META-INF/services` files of the tree are read
with the test file (`config_files`); the classes JUnit loads from them for every test
(Jupiter's auto-detected extensions, the launcher's listeners) run with it (`starts`), and
a file that names `ServiceLoader` may load any class any of them lists. A class's files
there are its class file and its package's Kotlin files.

Not followed: Scala's top-level declarations of the file's own package named without an
import, Java and Scala reflection, annotation processors and generated sources (not in the
tree), a services file itself (a resource, as any file a test reads), and a Kotlin package
in a folder that is neither its own nor below a `kotlin` root.

A Maven, Gradle or JUnit failure names the class (`org.example.orders.OrderRepositoryTest`),
not its file: `locate_class` finds it in the commit's tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from bot.shared import Tree
from bot.triage.imports.jvm_scan import (
    KOTLIN_ANY,
    KOTLIN_IMPLICIT,
    KOTLIN_OPERATORS,
    WILDCARD,
    kotlin_aliases,
    kotlin_declared,
    kotlin_uses,
    scan_jvm,
)
from bot.triage.imports.language import ANYWHERE, Start, Target, Unplaced
from bot.triage.imports.paths import parent
from bot.triage.models import Failure

SUFFIXES = (".java", ".kt", ".scala", ".groovy")
JVM_FRAMEWORKS = frozenset({"maven", "gradle", "junit"})
SAME_CLASS = "a file with the test class's name in another source root"
_NESTED_COMMENTS = (".kt", ".scala")
_ROOTS = ("java", "kotlin", "scala", "groovy")  # a source root's folder


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
        """The files of the class `package.name` in every source root: `FooKt` is also
        Foo.kt's, the class Java sees a Kotlin file's top-level functions in."""
        return [
            path
            for path in self.package(package)
            if _stem(path) == name or (path.endswith(".kt") and f"{_stem(path)}Kt" == name)
        ]


class Jvm:
    name = "Java/Kotlin/Scala"
    sources = SUFFIXES
    configs = ()

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(SUFFIXES)

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        """The `META-INF/services` files: classes loaded without being named."""
        return sorted(path for path in tree.files if _SERVICES.search(path))

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> JvmResolver:
        services = {
            path.rsplit("/", 1)[1]: _service_classes(text)
            for path, text in configs.items()
            if _SERVICES.search(path)
        }
        return JvmResolver(test_file, Classes.of(tree), services)

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        return []  # classes are found by name in the tree

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`src/a/b/C` for `src/a/b/C.java`: a class's path."""
        return [path.rpartition(".")[0] if path.endswith(SUFFIXES) else path]


@dataclass(frozen=True)
class JvmResolver:
    test_file: str
    classes: Classes
    # The classes each `META-INF/services/INTERFACE` file lists, by interface.
    services: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def starts(self) -> Sequence[Start]:
        """The other files of the test class's name and package folder: in a multi-module
        build the failure does not say which module's class ran, so each one counts. And
        the files of the classes JUnit loads for every test from `META-INF/services`
        (extensions, when auto-detection is on, and the launcher's listeners)."""
        name = self.test_file.rsplit("/", 1)[-1]
        folder = parent(self.test_file)
        same = [
            Start(path, SAME_CLASS)
            for other, paths in self.classes.folders.items()
            if other != folder and _same_package_folder(other, folder)
            for path in paths
            if path.rsplit("/", 1)[-1] == name
        ]
        loaded = [
            Start(path, f"a class META-INF/services/{interface} lists")
            for interface in sorted(self.services.keys() & _JUNIT_SERVICES)
            for qualified in self.services[interface]
            for path in self._files_of_class(qualified)
        ]
        return list(dict.fromkeys([*same, *loaded]))

    def _files_of_class(self, qualified: str) -> list[str]:
        """The files that may hold the class `qualified`: its class file, or the Kotlin
        files of its package (a Kotlin class need not be named after its file)."""
        names = qualified.split(".")
        files = self._class_of(names)
        package = ".".join(names[:-1])
        kotlin = [f for f in self.classes.package(package) if f.endswith(".kt")] if package else []
        return list(dict.fromkeys([*files, *kotlin]))

    def _loaded(self, path: str, names: AbstractSet[str]) -> list[Target | Unplaced]:
        """What a file that names `ServiceLoader` may load: every class a services file
        lists (which interface it asks for is a value, not a name)."""
        if "ServiceLoader" not in names:
            return []
        found: list[Target | Unplaced] = []
        for qualified in dict.fromkeys(c for classes in self.services.values() for c in classes):
            files = self._files_of_class(qualified)
            found += [Target(file, qualified) for file in files if file != path]
            if not files:
                found.append(Unplaced(qualified, _named_stems(qualified, package=False)))
        return found

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced] | None:
        if path.endswith(".kt"):
            return self._kotlin(path, source)
        scanned = scan_jvm(source, nested_comments=path.endswith(_NESTED_COMMENTS))
        found: list[Target | Unplaced] = []
        package = scanned.package
        for imported in scanned.imports:
            # Scala resolves an import relative to the enclosing package too (`import
            # SpecUtil._` in package scopttest): try both, over-counting.
            relative = f"{package}.{imported}" if package else ""
            found += self._imported(imported) or [
                replace(target, module=imported)
                for target in (self._imported(relative) if relative else [])
            ]
            if not self._class_of(imported.split(".")):  # a package's member, or gone
                found.append(Unplaced(imported, _named_stems(imported, package=True)))
        for name in dict.fromkeys(scanned.qualified):
            files = self._class_of(name.split("."))
            found += [Target(file, name) for file in files]
            if not files:
                found.append(Unplaced(name, _named_stems(name, package=False)))
        own = _own_stems(path, package)
        if package and path.endswith(".java"):
            own = (*own[1:], *_named_classes(own[0], scanned.names))
        found.append(Unplaced(package, own))
        # The default package's classes: those beside the file.
        neighbours = self.classes.package(package) or self.classes.folders.get(parent(path), [])
        found += self._loaded(path, scanned.names)
        named = frozenset({f"{package}.{name}" for name in scanned.names} | {KOTLIN_ANY})
        for file in neighbours:
            name = _stem(file)
            module = f"{package}.{name}" if package else name
            if file != path and (name in scanned.names or f"{name}Kt" in scanned.names):
                found.append(Target(file, module))
            elif file != path and file.endswith(".kt"):
                # a Kotlin file's classes need not be named after it, and `@file:JvmName`
                # renames its functions' class: counted once read, if it declares a name
                found.append(Target(file, module, declares=named, declared=kotlin_declared))
        return list(dict.fromkeys(found))

    def _imported(self, imported: str) -> list[Target]:
        """The files an import names: its class's, or its package's."""
        parts = imported.split(".")
        names = parts[:-1] if parts[-1] == WILDCARD else parts
        if classes := self._class_of(names):
            return [Target(file, imported) for file in classes]
        package = ".".join(names if parts[-1] == WILDCARD else names[:-1])
        return [Target(file, imported) for file in self.classes.package(package)]

    def _kotlin(self, path: str, source: str) -> list[Target | Unplaced]:
        """A Kotlin file's imports (module doc): what it names, by the declarations of the
        files that may hold it."""
        scanned = scan_jvm(source, nested_comments=True)
        package, uses = scanned.package, kotlin_uses(source)
        aliases = kotlin_aliases(source)
        # Reflection names classes in strings: its package's files count whatever they
        # declare, and a string that reads as a qualified name is one.
        reflective = bool(uses & _REFLECTION)
        found: list[Target | Unplaced] = []
        for imported in scanned.imports:
            parts = imported.split(".")
            named = aliases.get(imported, parts[-1])
            if parts[-1] == WILDCARD or named in uses or parts[-1] in KOTLIN_OPERATORS:
                found += self._kotlin_named(imported, uses, reflective)
            # else an import the code never names: it loads nothing
            if not self._class_of(parts):  # a package's member, or gone
                found.append(Unplaced(imported, _named_stems(imported, package=True)))
        strings = _qualified_strings(source) if reflective else []
        for name in dict.fromkeys([*scanned.qualified, *strings]):
            # `a.b.helper()` names a package's member without an import; `lexer.start`, a
            # one-part package, is a variable's member (a local name hides a package).
            targets = self._kotlin_named(name, uses, reflective, shortest=2)
            found += targets
            if not targets:
                found.append(Unplaced(name, _named_stems(name, package=False)))
        found.append(Unplaced(package, _own_stems(path, package)))
        found += self._loaded(path, uses)
        # The default package's files: those beside the file.
        neighbours = self.classes.package(package) or self.classes.folders.get(parent(path), [])
        module = f"{package}.*" if package else "*"
        others = [file for file in neighbours if file != path]
        found += self._declaring(others, package, module, uses, True, reflective)
        return [
            item
            for item in dict.fromkeys(found)
            if not (isinstance(item, Target) and _main_sees_no_test(path, item.path))
        ]

    def _kotlin_named(
        self, name: str, uses: frozenset[str], reflective: bool, shortest: int = 1
    ) -> list[Target]:
        """The files a Kotlin import (or a qualified name in the code) may name: another
        language's class file; for `a.b.*`, the package's Kotlin files that declare a name
        the importer uses; and, taking each prefix for a package (`a.b.C`: `C` of `a.b`;
        `a.b.Obj.member`: an object's member), its Kotlin files that declare the part after
        it. A file named `C.kt` is no exception: `expect class C` there may have its
        `actual` in a file of another name."""
        parts = name.split(".")
        wildcard = parts[-1] == WILDCARD
        names = parts[:-1] if wildcard else parts
        classes = self._class_of(names)
        found = [Target(file, name) for file in classes if not file.endswith(".kt")]
        if any(file.endswith(".kt") for file in classes):  # `m.Money`: a class's file's name
            end = self._class_end(names)
            package = ".".join(names[: end - 1])
            files = self.classes.package(package)
            found += self._declaring(files, package, name, {names[end - 1]}, False, False)
        if wildcard and len(names) >= shortest:
            package = ".".join(names)
            files = self.classes.package(package)
            found += self._declaring(files, package, name, uses, True, reflective)
        for end in range(len(names) - 1, shortest - 1, -1):
            package = ".".join(names[:end])
            files = self.classes.package(package)
            found += self._declaring(files, package, name, {names[end]}, False, False)
        return found

    @staticmethod
    def _declaring(
        files: Sequence[str],
        package: str,
        module: str,
        names: AbstractSet[str],
        implicit: bool,
        reflective: bool,
    ) -> list[Target]:
        """Of a package's files, those that may declare one of `names` for a Kotlin
        importer: a Kotlin file once read, if it declares one at its top level (`implicit`:
        or an operator, which code calls without its name); another language's file if its
        name is one; `reflective`: every file, whatever it declares."""
        declares = {f"{package}.{name}" for name in names} | {KOTLIN_ANY}
        if implicit:
            declares.add(f"{package}.{KOTLIN_IMPLICIT}")
        frozen = frozenset(declares)
        return [
            Target(file, module, declares=frozen, declared=kotlin_declared)
            if file.endswith(".kt") and not reflective
            else Target(file, module)
            for file in files
            if reflective or file.endswith(".kt") or _stem(file) in names
        ]

    def _class_of(self, names: list[str]) -> list[str]:
        """The files of the longest prefix of `names` that is a class with a package
        (`a.b.C.method` is `a.b.C`)."""
        end = self._class_end(names)
        return self.classes.named(".".join(names[: end - 1]), names[end - 1]) if end else []

    def _class_end(self, names: list[str]) -> int:
        """The length of the longest prefix of `names` that is a class with a package (0:
        none)."""
        for end in range(len(names), 1, -1):
            if self.classes.named(".".join(names[: end - 1]), names[end - 1]):
                return end
        return 0


_SERVICES = re.compile(r"(^|/)META-INF/services/[\w$.]+$")
# What JUnit loads from `META-INF/services` for every test: Jupiter's extensions (when
# auto-detection is on, which the walk cannot tell) and the platform launcher's listeners.
_JUNIT_SERVICES = frozenset(
    {
        "org.junit.jupiter.api.extension.Extension",
        "org.junit.platform.launcher.TestExecutionListener",
        "org.junit.platform.launcher.LauncherSessionListener",
        "org.junit.platform.launcher.LauncherDiscoveryListener",
        "org.junit.platform.launcher.PostDiscoveryFilter",
    }
)


def _service_classes(text: str) -> list[str]:
    """The classes a `META-INF/services` file lists: one a line, `#` starting a comment."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


# Names that look a class up by a string: `Class.forName`, `ClassLoader.loadClass`,
# `ServiceLoader.load` (the classes a META-INF/services file lists).
_REFLECTION = frozenset({"forName", "loadClass", "ServiceLoader"})
_QUALIFIED_STRING = re.compile(r"\"([a-z_]\w*(?:\.[A-Za-z_]\w*)+)\"")


def _qualified_strings(source: str) -> list[str]:
    """The strings of a file that read as a qualified name (`"org.example.Plugin"`)."""
    return _QUALIFIED_STRING.findall(source)


def _own_stems(path: str, package: str) -> tuple[str, ...]:
    """What a file's own package could have held: its folders, or the file's folder for the
    default package."""
    return _package_stems(package.split(".")) if package else (parent(path) + "/",)


def _source_set(path: str) -> str:
    """The Gradle source set a file is in (`commonMain` for
    `src/commonMain/kotlin/a/B.kt`, `test` for `src/test/java/...`), or ""."""
    parts = path.split("/")
    roots = [i for i, part in enumerate(parts[:-1]) if part in _ROOTS]
    return parts[roots[0] - 1] if roots and roots[0] > 0 else ""


def _main_sees_no_test(importer: str, target: str) -> bool:
    """Whether `target` is in a test source set (`test`, `jvmTest`, `testFixtures`) and
    `importer` in a main one (`main`, `commonMain`), whose compilation never sees it."""
    mine, theirs = _source_set(importer), _source_set(target)
    main = mine == "main" or mine.endswith("Main")
    return main and (theirs.startswith("test") or theirs.endswith(("Test", "Tests")))


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
    roots = [i for i, part in enumerate(parts) if part in _ROOTS]
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
