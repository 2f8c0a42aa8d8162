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
Code in another project of the same repository is NOT ruled out: a project imports its
siblings by package name (npm, pnpm and yarn workspaces, Go `replace`, editable installs,
Cargo path dependencies), so a changed file there may sit one hop beyond a walk that was cut
short. Only a complete walk rules it out.

A test file no language of the walk reads, and a changed path of no known kind, count as
importable: unsure means "could".
"""

from __future__ import annotations

import re

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


def could_import(test_file: str, changed_path: str) -> bool:
    """Whether the test could import (or otherwise run) `changed_path`: False for
    documentation and another language's source (module doc)."""
    if is_documentation(changed_path):
        return False
    tested, changed = family(test_file), family(changed_path)
    return tested is None or changed is None or changed_path.endswith(tested)


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
