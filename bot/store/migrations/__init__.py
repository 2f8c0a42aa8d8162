"""Ordered SQL migration files, one folder per backend dialect."""

from __future__ import annotations

from importlib import resources


def migration_files(dialect: str) -> list[tuple[int, str, str]]:
    """(version, name, sql) for every `NNNN_name.sql` of a dialect, in order."""
    folder = resources.files(__package__).joinpath(dialect)
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)
