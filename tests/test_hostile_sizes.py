"""Writes that GitHub would refuse for their size: a test id of 3,000 emoji, a cluster of
long ids. The simulator refuses what GitHub refuses (422); every write fits by construction,
cut on a grapheme cluster's boundary."""

from __future__ import annotations

import re
from pathlib import Path

from bot.demo import running, settle
from bot.report.markdown import shorten
from bot.report.text import is_boundary, reveal
from bot.sim import Simulator
from bot.sim.scenario import Scenario, load_scenario

DEMO = Path(__file__).resolve().parents[1] / "bot" / "sim" / "scenarios" / "demo.yml"
TEST_NAME = "test_publish_waits_for_ack"
# A family (four people joined by zero-width joiners), a flag (two regional indicators) and
# a skin-toned thumb: each one character on screen, several code points.
FAMILY, FLAG, THUMB = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "🇩🇪", "👍🏽"


def _renamed(scenario: Scenario, name: str) -> Scenario:
    checks = []
    for check in scenario.checks:
        attempts = [
            a.model_copy(update={"log": (a.log or "").replace(TEST_NAME, name)})
            for a in check.attempts
        ]
        checks.append(check.model_copy(update={"attempts": attempts}))
    files = {**scenario.files, ".github/flaky.yml": "check_run: true\n"}
    return scenario.model_copy(update={"checks": checks, "files": files})


def _refused(sim: Simulator) -> list[str]:
    return [e.describe() for e in sim.timeline if e.kind == "api" and e.status == 422]


async def _play(scenario: Scenario, workdir: Path) -> Simulator:
    async with running(scenario, workdir) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
    return sim


async def test_a_test_id_of_3000_emoji_is_triaged_and_written_end_to_end(tmp_path: Path) -> None:
    name = "test_" + (FAMILY + FLAG + THUMB + "😀") * 750
    sim = await _play(_renamed(load_scenario(DEMO), name), tmp_path)

    assert _refused(sim) == []
    [issue] = sim.world.issues_created
    title = sim.world.issues[issue].title
    assert title.startswith("Flaky test: tests/bus/test_core.py::test_")
    assert len(title) <= 256
    # Cut between whole emoji (the joiners inside a family are written out: `<U+200D>`),
    # never inside one or inside what writes a joiner out.
    cut, whole = title.removesuffix("…"), f"Flaky test: tests/bus/test_core.py::{reveal(name)}"
    assert whole.startswith(cut)
    assert is_boundary(whole, len(cut))
    assert not re.search(r"<U\+[0-9A-F]*$", cut)
    [comment] = sim.world.comments.values()
    assert "rerun pending" not in comment.body
    assert "passed on rerun" in comment.body
    [run] = sim.world.app_runs.values()
    assert run.conclusion is not None
    assert len(run.annotations) == 1
    assert len(run.annotations[0]["title"]) <= 255


def test_shorten_cuts_on_a_grapheme_boundary() -> None:
    assert shorten("ab" + FAMILY, 5) == "ab…"
    assert shorten("a" + FLAG + FLAG, 4) == "a" + FLAG + "…"
    assert shorten("e\u0301e\u0301e\u0301", 4) == "e\u0301…"
    assert shorten(THUMB * 3, 5) == THUMB * 2 + "…"
    assert shorten("abc", 3) == "abc"
    assert shorten("ab<U+200D>cd", 8) == "ab…"
    assert shorten("\u1100\u1161\u11a8" * 2, 4) == "\u1100\u1161\u11a8…"  # a Hangul syllable
    assert shorten("1\ufe0f\u20e3" * 2, 4) == "1\ufe0f\u20e3…"  # a keycap


def _cluster_log(names: list[str], message: str) -> str:
    stamp = "2026-11-30T10:00:00.0000000Z "
    lines = [
        "============================= test session starts ==============================",
        "collected 42 items",
        "=========================== short test summary info ============================",
        *(f"FAILED tests/bus/test_core.py::{name} - TimeoutError: {message}" for name in names),
        f"========================= {len(names)} failed, 32 passed in 3.20s ==================",
        "##[error]Process completed with exit code 1.",
    ]
    return "".join(stamp + line + "\n" for line in lines)


async def test_a_cluster_of_long_ids_is_triaged_and_written_end_to_end(tmp_path: Path) -> None:
    names = [f"test_{i}_" + (FAMILY + "é" * 40 + THUMB) * 60 for i in range(8)]
    message = "ack not received: " + ("😀" * 50 + FLAG) * 60
    scenario = load_scenario(DEMO)
    [check] = scenario.checks
    failed, passed = check.attempts
    failed = failed.model_copy(update={"log": _cluster_log(names, message), "log_file": None})
    scenario = scenario.model_copy(
        update={
            "checks": [check.model_copy(update={"attempts": [failed, passed]})],
            "files": {**scenario.files, ".github/flaky.yml": "check_run: true\n"},
        }
    )
    sim = await _play(scenario, tmp_path)

    assert _refused(sim) == []
    [issue] = sim.world.issues_created
    assert sim.world.issues[issue].title.startswith("Flaky failure: TimeoutError: ack not")
    assert sim.world.issues[issue].title.endswith("(8 tests)")
    [comment] = sim.world.comments.values()
    assert "rerun pending" not in comment.body
    [run] = sim.world.app_runs.values()
    assert run.conclusion is not None
    assert len(run.annotations) == 8


def test_a_long_message_is_cut_between_flags_in_the_comment() -> None:
    from bot.report.comment import _MESSAGE_CHARS, _excerpt

    message = "x" + FLAG * _MESSAGE_CHARS  # a cut at _MESSAGE_CHARS falls inside a flag
    shown = _excerpt(message).removesuffix("\n[… cut]")
    assert shown == "x" + FLAG * ((_MESSAGE_CHARS - 1) // 2)
