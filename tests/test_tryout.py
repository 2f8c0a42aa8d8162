"""`flakybot triage OWNER/REPO#N`: the real recipe, read-only, against the simulator."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.cli import main
from bot.metrics import Metrics
from bot.report.check_run import CHECK_NAME
from bot.report.comment import MARKER
from bot.sim.app_checks import AppCheckRun
from bot.sim.scenario import FaultRule, Faults, Scenario, builtin_scenario, load_scenario
from bot.sim.server import Simulator
from bot.tryout import ReadOnlyClient, Target, TryoutError, parse_target, run_tryout

SCENARIOS = Path(__file__).parent / "scenarios"
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    """The built-in world with its check's first attempt failed, as a PR would stand."""
    async with Simulator(builtin_scenario(), webhook_secret="unused") as simulator:
        simulator.next_completion("tests (3.12)")
        yield simulator


def assert_nothing_written(sim: Simulator) -> None:
    assert sim.writes == []
    # GraphQL reads (the test's imports, by blob) are queries sent by POST; the simulator
    # answers only the blob-read query shape, no mutation.
    reads = ("GET ", "POST /graphql")
    assert [call for call in sim.calls if not call.startswith(reads)] == []


async def flakybot(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """The real command in its own process, while the simulator serves in this loop."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        *args,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"} | env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_prints_the_verdicts_and_the_comment_and_writes_nothing(sim: Simulator) -> None:
    token = sim.personal_token()

    status, out, err = await flakybot(
        "triage", "acme/bus#7", "--api-url", sim.url, env={"GITHUB_TOKEN": token}
    )

    assert (status, err) == (0, "")
    assert out.startswith("acme/bus#7 at 3f1c2a9 (open): 1 failed check of 1\n")
    assert f"  {TEST_ID}: unrelated (medium confidence)\n" in out
    assert "rerun: the bot would rerun this job (a try-out does not)" in out
    comment = out.split("The comment the bot would post:\n\n", 1)[1]
    assert comment.startswith(MARKER)
    assert "unrelated to this PR" in comment
    assert token not in out
    assert_nothing_written(sim)
    # The job's evidence was read as the App reads it: log (through its redirect), annotations.
    assert sim.calls["GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"] == 1
    assert sim.calls["GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"] == 1


async def test_json_record_names_each_verdict_and_carries_the_comment(sim: Simulator) -> None:
    status, out, _ = await flakybot(
        "triage",
        "https://github.com/acme/bus/pull/7",
        "--json",
        "--api-url",
        sim.url,
        "--token",
        sim.personal_token(),
        env={},
    )

    assert status == 0
    record = json.loads(out)
    assert record["pull_request"] == "acme/bus#7"
    (check,) = record["failed_checks"]
    assert check["name"] == "tests (3.12)"
    assert [(v["test"], v["verdict"]) for v in check["verdicts"]] == [(TEST_ID, "unrelated")]
    assert record["comment"].startswith(MARKER)
    assert record["writes"] == 0
    assert record["github_requests"] == sum(
        count for call, count in sim.calls.items() if not call.startswith("GET /_blobs/")
    )
    assert_nothing_written(sim)


async def test_a_related_failure_is_said_and_not_rerun() -> None:
    async with Simulator(load_scenario(SCENARIOS / "related.yml"), webhook_secret="-") as sim:
        check = sim.scenario.checks[0].name
        sim.next_completion(check)
        result = await run_tryout(
            Target("acme/bus", 8), token=sim.personal_token(), api_url=sim.url
        )

        (tried,) = result.tried
        assert {str(d.verdict) for d in tried.attempt.decisions} == {"related"}
        assert tried.attempt.rerun_note is not None
        assert tried.attempt.rerun_note.startswith("not rerun: ")
        assert result.comment is not None and "related to this PR" in result.comment
        assert_nothing_written(sim)


async def test_a_pull_request_without_failed_checks_gets_no_comment() -> None:
    async with Simulator(builtin_scenario(), webhook_secret="-") as sim:
        result = await run_tryout(
            Target("acme/bus", 7), token=sim.personal_token(), api_url=sim.url
        )

    assert result.tried == [] and result.comment is None


async def test_the_bots_own_failed_check_run_is_not_tried() -> None:
    # `check_run_conclusion: strict` leaves a failed "flaky-triage" run on the head: not a job.
    async with Simulator(builtin_scenario(), webhook_secret="-") as sim:
        sim.next_completion("tests (3.12)")
        own = AppCheckRun(
            id=sim.world.new_id("run"),
            suite_id=sim.world.new_id("suite"),
            name=CHECK_NAME,
            head_sha=sim.world.pulls[7].spec.head_sha,
            started_at=sim.world.epoch,
            status="completed",
            conclusion="failure",
        )
        sim.world.app_runs[own.id] = own
        result = await run_tryout(
            Target("acme/bus", 7), token=sim.personal_token(), api_url=sim.url
        )

    assert [tried.attempt.check_name for tried in result.tried] == ["tests (3.12)"]


async def test_a_bad_token_is_one_line_and_exit_2(sim: Simulator) -> None:
    status, out, err = await flakybot(
        "triage", "acme/bus#7", "--api-url", sim.url, env={"GITHUB_TOKEN": "ghp_not-issued"}
    )

    assert (status, out) == (2, "")
    assert err == (
        "flakybot triage: GitHub refused the token (401 Bad credentials): "
        "check --token or GITHUB_TOKEN\n"
    )
    assert "ghp_not-issued" not in err


async def test_a_missing_pull_request_says_so(sim: Simulator) -> None:
    with pytest.raises(TryoutError) as caught:
        await run_tryout(Target("acme/bus", 99), token=sim.personal_token(), api_url=sim.url)

    assert str(caught.value).startswith("no pull request acme/bus#99 (404)")


def faulted(rule: FaultRule) -> Scenario:
    return builtin_scenario().model_copy(update={"faults": Faults(rules=[rule])})


async def test_an_exhausted_rate_limit_names_the_reset_time() -> None:
    reset = int(time.time()) + 1800
    rule = FaultRule(
        path=r"/pulls/7$",
        status=403,
        times=10,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
    )
    async with Simulator(faulted(rule), webhook_secret="-") as sim:
        with pytest.raises(TryoutError) as caught:
            await run_tryout(Target("acme/bus", 7), token=sim.personal_token(), api_url=sim.url)

    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(reset))
    message = str(caught.value)
    assert message.startswith(
        f"GitHub's rate limit for this token is used up (403): it resets at {when}"
    )
    assert "in about 30 minutes" in message


async def test_a_429_with_retry_after_names_when_to_come_back() -> None:
    rule = FaultRule(path=r"/pulls/7/files", status=429, times=10, headers={"Retry-After": "120"})
    async with Simulator(faulted(rule), webhook_secret="-") as sim:
        with pytest.raises(TryoutError) as caught:
            await run_tryout(Target("acme/bus", 7), token=sim.personal_token(), api_url=sim.url)

    assert "used up (429)" in str(caught.value)
    assert str(caught.value).endswith("in about 2 minutes")


async def test_the_client_refuses_any_write(sim: Simulator) -> None:
    async with aiohttp.ClientSession() as session:
        gh = ReadOnlyClient(
            session, base_url=sim.url, metrics=Metrics(), oauth_token=sim.personal_token()
        )
        with pytest.raises(RuntimeError, match="makes no POST request"):
            await gh.post("/repos/acme/bus/issues/7/comments", data={"body": "hi"})

    assert_nothing_written(sim)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("acme/bus#7", Target("acme/bus", 7)),
        ("octo-org/my.repo_2#1234", Target("octo-org/my.repo_2", 1234)),
        ("https://github.com/acme/bus/pull/7", Target("acme/bus", 7)),
    ],
)
def test_targets_people_type_are_read(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize("text", ["acme/bus", "acme#7", "acme/bus#0", "acme/bus#x", "a/b/c#1"])
def test_malformed_targets_are_refused(text: str) -> None:
    with pytest.raises(TryoutError, match="expected OWNER/REPO#NUMBER"):
        parse_target(text)


def test_the_command_refuses_a_malformed_target_and_a_missing_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)

    assert main(["triage", "acme-bus-7"]) == 2
    assert capsys.readouterr().err == (
        "flakybot triage: expected OWNER/REPO#NUMBER (e.g. octo/app#12), got 'acme-bus-7'\n"
    )
    assert main(["triage", "acme/bus#7"]) == 2
    assert capsys.readouterr().err == (
        "flakybot triage: no token: set GITHUB_TOKEN or pass --token\n"
    )
