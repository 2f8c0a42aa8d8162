"""Both stores held to one behaviour for quarantines: begun, renewed, ended by a person, by
expiry (lazily and by its job), and kept on record after they end."""

from __future__ import annotations

import asyncio

from bot.store import Store
from bot.triage.quarantine import DAY, Ended, Quarantine, Source

T0 = 1_700_000_000.0
REPO = "acme/bus"
KEY = "tests.bus.test_core.test_publish_waits_for_ack"


def quarantine(key: str = KEY, *, by: str = "mo", days: float = 14, at: float = T0) -> Quarantine:
    return Quarantine(
        repo=REPO,
        test_key=key,
        test_id=key,
        issue_number=12,
        by=by,
        owner="@acme/bus-team",
        since=at,
        expires_at=at + days * DAY,
        source=Source.COMMAND,
        reason="/flaky quarantine on #12",
    )


async def test_a_quarantine_is_on_until_its_expiry_and_then_is_not(store: Store) -> None:
    kept, renewed = await store.quarantine(quarantine(), T0)
    assert not renewed
    assert kept == quarantine()
    assert await store.active_quarantines(REPO, T0 + DAY) == [kept]
    assert await store.active_quarantines(REPO, T0 + DAY, [KEY]) == [kept]
    assert await store.active_quarantines(REPO, T0 + DAY, ["other"]) == []
    assert await store.active_quarantines(REPO, T0 + DAY, []) == []
    assert await store.active_quarantines("acme/other", T0 + DAY) == []
    # Read lazily: past its expiry it is off, though nothing ended it yet.
    assert await store.active_quarantines(REPO, T0 + 14 * DAY) == []


async def test_quarantining_again_renews_the_one_on_and_keeps_its_owner_and_start(
    store: Store,
) -> None:
    await store.quarantine(quarantine(), T0)
    later = T0 + 10 * DAY
    renewal = quarantine(by="lee", at=later).model_copy(update={"owner": "lee"})
    kept, renewed = await store.quarantine(renewal, later)
    assert renewed
    assert (kept.since, kept.owner, kept.by) == (T0, "@acme/bus-team", "lee")
    assert kept.expires_at == later + 14 * DAY
    assert len(await store.quarantine_history(REPO, KEY)) == 1


async def test_an_expired_quarantine_is_ended_at_its_expiry_when_the_test_is_quarantined_again(
    store: Store,
) -> None:
    await store.quarantine(quarantine(days=1), T0)
    later = T0 + 5 * DAY
    kept, renewed = await store.quarantine(quarantine(at=later), later)
    assert not renewed
    assert kept.since == later
    first, second = await store.quarantine_history(REPO, KEY)
    assert (first.ended_at, first.ended_by) == (T0 + DAY, Ended.EXPIRED)
    assert second == kept


async def test_unquarantine_ends_only_the_ones_on(store: Store) -> None:
    await store.quarantine(quarantine(), T0)
    await store.quarantine(quarantine("other.test", days=1), T0)
    now = T0 + 2 * DAY
    ended = await store.end_quarantines(REPO, [KEY, "other.test", "never"], "mo", now)
    assert [(q.test_key, q.ended_at, q.ended_by) for q in ended] == [(KEY, now, "mo")]
    assert await store.active_quarantines(REPO, now) == []
    assert await store.end_quarantines(REPO, [KEY], "mo", now) == []


async def test_expired_quarantines_are_ended_once_at_their_expiry(store: Store) -> None:
    await store.quarantine(quarantine(days=1), T0)
    await store.quarantine(quarantine("other.test", days=3), T0)
    assert await store.end_expired_quarantines(REPO, T0 + DAY / 2) == []
    (ended,) = await store.end_expired_quarantines(REPO, T0 + 2 * DAY)
    assert (ended.test_key, ended.ended_at, ended.ended_by) == (KEY, T0 + DAY, Ended.EXPIRED)
    assert await store.end_expired_quarantines(REPO, T0 + 2 * DAY) == []
    assert [q.test_key for q in await store.active_quarantines(REPO, T0 + 2 * DAY)] == [
        "other.test"
    ]


async def test_concurrent_quarantines_of_one_test_keep_one_open(store: Store) -> None:
    results = await asyncio.gather(
        *(store.quarantine(quarantine(by=f"u{i}"), T0) for i in range(5))
    )
    assert len({kept.since for kept, _ in results}) == 1
    assert len(await store.active_quarantines(REPO, T0)) == 1


async def test_an_owner_is_reminded_once_before_the_end_and_again_after_a_renewal(
    store: Store,
) -> None:
    notice = 2 * DAY
    await store.quarantine(quarantine(), T0)
    await store.quarantine(quarantine("short.test", days=1), T0)
    assert await store.quarantines_to_remind(REPO, T0 + DAY / 2, notice) == []
    (due,) = await store.quarantines_to_remind(REPO, T0 + 12.5 * DAY, notice)
    assert (due.test_key, due.reminded_at) == (KEY, T0 + 12.5 * DAY)
    assert await store.quarantines_to_remind(REPO, T0 + 13 * DAY, notice) == []
    renewed = T0 + 13 * DAY
    await store.quarantine(quarantine(at=renewed), renewed)
    assert await store.quarantines_to_remind(REPO, renewed + DAY, notice) == []
    (again,) = await store.quarantines_to_remind(REPO, renewed + 12.5 * DAY, notice)
    assert again.test_key == KEY
    # Ended or expired: no reminder.
    assert await store.quarantines_to_remind(REPO, renewed + 15 * DAY, notice) == []


async def test_a_weekly_digest_is_due_a_week_after_the_start_then_after_the_last(
    store: Store,
) -> None:
    week = 7 * DAY
    await store.quarantine(quarantine(days=20), T0)
    assert await store.quarantines_to_digest(REPO, T0 + 6 * DAY, week) == []
    (due,) = await store.quarantines_to_digest(REPO, T0 + 7 * DAY, week)
    assert due.digested_at == T0 + 7 * DAY
    assert await store.quarantines_to_digest(REPO, T0 + 8 * DAY, week) == []
    (again,) = await store.quarantines_to_digest(REPO, T0 + 14 * DAY, week)
    assert again.test_key == KEY
    # Past its expiry: no digest.
    assert await store.quarantines_to_digest(REPO, T0 + 30 * DAY, week) == []
