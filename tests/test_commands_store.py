"""Both stores held to one behaviour for reruns' per-PR cap, `/flaky` comments and feedback."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from bot.store import Store
from bot.store.command_models import (
    DAY_SECONDS,
    HOUR_SECONDS,
    Refusals,
    RerunGrant,
    RerunLimit,
)

T0 = 1_700_000_000.0
SHA = "a" * 40


async def test_reruns_of_one_pr_are_capped_per_day_across_its_checks(store: Store) -> None:
    async def reserve(job_id: int, check: str, *, pr: int = 7, now: float = T0) -> RerunGrant:
        head = SHA if pr == 7 else "b" * 40
        return await store.reserve_rerun(
            "o/r", pr, head, check, job_id, per_check=1, per_pr_day=2, now=now
        )

    assert (await reserve(1, "tests")).granted
    assert (await reserve(2, "lint")).granted
    refused = await reserve(3, "docs")
    assert refused.model_dump() == {
        "granted": False,
        "limit": RerunLimit.PER_PR_DAY,
        "status": 0,
        "resumed": False,
    }
    assert (await reserve(4, "docs", pr=8)).granted
    # A day later the PR's cap is free again; the per-check budget of its commit is not.
    later = T0 + DAY_SECONDS + 1
    assert (await reserve(3, "docs", now=later)).granted
    again = await reserve(5, "tests", now=later)
    assert again.limit is RerunLimit.PER_CHECK


async def test_an_answered_rerun_reports_its_status_instead_of_asking_again(store: Store) -> None:
    first = await store.reserve_rerun(
        "o/r", 7, SHA, "tests", 11, per_check=3, per_pr_day=10, now=T0
    )
    assert first.granted
    await store.finish_rerun("o/r", 11, 403)
    again = await store.reserve_rerun(
        "o/r", 7, SHA, "tests", 11, per_check=3, per_pr_day=10, now=T0 + 5
    )
    assert (again.granted, again.status, again.limit) == (False, 403, None)


async def test_a_reservation_is_looked_up_and_only_an_unanswered_one_given_back(
    store: Store,
) -> None:
    assert await store.rerun_status("o/r", 21) is None
    for job_id in (21, 22):
        grant = await store.reserve_rerun(
            "o/r", 7, SHA, "tests", job_id, per_check=2, per_pr_day=10, now=T0
        )
        assert grant.granted
    await store.finish_rerun("o/r", 22, 201)
    assert (await store.rerun_status("o/r", 21), await store.rerun_status("o/r", 22)) == (0, 201)
    await store.release_rerun("o/r", 21)
    await store.release_rerun("o/r", 22)  # answered: kept
    assert await store.rerun_status("o/r", 21) is None
    assert await store.reruns_for("o/r", SHA, "tests") == [201]


async def claim(
    store: Store,
    comment_id: int,
    *,
    delivery: str = "d1",
    login: str = "octo",
    pr: int = 7,
    per_hour: int = 10,
    per_repo_hour: int = 100,
    at: float = T0,
    repo: str = "o/r",
) -> str:
    found = await store.claim_command(
        repo,
        pr,
        comment_id,
        delivery,
        login,
        per_hour=per_hour,
        per_repo_hour=per_repo_hour,
        now=at,
    )
    return str(found)


async def test_a_command_comment_is_acted_on_by_one_delivery_until_it_finishes(
    store: Store,
) -> None:
    assert await claim(store, 900) == "act"
    # The same delivery retried (a crash, a transient error) acts again, until it finishes.
    assert await claim(store, 900, at=T0 + 1) == "act"
    # Another delivery of the same comment, at the same time: already taken.
    assert await claim(store, 900, delivery="d2") == "handled"
    await store.finish_command("o/r", 900)
    assert await claim(store, 900, at=T0 + 2) == "handled"
    # Comment ids are per repository.
    assert await claim(store, 900, repo="o/other") == "act"


async def test_commands_are_limited_per_person_and_pr_per_hour(store: Store) -> None:
    def at_most_two(comment_id: int, **where: Any) -> Awaitable[str]:
        return claim(store, comment_id, delivery=f"d{comment_id}", per_hour=2, **where)

    assert [await at_most_two(1), await at_most_two(2), await at_most_two(3)] == [
        "act",
        "act",
        "limited",
    ]
    assert await at_most_two(3) == "limited"  # the same delivery retried
    assert await at_most_two(4, login="mo") == "act"
    assert await at_most_two(5, pr=8) == "act"
    # Refused comments do not count: an hour after the first two, the limit is free again.
    assert await at_most_two(6, at=T0 + HOUR_SECONDS + 1) == "act"
    await store.finish_command("o/r", 3)
    assert await at_most_two(3) == "handled"


async def test_commands_are_limited_per_person_across_the_repos_prs(store: Store) -> None:
    """A person with many PRs (or commenting on many) has one budget for all of them."""

    def within_three(comment_id: int, pr: int, **where: Any) -> Awaitable[str]:
        return claim(store, comment_id, delivery=f"d{comment_id}", pr=pr, per_repo_hour=3, **where)

    assert [await within_three(n, pr=n) for n in (1, 2, 3)] == ["act"] * 3
    assert await within_three(4, pr=4) == "limited-in-repo"
    assert await within_three(4, pr=4) == "limited-in-repo"  # the same delivery retried
    assert await within_three(5, pr=1, login="mo") == "act"
    assert await within_three(6, pr=1, repo="o/other") == "act"
    assert await within_three(7, pr=1, at=T0 + HOUR_SECONDS + 1) == "act"
    # Over both budgets, the PR's is named: the one that frees when the PR's calm down.
    assert await claim(store, 8, delivery="d8", pr=1, per_hour=1, per_repo_hour=1) == "limited"


async def test_concurrent_commands_on_many_prs_never_exceed_the_repos_limit(
    store: Store,
) -> None:
    claims = await asyncio.gather(
        *(claim(store, n, delivery=f"d{n}", pr=n, per_repo_hour=3) for n in range(12))
    )
    assert sorted(claims) == ["act"] * 3 + ["limited-in-repo"] * 9


async def test_concurrent_commands_never_exceed_the_hourly_limit(store: Store) -> None:
    claims = await asyncio.gather(
        *(claim(store, comment, delivery=f"d{comment}", per_hour=3) for comment in range(12))
    )
    assert sorted(claims) == ["act"] * 3 + ["limited"] * 9


async def test_feedback_is_kept_once_per_person_and_test(store: Store) -> None:
    assert await store.feedback_for_pr("o/r", 7) == {}
    assert await store.add_feedback("o/r", 7, "tests/test_a.py::test_x", "octo", T0) is True
    assert await store.add_feedback("o/r", 7, "tests/test_a.py::test_x", "octo", T0) is False
    assert await store.add_feedback("o/r", 7, "tests/test_a.py::test_x", "mo", T0) is True
    assert await store.add_feedback("o/r", 7, "*", "octo", T0) is True
    assert await store.add_feedback("o/r", 8, "*", "mo", T0) is True
    assert await store.feedback_for_pr("o/r", 7) == {
        "*": ["octo"],
        "tests/test_a.py::test_x": ["mo", "octo"],
    }


async def test_a_reservation_left_unanswered_is_granted_again_as_resumed(store: Store) -> None:
    """A crash between asking GitHub and recording its answer: the next try is told so."""

    async def reserve(at: float) -> RerunGrant:
        return await store.reserve_rerun(
            "o/r", 7, SHA, "tests", 12, per_check=1, per_pr_day=10, now=at
        )

    first = await reserve(T0)
    again = await reserve(T0 + 5)
    await store.finish_rerun("o/r", 12, 201)
    answered = await reserve(T0 + 9)

    assert (first.granted, first.resumed) == (True, False)
    assert (again.granted, again.resumed) == (True, True)
    assert (answered.granted, answered.resumed, answered.status) == (False, False, 201)


async def refuse(
    store: Store, comment_id: int, *, login: str = "octo", pr: int = 7, at: float = T0
) -> tuple[int, int]:
    """Claim and refuse a comment: how many of the PR's were refused before it (login's, all)."""
    await claim(store, comment_id, delivery=f"d{comment_id}", login=login, pr=pr, at=at)
    found = await store.refuse_command("o/r", pr, comment_id, login, now=at)
    return found.by_login, found.on_pr


async def test_refusals_are_counted_per_person_in_the_repo_and_per_pr_within_the_hour(
    store: Store,
) -> None:
    assert await refuse(store, 1) == (0, 0)
    assert await refuse(store, 2, at=T0 + 1) == (1, 1)
    assert await refuse(store, 3, login="mo", at=T0 + 2) == (0, 2)
    # A person's refusals count on every PR of the repository: one reply, not one per PR.
    assert await refuse(store, 4, pr=8, at=T0 + 3) == (2, 0)
    # Counted once: a retry of the same delivery is told the same, later or not.
    assert await store.refuse_command("o/r", 7, 2, "octo", now=T0 + 30) == Refusals(
        by_login=1, on_pr=1
    )
    # Comments acted on are not refusals.
    await claim(store, 5, delivery="d5", at=T0 + 4)
    assert await refuse(store, 6, at=T0 + 5) == (3, 3)
    # An hour after the first, it no longer counts.
    assert await refuse(store, 7, at=T0 + HOUR_SECONDS + 0.5) == (3, 3)


async def test_concurrent_refusals_are_counted_one_after_another(store: Store) -> None:
    counts = await asyncio.gather(*(refuse(store, comment) for comment in range(12)))

    assert sorted(counts) == [(n, n) for n in range(12)]
