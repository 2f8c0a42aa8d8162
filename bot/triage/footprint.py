"""The paths a failed test depends on, and which changed paths fall inside them.

A footprint entry is one of three kinds of repo-relative POSIX path:

- a file, matched exactly: ``tests/bus/test_core.py``;
- a directory ending in ``/``, matching every path under it: ``tests/bus/``; a Go
  package's directory (reason ``Go package``) matches only the files directly in it and
  under its ``testdata/``;
- a pattern starting with ``**/``, matching that tail anywhere in the tree:
  ``**/bus/core.py`` matches ``bus/core.py`` and ``src/bus/core.py`` but not
  ``core.py`` or ``src/core.py``.

Conventional pair rule: the pair of a test file is its name with the test
affix removed (``test_core.py`` -> ``core.py``, ``core.test.ts`` -> ``core.ts``,
``CoreTest.java`` -> ``Core.java``), under the test's directory with everything
up to and including the last test-root directory (``tests``, ``test``,
``__tests__``, ...) dropped, at any depth. So ``tests/bus/test_core.py`` pairs
with ``**/bus/core.py`` and ``tests/test_core.py`` with ``**/core.py``. Patterns
over-match rather than under-match on purpose: a wrong "related" costs a
reviewer a look, a wrong "unrelated" costs their trust.

Also in a footprint: the ``testdata/`` folders of the directories above the
test's own, up to the test tree's root (``tests/unit/test_a.py`` reads
``tests/testdata/``); for a test under ``__tests__/``, the folder holding
that ``__tests__/`` (the modules it tests sit beside it); for a Go test, its
package's directory: its test file's folder when known, and from the import path in
its id (the repo directory is some tail of ``github.com/acme/bus/pkg/foo``, so each
tail is a directory entry); and the repo's own mappings from ``.github/flaky.yml`` (``footprints``:
a glob on the test file -> globs of what such tests depend on, gitignore-style,
``**`` being everything), kept as glob entries.

Read from the code (``bot/triage/imports``), when the handler could walk the test's
imports: every repository file the test imports, at any depth reached, and every file
that runs for it (a ``conftest.py``, a setup file, its package's files), each file entry
carrying its import chain; and every configuration file that steers how its imports
resolve (``ImportWalk.configs``: the tsconfig files consulted and what they extend,
package.json files, jest/vitest/vite configurations, go.mod, pyproject.toml, composer.json,
Cargo.toml, .csproj, ...), ahead of the same file reached by an import (a workspace
package's package.json), with that import's chain when there is one.

Each entry has a strength (``FootprintEntry.strength``, decided in one place:
``models.WEAK_REASONS``). Strong, what the test's run reads for certain: the test file,
its traceback frames, what it imports and what runs for it, the configuration that steers
its imports, the Go package from its id (the package's files are compiled with the test),
and the repo's ``footprints`` mappings.
Weak, guesses from names and folders: the test's directory, the conventional pair (an
imported pair is a strong entry too, and strong entries come first), ``testdata/``
folders, the folder a ``__tests__`` tests. Only a strong hit makes a failure related
(``verdict.py``); a weak one is a caveat.
A failure that names no test file (a Go package's test, a JVM class) has, as its test file,
the file the handler found for it in the commit's tree (the walk's own test file); so does one
whose printed file is not in the tree but was placed there by its suffix (`placement.py`).

Paths that are absolute or climb out of the repo (a ``..`` segment) are not
repo paths: they never enter a footprint and never match one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.triage.globs import glob_matches
from bot.triage.imports import ImportWalk
from bot.triage.imports.golang import go_import_path
from bot.triage.imports.languages import language_of
from bot.triage.imports.locate import locating_language
from bot.triage.models import Failure, Footprint, FootprintEntry, Reason, Strength

REASON_TEST_FILE = Reason.TEST_FILE
REASON_TRACEBACK = Reason.TRACEBACK
REASON_PAIR = Reason.PAIR
REASON_DIRECTORY = Reason.DIRECTORY
REASON_TESTDATA = Reason.TESTDATA
REASON_TESTS_FOLDER = Reason.TESTS_FOLDER
REASON_GO_PACKAGE = Reason.GO_PACKAGE
REASON_CONFIG = Reason.CONFIG
REASON_IMPORTED = Reason.IMPORTED
REASON_RUNS = Reason.RUNS
REASON_RESOLVES = Reason.RESOLVES

PATTERN_PREFIX = "**/"
# The distinct test files whose imports a mass failure's walk follows (`mass_walk`).
MASS_WALK_FILES = 20

_TEST_ROOTS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
_TESTDATA = "testdata"
_GO_FRAMEWORK = "go"
# A segment that names a host ("github.com") starts an import path, never a repo directory.
_HOST = re.compile(r"^[\w-]+(?:\.[\w-]+)+$")

# (test file name, its pair's name): first match wins.
_PAIR_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^test_(?P<stem>.+)\.py$"), r"\g<stem>.py"),
    (re.compile(r"^(?P<stem>.+)_test\.(?P<ext>py|go|rb)$"), r"\g<stem>.\g<ext>"),
    (re.compile(r"^(?P<stem>.+)_spec\.rb$"), r"\g<stem>.rb"),
    (
        re.compile(r"^(?P<stem>.+)\.(?:test|spec)\.(?P<ext>[cm]?[jt]sx?)$"),
        r"\g<stem>.\g<ext>",
    ),
    (re.compile(r"^(?P<stem>[A-Z]\w*?)Tests?\.(?P<ext>java|kt|scala|cs)$"), r"\g<stem>.\g<ext>"),
)


def normalise_path(path: str) -> str | None:
    """The path in canonical repo-relative form, or None when it is not a repo path.

    Drops ``.`` and empty segments; keeps a trailing ``/`` (a directory). Refuses
    absolute paths, ``..`` segments and NUL bytes rather than resolving them.
    """
    if not path or path.startswith("/") or "\x00" in path:
        return None
    segments = path.split("/")
    if ".." in segments:
        return None
    kept = [segment for segment in segments if segment not in ("", ".")]
    if not kept:
        return None
    joined = "/".join(kept)
    return joined + "/" if path.endswith("/") else joined


def locate_test_file(failure: Failure) -> str | None:
    """The failure's test file: its own ``file``, else the path part of a
    ``path::name`` test id (pytest, and most parsers that follow it)."""
    if failure.file:
        return normalise_path(failure.file)
    head, separator, _ = failure.test_id.partition("::")
    if separator and "." in head.rsplit("/", 1)[-1]:
        return normalise_path(head)
    return None


def walk_key(failure: Failure) -> str:
    """What the walk of a failure's imports is kept under: its test file, else (a Go or JVM
    failure that names none, whose file the handler finds in the commit's tree) its id."""
    return locate_test_file(failure) or failure.test_id


