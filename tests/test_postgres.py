"""What only PostgreSQL promises: replicas sharing one database.

Two store objects stand for two replicas (each has its own pools). The shared behaviour of
both backends is in test_store.py.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest

from bot.demo import final_verdicts, running, settle
from bot.sim.expect import check_expectations
from bot.sim.scenario import builtin_scenario
from bot.store import DatabaseUnavailable, open_store
from bot.store.migrations import migration_files
from bot.store.postgres import PostgresStore

T0 = 1_700_000_000.0
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"


async def test_open_store_picks_postgres_for_both_url_schemes(pg_url: str) -> None:
    for url in (pg_url, pg_url.replace("postgresql://", "postgres://", 1)):
        store = await open_store(url)
        try:
            assert isinstance(store, PostgresStore)
            await store.ping()
        finally:
            await store.close()


async def test_open_store_names_the_schemes_it_knows() -> None:
    with pytest.raises(
        DatabaseUnavailable, match=r"^DATABASE_URL: .*'mysql'.*sqlite:///.*postgresql://"
    ):
        await open_store("mysql://root@127.0.0.1/bot")


async def test_replicas_starting_together_apply_each_migration_once(pg_url: str) -> None:
    stores = await asyncio.gather(*(open_store(pg_url) for _ in range(4)))
    try:
        assert await stores[0].put_delivery("d1", "ping", None, b"{}", T0) is True
        assert await stores[3].put_delivery("d1", "ping", None, b"{}", T0) is False
    finally:
        for store in stores:
            await store.close()
    conn = await asyncpg.connect(pg_url)
    try:
        recorded = await conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
    finally:
        await conn.close()
    assert [(r["version"], r["name"]) for r in recorded] == [
        (version, name) for version, name, _ in migration_files("postgres")
    ]


async def test_pr_lock_serialises_replicas_on_one_pr_only(pg_url: str) -> None:
    first = await open_store(pg_url)
    second = await open_store(pg_url)
    entered = asyncio.Event()

    async def take_same_pr() -> None:
        async with second.pr_lock("o/r", 7):
            entered.set()

    try:
        async with first.pr_lock("o/r", 7):
            waiting = asyncio.create_task(take_same_pr())
            # Another PR, and the same PR number in another repository, go ahead at once.
            async with asyncio.timeout(5):
                async with second.pr_lock("o/r", 8), second.pr_lock("o/other", 7):
                    pass
            await asyncio.sleep(0.3)
            assert not entered.is_set(), "the other replica entered a PR lock held here"
        async with asyncio.timeout(5):
            await waiting
        assert entered.is_set()
    finally:
        await first.close()
        await second.close()


async def test_rerun_budget_holds_across_replicas(pg_url: str) -> None:
    replicas = [await open_store(pg_url) for _ in range(3)]
    try:
        granted = await asyncio.gather(
            *(
                replicas[job % 3].reserve_rerun(
                    "o/r", 7, "c" * 40, "tests", job, per_check=2, per_pr_day=10, now=T0
                )
                for job in range(30)
            )
        )
        assert sum(grant.granted for grant in granted) == 2
        assert await replicas[0].reruns_for("o/r", "c" * 40, "tests") == [0, 0]
    finally:
        for store in replicas:
            await store.close()


async def test_cli_migrate_brings_a_postgres_schema_up_to_date(pg_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["DATABASE_URL"] = pg_url
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "migrate",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "database schema is up to date"
    conn = await asyncpg.connect(pg_url)
    try:
        versions = [r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")]
    finally:
        await conn.close()
    assert versions == [version for version, _, _ in migration_files("postgres")]


async def test_builtin_scenario_end_to_end_on_postgres(pg_url: str, tmp_path: Path) -> None:
    scenario = builtin_scenario()
    async with running(scenario, tmp_path, database_url=pg_url) as (sim, bot):
        assert isinstance(bot.store, PostgresStore)
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(
            bot.store, scenario.repo.full_name, [pr.number for pr in scenario.pull_requests]
        )
        deliveries = await bot.store.list_deliveries(100)

    assert check_expectations(scenario, sim, verdicts) == []
    assert verdicts == {TEST_ID: "flaky"}
    assert len(sim.bot_comments(7)) == 1
    assert len(sim.reruns) == 1
    assert deliveries and {d.state for d in deliveries} == {"done"}
