"""What a parsed configuration file (TOML, JSON) holds at a key, in the shape wanted: a file
written by hand may hold anything anywhere, and a value of the wrong shape says nothing."""

from __future__ import annotations

import re
import tomllib
from typing import Any

# tomllib's time grows with the square of a dotted key's parts (`a.a.a... = 1`: 64 KB of
# them take 20 s), so a key of this many parts makes the file unread; no real one has them.
# Anchored at a word's start and bounded, the search is one pass over the text.
_LONG_KEY = re.compile(
    r"(?<![\w\-\\\"'])(?:(?:[\w-]++|\"[^\"\n]*+\"|'[^'\n]*+')[ \t]*+\.[ \t]*+){64}"
)


def loads_toml(text: str) -> dict[str, Any] | None:
    """A TOML file's tables; None when it is not valid TOML or holds a key too long to read
    in linear time."""
    if _LONG_KEY.search(text):
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeError, RecursionError):
        return None


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
