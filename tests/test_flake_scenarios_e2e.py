"""The tracking issue explains a flaky test (issue 28), end to end: the real bot against the
simulator over HTTP with real signatures, the failures' messages real ones from real
projects (tests/fixtures/flake_messages/INDEX.md says where each comes from).

Every scenario is generated from one world (`World`): a test that fails on several pull
requests by different authors (so its tracking issue opens), on runs of a check whose usual
duration the default branch's passing runs give. Each asserts what the issue's body says,
and that no body the bot ever wrote, nor any comment, names a cause without its signals.
"""

from __future__ import annotations

import html
import re
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import aiohttp
import pytest

from bot.demo import running, settle
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.tracking import _issue_input, schedule_refresh
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.server import Simulator
from bot.triage.failures import match_key

MESSAGES = Path(__file__).parent / "fixtures" / "flake_messages"
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
REPO = "acme/bus"
BASE = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"
ISSUE = "/repos/{owner}/{repo}/issues/{issue_number}"
# The demo's own failure (an ack timeout the bus raises): a message with no known marker.
PLAIN = "TimeoutError: ack not received within 2.0s"


def pytest_log(message: str) -> str:
    """A pytest run's output in which the test fails with `message` (its `E` lines), as
    pytest prints an exception raised from the code under test."""
    lines = [
        "============================= test session starts ==============================",
        "collected 42 items",
        "",
        "tests/bus/test_core.py ......F....                                       [100%]",
        "",
        "=================================== FAILURES ===================================",
        "__________________________ test_publish_waits_for_ack __________________________",
        "",
        "    def test_publish_waits_for_ack():",
        '>       assert Bus().publish("hello", timeout=2.0)',
        "",
        *("E       " + line for line in message.splitlines()),
        "",
        "tests/bus/test_core.py:5: Failed",
        "=========================== short test summary info ============================",
        f"FAILED {TEST_ID} - {message.splitlines()[0]}",
        "========================= 1 failed, 41 passed in 3.20s =========================",
        "##[error]Process completed with exit code 1.",
    ]
    return "\n".join(lines) + "\n"


PASS_LOG = "tests/bus/test_core.py ...........   [100%]\n42 passed in 3.10s\n"


def real(name: str) -> str:
    return (MESSAGES / f"{name}.txt").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Run:
    message: str | None = None  # None: the run passed
    seconds: float = 100.0
    labels: tuple[str, ...] = ("ubuntu-latest",)
    # True: the message is in the JUnit report the job uploads (the log names no test), as
    # rspec_junit_formatter writes it; else in pytest's output in the log.
    report: bool = False


@dataclass(frozen=True)
class World:
    failures: list[Run]  # each on a pull request of its own, by its own author
    passes: list[Run] = field(default_factory=list)  # more pull requests, passing
    main_runs: int = 5  # passing runs of the check on the default branch, 100 s each
    workflow_job: bool = False

    def scenario(self) -> Scenario:
        raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
        raw.pop("expect", None)
        raw["app"] = {**raw.get("app", {}), "workflow_job": self.workflow_job}
        runs = [*self.failures, *self.passes]
        settings = "rerun: false\n" + (REPORTS if any(r.report for r in runs) else "")
        raw["files"] = {**raw["files"], ".github/flaky.yml": settings}
        raw["pull_requests"] = [_pull(10 + n) for n in range(len(runs))]
        raw["checks"] = [
            _check(f"main {n}", Run(), head_sha=f"{n:x}" * 40, branch="main")
            for n in range(1, self.main_runs + 1)
        ] + [_check(f"tests #{10 + n}", run, pr=10 + n) for n, run in enumerate(runs)]
        return Scenario.model_validate(raw)

    @property
    def passing(self) -> list[str]:
        main = [f"main {n}" for n in range(1, self.main_runs + 1)]
        return main + [f"tests #{10 + len(self.failures) + n}" for n in range(len(self.passes))]

    @property
    def failing(self) -> list[str]:
        return [f"tests #{10 + n}" for n in range(len(self.failures))]


def _pull(number: int) -> dict[str, Any]:
    return {
        "number": number,
        "title": f"Change {number}",
        "author": f"author-{number}",
        "head_sha": f"{number:040x}",
        "base_sha": BASE,
        "head_ref": f"branch-{number}",
        "files": ["docs/usage.md"],
    }


