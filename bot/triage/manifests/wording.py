"""How the evidence names what changed in a manifest: "its version field", "its require and
toolchain directives", "its formatting" when only comments or layout did."""

from __future__ import annotations

from collections.abc import Sequence

FORMATTING = "its formatting"


def its(names: Sequence[str], noun: str, plural: str = "") -> str:
    """ "its scripts and version fields"; `noun` singular ("field"), `plural` when it is
    not `noun` + "s" ("properties")."""
    if not names:
        return FORMATTING
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"its {listed} {noun if len(names) == 1 else plural or noun + 's'}"
