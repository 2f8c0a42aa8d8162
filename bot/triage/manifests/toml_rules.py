"""A TOML manifest (or a JSON one: tsconfig.py) compared key by key against rules saying
which of its parts cannot steer what a test compiles or reads (cargo.py, pyproject.py list
them): a rule is INERT, COUNTS,
a `Table` of rules by key (with one for the keys it does not list), a `Tool`'s settings
(inert unless a failed test may run the tool), `Dependencies` (a table
of dependency specifications by name: Cargo's, Poetry's) or `Requirements` (a list of
PEP 508 strings) or `Untested` (Cargo's bench and example targets). Any part a rule does
not cover counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.triage.imports import values
from bot.triage.manifests.wording import its

INERT = "inert"
COUNTS = "counts"
# A PEP 508 requirement by name (extras allowed), then nothing, a version specifier or
# markers: not a direct reference (`name @ file:///...`, `name @ git+https://...`), nor a
# path or anything else an installer may take for one.
_NAMED = re.compile(
    r"[ \t]*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?[ \t]*(?:\[[^\]]*\])?[ \t]*"
    r"(?:$|[<>=!~;(])"
)


@dataclass(frozen=True)
class Table:
    keys: Mapping[str, Rule] = field(default_factory=dict)
    other: Rule = COUNTS


@dataclass(frozen=True)
class Tool:
    """The settings of a tool that no test runs but one that may run it (`runs`): inert
    unless `inert`'s `runs` says a failed test may run the tool `name`."""

    name: str


@dataclass(frozen=True)
class Dependencies:
    """Dependencies by name, each a version string or a table. An entry that changed is
    inert when only its `version` did (or it came or went as a bare version), and neither
    side names a source in the repository or outside the registry (`local` keys)."""

    local: frozenset[str]


@dataclass(frozen=True)
class Requirements:
    """PEP 508 strings: inert when every entry that came or went is a named requirement
    with no direct reference, or another dependency group included (PEP 735)."""


@dataclass(frozen=True)
class Untested:
    """Cargo's `[[bench]]` or `[[example]]` entries: inert when no entry, before or after,
    sets `test = true` (`cargo test` then builds examples only to see that they compile,
    and benches not at all: neither runs for a test of another target)."""


Rule = str | Table | Tool | Dependencies | Requirements | Untested


def inert(
    rules: Table, before: str, after: str, runs: Callable[[str], bool] | None = None
) -> str | None:
    """The parts that changed ("its dependencies and tool.ruff fields") when the rules say
    none can steer; None when one can, or a version is not a TOML table. `runs`: whether a
    failed test may run a tool (`Tool`); None, none does."""
    old, new = values.loads_toml(before), values.loads_toml(after)
    if old is None or new is None:
        return None
    return inert_values(rules, old, new, runs)


def inert_values(
    rules: Table, before: Any, after: Any, runs: Callable[[str], bool] | None = None
) -> str | None:
    """`inert` on two versions already parsed (a TOML table, a JSON object)."""
    found = _changes(rules, before, after, "", runs or _runs_none)
    return None if found is None else its(list(dict.fromkeys(found)), "field")


def _runs_none(tool: str) -> bool:
    return False


def _changes(
    rule: Rule, before: Any, after: Any, where: str, runs: Callable[[str], bool]
) -> list[str] | None:
    """The names of the changed parts under `where`, all inert; None when one counts."""
    if before == after:
        return []
    if rule == INERT:
        return [where]
    if isinstance(rule, Tool):
        return None if runs(rule.name) else [where]
    if isinstance(rule, Table):
        return _table(rule, before, after, where, runs)
    if isinstance(rule, Dependencies):
        return [where] if _dependencies(rule, before, after) else None
    if isinstance(rule, Requirements):
        return [where] if _requirements(before, after) else None
    if isinstance(rule, Untested):
        return [where] if _untested(before) and _untested(after) else None
    return None


def _table(
    rule: Table, before: Any, after: Any, where: str, runs: Callable[[str], bool]
) -> list[str] | None:
    old = {} if before is None else before
    new = {} if after is None else after
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    found: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        named = f"{where}.{key}" if where else key
        part = _changes(rule.keys.get(key, rule.other), old.get(key), new.get(key), named, runs)
        if part is None:
            return None
        found += part
    return found


def _dependencies(rule: Dependencies, before: Any, after: Any) -> bool:
    old = {} if before is None else before
    new = {} if after is None else after
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    for name in old.keys() | new.keys():
        if old.get(name) == new.get(name):
            continue
        was, now = _entry(old.get(name)), _entry(new.get(name))
        if was is None or now is None or rule.local & (was.keys() | now.keys()):
            return False
        if not was or not now:
            # One that came or went with its default features off turns on no more of a
            # shared dependency's features than a bare version does.
            for entry in (was, now):
                for key in _NO_DEFAULTS:
                    if entry.get(key) is False:
                        del entry[key]
        was.pop("version", None)
        now.pop("version", None)
        if was != now:
            return False
    return True


_NO_DEFAULTS = ("default-features", "default_features")


def _entry(spec: Any) -> dict[str, Any] | None:
    """A dependency as a table: "1.2" is {"version": "1.2"}, none is {}."""
    if spec is None:
        return {}
    if isinstance(spec, str):
        return {"version": spec}
    return dict(spec) if isinstance(spec, dict) else None


def _requirements(before: Any, after: Any) -> bool:
    old = [] if before is None else before
    new = [] if after is None else after
    if not isinstance(old, list) or not isinstance(new, list):
        return False
    moved = [item for item in old if item not in new] + [item for item in new if item not in old]
    return all(_included_group(i) or (isinstance(i, str) and _registry(i)) for i in moved)


def _included_group(item: Any) -> bool:
    """PEP 735's `{include-group = "tests"}`: another group's requirements, each compared
    where that group is."""
    return isinstance(item, dict) and list(item) == ["include-group"]


def _untested(targets: Any) -> bool:
    entries = [] if targets is None else targets
    return isinstance(entries, list) and all(
        isinstance(entry, dict) and entry.get("test") is not True for entry in entries
    )


def _registry(requirement: str) -> bool:
    """A named requirement, from the package index: no `@` direct reference."""
    return _NAMED.match(requirement) is not None
