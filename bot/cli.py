"""`flakybot serve|demo|deliveries|migrate`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bot.config import Settings
from bot.store import DeliveryState, open_store

log = logging.getLogger("flakybot")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="flakybot", description="Triage failed CI checks on pull requests."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("serve", help="run the GitHub App (webhook server and worker)")

    demo = commands.add_parser(
        "demo", help="run the real bot against the built-in GitHub simulator, end to end"
    )
    demo.add_argument("--scenario", type=Path, help="a scenario file (default: the built-in one)")
    demo.add_argument("--json", action="store_true", help="print a machine-readable record")

    deliveries = commands.add_parser("deliveries", help="list webhook deliveries and their state")
    deliveries.add_argument("--failed", action="store_true", help="only dead-lettered deliveries")
    deliveries.add_argument("--replay", metavar="ID", help="queue one delivery again")
    deliveries.add_argument("--limit", type=int, default=50)

    commands.add_parser("migrate", help="apply database migrations and exit")

    args = parser.parse_args(argv)
    if args.command == "demo":
        from bot.demo import run_demo

        return asyncio.run(run_demo(args.scenario, as_json=args.json))
    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "serve":
        return asyncio.run(serve(settings))
    if args.command == "deliveries":
        return asyncio.run(list_deliveries(settings, args.failed, args.replay, args.limit))
    return asyncio.run(migrate(settings))


async def serve(settings: Settings) -> int:
    from bot.runtime import Bot

    missing = settings.missing_for_serve()
    if missing:
        print(f"flakybot serve: cannot start: set {', '.join(missing)}", file=sys.stderr)
        return 2
    bot = await Bot.create(settings)
    url = await bot.start()
    log.info("listening on %s%s", url, settings.webhook_path)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping")
    await bot.close()
    return 0


async def list_deliveries(settings: Settings, failed: bool, replay: str | None, limit: int) -> int:
    store = await open_store(settings.database_url)
    try:
        if replay is not None:
            if not await store.replay(replay, time.time()):
                print(f"no delivery {replay!r}", file=sys.stderr)
                return 1
            print(f"delivery {replay} queued again")
            return 0
        states = [DeliveryState.DEAD] if failed else None
        rows = await store.list_deliveries(limit, states)
        for d in rows:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(d.received_at))
            event = f"{d.event}.{d.action}" if d.action else d.event
            error = f"  {d.last_error}" if d.last_error else ""
            print(f"{d.id}  {when}Z  {event:<32} {d.state:<8} attempts={d.attempts}{error}")
        if not rows:
            print("no dead-lettered deliveries" if failed else "no deliveries")
        return 0
    finally:
        await store.close()


async def migrate(settings: Settings) -> int:
    store = await open_store(settings.database_url)
    await store.close()
    print("database schema is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
