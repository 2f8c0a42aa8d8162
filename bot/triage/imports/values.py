"""What a parsed configuration file (TOML, JSON) holds at a key, in the shape wanted: a file
written by hand may hold anything anywhere, and a value of the wrong shape says nothing."""

from __future__ import annotations

from typing import Any


def table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def strings(value: object) -> list[str]:
    """A string alone or a list's strings."""
    if isinstance(value, str):
        return [value]
    return [item for item in items(value) if isinstance(item, str)]


def at(value: object, *keys: str) -> object:
    """What the nested tables hold at `keys` (`at(data, "tool", "pytest")`), or None."""
    for key in keys:
        value = table(value).get(key)
    return value