def _check(name: str, run: Run, **where: Any) -> dict[str, Any]:
    attempt: dict[str, Any] = {
        "conclusion": "success" if run.message is None else "failure",
        "log": PASS_LOG if run.message is None else pytest_log(run.message),
        "seconds": run.seconds,
        "labels": list(run.labels),
    }
    if run.report and run.message is not None:
        attempt["log"] = "##[error]Process completed with exit code 1.\n"
        attempt["artifacts"] = [{"name": "junit-rspec", "files": {"rspec.xml": junit(run.message)}}]
    return {"name": name, "check_name": "tests", "workflow": "CI", "attempts": [attempt], **where}


REPORTS = 'reports:\n  - artifact: "junit-*"\n    files: ["*.xml"]\n'


def junit(message: str) -> str:
    """An RSpec example failing with `message`, as rspec_junit_formatter reports it: the
    exception's message in the `message` attribute (its line breaks kept) and the body."""
    text = quoteattr(message, {"\n": "&#10;"})
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuite name="rspec" tests="3" failures="1" errors="0" skipped="0" time="2.3">\n'
        '<testcase classname="spec.requests.api.v1.users_spec" name="returns a 200 response" '
        'file="./spec/requests/api/v1/users_spec.rb" time="0.2">\n'
        f'<failure message={text} type="RSpec::Expectations::ExpectationNotMetError">'
        f"{escape(message)}</failure>\n</testcase>\n</testsuite>\n"
    )


def rspec_exception(name: str) -> str:
    """The exception's message of an RSpec failure quoted in `name`: from its `expected:`
    line to the end, dedented (what RSpec raised; the seed and the example's header are the
    run's own lines around it)."""
    lines = real(name).splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip().startswith("expected:"))
    return textwrap.dedent("\n".join(lines[start:])).strip()


async def play(world: World, sim: Simulator, bot: Bot) -> None:
    """The passing runs first, at once (their order tells nothing), then each failure once
    the bot has triaged the one before (the issue opens at the second author's), and the
    tally's refresh after the last."""
    for name in world.passing:
        await sim.complete_check(sim.world.queue_run(name))
    if world.passing:
        await settle(sim, bot)
    for name in world.failing:
        await sim.complete_check(sim.world.queue_run(name))
        await bot.wait_handled("check_run")
    await settle(sim, bot)


@dataclass(frozen=True)
class Played:
    body: str  # the tracking issue's body at the end
    bodies: list[str]  # every body the bot wrote to an issue, first to last
    comments: list[str]  # every PR comment body the bot wrote


async def run_world(world: World, tmp_path: Path) -> Played:
    async with running(world.scenario(), tmp_path) as (sim, bot):
        await play(world, sim, bot)
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        return Played(issue.body, issue_bodies(sim), comment_bodies(sim))


def issue_bodies(sim: Simulator) -> list[str]:
    return [
        w.body["body"]
        for w in sim.writes
        if re.fullmatch(r"/repos/acme/bus/issues(/\d+)?", w.path)
        and isinstance(w.body, dict)
        and "body" in w.body
    ]


def comment_bodies(sim: Simulator) -> list[str]:
    return [
        w.body["body"]
        for w in sim.writes
        if "/comments" in w.path and isinstance(w.body, dict) and "body" in w.body
    ]


# A cause line in markdown (`**Suspected cause:** ...`) or on a page (`Suspected cause: ...`).
CAUSE_LINE = re.compile(r"Suspected cause:(?:\*\*)? (?P<text>[^\n<]*)")


def assert_every_cause_has_its_signals(texts: list[str]) -> int:
    """Each cause line names its signals, unless it says "unclear"; returns how many
    lines were read (so a test of this is seen to have read some)."""
    lines = [m["text"] for text in texts for m in CAUSE_LINE.finditer(text)]
    for line in lines:
        assert line.startswith("unclear") or "; signals: " in line, line
    return len(lines)


# One scenario per cause category a failure's message shows: a real message whose rule
# states the category, the rule's name, and (three failures) the confidence. ORDER's message
# is an RSpec run's, cut by the pytest framing to its seed line and the failure's head: its
# seed marker alone shows (weight 1, three failures: just enough). UNORDERED's is the same
# run's exception, as its JUnit report holds it.
@dataclass(frozen=True)
class Cause:
    words: str
    rule: str
    failure: Run
    source: str  # the fixture, for the test's id


