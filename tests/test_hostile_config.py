"""A `.github/flaky.yml` with unknown keys and invalid values, end to end.

What "named once" means here: each problem appears once in the PR comment (in its footer,
however many checks and edits the comment goes through), and once in the bot's log per
version of the file (not on every delivery that reads it). Invalid values fall back to
their defaults, which the bot then acts on.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.config import ParsedSettings, parse_settings_file
from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import builtin_scenario

TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
FLAKY_YML = """\
rerun: maybe                # invalid: the default (true) is used, so the job is rerun
max_reruns: 99              # invalid: over 5
comments: always            # unknown: the key is `comment`
hostile_extra: {a: [1, 2]}  # unknown
"""
PROBLEMS = [
    "rerun: Input should be a valid boolean",
    "max\\_reruns: Input should be less than or equal to 5",
    "unknown key 'comments'",
    "unknown key 'hostile\\_extra'",
]


async def test_problems_are_named_once_in_the_footer_and_once_in_the_log_and_defaults_apply(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.handlers.checks")
    scenario = builtin_scenario()
    scenario.files = {**scenario.files, ".github/flaky.yml": FLAKY_YML}
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()  # the failure, then the rerun the defaults allow, which passes
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert len(sim.reruns) == 1
    assert verdicts == {TEST_ID: "flaky"}
    (comment,) = sim.bot_comments(7)
    edits = [w for w in sim.writes if w.method == "PATCH" and "/issues/comments/" in w.path]
    assert edits, "the comment was edited after the rerun"
    for body in [comment.body, *(edit.body["body"] for edit in edits)]:
        (footer,) = [line for line in body.splitlines() if line.startswith("<sub>Ignored in")]
        assert footer.startswith("<sub>Ignored in `.github/flaky.yml`: ")
        for problem in PROBLEMS:
            assert body.count(problem) == 1, problem
            assert problem in footer
        # The file is named once, by the footer, not again by each problem.
        assert body.count(".github/flaky.yml") == 1

    warned = [r.getMessage() for r in caplog.records if "(ignored)" in r.getMessage()]
    # Two check runs read the file; each problem was logged for the first only.
    assert len(warned) == len(PROBLEMS), warned
    assert all(m.startswith("acme/bus .github/flaky.yml: ") for m in warned)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("rerun: [unclosed\n", "not valid YAML: expected ',' or '\\]', but got"),
        ("- rerun\n- comment\n", "not a mapping of settings"),
        ("rerun: " + "[" * 5000 + "\n", "not valid YAML: nested too deeply"),
    ],
    ids=["not-yaml", "not-a-mapping", "nested-too-deeply"],
)
async def test_an_unreadable_file_is_treated_as_absent_and_named(
    tmp_path: Path, text: str, named: str
) -> None:
    scenario = builtin_scenario()
    scenario.files = {**scenario.files, ".github/flaky.yml": text}
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        states = {d.state for d in await bot.store.list_deliveries(10)}

    assert states == {"done"}
    assert len(sim.reruns) == 1  # the defaults: rerun on
    (comment,) = sim.bot_comments(7)
    (footer,) = [line for line in comment.body.splitlines() if line.startswith("<sub>Ignored")]
    assert named in footer


async def test_a_huge_settings_file_is_refused_unparsed_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0.9 MB file cost 6 to 8.5 s of CPU to parse, on every delivery."""
    parsed: list[str | None] = []

    def counted(text: str | None) -> ParsedSettings:
        parsed.append(text)
        return parse_settings_file(text)

    monkeypatch.setattr("bot.repo_settings.parse_settings_file", counted)
    huge = "rerun: false\n" + "".join(
        f"# padding line {n:07d} of a huge file\n" for n in range(25_000)
    )
    assert len(huge) > 900_000
    scenario = builtin_scenario()
    scenario.files = {**scenario.files, ".github/flaky.yml": huge}
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)

    assert parsed == []
    assert len(sim.reruns) == 1  # its `rerun: false` was not read: the defaults apply
    (comment,) = sim.bot_comments(7)
    (footer,) = [line for line in comment.body.splitlines() if line.startswith("<sub>Ignored")]
    assert f"the file is {len(huge):,} bytes, over the 65,536" in footer