def pair_pattern(test_file: str) -> str | None:
    """The conventional pair of a test file as a ``**/`` pattern (see module doc)."""
    directory, _, name = test_file.rpartition("/")
    for rule, replacement in _PAIR_RULES:
        if rule.match(name):
            paired = rule.sub(replacement, name)
            break
    else:
        return None
    parts = directory.split("/") if directory else []
    roots = [index for index, part in enumerate(parts) if part in _TEST_ROOTS]
    tail = parts[roots[-1] + 1 :] if roots else parts
    return PATTERN_PREFIX + "/".join([*tail, paired])


def footprint(
    failure: Failure,
    mappings: Mapping[str, Sequence[str]] | None = None,
    imports: ImportWalk | None = None,
) -> Footprint:
    """Every path the failed test depends on, strongest evidence first.

    `mappings` is the repo's `footprints` setting; `imports` the walk of the test file's
    imports, when there was one. A path reached by two routes keeps its first (strongest)
    reason.
    """
    candidates: list[FootprintEntry] = []
    test_file = locate_test_file(failure)
    # Found in the commit's tree (walk_key), or placed there: by a Go module path, or by the
    # suffix it was printed with (jest run in a workspace package prints `src/a.test.ts`).
    if imports is not None and (test_file is None or imports.found_by):
        test_file = imports.test_file
    if test_file is not None:
        candidates.append(FootprintEntry(path=test_file, reason=REASON_TEST_FILE))
    for raw in failure.trace_paths:
        path = normalise_path(raw)
        if path is not None:
            candidates.append(FootprintEntry(path=path, reason=REASON_TRACEBACK))
    if imports is not None and imports.test_file == test_file:
        candidates.extend(_walked(imports))
    if test_file is not None:
        candidates.extend(_conventional(test_file))
    if failure.framework == _GO_FRAMEWORK:
        candidates.extend(_go_package(failure, test_file))
    if test_file is not None and mappings:
        candidates.extend(_mapped(test_file, mappings))
    seen: set[str] = set()
    entries: list[FootprintEntry] = []
    # Strong before weak (the sort is stable): a changed path is matched by its first entry.
    for entry in sorted(candidates, key=lambda entry: entry.strength is Strength.WEAK):
        if entry.path not in seen:
            seen.add(entry.path)
            entries.append(entry)
    return Footprint(test_id=failure.test_id, entries=entries)