CAUSES = [
    Cause(
        "timing and asynchronous waits",
        "Go test timeout",
        Run(real("go_timeout_gocql")),
        "go_timeout_gocql",
    ),
    Cause(
        "concurrency (races, deadlocks)",
        "data race detected",
        Run(real("go_race_apm_server")),
        "go_race_apm_server",
    ),
    Cause(
        "test order dependence",
        "shuffled order seed",
        Run(real("rspec_seed_unordered_pie")),
        "rspec_seed_unordered_pie",
    ),
    Cause(
        "network", "connection refused", Run(real("econnrefused_metamask")), "econnrefused_metamask"
    ),
    Cause(
        "resource limits (memory, file descriptors, ports, disk)",
        "too many open files",
        Run(real("emfile_datasette")),
        "emfile_datasette",
    ),
    Cause("file system contention", "file busy or locked", Run(real("ebusy_atom")), "ebusy_atom"),
    Cause(
        "time and date",
        "relative day compared",
        Run(real("relative_day_operaton")),
        "relative_day_operaton",
    ),
    Cause(
        "randomness", "property-based example", Run(real("hypothesis_pandas")), "hypothesis_pandas"
    ),
    Cause(
        "floating-point precision",
        "tolerance exceeded",
        Run(real("numpy_tolerance_glass")),
        "numpy_tolerance_glass",
    ),
    Cause(
        "unordered collections",
        "same items, other order",
        Run(rspec_exception("rspec_seed_unordered_pie"), report=True),
        "rspec_seed_unordered_pie-junit",
    ),
]


@pytest.mark.parametrize("cause", CAUSES, ids=[c.source for c in CAUSES])
async def test_the_issue_names_the_suspected_cause_with_its_signals(
    tmp_path: Path, cause: Cause
) -> None:
    world = World(failures=[cause.failure] * 3, main_runs=0)
    played = await run_world(world, tmp_path)

    assert (
        f"**Suspected cause:** {cause.words} (confidence: high); signals: {cause.rule} in 3 "
        "of 3 failures"
    ) in played.body
    assert assert_every_cause_has_its_signals(played.bodies + played.comments) >= 2


async def test_a_run_three_times_the_checks_usual_length_is_flagged_not_comparable(
    tmp_path: Path,
) -> None:
    slow = Run(real("go_timeout_gocql"), seconds=300.0)
    world = World(failures=[slow, Run(real("go_timeout_gocql")), Run(real("go_timeout_gocql"))])
    async with running(world.scenario(), tmp_path) as (sim, bot):
        await play(world, sim, bot)
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        (comment,) = sim.bot_comments(10)
        page = await dashboard_page(bot)
        bodies = issue_bodies(sim) + comment_bodies(sim) + [page]

    flag = "\u26a0 not comparable: took 5 min, 3.0 times the check's usual 1 min 40 s"
    rows = [line for line in issue.body.splitlines() if line.startswith("| ")]
    flagged = [row for row in rows if flag in row]
    assert len(flagged) == 1 and "| #10 |" in flagged[0]
    assert "5 min (usual 1 min 40 s)" in flagged[0]
    assert sum("1 min 40 s (usual 1 min 40 s)" in row for row in rows) == 2  # the others
    # Its evidence weighs half: the cause still shows, from all three.
    assert "timing and asynchronous waits (confidence: high)" in issue.body
    # The PR comment's details say the same of the job, with no call to GitHub for it.
    assert f"**Run:** 5 min (usual 1 min 40 s), attempt 1 {flag}" in comment.body
    # Its one failure, weighed half, is too weak a signal on its own.
    assert (
        "- **Suspected cause:** unclear (the signals are too weak); signals: Go test timeout "
        "in 1 of 1 failure (timing and asynchronous waits)."
    ) in comment.body
    # And so does the dashboard's test page.
    assert flag in page
    assert assert_every_cause_has_its_signals(bodies) >= 3


async def test_mixed_evidence_makes_the_cause_unclear_with_both_signals(tmp_path: Path) -> None:
    """Refused connections on two PRs open the issue; then the test times out on a third:
    network scores 4, timing 3, neither the two thirds a cause needs."""
    refused = Run(real("econnrefused_metamask"))
    world = World(failures=[refused, refused, Run(real("go_timeout_gocql"))], main_runs=0)
    played = await run_world(world, tmp_path)

    assert (
        "**Suspected cause:** unclear (the signals point to different causes); signals: "
        "connection refused in 2 of 3 failures (network); Go test timeout in 1 of 3 failures "
        "(timing and asynchronous waits)."
    ) in played.body
    # Before the timeout, the two refused connections made a cause of their own.
    assert any("**Suspected cause:** network (confidence: medium)" in b for b in played.bodies)
    assert assert_every_cause_has_its_signals(played.bodies + played.comments) >= 2


