"""A decision's footprint as `flakybot demo --json` and `flakybot triage --json` print it:
what the test was found to import, how, and how far the walk went."""

from __future__ import annotations

from typing import Any

from bot.triage.footprint import REASON_IMPORTED, REASON_RUNS, describe_chain, entry_contains
from bot.triage.models import Decision, EvidenceKind


def footprint_record(decision: Decision) -> dict[str, Any]:
    """The changed paths in the footprint; each file the test imports (or conftest.py that
    runs for it, or folder: a C# project, a Rust crate) with its depth and chain, changed
    ones (or holding a changed file) marked; and the walk's summary
    (files read, depth, "partial" and why), or None when no walk was made."""
    changed = set(decision.matched_paths)
    walked = [item.text for item in decision.items if item.kind is EvidenceKind.IMPORTS]
    return {
        "changed_paths_in_footprint": decision.matched_paths,
        "imports": [
            {
                "path": entry.path,
                "depth": len(entry.chain),
                "chain": describe_chain(entry),
                "changed_by_pr": any(entry_contains(entry.path, path) for path in changed),
            }
            for entry in decision.footprint
            if entry.reason in (REASON_IMPORTED, REASON_RUNS)
        ],
        "walk": walked[0] if walked else None,
    }
