"""Both stores keep the newest state of each pull request, and say which events wait."""

from __future__ import annotations

from bot.shared import PullSummary
from bot.store import Store

REPO = "acme/bus"
T0 = 1_700_000_000.0


def pull(
    head: str,
    updated_at: float,
    state: str = "open",
    number: int = 7,
    comments: int | None = None,
) -> PullSummary:
    return PullSummary(
        number=number,
        state=state,
        author="octo-dev",
        head_sha=head * 40,
        base_sha="b" * 40,
        base_ref="main",
        changed_files=3,
        updated_at=updated_at,
        comments=comments,
    )


async def test_a_pull_is_kept_and_a_newer_state_replaces_it(store: Store) -> None:
    assert await store.pull(REPO, 7) is None
    await store.save_pull(REPO, pull("a", T0), read=True)
    assert await store.pull(REPO, 7) == pull("a", T0)
    await store.save_pull(REPO, pull("c", T0 + 5), read=False)
    assert await store.pull(REPO, 7) == pull("c", T0 + 5)
    assert await store.pull("acme/other", 7) is None
    assert await store.pull(REPO, 8) is None


async def test_a_pulls_comment_count_is_kept_and_unknown_stays_unknown(store: Store) -> None:
    await store.save_pull(REPO, pull("a", T0, comments=0), read=False)
    assert (await store.pull(REPO, 7)) == pull("a", T0, comments=0)
    await store.save_pull(REPO, pull("a", T0 + 1, comments=2), read=True)
    assert (await store.pull(REPO, 7)) == pull("a", T0 + 1, comments=2)
    await store.save_pull(REPO, pull("a", T0 + 2), read=False)  # a payload without the count
    kept = await store.pull(REPO, 7)
    assert kept is not None and kept.comments is None


async def test_an_older_state_handled_late_never_replaces_a_newer_one(store: Store) -> None:
    await store.save_pull(REPO, pull("c", T0 + 5), read=False)
    await store.save_pull(REPO, pull("a", T0), read=False)  # a redelivered old push
    await store.save_pull(REPO, pull("a", T0, state="closed"), read=True)
    assert await store.pull(REPO, 7) == pull("c", T0 + 5)


async def test_two_events_of_one_second_with_different_heads_are_not_trusted(
    store: Store,
) -> None:
    await store.save_pull(REPO, pull("a", T0), read=False)
    await store.save_pull(REPO, pull("a", T0), read=False)  # the same state again
    assert await store.pull(REPO, 7) == pull("a", T0)
    # Which of two pushes in one second came last cannot be told: the next triage reads.
    await store.save_pull(REPO, pull("c", T0), read=False)
    assert await store.pull(REPO, 7) is None
    await store.save_pull(REPO, pull("a", T0), read=False)
    assert await store.pull(REPO, 7) is None
    # So can a close and a reopen within one second.
    await store.save_pull(REPO, pull("c", T0), read=True)
    assert await store.pull(REPO, 7) == pull("c", T0)
    await store.save_pull(REPO, pull("c", T0, state="closed"), read=False)
    assert await store.pull(REPO, 7) is None
    # A read is the truth at its time; a later event, the truth at a later time.
    await store.save_pull(REPO, pull("c", T0, state="closed"), read=True)
    assert await store.pull(REPO, 7) == pull("c", T0, state="closed")
    await store.save_pull(REPO, pull("d", T0 + 1), read=False)
    assert await store.pull(REPO, 7) == pull("d", T0 + 1)


async def test_waiting_names_pending_and_claimed_deliveries_of_an_event(store: Store) -> None:
    assert await store.waiting("pull_request") is False
    await store.put_delivery("p1", "pull_request", "synchronize", b"{}", T0)
    await store.put_delivery("c1", "check_run", "completed", b"{}", T0, done=True)
    assert await store.waiting("pull_request") is True
    assert await store.waiting("check_run") is False
    (claimed,) = await store.claim(T0, 60.0, 10)
    assert claimed.id == "p1"
    assert await store.waiting("pull_request") is True
    assert claimed.claim_token is not None
    await store.complete("p1", claimed.claim_token, T0 + 1)
    assert await store.waiting("pull_request") is False