def _walked(imports: ImportWalk) -> list[FootprintEntry]:
    """The configuration that steers the walk, then the files it reached; an imported
    file's `detail` says what runs for the test at its chain's start when that is not the
    test file itself ("a conftest.py")."""
    runs = {reached.path: reached.why for reached in imports.reached if not reached.chain}
    chains = {reached.path: list(reached.chain) for reached in imports.reached}
    configs = [
        FootprintEntry(path=path, reason=REASON_RESOLVES, chain=chains.get(path, []))
        for path in imports.configs
    ]
    return configs + [
        FootprintEntry(
            path=reached.path,
            reason=REASON_IMPORTED if reached.chain else REASON_RUNS,
            chain=list(reached.chain),
            detail=runs.get(reached.chain[0].importer, "") if reached.chain else reached.why,
            except_suffixes=list(reached.except_suffixes),
        )
        for reached in imports.reached
    ]


def _conventional(test_file: str) -> list[FootprintEntry]:
    """The pair, the package directory, the `__tests__` folder's parent, testdata folders."""
    found: list[FootprintEntry] = []
    pattern = pair_pattern(test_file)
    if pattern is not None:
        found.append(FootprintEntry(path=pattern, reason=REASON_PAIR))
    parts = test_file.split("/")[:-1]
    # A test at the repo root has no package directory: "everything" is no footprint.
    if parts:
        found.append(FootprintEntry(path="/".join(parts) + "/", reason=REASON_DIRECTORY))
    if "__tests__" in parts:
        tested = parts[: len(parts) - 1 - parts[::-1].index("__tests__")]
        if tested:
            found.append(FootprintEntry(path="/".join(tested) + "/", reason=REASON_TESTS_FOLDER))
    # The test's own directory already covers its testdata/; the folders above it, up to
    # the test tree's root (`tests/`), may hold data shared by its tests.
    roots = [index for index, part in enumerate(parts[:-1]) if part in _TEST_ROOTS]
    if roots:
        for depth in range(len(parts) - 1, roots[0], -1):
            found.append(
                FootprintEntry(
                    path="/".join([*parts[:depth], _TESTDATA]) + "/", reason=REASON_TESTDATA
                )
            )
    return found


def _go_package(failure: Failure, test_file: str | None) -> list[FootprintEntry]:
    """The Go package's directory: the test file's folder, when it is known, and each tail
    of the import path in `pkg.TestName` (or the bare package, for a package that failed
    without a test)."""
    found: list[FootprintEntry] = []
    folder = test_file.rpartition("/")[0] if test_file else ""
    if test_file and test_file.endswith("_test.go") and folder:
        found.append(FootprintEntry(path=folder + "/", reason=REASON_GO_PACKAGE))
    package = go_import_path(failure)
    if not package or normalise_path(package) != package:
        return found
    segments = package.split("/")
    start = 1 if _HOST.match(segments[0]) and len(segments) > 1 else 0
    return found + [
        FootprintEntry(path="/".join(segments[index:]) + "/", reason=REASON_GO_PACKAGE)
        for index in range(len(segments) - 1, start - 1, -1)
    ]


def _mapped(test_file: str, mappings: Mapping[str, Sequence[str]]) -> list[FootprintEntry]:
    return [
        FootprintEntry(path=target, reason=f"{REASON_CONFIG} ({source})", glob=True)
        for source, targets in mappings.items()
        if glob_matches(source, test_file)
        for target in targets
    ]


def worth_walking(
    failure: Failure, changed_paths: Sequence[str], changed_complete: bool = True
) -> str | None:
    """The failure's test file when following its imports could change the verdict, else
    None: a language of `bot/triage/imports` reads the test file; the PR changes a file such
    a test can import (its language's sources) or a configuration file of the language
    (go.mod, a .csproj: it may steer the imports), or lists only part of its changes; and
    neither the test file nor its traceback already meets the change (the verdict is
    RELATED with high confidence without the walk)."""
    test_file = locate_test_file(failure)
    language = None if test_file is None else language_of(test_file)
    if test_file is None or language is None:
        return None
    readable = (*language.sources, *language.configs)
    if changed_complete and not any(p.endswith(readable) for p in changed_paths):
        return None
    found = matches(footprint(failure), changed_paths)
    if any(entry.reason in (REASON_TEST_FILE, REASON_TRACEBACK) for _, entry in found):
        return None
    return test_file


@dataclass(frozen=True)
class WalkPlan:
    """A failure whose imports the handler reads: from `test_file`, or, when the failure
    names none, from the file `imports.locate.locate_in_tree` finds. A plan with `skip`
    only locates the file (one tree read, no file read): its footprint would be empty
    without it, and nothing the PR changes could be imported, so the walk could not change
    the verdict."""

    failure: Failure
    test_file: str | None
    skip: str = ""

    @property
    def key(self) -> str:
        return walk_key(self.failure)


