"""`owners: mention` as a spam channel (security issue 25, item 9), end to end over the
simulator on both databases: one outsider's fail-then-pass notifies nobody; evidence from two
authors mentions the owners, each within a daily budget across the repository's issues."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.demo import running, settle
from bot.sim.scenario import load_scenario
from bot.sim.server import Simulator
from bot.triage.mentions import MENTIONS_PER_OWNER_PER_DAY, corroborated, to_mention
from bot.triage.models import Occurrence

SCENARIOS = Path(__file__).parent / "scenarios"
KEY = "tests/bus/test_core.py::test_publish_waits_for_ack"


def issue_body(sim: Simulator) -> str:
    (issue,) = sim.issues_created
    return issue.body


async def test_a_strangers_fail_then_pass_mentions_nobody(tmp_path: Path, store_url: str) -> None:
    scenario = load_scenario(SCENARIOS / "tracking-owners-mention-stranger.yml")
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        spent = await bot.store.mentions_since("acme/bus", ["@octo-dev", "@acme/bus-team"], 0)
    body = issue_body(sim)
    assert "`octo-dev`, `acme/bus-team`, `ops@acme.example`" in body
    assert "@octo-dev" not in body and "@acme/bus-team" not in body
    assert spent == {}  # nothing spent of anyone's budget
    # The author's access was asked once, to learn they may not aim a mention.
    asked = [e.path for e in sim.timeline if e.kind == "api" and "/permission" in e.path]
    assert asked and all(p.endswith("/collaborators/stranger/permission") for p in asked)


async def test_a_second_author_corroborates_and_the_owners_are_mentioned_once(
    tmp_path: Path, store_url: str
) -> None:
    scenario = load_scenario(SCENARIOS / "tracking-owners-mention-corroborated.yml")
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        owners = ["@octo-dev", "@acme/bus-team", "ops@acme.example"]
        spent = await bot.store.mentions_since("acme/bus", owners, 0)
    assert "@octo-dev, @acme/bus-team, `ops@acme.example`" in issue_body(sim)
    # Each mentioned once, however many writes of the issue followed.
    assert spent == {"@octo-dev": 1, "@acme/bus-team": 1}


async def test_an_owner_over_its_daily_budget_is_named_without_at(
    tmp_path: Path, store_url: str
) -> None:
    """@acme/bus-team was mentioned by as many other issues as its daily budget allows."""
    scenario = load_scenario(SCENARIOS / "tracking-owners-mention-corroborated.yml")
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        for n in range(MENTIONS_PER_OWNER_PER_DAY):
            await bot.store.add_mentions("acme/bus", f"other-{n}", ["@ACME/bus-team"], time.time())
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        spent = await bot.store.mentions_since("acme/bus", ["@acme/bus-team", "@octo-dev"], 0)
    assert "@octo-dev, `acme/bus-team`, `ops@acme.example`" in issue_body(sim)
    assert spent == {"@acme/bus-team": MENTIONS_PER_OWNER_PER_DAY, "@octo-dev": 1}


def _occurrence(pr: int | None, author: str | None) -> Occurrence:
    return Occurrence(
        repo="acme/bus",
        check_run_id=1,
        check_name="tests",
        test_key="t",
        test_id="t",
        signature="s",
        generic=False,
        head_sha="a" * 40,
        pr_number=pr,
        author=author,
        at=0.0,
        verdict="flaky",
    )


@pytest.mark.parametrize(
    ("occurrences", "expected"),
    [
        ([(7, "stranger")], False),
        ([(7, "stranger"), (9, "stranger"), (9, "Stranger")], False),  # one person's PRs
        ([(7, "stranger"), (8, "someone")], True),
        ([(7, "stranger"), (None, None)], True),  # a push to the repository
    ],
)
def test_corroborated(occurrences: list[tuple[int | None, str | None]], expected: bool) -> None:
    assert corroborated([_occurrence(pr, author) for pr, author in occurrences]) is expected


def test_to_mention_keeps_earlier_mentions_and_spends_budget_only_on_evidence() -> None:
    owners = ["@Octo", "@acme/team", "ops@acme.example"]
    assert to_mention(owners, set(), {}, evidence=False) == []
    assert to_mention(owners, {"@octo"}, {}, evidence=False) == ["@Octo"]
    assert to_mention(owners, set(), {"@acme/team": 3}, evidence=True, budget=3) == ["@Octo"]
    assert to_mention(owners, set(), {"@acme/team": 2}, evidence=True, budget=3) == owners[:2]
