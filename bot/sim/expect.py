"""Checking a scenario's `expect` block against what the simulator recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.sim.scenario import Scenario

if TYPE_CHECKING:
    from bot.sim.server import Simulator


def check_expectations(
    scenario: Scenario, sim: Simulator, verdicts: Mapping[str, str]
) -> list[str]:
    """One human-readable line per unmet expectation; an empty list means all were met.

    `verdicts` is the bot's final verdict per test id, supplied by the caller.
    """
    expect = scenario.expect
    problems: list[str] = []
    for wanted in expect.comments:
        bodies = [comment.body for comment in sim.bot_comments(wanted.pr)]
        if wanted.count is not None and len(bodies) != wanted.count:
            problems.append(
                f"PR #{wanted.pr}: expected {wanted.count} bot comment(s), found {len(bodies)}"
            )
        for text in wanted.contains:
            if not any(text in body for body in bodies):
                problems.append(f"PR #{wanted.pr}: no bot comment contains {text!r}")
        for text in wanted.not_contains:
            if any(text in body for body in bodies):
                problems.append(f"PR #{wanted.pr}: a bot comment contains {text!r}")
    if expect.reruns is not None and len(sim.reruns) != expect.reruns:
        problems.append(f"expected {expect.reruns} rerun request(s), found {len(sim.reruns)}")
    created = len(sim.issues_created)
    if expect.issues_created is not None and created != expect.issues_created:
        problems.append(f"expected {expect.issues_created} issue(s) created, found {created}")
    for test_id, verdict in expect.verdicts.items():
        actual = verdicts.get(test_id)
        if actual is None:
            problems.append(f"{test_id}: expected verdict {verdict!r}, the bot gave none")
        elif actual != verdict:
            problems.append(f"{test_id}: expected verdict {verdict!r}, the bot said {actual!r}")
    return problems
