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
change that matters. `scripts` is listed although `scripts.test` can change how tests run:
like a lockfile, that can break any test, and the risky-path caveat says so.

Not compared: tsconfig files (every compiler option can change whether a test compiles),
pyproject.toml and Cargo.toml (a package reads its own version at run time through
`importlib.metadata` or `env!("CARGO_PKG_VERSION")`, so even `version` reaches the test),
go.mod, .csproj files: any change to them counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from bot.shared import Source

# Fields a package manager reads for publishing, describing or running scripts only.
_INERT: Mapping[str, frozenset[str]] = {
    "package.json": frozenset(
        {
            "version", "description", "keywords", "author", "contributors", "maintainers",
            "license", "repository", "homepage", "bugs", "funding", "private",
            "publishConfig", "files", "scripts",
        }
    ),
    "composer.json": frozenset(
        {
            "version", "description", "keywords", "homepage", "readme", "time", "license",
            "authors", "support", "funding", "scripts", "scripts-descriptions",
        }
    ),
}  # fmt: skip
COMPARED = frozenset(_INERT)


def compared(path: str) -> bool:
    """Whether `path` is a manifest whose fields `inert_change` compares."""
    return path.rpartition("/")[2] in COMPARED


def inert_change(path: str, before: Source | None, after: Source | None) -> str | None:
    """The fields that changed, as the evidence names them ("its scripts and version
    fields"; "its formatting" when none did), when none of them can steer resolution; None
    when one can, or when that cannot be told (module doc)."""
    inert = _INERT.get(path.rpartition("/")[2])
    if inert is None or not isinstance(before, str) or not isinstance(after, str):
        return None
    old, new = _object(before), _object(after)
    if old is None or new is None:
        return None
    changed = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
    if any(key not in inert for key in changed):
        return None
    if not changed:
        return "its formatting"
    named = changed[0] if len(changed) == 1 else f"{', '.join(changed[:-1])} and {changed[-1]}"
    return f"its {named} {'field' if len(changed) == 1 else 'fields'}"


def _object(text: str) -> dict[str, object] | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
