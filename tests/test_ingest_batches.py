"""Ingest batches that mix new deliveries with redeliveries: each answered for its own id."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.store import Store, open_store

T0 = 1_700_000_000.0


async def _put_all(store: Store, ids: list[str], now: float) -> list[bool]:
    # Started together, so the group commit writes them as one batch.
    return list(
        await asyncio.gather(
            *(
                store.put_delivery(d, "check_run", "completed", f"{d} at {now}".encode(), now)
                for d in ids
            )
        )
    )


async def test_a_batch_mixing_stored_and_new_ids_answers_each(store: Store) -> None:
    assert await _put_all(store, ["a", "c", "e"], T0) == [True, True, True]
    answers = await _put_all(store, ["a", "b", "c", "d", "e"], T0 + 1)
    assert answers == [False, True, False, True, False]
    stored = {d.id: d.payload for d in await store.list_deliveries(100)}
    assert stored == {
        "a": f"a at {T0}".encode(),
        "b": f"b at {T0 + 1}".encode(),
        "c": f"c at {T0}".encode(),
        "d": f"d at {T0 + 1}".encode(),
        "e": f"e at {T0}".encode(),
    }


async def _scenario(stored: list[int], pruned: set[int], batch: list[int]) -> None:
    store = await open_store("sqlite://:memory:")
    try:
        for i in stored:
            # A pruned delivery was finished long ago; a kept one is still waiting.
            done = i in pruned
            await store.put_delivery(f"d{i}", "check_run", "created", b"old", T0, done=done)
        await store.prune_deliveries(T0 + 1)
        kept = set(stored) - pruned
        answers = await _put_all(store, [f"d{i}" for i in batch], T0 + 2)
        assert answers == [i not in kept for i in batch]
        rows = {d.id: d.payload for d in await store.list_deliveries(1000)}
        assert set(rows) == {f"d{i}" for i in kept | set(batch)}
        assert all(rows[f"d{i}"] == b"old" for i in kept)
    finally:
        await store.close()


@settings(max_examples=100, deadline=None)
@given(
    stored=st.lists(st.integers(0, 30), unique=True, max_size=15),
    pruned=st.sets(st.integers(0, 30), max_size=10),
    batch=st.lists(st.integers(0, 30), unique=True, min_size=1, max_size=15),
)
def test_new_is_answered_for_exactly_the_ids_not_stored(
    stored: list[int], pruned: set[int], batch: list[int]
) -> None:
    # Deleting rows first, the newest among them, lets new rows take their rowids again.
    asyncio.run(_scenario(stored, pruned & set(stored), batch))
