"""A failing test's real dependencies, read from its source: pure functions, no I/O."""

from bot.shared import Source, Tree, TreeFile, Unreadable
from bot.triage.imports.walk import ImportWalk, Reached, WalkLimits, walk

__all__ = [
    "ImportWalk",
    "Reached",
    "Source",
    "Tree",
    "TreeFile",
    "Unreadable",
    "WalkLimits",
    "walk",
]
