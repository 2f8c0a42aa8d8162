"""Regexes from `.github/flaky.yml` meet a pull request's log, end to end.

The attack: the default branch's flaky.yml holds patterns that backtrack exponentially, and a
PR's job prints the 26-character line they spin on. Python's engine took 19 s on it (longer on
a busy machine), holding the event loop: /healthz, the dashboard and every webhook stalled,
past the 10 s GitHub waits for a delivery's answer. Now the patterns run by RE2, and the log
is read in a thread: the bot answers throughout, and what RE2 cannot run is named.

RE2 alone is not enough: a log read on the event loop still holds it for as long as the read
takes, here 24 MiB of lines each a candidate for the wordless pattern, in one piece (about
8 s on the loop before the read moved to a thread).
"""

from __future__ import annotations

import contextlib
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import Annotation, Scenario, builtin_scenario

MIB = 1024 * 1024
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
FLAKY_YML = r"""
rerun: false
custom_patterns:
  - {name: harness, regex: '(?P<test>(a|a)*)!'}
  - {name: echo, regex: '(?P<test>\w+) failed, as before: \1'}
generic_messages: ['(x+x+)+y']
"""
# RE2 has no backreferences: the `echo` pattern is refused, and said to be.
REFUSED = "custom\\_patterns.1.regex: Value error, not a regular expression RE2 can run"
CAP = 24 * MIB
# Far beyond what an answer takes on the slowest machine, far below the old stall.
PROMPT = 5.0


def _hostile_world() -> Scenario:
    """The demo, its failing job's log preceded by build output and the attack line, and an
    annotation whose message is the generic pattern's."""
    scenario = builtin_scenario()
    scenario.files = {**scenario.files, ".github/flaky.yml": FLAKY_YML}
    # A host that ignores Range sends the whole log: its tail (the cap) is read in one piece.
    scenario.faults.blob_ranges = False
    check = scenario.checks[0]
    failing = check.attempts[0]
    assert failing.log is not None
    note = Annotation(path="src/bus/core.py", start_line=1, end_line=1, message="x" * 26)
    check.attempts[0] = failing.model_copy(
        update={
            # Every line a candidate for the wordless pattern: seconds of scanning.
            "log_padding_bytes": CAP + 4 * MIB,
            "log": "2026-11-30T10:00:00.0000000Z " + "a" * 26 + "\n" + failing.log,
            "annotations": [*failing.annotations, note],
        }
    )
    return scenario


@contextlib.contextmanager
def _probing(url: str) -> Iterator[list[tuple[int, float]]]:
    """GET `url` again and again from another thread, as a load balancer would, while the
    block runs: each answer's status (0: none came) and the seconds it took. A client on the
    bot's own event loop could not tell: it would stall with it."""
    answers: list[tuple[int, float]] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            asked = time.monotonic()
            try:
                with urllib.request.urlopen(url, timeout=120) as answer:
                    status = answer.status
            except OSError:  # an error status, a timeout, a refused connection
                status = 0
            answers.append((status, time.monotonic() - asked))
            stop.wait(0.05)

    thread = threading.Thread(target=probe, name="probe")
    thread.start()
    try:
        yield answers
    finally:
        stop.set()
        thread.join()


async def test_hostile_patterns_on_a_hostile_log_neither_stall_the_bot_nor_go_unnamed(
    tmp_path: Path,
) -> None:
    async with running(_hostile_world(), tmp_path, log_cap_bytes=CAP) as (sim, bot):
        with _probing(bot.url + "/healthz") as answers:
            await sim.play()
            await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert answers, "no answer came"
    assert {status for status, _ in answers} == {200}
    slowest = max(seconds for _, seconds in answers)
    assert slowest < PROMPT, f"/healthz took {slowest:.1f} s to answer"
    # The rest of the settings still apply: no rerun, the test judged as before.
    assert sim.reruns == []
    assert verdicts == {TEST_ID: "unrelated"}
    (comment,) = sim.bot_comments(7)
    (footer,) = [line for line in comment.body.splitlines() if line.startswith("<sub>Ignored in")]
    assert REFUSED in footer
    assert "invalid escape sequence: \\\\1" in footer
    assert "harness" not in footer and "generic" not in footer
    assert "not read: log: all but its last 24 MiB" in comment.body
