"""Run context on both stores (issue 28): each job's `workflow_job` row, joined with the run
the bot recorded, read back as RunContext; the check's durations on the default branch."""

from __future__ import annotations

from bot.store import Store
from bot.triage.flake_context import FailedRun, explain
from bot.triage.job_context import STAGES, JobRecord
from bot.triage.models import Occurrence, RunRecord
from bot.triage.run_context import RunContext

T0 = 1_700_000_000.0
REPO = "acme/bus"


def _run(
    check_run_id: int,
    *,
    at: float = T0,
    seconds: float | None = 300.0,
    conclusion: str = "failure",
    pr: int | None = 7,
    branch: str = "feature",
    attempt: int = 1,
    check: str = "tests",
) -> RunRecord:
    return RunRecord(
        repo=REPO,
        check_run_id=check_run_id,
        check_name=check,
        head_sha="a" * 40,
        branch=branch,
        pr_number=pr,
        attempt=attempt,
        conclusion=conclusion,
        completed_at=at,
        started_at=None if seconds is None else at - seconds,
    )


def _job(check_run_id: int, *, run_id: int = 900, attempt: int = 1, **fields: object) -> JobRecord:
    values: dict[str, object] = {
        "repo": REPO,
        "check_run_id": check_run_id,
        "run_id": run_id,
        "run_attempt": attempt,
        "workflow_name": "CI",
        "job_name": "tests",
        "runner_name": "GitHub Actions 5",
        "runner_group_name": "GitHub Actions",
        "labels": ["windows-latest"],
        "started_at": T0 - 600,
        "completed_at": T0,
        "conclusion": "failure",
        "stage": STAGES["completed"],
    }
    return JobRecord.model_validate({**values, **fields})


async def test_a_failed_run_reads_back_with_its_job_its_log_header_and_its_run(
    store: Store,
) -> None:
    run = _run(11).model_copy(
        update={"runner_os": "Windows", "runner_image": "windows-2022 20250209.1.0"}
    )
    await store.record_run(run, [])
    await store.save_job(_job(11), T0)
    await store.save_job(_job(12, labels=["ubuntu-latest"], conclusion="success"), T0)
    await store.save_job(_job(13, attempt=2), T0)  # the run's next attempt: not counted

    contexts = await store.run_contexts(REPO, ["tests"], T0 - 1, 100)

    assert contexts == {
        11: RunContext(
            runner_name="GitHub Actions 5",
            runner_os="Windows",
            runner_image="windows-2022 20250209.1.0",
            labels=["windows-latest"],
            job_seconds=600.0,  # the job's own times win over the check run's
            attempt=1,
            jobs_in_run=2,
            at=T0,
            check_name="tests",
        )
    }


async def test_a_run_without_its_job_has_the_check_runs_duration_and_the_bots_attempt(
    store: Store,
) -> None:
    await store.record_run(_run(21, attempt=3, conclusion="success"), [])
    await store.record_run(_run(22, seconds=None, at=T0 + 5), [])  # kept before 0015

    contexts = await store.run_contexts(REPO, ["tests", "lint"], T0 - 1, 100)

    assert list(contexts) == [22, 21]  # newest first
    assert contexts[21] == RunContext(job_seconds=300.0, attempt=3, at=T0, check_name="tests")
    assert contexts[22] == RunContext(at=T0 + 5, check_name="tests")


async def test_an_earlier_stage_handled_late_never_undoes_a_later_one(store: Store) -> None:
    await store.record_run(_run(31), [])
    await store.save_job(_job(31, stage=STAGES["completed"]), T0)
    queued = _job(
        31,
        stage=STAGES["queued"],
        runner_name=None,
        runner_group_name=None,
        completed_at=None,
        conclusion=None,
        labels=["ubuntu-latest"],
    )
    await store.save_job(queued, T0 + 1)

    [context] = (await store.run_contexts(REPO, ["tests"], T0 - 1, 100)).values()
    assert (context.runner_name, context.labels, context.job_seconds) == (
        "GitHub Actions 5",
        ["windows-latest"],
        600.0,
    )


async def test_a_later_stage_fills_in_what_an_earlier_one_did_not_say(store: Store) -> None:
    await store.record_run(_run(41), [])
    await store.save_job(
        _job(41, stage=STAGES["queued"], runner_name=None, completed_at=None, conclusion=None),
        T0,
    )
    [before] = (await store.run_contexts(REPO, ["tests"], T0 - 1, 100)).values()
    await store.save_job(_job(41, stage=STAGES["in_progress"], completed_at=None), T0 + 1)
    [after] = (await store.run_contexts(REPO, ["tests"], T0 - 1, 100)).values()

    assert before.runner_name is None and after.runner_name == "GitHub Actions 5"


async def test_run_contexts_are_bounded_and_windowed(store: Store) -> None:
    for n in range(5):
        await store.record_run(_run(50 + n, at=T0 + n), [])
    await store.record_run(_run(60, at=T0 - 100), [])  # before the window
    await store.record_run(_run(61, check="lint"), [])  # another check

    contexts = await store.run_contexts(REPO, ["tests"], T0, 3)

    assert list(contexts) == [54, 53, 52]


