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

Near the test (in its folder, beside its pair), two kinds of changed file are not even weak
evidence once the test's imports are walked (`near_but_no_evidence`):

- another test file of the same runner (`other_test_file`: `test_*.py`, `*.test.ts`,
  `*_spec.rb`, `OrderTest.java`, ...; a type test too, `*.test-d.ts` or TSTyche's
  `*.tst.ts`, which its own runner checks on its own): the runner starts each test file on
  its own, and one test file that imports another is seen by the walk (a strong hit).
  Setup files that run for every test (`conftest.py`, `spec_helper.rb`, `test_helper.rb`,
  jest's setup files) are not test files: the walk reads the ones that run for the test,
  and the rest are risky (`risky.py`). A Go test file in the test's own folder is compiled
  with it: never "other".
- prose (`is_prose`): a README, CHANGELOG or other Markdown, reStructuredText or AsciiDoc
  page, unless it sits in a folder of test data (`fixtures/`, `testdata/`, snapshots), where
  a test may read it. Plain `.txt` files and pictures near a test stay weak evidence: tests
  read expected outputs and images at run time.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.triage.imports.languages import language_of

# Each failure of a job asks about every changed path, and a PR may change thousands: the
# answers about one path are kept (pure functions of a string).
_CACHED = 16_384

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


@lru_cache(maxsize=_CACHED)
def is_documentation(path: str) -> bool:
    """Prose and pictures: no test imports them (module doc)."""
    folders, _, name = path.rpartition("/")
    if path.split("/", 1)[0] in DOC_FOLDERS and folders:
        return True
    lowered = name.lower()
    if lowered.endswith(IMAGE_SUFFIXES) or _named_as_prose(name):
        return True
    return lowered.endswith(DOC_SUFFIXES) and not _NOT_DOCS.match(name)


def _named_as_prose(name: str) -> bool:
    """`LICENSE`, `CHANGELOG.md`, `COPYING.LESSER`, but not `history.py` nor `security.ts`:
    a source file named like a page of prose is code."""
    if not _DOC_NAMES.match(name):
        return False
    _, dot, suffix = name.rpartition(".")
    return not dot or f".{suffix.lower()}" in DOC_SUFFIXES or suffix.isupper()


@lru_cache(maxsize=_CACHED)
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


# Test files by the naming conventions of the runners the walk reads (module doc).
_TEST_FILE = re.compile(
    r"^(?:test_.+\.py|.+_test\.(?:py|go|rb)|.+_spec\.rb|test_.+\.rb"
    r"|.+\.(?:test|spec)\.[cm]?[jt]sx?|.+\.(?:(?:test|spec)-d|tst)\.[cm]?[jt]sx?"
    r"|[A-Z]\w*(?:Tests?|Spec|IT)\.(?:java|kt|scala|groovy|php|cs))$"
)
# Named like a test file, but run for every test: setup, not a test.
_SETUP = re.compile(r"^(?:test|spec)_helper\.rb$")
_GO_TEST = "_test.go"
PROSE_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".rdoc")
# Folders whose files tests read at run time: prose there is test data.
DATA_FOLDERS = frozenset(
    {"testdata", "test-data", "test_data", "fixtures", "__fixtures__", "__snapshots__",
     "snapshots", "golden", "data", "resources"}
)  # fmt: skip


@lru_cache(maxsize=_CACHED)
def is_test_file(path: str) -> bool:
    """Whether `path` is named as a test runner names its test files (module doc)."""
    name = path.rpartition("/")[2]
    return bool(_TEST_FILE.match(name)) and not _SETUP.match(name)


def other_test_file(test_file: str, changed_path: str) -> bool:
    """Whether `changed_path` is another test file of `test_file`'s runner (its language
    family), in any folder: one test file does not depend on another unless it imports it,
    which the walk sees. A Go test file of the same folder is the same package."""
    tested = family(test_file)
    if changed_path == test_file or tested is None or not changed_path.endswith(tested):
        return False
    if not (is_test_file(test_file) and is_test_file(changed_path)):
        return False
    same_folder = test_file.rpartition("/")[0] == changed_path.rpartition("/")[0]
    return not (same_folder and changed_path.endswith(_GO_TEST))


def is_prose(path: str) -> bool:
    """A README, CHANGELOG or other page of prose, outside any folder of test data."""
    folders = path.split("/")[:-1]
    if DATA_FOLDERS.intersection(folders):
        return False
    name = path.rpartition("/")[2]
    return name.lower().endswith(PROSE_SUFFIXES) or _named_as_prose(name)


def near_but_no_evidence(test_file: str, changed_path: str) -> bool:
    """A changed file near a walked test that is no evidence at all (module doc)."""
    return other_test_file(test_file, changed_path) or is_prose(changed_path)
