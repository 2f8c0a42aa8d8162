"""What the walk asks of each language it can read: no I/O here.

The walk (`walk.py`) is the same for every language; a `Language` says which test files it
reads, which configuration files it needs first (read in the walk's first round, with the
test file), and gives a `Resolver` for one test: the other files that run for the test
(`starts`: pytest's conftest.py files, jest's setup files, a Go test's package) and, for a
file's text, the repository files it imports (`imports`); and, of the configuration files
read, those that steer how this test's imports resolve (`steering`: they are in the test's
footprint, strongly, so a PR changing one is related). A resolver never executes
repository code: it parses the text with the language's own tokenizer where Python has one
(`ast`) and with a small scanner elsewhere.

Registering a language: write a module here with a `Language` object, add it to
`LANGUAGES` in `languages.py`, and list its source suffixes there: the verdict uses them to
tell a change no test of that language could import (`could_import`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.shared import Tree

ANYWHERE = "**/"  # before an `Unplaced` stem: at any depth
EVERYTHING = "**"  # an `Unplaced` stem that names every file


@dataclass(frozen=True)
class Start:
    """A file that runs for the test without being imported by it. `why` is a noun phrase
    for the evidence ("a conftest.py", "a setup file named in jest.config.js"); `follow`
    False keeps the file in the footprint without reading it. A `path` ending in "/" is a
    folder, everything under it (a C# project's folder): never read, so `follow` is False;
    but the files under it ending in one of `except_suffixes`, which count one by one, as
    the walk reaches them (a C# project's `.cs` files, by what they declare)."""

    path: str
    why: str
    follow: bool = True
    except_suffixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    """A repository file an import runs, with the module as the importer writes it.
    `follow` False keeps it in the footprint unread: a file that imports nothing (a JSON
    file, a stylesheet) costs no read and no share of the limits."""

    path: str
    module: str
    follow: bool = True
    # Read for how imports resolve, not loaded by the program: a workspace package's
    # package.json found by the package's name (its `main`, `exports`).
    configures: bool = False
    # Run only when the function or method of this name runs: the import is in its body and
    # is not code the file runs by itself (a Ruby heredoc the method writes out for another
    # process, a class named in a string a PHP function instantiates). Followed once a file
    # the walk reaches names it (`Calls`); empty: always followed.
    when: str = ""
    # A type-only import (TypeScript's `import type`, a package.json's `types` entry): what
    # only such imports reach is read to check the program's types, never run; a runner
    # that erases types unchecked (`RunsWithout.types`) runs none of it.
    types: bool = False
    # A package.json's `browser` entry: read by bundlers, not by node (`RunsWithout.browser`).
    browser: bool = False
    # Counted only once read and found, by `declared` (a file's text to the names it may
    # declare), to declare one of these names: a Kotlin file of the importer's package,
    # whose top-level functions its importer names without an import; a C# file of the
    # test's projects. Empty: always. A `module` left empty is then the names it declares.
    declares: frozenset[str] = frozenset()
    declared: Callable[[str], frozenset[str]] | None = None


@dataclass(frozen=True)
class Unresolved:
    """An import of the repository's that names no file of the tree (`require('./gone')`,
    a class of the project's namespace no rule places): the walk cannot see what it runs,
    so it is partial ("could not resolve './gone' from test/a.test.js"), unless the import
    is type-only (`types`) and the test's runner erases those (`RunsWithout`)."""

    module: str
    types: bool = False


@dataclass(frozen=True)
class Unplaced:
    """An import that names no file of the tree and is taken for the standard library's or
    an installed package's (`import yaml`, `require "json"`), or one that found its file but
    may have found another at the base commit (a Python package whose `__init__.py` is gone):
    the walk is still complete. `stems` are what it could have named in a tree where more
    files existed (`removed.py`): "a/b" a file of that stem, "a/b/" a file directly in that
    folder, "**/" before either the same at any depth, "**" anything."""

    module: str
    stems: tuple[str, ...]


@dataclass(frozen=True)
class Calls:
    """The functions and methods a file names (calls, passes as a symbol or a string), in
    the language's own case (PHP's lower-cased), its declarations left out; `fragments`:
    the pieces of a name built at run time (`send("rakefile_#{kind}")`). A `Target`'s `when`
    is met by a name, or by a fragment inside it: one of three letters or more anywhere, a
    shorter one as a whole word ("a#{sep}b" is no part of `rakefile_test_task`).
    `dynamic`: the file calls or looks up a name built wholly at run time (`send("#{kind}")`,
    `const_get(name)`), which may be any: every `when` is met."""

    names: frozenset[str]
    fragments: frozenset[str] = frozenset()
    dynamic: bool = False

    def meets(self, when: str) -> bool:
        return (
            self.dynamic
            or when in self.names
            or any(_part_of(piece, when) for piece in self.fragments)
        )


def _part_of(piece: str, name: str) -> bool:
    core = piece.strip("_")
    return bool(core) and (core in name if len(core) >= 3 else core in name.split("_"))


@dataclass(frozen=True)
class RunsWithout:
    """Found in the test file: what its runner (`runner`, "vitest") leaves out, so that a
    file reached only that way never runs for the test: type-only imports, erased without
    checking types (`types`), and packages' `browser` entries, never read (`browser`)."""

    runner: str
    types: bool = False
    browser: bool = False

    def leaves_out(self, target: Target) -> str:
        """Why the runner does not run what `target` loads ("type imports, which vitest
        erases"), or "" when it does."""
        if target.types and self.types:
            return f"type imports, which {self.runner} erases"
        if target.browser and self.browser:
            return f"a package's `browser` entry, which {self.runner} does not read"
        return ""


@dataclass(frozen=True)
class BuiltOn:
    """Found in a file the build leaves out on some runners (a Go file's `//go:build
    windows`): the runners (GitHub's `runner.os` names: "Linux", "Windows", "macOS") on
    which a job may build it, and its constraint as written. The walk keeps it
    (`ImportWalk.built_on`); a failure of a job on another runner cannot come from it."""

    systems: frozenset[str]
    constraint: str


@dataclass(frozen=True)
class Runs:
    """The command-line tools a file may run, whose settings a manifest holds (`tools.py`):
    it imports the tool's module or names the tool in a string or a name. A language whose
    resolver reports them gives one for every file it parses (empty when it names none)."""

    tools: frozenset[str]


# What a resolver finds in one file.
Found = Target | Unresolved | Unplaced | Calls | RunsWithout | BuiltOn | Runs


class Resolver(Protocol):
    def starts(self) -> Sequence[Start]:
        """The files that run for the test besides the test file, strongest first."""
        ...

    def imports(self, path: str, source: str) -> Sequence[Found] | None:
        """The repository files `path` imports, the imports of the repository's it could
        not place (`Unresolved`), what the others could have named (`Unplaced`) and, when
        some `Target` of the walk has a `when`, the names the file calls (`Calls`); None when
        its text cannot be parsed."""
        ...


class Language(Protocol):
    @property
    def name(self) -> str:
        """As the evidence names it: "Python", "TypeScript"."""
        ...

    @property
    def sources(self) -> tuple[str, ...]:
        """Suffixes of the files a test of this language can import (".py", ".pyi")."""
        ...

    @property
    def configs(self) -> tuple[str, ...]:
        """How the configuration files it reads end ("go.mod", ".csproj"), when not in
        `sources`: a PR changing one may change how a test's imports resolve."""
        ...

    def tests(self, test_file: str) -> bool:
        """Whether this language reads `test_file`'s imports."""
        ...

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        """The configuration files the resolver needs, read before anything else."""
        ...

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Resolver:
        """The resolver for one test, given the configuration files' texts (a file that
        could not be read is absent)."""
        ...

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """The stems by which an import of this language names `path` (`Unplaced`): "a/b"
        for `a/b.py` and `a/b/__init__.py`; None when this language does not report what its
        imports leave out, or when `path` is configuration whose removal may move where any
        import resolves (then no removed file is ruled out)."""
        ...

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """Of the configuration files read (`configs`), those that steer how this test's
        imports resolve or what runs for it, and any file they name that steers it too (a
        tsconfig's `extends`): not another package's manifest read on the way."""
        ...
