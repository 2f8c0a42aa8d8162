"""A decision's footprint as `flakybot demo --json` and `flakybot triage --json` print it:
what the test was found to import, how, how far the walk went, and the weak hits."""

from __future__ import annotations

from typing import Any

from bot.triage.footprint import (
    REASON_IMPORTED,
    REASON_RUNS,
    describe_chain,
    entry_contains,
    matches,
)
from bot.triage.models import Decision, EvidenceKind, Footprint


def footprint_record(decision: Decision) -> dict[str, Any]:
    """The changed paths in the footprint (each with its reason and strength: only a strong
    one makes the failure related); each file the test imports (or conftest.py that runs
    for it, or folder: a C# project, a Rust crate) with its depth and chain, changed ones (or
    holding a changed file) marked; the weak hits as the caveats the comment names; the
    changed paths a rule cleared, with the rule (`ruled out: ...`); and the walk: its
    summary line, depth, files read and whether it was partial (and why), or None when no
    walk was made."""
    changed = set(decision.matched_paths)
    walked = [item.text for item in decision.items if item.kind is EvidenceKind.IMPORTS]
    walk = decision.walk
    return {
        "changed_paths_in_footprint": decision.matched_paths,
        "hits": _hits(decision),
        "imports": [
            {
                "path": entry.path,
                "depth": len(entry.chain),
                "chain": describe_chain(entry),
                "changed_by_pr": any(entry_contains(entry, path) for path in changed),
            }
            for entry in decision.footprint
            if entry.reason in (REASON_IMPORTED, REASON_RUNS)
        ],
        "weak": [item.text for item in decision.items if item.kind is EvidenceKind.WEAK],
        "ruled_out": [item.text for item in decision.items if item.kind is EvidenceKind.RULED_OUT],
        "walk": walked[0] if walked else None,
        "walk_depth": walk.depth if walk is not None else None,
        "files_read": walk.files_read if walk is not None else None,
        "partial": walk.partial if walk is not None else None,
        "cut": list(walk.cut) if walk is not None else [],
    }


def _hits(decision: Decision) -> list[dict[str, str]]:
    """Each changed path in the footprint with the first entry that covers it."""
    entries = Footprint(test_id="", entries=decision.footprint)
    return [
        {"path": path, "reason": entry.reason, "strength": entry.strength.value}
        for path, entry in matches(entries, decision.matched_paths)
    ]
