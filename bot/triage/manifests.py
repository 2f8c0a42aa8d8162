"""Whether a change to a manifest can change how a test's imports resolve: no I/O here.

A package.json or composer.json steers resolution (`main`, `exports`, `imports`,
`workspaces`, `autoload`, ...), so a test whose imports it steers depends on it
(`footprint.py`). A change to its other fields, its `version` or `scripts` say, cannot
change what the test's imports find: such a change is not a strong hit, only a caveat
(`verdict.py`), or every test importing the package would be called related by a release.

The comparison is of the top-level fields, base against head, as parsed. It answers "only
fields that cannot steer resolution changed" only when both versions parse as JSON objects
and every field that differs is in the file's list below; anything else (a file not read at
base, a file that does not parse, a field not listed, a file of another name) counts as a
change that matters. `scripts` is listed although `scripts.test` can change how tests run,
and so are the dependency fields (a version bump): like a lockfile, such a change can break
any test, and the risky-path caveat says so (package.json and composer.json are risky
paths, `risky.py`); it does not change which of the repository's files an import finds.
A package.json whose `workspaces` only gained entries steers nothing for a test whose walk
(at the head, where the new packages already are) reached no file under them.
A dependency given by a local path or a workspace (`workspace:*`, `file:../x`, `link:`,
`portal:`) does: a changed entry that names one, before or after, counts as a change that
matters.

Not compared: tsconfig files (every compiler option can change whether a test compiles),
pyproject.toml and Cargo.toml (a package reads its own version at run time through
`importlib.metadata` or `env!("CARGO_PKG_VERSION")`, so even `version` reaches the test),
go.mod, .csproj files: any change to them counts.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Collection, Mapping

from bot.shared import Source

# Fields a package manager reads for publishing, describing or running scripts only.
_INERT: Mapping[str, frozenset[str]] = {
    "package.json": frozenset(
        {
            "version", "description", "keywords", "author", "contributors", "maintainers",
            "license", "repository", "homepage", "bugs", "funding", "private",
            "publishConfig", "files", "scripts",
            "dependencies", "devDependencies", "peerDependencies", "peerDependenciesMeta",
            "optionalDependencies", "bundleDependencies", "bundledDependencies",
            "overrides", "resolutions", "engines", "packageManager",
        }
    ),
    "composer.json": frozenset(
        {
            "version", "description", "keywords", "homepage", "readme", "time", "license",
            "authors", "support", "funding", "scripts", "scripts-descriptions",
            "require", "require-dev", "suggest", "conflict",
        }
    ),
}  # fmt: skip
# Dependency specifications that point into the repository rather than at a registry.
_LOCAL = ("workspace:", "file:", "link:", "portal:", ".", "/")
COMPARED = frozenset(_INERT)
WORKSPACES = "workspaces"


def compared(path: str) -> bool:
    """Whether `path` is a manifest whose fields `inert_change` compares."""
    return path.rpartition("/")[2] in COMPARED


def inert_change(
    path: str,
    before: Source | None,
    after: Source | None,
    reached: Collection[str] | None = None,
) -> str | None:
    """The fields that changed, as the evidence names them ("its scripts and version
    fields"; "its formatting" when none did), when none of them can steer resolution; None
    when one can, or when that cannot be told (module doc). `reached`: the failed tests'
    files and every repository file their walks reached, for a package.json whose
    `workspaces` only gained entries: packages added there steer nothing a test reaches
    (`_added_packages`); unknown (None), such a change counts."""
    name = path.rpartition("/")[2]
    inert = _INERT.get(name)
    if inert is None or not isinstance(before, str) or not isinstance(after, str):
        return None
    old, new = _object(before), _object(after)
    if old is None or new is None:
        return None
    changed = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
    steering = [k for k in changed if k not in inert or _local(old.get(k), new.get(k))]
    added = None
    if steering == [WORKSPACES] and name == "package.json" and reached is not None:
        added = _added_packages(path, old.get(WORKSPACES), new.get(WORKSPACES), reached)
    if steering and added is None:
        return None
    if not changed:
        return "its formatting"
    named = changed[0] if len(changed) == 1 else f"{', '.join(changed[:-1])} and {changed[-1]}"
    said = f"its {named} {'field' if len(changed) == 1 else 'fields'}"
    return f"{said} ({added})" if added else said


def _added_packages(
    manifest: str, before: object, after: object, reached: Collection[str]
) -> str | None:
    """ "adding packages/brand, where the walk reached nothing" when `workspaces` only gained
    entries and no reached file is under one: a package added to the workspace changes what
    an import finds only for a test that reaches it (the walk, at the head, would have).
    None when an entry went (an import may now find another file) or one is reached."""
    old, new = _workspace_list(before), _workspace_list(after)
    if old is None or new is None or not set(old) <= set(new):
        return None
    added = [entry for entry in new if entry not in old]
    root = manifest.rpartition("/")[0]
    for path in reached:
        relative = path.removeprefix(root + "/") if root else path
        folders = relative.split("/")[:-1]
        prefixes = ["/".join(folders[: n + 1]) for n in range(len(folders))]
        if any(
            fnmatch.fnmatchcase(prefix, entry.strip("./")) for prefix in prefixes for entry in added
        ):
            return None
    return f"adding {', '.join(added)}, where the walk reached nothing" if added else ""


def _workspace_list(value: object) -> list[str] | None:
    """A `workspaces` field's patterns: a list, or npm/yarn's `{"packages": [...]}`."""
    if isinstance(value, dict):
        value = value.get("packages", [])
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _object(text: str) -> dict[str, object] | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _local(before: object, after: object) -> bool:
    """Whether a changed field's entries name a local path or a workspace, before or after
    (a dependency map: only the entries that changed)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = before.keys() | after.keys()
        return any(
            _local(before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)
        )
    return _local_anywhere(before) or _local_anywhere(after)


def _local_anywhere(value: object) -> bool:
    if isinstance(value, str):
        return value.startswith(_LOCAL)
    if isinstance(value, dict):
        return any(_local_anywhere(item) for item in value.values())
    if isinstance(value, list):
        return any(_local_anywhere(item) for item in value)
    return False
