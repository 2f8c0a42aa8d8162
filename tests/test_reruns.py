"""The rerun policy (which failed jobs may be rerun, and the plain words when not) and the
notes GitHub's answers become. End to end it is exercised in tests/test_commands_e2e.py."""

from __future__ import annotations

import pytest

from bot.config import RepoConfig
from bot.events import App, CheckRun
from bot.github.api import PullSummary
from bot.handlers.reruns import Refusal, answer_note, refusal
from bot.triage.models import Decision, Evidence, EvidenceKind, Failure, Verdict

HEAD = "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
NOTE_LIMIT = 120  # the comment cuts a rerun note past this many characters


def run(*, actions: bool = True) -> CheckRun:
    return CheckRun(
        id=41,
        name="tests (3.12)",
        head_sha=HEAD,
        status="completed",
        conclusion="failure",
        app=App(id=15368, slug="github-actions" if actions else "circleci-checks"),
    )


def pull(*, state: str = "open", head: str = HEAD) -> PullSummary:
    return PullSummary(
        number=7,
        state=state,
        author="octo-dev",
        head_sha=head,
        base_sha="9" * 40,
        base_ref="main",
        changed_files=2,
    )


def decision(verdict: Verdict, *items: EvidenceKind) -> Decision:
    failure = Failure(test_id=f"tests/test_{verdict}.py::t", name="t", framework="pytest")
    return Decision(
        failure=failure,
        verdict=verdict,
        evidence="because",
        items=[Evidence(kind=kind, text="why") for kind in items],
    )


def policy(
    decisions: list[Decision],
    *,
    requested: bool = False,
    config: RepoConfig | None = None,
    actions: bool = True,
    state: str = "open",
    pr_head: str = HEAD,
    attempt: int = 1,
) -> Refusal | None:
    return refusal(
        run(actions=actions),
        pull(state=state, head=pr_head),
        decisions,
        config or RepoConfig(),
        requested=requested,
        attempt=attempt,
    )


@pytest.mark.parametrize("verdict", [Verdict.FLAKY, Verdict.UNRELATED, Verdict.INFRA])
def test_flaky_unrelated_and_infra_failures_may_be_rerun(verdict: Verdict) -> None:
    assert policy([decision(verdict), decision(Verdict.UNRELATED)]) is None


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        (Verdict.RELATED, "a failure touches code this PR changed"),
        (Verdict.BROKEN_BASE, "the failure happens on the base branch too"),
    ],
)
def test_one_failure_that_is_not_rerunnable_stops_the_whole_job(
    verdict: Verdict, reason: str
) -> None:
    found = policy([decision(Verdict.UNRELATED), decision(verdict)])
    assert found == Refusal(f"not rerun: {reason}", quiet=True)
    # A request gets the same answer.
    assert policy([decision(verdict)], requested=True) == found


def test_the_most_serious_reason_is_named_and_a_mass_failure_before_all() -> None:
    mixed = [decision(Verdict.UNKNOWN), decision(Verdict.RELATED)]
    assert policy(mixed) == Refusal("not rerun: a failure touches code this PR changed", True)
    mass = [decision(Verdict.UNKNOWN, EvidenceKind.MASS), decision(Verdict.RELATED)]
    assert policy(mass) == Refusal(
        "not rerun: too many tests failed at once (a mass failure)", quiet=True
    )
    assert policy([]) == Refusal("not rerun: not every failure could be classified", True)


def test_an_unknown_failure_is_rerun_once_per_commit_and_check() -> None:
    """The cheapest evidence there is: rerun on the first attempt, automatic or asked for,
    and never again on the commit, even when max_reruns allows more."""
    unknown = [decision(Verdict.UNRELATED), decision(Verdict.UNKNOWN)]
    assert policy(unknown) is None
    assert policy(unknown, requested=True) is None
    once = Refusal(
        "not rerun: a failure the bot cannot classify is rerun only once per commit and check",
        quiet=True,
    )
    assert policy(unknown, attempt=2, config=RepoConfig(max_reruns=3)) == once
    assert policy(unknown, attempt=2, requested=True) == once
    # A job with no test identified, and a mass failure, are still not rerun.
    no_test = Decision(failure=None, verdict=Verdict.UNKNOWN, evidence="no failed test")
    assert policy([no_test]) == Refusal("not rerun: not every failure could be classified", True)
    mass = [decision(Verdict.UNKNOWN, EvidenceKind.MASS)]
    assert policy(mass) == Refusal(
        "not rerun: too many tests failed at once (a mass failure)", True
    )
    # A related failure beside it still blocks the rerun.
    related = [decision(Verdict.UNKNOWN), decision(Verdict.RELATED)]
    assert policy(related) == Refusal("not rerun: a failure touches code this PR changed", True)


def test_rerun_unknown_false_keeps_unknown_failures_from_any_rerun() -> None:
    off = RepoConfig(rerun_unknown=False)
    found = policy([decision(Verdict.UNKNOWN)], config=off)
    assert found == Refusal("not rerun: not every failure could be classified", quiet=True)
    assert policy([decision(Verdict.UNKNOWN)], config=off, requested=True) == found
    # rerun: false stops the automatic rerun of an unknown failure too.
    assert policy([decision(Verdict.UNKNOWN)], config=RepoConfig(rerun=False)) == Refusal(
        "not rerun: reruns are turned off in .github/flaky.yml", quiet=True
    )


def test_rerun_false_stops_only_the_automatic_rerun_and_zero_reruns_stops_both() -> None:
    off = RepoConfig(rerun=False)
    unrelated = [decision(Verdict.UNRELATED)]
    assert policy(unrelated, config=off) == Refusal(
        "not rerun: reruns are turned off in .github/flaky.yml", quiet=True
    )
    assert policy(unrelated, config=off, requested=True) is None
    never = RepoConfig(max_reruns=0)
    assert policy(unrelated, config=never, requested=True) is not None


def test_a_closed_pr_a_stale_commit_and_another_apps_check_are_said_plainly() -> None:
    unrelated = [decision(Verdict.UNRELATED)]
    assert policy(unrelated, state="closed") == Refusal("not rerun: the pull request is closed")
    assert policy(unrelated, pr_head="5" * 40) == Refusal(
        "not rerun: 3f1c2a9 is no longer the head of the pull request"
    )
    assert policy(unrelated, actions=False) == Refusal(
        "not rerun: tests (3.12) is not a GitHub Actions check, so only the app that created "
        "it can rerun it"
    )


@pytest.mark.parametrize(
    ("status", "note"),
    [
        (201, "rerun requested (attempt 2)"),
        (
            403,
            "not rerun: GitHub refused (403): no permission, a run over 30 days old, "
            "or 50 reruns reached",
        ),
        (404, "not rerun: GitHub no longer finds this job (404)"),
        (422, "not rerun: GitHub refused the rerun (422)"),
    ],
)
def test_githubs_answers_in_plain_words_short_enough_for_the_comment(
    status: int, note: str
) -> None:
    assert answer_note(status, 1) == note
    assert len(note) <= NOTE_LIMIT
