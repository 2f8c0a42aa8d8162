"""Whose settings a repository may extend, and what its public PR's comment may say of them
(security issue 25, item 4), end to end over the simulator: a private repository's file
other than the PR's own is never named, nor its keys; another owner's base is read only
when its repository is public."""

from __future__ import annotations

from pathlib import Path

import cachetools
import pytest

from bot.demo import running, settle
from bot.handlers import scope
from bot.sim.scenario import OtherRepoSpec, Scenario, load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
FILE = ".github/flaky.yml"
SECRET_KEY = "deploytoken"


@pytest.fixture(autouse=True)
def fresh_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """What was read is remembered per process: start each test with none of it."""
    monkeypatch.setattr(scope, "_CONFIG_WARNED", cachetools.LRUCache(16))
    monkeypatch.setattr(scope, "_VISIBILITY", cachetools.TTLCache(16, ttl=60))


def overrides(own: str, repos: dict[str, OtherRepoSpec]) -> Scenario:
    """acme/bus (public) with `own` as its settings and these other repositories."""
    scenario = load_scenario(SCENARIOS / "org-settings-repo-overrides.yml")
    scenario.files[FILE] = own
    scenario.repos = repos
    return scenario


async def comment_of(scenario: Scenario, tmp_path: Path) -> tuple[str, int]:
    """The PR's comment once settled, and how many reruns the bot asked for."""
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (comment,) = sim.bot_comments(35)
        return comment.body, len(sim.reruns)


async def test_a_private_organisation_file_is_not_named_on_a_public_pr(tmp_path: Path) -> None:
    org = OtherRepoSpec(private=True, files={FILE: f"max_reruns: 2\n{SECRET_KEY}: x\n"})
    scenario = overrides("_extends: .github\nrerun: true\n", {"acme/.github": org})
    body, reruns = await comment_of(scenario, tmp_path)
    assert reruns == 1  # its settings apply all the same
    assert SECRET_KEY not in body and "acme/.github" not in body
    assert "of acme/bus over the organisation's private .github repository." in body
    assert "the organisation's private .github repository: 1 problem, in the bot's log" in body


async def test_another_owners_private_base_is_refused_unread(tmp_path: Path) -> None:
    base = OtherRepoSpec(private=True, files={"ci/flaky.yml": f"rerun: false\n{SECRET_KEY}: x\n"})
    scenario = overrides("_extends: other/settings:ci/flaky.yml\n", {"other/settings": base})
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (comment,) = sim.bot_comments(35)
        reads = [e.path for e in sim.timeline if e.kind == "api" and "/other/" in e.path]
    assert reads == ["/repos/other/settings"]  # its visibility, never its contents
    assert len(sim.reruns) == 1  # its `rerun: false` was not read
    assert SECRET_KEY not in comment.body
    refused = "_extends: other/settings:ci/flaky.yml is another owner's and not public: not read"
    assert refused in comment.body


async def test_another_owners_public_base_applies(tmp_path: Path) -> None:
    """The control: a public base of another owner is read and named as before."""
    base = OtherRepoSpec(files={"ci/flaky.yml": "rerun: false\n"})
    scenario = overrides("_extends: other/settings:ci/flaky.yml\n", {"other/settings": base})
    body, reruns = await comment_of(scenario, tmp_path)
    assert reruns == 0
    assert "of other/settings:ci/flaky.yml." in body