async def test_a_failed_tests_own_duration_is_kept_with_its_occurrence(store: Store) -> None:
    run = _run(71)
    occurrence = Occurrence(
        repo=REPO,
        check_run_id=71,
        check_name="tests",
        test_key="tests.test_a.t",
        test_id="tests/test_a.py::t",
        signature="TimeoutError",
        generic=False,
        head_sha=run.head_sha,
        at=T0,
        verdict="flaky",
        test_seconds=12.5,
    )
    await store.record_run(run, [occurrence])

    [found] = await store.occurrences(REPO, ["tests.test_a.t"], T0)
    assert found.test_seconds == 12.5
    assert (await store.runs(REPO, "tests", T0))[0].started_at == T0 - 300


async def test_usual_durations_come_from_passing_runs_on_the_default_branch(
    store: Store,
) -> None:
    await store.set_repository(REPO, False, T0, "main")
    on_main = [
        _run(81, pr=None, branch="main", conclusion="success", seconds=100),
        _run(82, pr=None, branch="main", conclusion="success", seconds=140, at=T0 + 1),
    ]
    others = [
        _run(83, pr=None, branch="main", conclusion="failure", seconds=9),  # failed
        _run(84, pr=None, branch="release", conclusion="success", seconds=9),  # not default
        _run(85, branch="main", conclusion="success", seconds=9),  # on a PR
        _run(86, pr=None, branch="main", conclusion="success", seconds=None),  # no start
    ]
    for run in [*on_main, *others]:
        await store.record_run(run, [])
    # A later webhook that names no default branch keeps the one known.
    await store.set_repository(REPO, True, T0 + 2)

    assert await store.usual_durations(REPO, "tests", T0 - 1, 10) == [140.0, 100.0]
    assert await store.usual_durations(REPO, "tests", T0 - 1, 1) == [140.0]
    assert await store.usual_durations("acme/other", "tests", T0 - 1, 10) == []


async def test_each_run_names_its_check_so_a_test_failing_in_two_is_compared_within_each(
    store: Store,
) -> None:
    """A test that fails in two checks (a matrix's Linux and Windows jobs): each run is
    compared with the runs of its own check. Unnamed, a run of either would be compared with
    none, and the odd Linux image would go unflagged."""
    images = {"tests (linux)": "ubuntu-22.04 20240422.1.0", "tests (windows)": "windows-2022 1"}
    run_id = 100
    for check, image in images.items():
        for n in range(9):
            run_id += 1
            run = _run(run_id, check=check, at=T0 + n, conclusion="success")
            await store.record_run(run.model_copy(update={"runner_image": image}), [])
    odd = _run(200, check="tests (linux)", at=T0 + 20)
    await store.record_run(odd.model_copy(update={"runner_image": "ubuntu-20.04 20240422.1"}), [])
    win = _run(201, check="tests (windows)", at=T0 + 21)
    await store.record_run(win.model_copy(update={"runner_image": images["tests (windows)"]}), [])

    contexts = await store.run_contexts(REPO, list(images), T0 - 1, 100)
    failed = [
        FailedRun(check_name=check, context=contexts[run])
        for check, run in (("tests (linux)", 200), ("tests (windows)", 201))
    ]
    explained = explain(failed, list(contexts.values()), [])

    assert {c.check_name for c in contexts.values()} == set(images)
    assert contexts[200].check_name == "tests (linux)"
    linux, windows = explained.not_comparable
    assert linux == (
        "ran on runner image ubuntu-20.04, as 1 of 10 runs of the check did; 9 ran on ubuntu-22.04"
    )
    assert windows is None


async def test_the_attempt_is_the_bots_count_whatever_the_webhook_said(store: Store) -> None:
    """A job's `workflow_job` says `run_attempt: 2` (its workflow run was rerun before the
    bot was installed) while this is the first run of the check the bot recorded on the
    commit: the context's attempt is the bot's 1, the number every page shows beside it."""
    await store.record_run(_run(91, attempt=1), [])
    await store.save_job(_job(91, attempt=2), T0)

    [context] = (await store.run_contexts(REPO, ["tests"], T0 - 1, 100)).values()

    assert context.attempt == 1 and context.labels == ["windows-latest"]


async def test_the_contexts_of_named_runs_are_read_by_id(store: Store) -> None:
    for run_id in (301, 302, 303):
        await store.record_run(_run(run_id, at=T0 + run_id), [])
    await store.save_job(_job(302), T0)

    contexts = await store.contexts_of_runs(REPO, [302, 303, 302, 999])

    assert set(contexts) == {302, 303}  # 999 was never recorded
    assert contexts[302].labels == ["windows-latest"] and contexts[302].check_name == "tests"
    assert contexts[303].job_seconds == 300.0 and contexts[303].labels == []
    assert await store.contexts_of_runs(REPO, []) == {}
    assert await store.contexts_of_runs("acme/other", [302]) == {}
