"""package.json, composer.json and .NET Core 1.0's project.json: their top-level fields, base
against head, as parsed.

A package.json or composer.json steers resolution (`main`, `exports`, `imports`,
`workspaces`, `autoload`, ...). A change to its other fields, its `version` or `scripts` say,
cannot change what the test's imports find. The answer is "only fields that cannot steer
resolution changed" only when both versions parse as JSON objects and every field that
differs is in the file's list below. `scripts` is listed although `scripts.test` can change
how tests run, and so are the dependency fields (a version bump): like a lockfile, such a
change can break any test, and the caveat says so; it does not change which of the
repository's files an import finds. A package.json whose `workspaces` only gained entries
steers nothing for a test whose walk (at the head, where the new packages already are)
reached no file under them. A dependency given by a local path or a workspace
(`workspace:*`, `file:../x`, `link:`, `portal:`) does: a changed entry that names one,
before or after, counts.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Collection, Mapping

from bot.triage.imports.tools import ASSEMBLY_METADATA
from bot.triage.manifests.wording import its

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
    # .NET Core 1.0's project.json (2016-2017): NuGet's packing options.
    "project.json": frozenset({"packOptions"}),
}  # fmt: skip
# Fields compiled into the assembly as attributes only reflection reads: inert when the
# failed tests' walks found no code that may read them (`tools.ASSEMBLY_METADATA`), as an
# MSBuild project's `Version` and `Description` (msbuild.py).
_METADATA: Mapping[str, frozenset[str]] = {
    "project.json": frozenset({"version", "title", "description", "copyright", "authors"}),
}
# Dependency specifications that point into the repository rather than at a registry.
_LOCAL = ("workspace:", "file:", "link:", "portal:", ".", "/")
NAMES = frozenset(_INERT)
WORKSPACES = "workspaces"


def inert(
    path: str,
    before: str,
    after: str,
    reached: Collection[str] | None,
    tools: Collection[str] | None = None,
) -> str | None:
    """The fields that changed ("its scripts and version fields"), when none of them can
    steer resolution; None when one can, or when that cannot be told (module doc).
    `reached`: the failed tests' files and every repository file their walks reached, for a
    package.json whose `workspaces` only gained entries: packages added there steer nothing
    a test reaches (`_added_packages`); unknown (None), such a change counts. `tools`: what
    the walks' code may read (`imports/tools.py`), for a project.json's metadata."""
    name = path.rpartition("/")[2]
    old, new = _object(before), _object(after)
    if old is None or new is None:
        return None
    listed = _INERT[name]
    if tools is not None and ASSEMBLY_METADATA not in tools:
        listed |= _METADATA.get(name, frozenset())
    changed = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
    steering = [k for k in changed if k not in listed or _local(old.get(k), new.get(k))]
    added = None
    if steering == [WORKSPACES] and name == "package.json" and reached is not None:
        added = _added_packages(path, old.get(WORKSPACES), new.get(WORKSPACES), reached)
    if steering and added is None:
        return None
    said = its(changed, "field")
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
