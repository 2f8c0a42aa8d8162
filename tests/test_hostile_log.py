"""A 2 GiB job log, end to end: capped and streamed, never held.

The simulator makes the log as it serves it (`log_padding_bytes`), so neither side needs 2 GiB
of memory or disk; the bot's peak memory is sampled while it reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.demo import final_verdicts, running, settle
from bot.sim.blobs import PaddedLog
from bot.sim.scenario import Scenario, builtin_scenario

GIB = 1024**3
MIB = 1024**2
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
STATUS = Path("/proc/self/status")


def _huge_log_world(padding: int, *, ranges: bool = True) -> Scenario:
    """The demo: its failing attempt's log preceded by `padding` bytes of build output."""
    scenario = builtin_scenario()
    check = scenario.checks[0]
    check.attempts[0] = check.attempts[0].model_copy(update={"log_padding_bytes": padding})
    scenario.faults.blob_ranges = ranges
    scenario.files = {**scenario.files, ".github/flaky.yml": "rerun: false\n"}
    return scenario


def _rss() -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@contextlib.asynccontextmanager
async def _peak_rss_growth() -> AsyncIterator[list[int]]:
    """The process's resident memory above where it started, sampled every 20 ms."""
    base = _rss()
    peak = [0]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], _rss() - base)
            await asyncio.sleep(0.02)

    task = asyncio.create_task(sample())
    try:
        yield peak
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        peak[0] = max(peak[0], _rss() - base)


pytestmark = pytest.mark.skipif(not STATUS.exists(), reason="platform: needs /proc (Linux)")


async def test_a_2_gib_log_is_read_by_its_tail(tmp_path: Path) -> None:
    scenario = _huge_log_world(2 * GIB)
    async with running(scenario, tmp_path) as (sim, bot), _peak_rss_growth() as growth:
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert verdicts == {TEST_ID: "unrelated"}
    cap = bot.settings.log_cap_bytes
    (comment,) = sim.bot_comments(7)
    assert f"not read: log: all but its last {cap // MIB} MiB" in comment.body
    # A suffix Range: only the tail crossed the wire.
    assert 0 < sim.blob_bytes_sent <= cap
    assert growth[0] < 512 * MIB, f"memory grew by {growth[0] / MIB:.0f} MiB"


async def test_a_2_gib_log_from_a_host_that_ignores_range_is_streamed_keeping_only_its_tail(
    tmp_path: Path,
) -> None:
    scenario = _huge_log_world(2 * GIB, ranges=False)
    cap = 8 * MIB
    async with (
        running(scenario, tmp_path, log_cap_bytes=cap) as (sim, bot),
        _peak_rss_growth() as growth,
    ):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert verdicts == {TEST_ID: "unrelated"}
    (comment,) = sim.bot_comments(7)
    assert "not read: log: all but its last 8 MiB" in comment.body
    # Every byte came: the bot read it all as a stream, holding one cap's worth.
    assert sim.blob_bytes_sent > 2 * GIB - MIB
    assert growth[0] < 512 * MIB, f"memory grew by {growth[0] / MIB:.0f} MiB"


@given(
    padding=st.integers(0, 2_000),
    tail=st.binary(max_size=200),
    start=st.integers(-2_500, 2_500),
    stop=st.integers(-2_500, 2_500) | st.none(),
)
def test_a_padded_log_slices_like_the_bytes_it_stands_for(
    padding: int, tail: bytes, start: int, stop: int | None
) -> None:
    log = PaddedLog(padding, tail)
    whole = PaddedLog.LINE * (padding // len(PaddedLog.LINE)) + tail
    assert len(log) == len(whole)
    assert log[start:stop] == whole[start:stop]
