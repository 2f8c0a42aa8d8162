"""Whether a file the pull request removed (or renamed away) could be what an import of a
test's complete closure named at the base commit: no I/O here.

The walk of the head commit cannot see an import of a file that is not there: `import foo`
after `foo.py` was deleted looks like the standard library's, `require "x"` like a gem's, a
Go package path of an emptied folder like another module's. So each resolver reports such
imports (`Unplaced`) with the stems they could have named in a tree with more files, under
every place the language looks (Python's source roots, a Go module's folder, a JVM class's
path at any depth, ...), and those a removed file could have changed although they found a
file (a Python package whose `__init__.py` is gone, a JavaScript path that found `x.js` where
`x.ts` was first). A removed file is named when one of its stems (`Language.removed_stems`:
"a/b" for `a/b.py`), or its folder ("a/"), is among them: as written, or, for a stem kept
as "**/tail", as its tail at any depth; "**" names everything.

Only a complete walk's stems say that nothing names a file, and only when the language
reports them (`ImportWalk.unplaced`) and no configuration of the language that moves where
imports resolve is gone too (a removed `go.mod`, `pyproject.toml`, `package.json`: then
the stems of the base commit are not those of the head). A language may report stems for
its configuration too (Rust: the Cargo.toml files of the test's build, `rust.py`): then
only a removed one that they name keeps every removed file open, and one they do not name
(another crate's, removed or renamed whole) is ruled out with its files.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.triage.imports.language import ANYWHERE, EVERYTHING, Language
from bot.triage.imports.walk import ImportWalk


def could_be_named(walk: ImportWalk, language: Language, path: str, gone: Iterable[str]) -> bool:
    """Whether an import of the walk's closure could have named `path`, a file gone at
    the head commit; `gone` every changed path gone at the head (module doc). True
    whenever that cannot be told."""
    stems = walk.unplaced
    own = language.removed_stems(path)
    if walk.partial or walk.skipped or stems is None or own is None or EVERYTHING in stems:
        return True
    kept = frozenset(stems)
    if any(_moves_imports(language, other, kept) for other in gone):
        return True
    return _names(language, path, kept)


def _names(language: Language, path: str, kept: frozenset[str]) -> bool:
    """Whether a stem kept names `path` (None stems: it cannot be told)."""
    own = language.removed_stems(path)
    if own is None:
        return True
    folder = path.rpartition("/")[0]
    return any(_named(key, kept) for key in (*own, folder + "/"))


def _moves_imports(language: Language, gone: str, kept: frozenset[str]) -> bool:
    """Whether a file gone at the head is configuration that may have moved where the
    closure's imports resolve at the base commit: one whose stems the language does not
    report (None: a go.mod, a package.json), or one it reports and the closure names (a
    Cargo.toml of the test's build)."""
    own = language.removed_stems(gone)
    if own is None:
        return True
    return (
        bool(language.configs) and gone.endswith(language.configs) and _names(language, gone, kept)
    )


def _named(key: str, stems: frozenset[str]) -> bool:
    """Whether `key` is a stem kept as written, or a tail of it is kept as `**/tail`."""
    if key in stems:
        return True
    parts = key.split("/")
    return any(
        tail and ANYWHERE + tail in stems
        for tail in ("/".join(parts[index:]) for index in range(len(parts)))
    )