async def test_failures_only_on_windows_among_linux_runs_concentrate_there(
    tmp_path: Path,
) -> None:
    windows = Run(PLAIN, labels=("windows-latest",))
    world = World(failures=[windows] * 3, main_runs=8, workflow_job=True)
    async with running(world.scenario(), tmp_path) as (sim, bot):
        await play(world, sim, bot)
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        page = await dashboard_page(bot)
        bodies = issue_bodies(sim) + comment_bodies(sim) + [page]

    where = "all 3 failures on windows-latest (3 of 11 runs)"
    assert f"**Where failures concentrate:** {where}." in issue.body
    assert f"**Suspected cause:** one platform only (confidence: high); signals: {where}." in (
        issue.body
    )
    # Every run shows its system, read from its job's labels.
    rows = [line for line in issue.body.splitlines() if line.startswith("| ")]
    assert sum("| Windows, 1 min 40 s (usual 1 min 40 s) |" in row for row in rows) == 3
    assert f"Where failures concentrate: {where}." in page
    assert "Suspected cause: one platform only" in page
    assert assert_every_cause_has_its_signals(bodies) >= 2


async def dashboard_page(bot: Bot) -> str:
    """The test's page on the dashboard, over HTTP, as text (its markup's entities read)."""
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{bot.url}/{REPO}/tests/{match_key(TEST_ID)}") as answer,
    ):
        assert answer.status == 200
        return html.unescape(await answer.text())


async def test_the_issue_is_edited_only_when_its_section_changes(tmp_path: Path) -> None:
    world = World(failures=[Run(real("econnrefused_metamask"))] * 2, passes=[Run()], main_runs=0)
    async with running(world.scenario(), tmp_path) as (sim, bot):
        for name in world.failing:
            await sim.complete_check(sim.world.queue_run(name))
            await settle(sim, bot)
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        key = match_key(TEST_ID)
        ctx = BotContext(
            store=bot.store,
            github=bot.github,
            metrics=bot.metrics,
            tracking_refresh_seconds=bot.settings.tracking_refresh_seconds,
        )
        edits = [sim.calls[f"PATCH {ISSUE}"]]
        # Rendered again from the same record: nothing to write.
        await schedule_refresh(ctx, 1, REPO, key, time.time())
        await settle(sim, bot)
        edits.append(sim.calls[f"PATCH {ISSUE}"])
        # A run that passed, alone: no edit either.
        (passing,) = world.passing
        await sim.complete_check(sim.world.queue_run(passing))
        await settle(sim, bot)
        edits.append(sim.calls[f"PATCH {ISSUE}"])
        body = sim.world.issues[issue.number].body
        # The next refresh counts that pass in the rate: the section changed, one edit.
        await schedule_refresh(ctx, 1, REPO, key, time.time())
        await settle(sim, bot)
        edits.append(sim.calls[f"PATCH {ISSUE}"])
        after = sim.world.issues[issue.number].body
        refreshes = [d for d in await bot.store.list_deliveries(100) if "refresh" in d.event]

    assert edits[0] == edits[1] == edits[2] and edits[3] == edits[2] + 1
    assert "**Failed 2 of 2 runs of `tests`.**" in body
    assert after.replace("Failed 2 of 3 runs", "Failed 2 of 2 runs") == body
    assert len(refreshes) >= 2


async def test_the_attempt_shown_is_the_attempt_counted(tmp_path: Path) -> None:
    """Two workflows of one commit each run a job named `tests` (a `push` and a
    `pull_request` workflow): GitHub calls both attempt 1 of their workflow runs, the bot
    counts them 1 and 2 on the commit. The issue's Attempt column and the run contexts that
    "all on attempt 1" counts hold the same number for each."""
    world = World(failures=[Run(PLAIN)] * 3, main_runs=0, workflow_job=True)
    raw = world.scenario().model_dump(mode="json", exclude_none=True)
    push = {**_check("tests #10 push", Run(PLAIN), pr=10), "workflow": "CI push"}
    raw["checks"].append(push)
    async with running(Scenario.model_validate(raw), tmp_path) as (sim, bot):
        for name in ["tests #10", "tests #10 push", "tests #11", "tests #12"]:
            await sim.complete_check(sim.world.queue_run(name))
            await settle(sim, bot)
        runs = [sim.world.latest_run(n) for n in ("tests #10", "tests #10 push")]
        assert [r.run_attempt if r else None for r in runs] == [1, 1]  # GitHub's, each
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        record = await bot.store.tracking_issue(REPO, match_key(TEST_ID))
        assert record is not None
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        scope = Scope(ctx, await bot.github.installation_client(1), REPO)
        inp = await _issue_input(scope, record, await scope.config(), time.time())

    shown = sorted(o.attempt for o in inp.occurrences)
    assert shown == [1, 1, 1, 2]
    assert all(o.context is not None and o.context.attempt == o.attempt for o in inp.occurrences)
    rows = [line for line in issue.body.splitlines() if line.startswith("| ") and "| #10 |" in line]
    assert sorted(row.split(" | ")[4] for row in rows) == ["1", "2"]
