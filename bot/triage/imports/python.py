"""What a Python file imports, read with `ast` (the file is parsed, never run)."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class ImportRef:
    """One imported name: `import a.b` is ImportRef("a.b"); `from ..a import b, c` is
    ImportRef("a", level=2, names=("b", "c")), whose names may be submodules."""

    module: str
    level: int = 0
    names: tuple[str, ...] = ()

    def written(self) -> str:
        """The module as the source spells it: `a.b`, `.a`, `..`."""
        return "." * self.level + self.module


def imports_of(source: str) -> list[ImportRef] | None:
    """Every import statement in the file, at any nesting (inside functions, `try`, `if
    TYPE_CHECKING`: over-counting costs a wider footprint, missing one a false "unrelated");
    None when the file is not valid Python."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: list[ImportRef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(ImportRef(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            found.append(ImportRef(node.module or "", level=node.level, names=names))
    return found
