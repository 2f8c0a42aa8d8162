"""Which changed paths a failed test could import at all: pure, no I/O.

The verdict says "unrelated" only when no strong hit is possible (`verdict.py`). A walk of
the test's imports that was cut short (or not made) cannot rule out a changed file the walk
would have read; but some changes no test of that language can import, whatever its
imports are:

- documentation: ``*.md``, ``*.rst``, ``*.adoc``, ``*.txt`` (but not ``requirements*.txt``,
  ``constraints*.txt`` nor ``CMakeLists.txt``, which build or install), anything under a
  top-level ``docs/`` or ``doc/`` folder, ``LICENSE*``, ``README*``, ``CHANGELOG*`` and
  the like, and images;
- a source file of another language than the test's: the languages are the `sources` of
  `imports.languages.LANGUAGES` plus `OTHER_LANGUAGES` below, a JavaScript test's family
  covering TypeScript and a Java test's Kotlin and Scala. Native code (C, C++, Rust,
  Cython, Fortran, ...) is never ruled out this way: it is built into Python extensions,
  Node addons, cgo and JNI libraries that tests of any language load;
- code in another project of the repository: a project is the folder of the nearest
  project marker up from a path (`PROJECT_MARKERS`: package.json, go.mod, pyproject.toml,
  Cargo.toml, pom.xml, build.gradle, *.csproj, ...). Two paths are in other projects when
  neither's project folder holds the other's (a root project holds its sub-projects, which
  it may import). This needs the commit's file list; without one the clause is skipped.
  A project that imports a sibling project by package name (a workspace dependency) is not
  seen: map it in `footprints` in `.github/flaky.yml`.

A test file no language of the walk reads, and a changed path of no known kind, count as
importable: unsure means "could".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bot.triage.imports.languages import language_of

DOC_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".rdoc", ".txt")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".bmp")
DOC_FOLDERS = frozenset({"docs", "doc"})
# Files whose name starts with one of these, in any folder, are the project's prose.
_DOC_NAMES = re.compile(
    r"^(?:LICEN[CS]E|COPYING|NOTICE|AUTHORS|CONTRIBUTORS|CHANGELOG|CHANGES|HISTORY|NEWS|"
    r"README|CONTRIBUTING|CODE_OF_CONDUCT|SECURITY|CODEOWNERS)(?:[.\-_].*)?$",
    re.IGNORECASE,
)
# `.txt` files that build or install rather than document.
_NOT_DOCS = re.compile(r"^(?:requirements.*|constraints.*|CMakeLists)\.txt$", re.IGNORECASE)

# Language families besides the walk's own (`LANGUAGES`): a test of one family imports no
# source of another. Each family lists every suffix its tests can import.
OTHER_LANGUAGES: tuple[tuple[str, ...], ...] = (
    (".py", ".pyi"),
    (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
    (".go",),
    (".java", ".kt", ".kts", ".scala", ".groovy"),
    (".rb",),
    (".php",),
    (".cs", ".fs", ".vb"),
    (".swift",),
    (".ex", ".exs", ".erl", ".hrl"),
    (".dart",),
    (".lua",),
    (".pl", ".pm"),
)
# Built into extensions and native libraries that tests of any language load.
NATIVE_SUFFIXES = (
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".m", ".mm", ".rs",
    ".pyx", ".pxd", ".f", ".f90", ".for", ".zig", ".s", ".asm", ".cu",
)  # fmt: skip

# A folder holding one of these (or a file matching `_MARKER_SUFFIXES`) is a project.
PROJECT_MARKERS = frozenset(
    {
        "package.json", "go.mod", "pyproject.toml", "setup.py", "setup.cfg", "Cargo.toml",
        "pom.xml", "build.gradle", "build.gradle.kts", "composer.json", "Gemfile",
        "mix.exs", "Package.swift", "pubspec.yaml",
    }
)  # fmt: skip
_MARKER_SUFFIXES = (".csproj", ".fsproj", ".vbproj", ".gemspec")


def is_documentation(path: str) -> bool:
    """Prose and pictures: no test imports them (module doc)."""
    folders, _, name = path.rpartition("/")
    if path.split("/", 1)[0] in DOC_FOLDERS and folders:
        return True
    lowered = name.lower()
    if lowered.endswith(IMAGE_SUFFIXES) or _DOC_NAMES.match(name):
        return True
    return lowered.endswith(DOC_SUFFIXES) and not _NOT_DOCS.match(name)


def family(path: str) -> tuple[str, ...] | None:
    """Every suffix a test of `path`'s language can import, or None when `path` is of no
    known language (or native code, which any language can load)."""
    if path.endswith(NATIVE_SUFFIXES):
        return None
    walked = language_of(path)
    own = walked.sources if walked is not None and path.endswith(walked.sources) else ()
    for suffixes in OTHER_LANGUAGES:
        if path.endswith(suffixes):
            return tuple(dict.fromkeys((*own, *suffixes)))
    return own or None


def project_markers(paths: Iterable[str]) -> tuple[str, ...]:
    """The project markers in a commit's file list (module doc)."""
    return tuple(
        path
        for path in paths
        if path.rpartition("/")[2] in PROJECT_MARKERS or path.endswith(_MARKER_SUFFIXES)
    )


def project_of(path: str, markers: Sequence[str]) -> str | None:
    """The folder ("" for the root, else ending in "/") of the nearest project marker up
    from `path`, or None when no marker is above it."""
    folders = {marker.rpartition("/")[0] for marker in markers}
    parts = path.split("/")[:-1]
    for depth in range(len(parts), -1, -1):
        folder = "/".join(parts[:depth])
        if folder in folders:
            return folder + "/" if folder else ""
    return None


def other_project(test_file: str, changed_path: str, markers: Sequence[str]) -> bool:
    """Whether the two paths are in projects neither of which holds the other."""
    tested, changed = project_of(test_file, markers), project_of(changed_path, markers)
    if tested is None or changed is None:
        return False
    return not (tested.startswith(changed) or changed.startswith(tested))


def could_import(test_file: str, changed_path: str, markers: Sequence[str] | None = None) -> bool:
    """Whether the test could import (or otherwise run) `changed_path`: False for
    documentation, another language's source, or code of another project (module doc).
    `markers` are the commit's project markers (`project_markers`); None skips that clause."""
    if is_documentation(changed_path):
        return False
    tested, changed = family(test_file), family(changed_path)
    if tested is not None and changed is not None and not changed_path.endswith(tested):
        return False
    return markers is None or not other_project(test_file, changed_path, markers)


_PY_TEST = re.compile(r"^(?:test_.+|.+_test)\.py$")
_JS_TEST = re.compile(r"^.+\.(?:test|spec)\.[cm]?[jt]sx?$")


def sibling_test(test_file: str, changed_path: str) -> bool:
    """Whether `changed_path` is another test file of the same language (Python or
    JavaScript/TypeScript) in the test's own folder: such test files do not depend on each
    other unless one imports the other, which the walk sees."""
    folder, _, name = test_file.rpartition("/")
    other_folder, _, other = changed_path.rpartition("/")
    if folder != other_folder or name == other:
        return False
    return any(rule.match(name) and rule.match(other) for rule in (_PY_TEST, _JS_TEST))