def plan_walk(
    failure: Failure, changed_paths: Sequence[str], changed_complete: bool = True
) -> WalkPlan | None:
    """What the handler reads for this failure, if anything: `worth_walking` for a failure
    that names its test file; for one that does not but whose language can find it in the
    tree (a Go package, a JVM class), the walk when the PR changes a file of that language
    (or lists only part of its changes), and only the file when no other rule gives the
    test a footprint."""
    known = locate_test_file(failure)
    if known is not None:
        test_file = worth_walking(failure, changed_paths, changed_complete)
        return WalkPlan(failure, test_file) if test_file else None
    language = locating_language(failure)
    if language is None:
        return None
    rules = footprint(failure)
    if any(entry.reason == REASON_TRACEBACK for _, entry in matches(rules, changed_paths)):
        return None
    readable = (*language.sources, *language.configs)
    if not changed_complete or any(p.endswith(readable) for p in changed_paths):
        return WalkPlan(failure, None)
    if rules.entries:
        return None
    return WalkPlan(failure, None, f"this PR changes no {language.name} file")


def mass_walk(
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    changed_complete: bool = True,
    budget: int = MASS_WALK_FILES,
) -> list[Failure]:
    """The failures of a mass failure whose imports are followed: those `plan_walk` would
    read, from their first `budget` distinct test files (a test file's other failures come
    with it). A real regression among many failures with one message is then found related;
    the others stay unknown (`verdict.decide_extraction`)."""
    files: set[str] = set()
    chosen: list[Failure] = []
    for failure in failures:
        plan = plan_walk(failure, changed_paths, changed_complete)
        if plan is None or (plan.key not in files and len(files) >= budget):
            continue
        files.add(plan.key)
        chosen.append(failure)
    return chosen


def describe_chain(entry: FootprintEntry, show: Callable[[str], str] = str) -> str:
    """The import chain that puts a file in the footprint: "tests/test_invoice.py imports
    billing.tax (src/billing/tax.py)", each further hop ", which imports ...". `show`
    formats each path and module (the comment makes them code spans)."""
    if not entry.chain:
        return f"{show(entry.path)} is {entry.detail or 'a file'} that runs for the test"
    first, *rest = entry.chain
    runs = f" ({entry.detail} that runs for the test)" if entry.detail else ""
    text = f"{show(first.importer)}{runs} imports {show(first.module)} ({show(first.path)})"
    return text + "".join(
        f", which imports {show(step.module)} ({show(step.path)})" for step in rest
    )


def entry_contains(entry: FootprintEntry, changed_path: str) -> bool:
    """Whether one footprint entry covers one (already normalised) changed path. A Go
    package's folder covers the files directly in it and its `testdata/` (which `go test`,
    run in the package's folder, reads): its other sub-folders are other packages (or other
    modules), which the test runs only if it imports them."""
    if entry.path.startswith(PATTERN_PREFIX):
        tail = entry.path.removeprefix(PATTERN_PREFIX)
        return changed_path == tail or changed_path.endswith("/" + tail)
    if entry.path.endswith("/") and entry.reason == REASON_GO_PACKAGE:
        inside = changed_path.rpartition("/")[0] + "/" == entry.path
        return inside or changed_path.startswith(entry.path + _TESTDATA + "/")
    if entry.path.endswith("/"):
        inside = changed_path.startswith(entry.path)
        return inside and not changed_path.endswith(tuple(entry.except_suffixes))
    return changed_path == entry.path


def matches(footprint: Footprint, changed_paths: Iterable[str]) -> list[tuple[str, FootprintEntry]]:
    """The changed paths inside the footprint, each with the first entry that covers it.

    Changed paths come back normalised, in their given order, each once.
    """
    found: list[tuple[str, FootprintEntry]] = []
    seen: set[str] = set()
    for raw in changed_paths:
        path = normalise_path(raw)
        if path is None or path in seen:
            continue
        seen.add(path)
        for entry in footprint.entries:
            if _covers(entry, path):
                found.append((path, entry))
                break
    return found


def _covers(entry: FootprintEntry, path: str) -> bool:
    if entry.glob:
        return glob_matches(entry.path, path)
    return _is_safe_entry(entry.path) and entry_contains(entry, path)


def _is_safe_entry(entry_path: str) -> bool:
    # Entries can be built by hand (tests, config mappings), not only by footprint().
    bare = entry_path.removeprefix(PATTERN_PREFIX)
    return normalise_path(bare) == bare
