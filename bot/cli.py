"""`flakybot serve|setup|demo|triage|config|parse|deliveries|migrate`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import ValidationError

from bot.config import ConfigError, Settings, api_url_from_env, settings_problems
from bot.logs import configure
from bot.report.text import reveal
from bot.store import DatabaseUnavailable, DeliveryState, open_store
from bot.triage.reports import FORMATS as REPORT_FORMATS

if TYPE_CHECKING:
    from bot.triage.models import Extraction

log = logging.getLogger("flakybot")


class _Revealing(io.TextIOBase):
    """A terminal's stream on which control and hidden characters show as <U+XXXX>
    (`reveal`): a zip member's name, a test id or a log line printed raw could carry escape
    sequences that move the cursor, retitle the window or hide what was printed, and bidi
    controls that reorder it. Line feeds and tabs pass."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(reveal(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding


@contextlib.contextmanager
def _revealing_output() -> Iterator[None]:
    """Everything the commands print (theirs, argparse's, the log's) goes through `reveal`."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Revealing(out), _Revealing(err)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = out, err


def main(argv: Sequence[str] | None = None) -> int:
    with _revealing_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command in ("parse", "triage", "demo", "setup", "config"):
        return _run_without_settings(args)
    try:
        settings = Settings()
    except ValidationError as exc:
        problems = "; ".join(settings_problems(exc))
        print(f"flakybot {args.command}: cannot start: {problems}", file=sys.stderr)
        return 2
    # `serve` writes for a log pipeline; the one-off commands for the person who ran them.
    configure(
        settings.log_format if args.command == "serve" else "text",
        settings.log_level,
        settings.secret_values(),
    )
    try:
        return _run_with_settings(args, settings)
    except DatabaseUnavailable as exc:
        print(f"flakybot {args.command}: cannot start: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flakybot", description="Triage failed CI checks on pull requests."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the GitHub App (webhook server and worker)")
    _setup_arguments(
        commands.add_parser(
            "setup",
            help="register the GitHub App from app.yml in a browser and write its credentials "
            "to .env",
        )
    )
    _demo_arguments(
        commands.add_parser(
            "demo", help="run the real bot against the built-in GitHub simulator, end to end"
        )
    )
    _triage_arguments(
        commands.add_parser(
            "triage",
            help="triage a pull request's failed checks with a personal token, read-only: "
            "prints the comment the bot would post",
        )
    )
    _config_arguments(
        commands.add_parser(
            "config",
            help="check a .github/flaky.yml (a file, or a repository's with a token) and print "
            "the settings that apply; print its JSON Schema",
        )
    )
    _deliveries_arguments(
        commands.add_parser("deliveries", help="list webhook deliveries and their state")
    )
    commands.add_parser("migrate", help="apply database migrations and exit")
    _parse_arguments(
        commands.add_parser(
            "parse",
            help="print the failed tests a job log or test report names, offline",
            epilog=PARSE_EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    return parser


def _demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--scenario", type=Path, help="a scenario file (default: the built-in one)")
    demo.add_argument("--json", action="store_true", help="print a machine-readable record")
    demo.add_argument(
        "--serve", action="store_true", help="keep serving the dashboard until interrupted"
    )
    demo.add_argument("--port", type=int, default=0, help="the bot's port (default: any free one)")


def _setup_arguments(setup: argparse.ArgumentParser) -> None:
    setup.add_argument(
        "--webhook-url",
        help="where GitHub sends webhooks, https://HOST/api/github/webhooks "
        "(default: $WEBHOOK_PROXY_URL, a smee.io channel for a local trial)",
    )
    setup.add_argument("--org", help="register the App for this organisation (default: you)")
    setup.add_argument("--name", help="the App's name on GitHub (default: app.yml's)")
    setup.add_argument(
        "--env-file", type=Path, default=Path(".env"), help="where to write (default: .env)"
    )
    setup.add_argument(
        "--force",
        action="store_true",
        help="replace the App's lines of an existing env file, keeping the others",
    )
    setup.add_argument(
        "--manifest", type=Path, help="the manifest (default: app.yml here, else the checkout's)"
    )
    setup.add_argument(
        "--port", type=int, default=0, help="the local page's port (default: any free one)"
    )
    setup.add_argument(
        "--github-url",
        help="GitHub's web address (default: $GHE_PROTOCOL://$GHE_HOST, else github.com)",
    )
    setup.add_argument(
        "--api-url",
        help="the REST API root (default: $GITHUB_API_URL, else $GHE_HOST's /api/v3, "
        "else api.github.com)",
    )
    setup.add_argument("--no-browser", action="store_true", help="only print the page's address")


def _triage_arguments(triage: argparse.ArgumentParser) -> None:
    triage.add_argument("target", metavar="OWNER/REPO#N", help="or the pull request's URL")
    triage.add_argument(
        "--token", help="a personal access token (default: $GITHUB_TOKEN, which keeps it out of ps)"
    )
    triage.add_argument(
        "--api-url",
        help="the REST API root (default: $GITHUB_API_URL, else $GHE_HOST's, else api.github.com)",
    )
    triage.add_argument("--json", action="store_true", help="print a machine-readable record")


def _config_arguments(config: argparse.ArgumentParser) -> None:
    actions = config.add_subparsers(dest="action", required=True)
    check = actions.add_parser(
        "check",
        help="print a settings file's problems and the effective settings; exit 1 on problems",
    )
    check.add_argument("target", metavar="FILE|OWNER/REPO")
    check.add_argument(
        "--token",
        help="for OWNER/REPO: a token that can read it (default: $GITHUB_TOKEN)",
    )
    check.add_argument(
        "--api-url",
        help="the REST API root (default: $GITHUB_API_URL, else $GHE_HOST's, else api.github.com)",
    )
    check.add_argument("--json", action="store_true", help="print a machine-readable record")
    actions.add_parser("schema", help="print the JSON Schema of .github/flaky.yml")


def _deliveries_arguments(deliveries: argparse.ArgumentParser) -> None:
    deliveries.add_argument("--failed", action="store_true", help="only dead-lettered deliveries")
    deliveries.add_argument("--replay", metavar="ID", help="queue one delivery again")
    deliveries.add_argument("--limit", type=int, default=50)


def _parse_arguments(parse: argparse.ArgumentParser) -> None:
    parse.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parse.add_argument(
        "--format",
        choices=PARSE_FORMATS,
        default="auto",
        help="what FILE is (auto: told from its content; the formats are listed below)",
    )
    parse.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list, one entry per report and per job of a log",
    )
    parse.add_argument(
        "--scanner",
        choices=SCANNER_CHOICES,
        default="auto",
        help="the log pre-filter's search (auto: hyperscan when installed, else re2)",
    )


def _run_without_settings(args: argparse.Namespace) -> int:
    """`parse`, `triage` and `demo`: they need no App settings, so none are read."""
    if args.command == "parse":
        from bot.triage.logscan import use_engine

        try:
            use_engine(args.scanner)
        except ValueError as exc:
            print(f"flakybot parse: {exc}", file=sys.stderr)
            return 2
        return parse_files(args.files, args.format, as_json=args.json)
    if args.command == "triage":
        from bot.tryout import command

        return command(args.target, token=args.token, api_url=args.api_url, as_json=args.json)
    if args.command == "setup":
        return setup(args)
    if args.command == "config":
        from bot import config_check

        if args.action == "schema":
            print(config_check.schema_text(), end="")
            return 0
        return config_check.command(
            args.target, token=args.token, api_url=args.api_url, as_json=args.json
        )
    from bot.demo import run_demo

    try:
        return asyncio.run(
            run_demo(args.scenario, as_json=args.json, serve=args.serve, port=args.port)
        )
    except KeyboardInterrupt:  # how `demo --serve` is meant to end
        return 0


def _run_with_settings(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        with asyncio.Runner(loop_factory=_fast_loop_factory()) as runner:
            return runner.run(serve(settings))
    if args.command == "deliveries":
        return asyncio.run(list_deliveries(settings, args.failed, args.replay, args.limit))
    return asyncio.run(migrate(settings))


def _fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed: less overhead per webhook request."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


PARSE_FORMATS = ("auto", "log", *REPORT_FORMATS)
PARSE_EPILOG = """formats (--format; auto tells each from its content):
  log              a job log: gh run view --log-failed, the raw log, a run's log archive
  junit            JUnit XML: pytest --junitxml, jest-junit, Surefire, go-junit-report, ...
  trx              .NET TRX: dotnet test --logger trx
  nunit            NUnit 2 and 3 XML: nunit3-console --result=TestResult.xml
  xunit            xUnit.net v1 and v2 XML: dotnet test --logger xunit, xunit.console -xml
  go-json          go test -json output
  dart-json        dart test --reporter json, flutter test --machine
  tap              TAP 13 and 14: node --test --test-reporter tap, tap, prove
  mocha-json       mocha --reporter json
  rspec-json       rspec --format json
  ctrf             CTRF JSON (Common Test Report Format reporters)
  jest-json        jest --json, vitest --reporter=json
  playwright-json  playwright test --reporter=json
  cucumber-json    cucumber-js --format json, Cucumber-JVM's json plugin

examples:
  flakybot parse failed.log
  flakybot parse --json build/test-results/TEST-*.xml TestResult.xml
  flakybot parse --format nunit results.xml
  flakybot parse --format dart-json flutter-machine.json
"""
SCANNER_CHOICES = ("auto", "hyperscan", "re2")
UNNAMED = "(not named)"  # what the log or report did not say, rather than Python's None
# How reports open: XML (JUnit, TRX, NUnit, xUnit.net), go test -json and Dart's event
# streams, TAP.
_REPORT_STARTS = (
    b"<?xml",
    b"<testsuite",
    b"<TestRun",
    b"<test-run",
    b"<test-results",
    b"<test-suite",
    b"<assembl",
    b'{"Time"',
    b'{"Action"',
    b'{"protocolVersion"',
    b"TAP version",
)
_REPORT_SUFFIXES = frozenset({".xml", ".trx", ".json", ".jsonl", ".ndjson", ".tap"})


def parse_files(files: Sequence[Path], fmt: str, *, as_json: bool) -> int:
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(f"flakybot parse: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    results = [result for path in files for result in _parse_one(path, fmt)]
    if as_json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print("\n\n".join(_describe(result) for result in results))
    return 0


def _parse_one(path: Path, fmt: str) -> list[dict[str, Any]]:
    """One result per report, and per job of a log (gh's output and a run's log archive
    hold several)."""
    from bot.job_logs import read_job_logs
    from bot.triage.failures import extract
    from bot.triage.logscan import engine_in_use

    if fmt == "auto":
        fmt = _sniff(path)
    if fmt == "log":
        scanner = engine_in_use()
        return [
            _result(path, fmt, found, log_form=dataclasses.asdict(form), read_as=form.describe())
            | {"scanner": scanner}
            for form, found in read_job_logs(path)
        ]
    report = (path.name, path.read_bytes())
    extraction = extract(log_lines=None, reports=[report], report_format=fmt)
    read_as = "report" if fmt == "auto" else f"{fmt} report"
    return [_result(path, fmt, extraction, log_form=None, read_as=read_as)]


def _result(
    path: Path, fmt: str, extraction: Extraction, *, log_form: dict[str, Any] | None, read_as: str
) -> dict[str, Any]:
    if extraction.failures:
        job = "mass-failure" if extraction.mass_failure else "tests-failed"
    elif extraction.infra is not None:
        job = "infra"
    else:
        job = "unknown"
    return {
        "input": str(path),
        "format": fmt,
        "log_form": log_form,
        "read_as": read_as,
        "scanner": None,  # reports are parsed whole, without the log pre-filter
        "job": job,
        "infra": extraction.infra.model_dump() if extraction.infra else None,
        "problems": extraction.problems,
        "failures": [
            f.model_dump(
                include={
                    "test_id",
                    "file",
                    "location",
                    "location_source",
                    "location_note",
                    "declared_at",
                    "unplaced_frames",
                    "framework",
                    "source",
                    "signature",
                    "message",
                    "attempts_failed",
                    "attempts_total",
                }
            )
            for f in extraction.failures
        ],
    }


def _sniff(path: Path) -> str:
    """ "auto" for a report (its parser tells the kind from the content), else "log"."""
    if path.suffix.lower() in _REPORT_SUFFIXES:
        return "auto"
    with path.open("rb") as stream:
        head = stream.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    # A raw job log starts with a timestamp or plain text; reports with markup or JSON; a
    # run's log archive is a zip.
    if head.startswith(b"PK\x03\x04"):
        return "log"
    if head.startswith(_REPORT_STARTS):
        return "auto"
    return "log"


def _describe(result: dict[str, Any]) -> str:
    failures = result["failures"]
    scanner = f", {result['scanner']} scanner" if result["scanner"] else ""
    lines = [f"{result['input']}: read as {result['read_as']}{scanner}"]
    if result["job"] == "infra":
        infra = result["infra"]
        lines.append(f"  job: infra ({infra['kind']}): {infra['line']}")
    elif result["job"] == "unknown":
        lines.append("  job: unknown, no failed test found")
    else:
        mass = ", mass failure" if result["job"] == "mass-failure" else ""
        count = len(failures)
        lines.append(f"  job: {count} failed test{'' if count == 1 else 's'}{mass}")
        if result["infra"]:
            lines.append(f"  note: {result['infra']['kind']}: {result['infra']['line']}")
    for problem in result["problems"]:
        lines.append(f"  problem: {problem}")
    for f in failures:
        head = f["message"].splitlines()[0] if f["message"] else ""
        lines += [
            f"  - {f['test_id']}",
            f"    file: {f['file'] or UNNAMED}  location: {f['location'] or UNNAMED}{_from(f)}",
            f"    framework: {f['framework']}  source: {f['source']}"
            f"  attempts: {f['attempts_failed']}/{f['attempts_total']} failed",
            f"    signature: {f['signature']}",
            f"    message: {head}",
        ]
    return "\n".join(lines)


def _from(failure: dict[str, Any]) -> str:
    """Where the location came from, why it was kept as printed, and where the test case is
    declared, when known."""
    said = f" (from {failure['location_source']})" if failure["location_source"] else ""
    said = f"{said}; {failure['location_note']}" if failure["location_note"] else said
    declared = failure["declared_at"]
    return (
        f"{said}; declared at {declared}" if declared and declared != failure["location"] else said
    )


def setup(args: argparse.Namespace) -> int:
    from bot.registration import SetupError, find_manifest, load_manifest, web_address
    from bot.setup_page import SetupOptions, run_setup

    env = _probot_env(args.env_file)
    try:
        hook = args.webhook_url or env.get("WEBHOOK_PROXY_URL")
        if not hook:
            raise SetupError(
                "give --webhook-url https://HOST/api/github/webhooks, or set WEBHOOK_PROXY_URL "
                "to a smee.io channel for a local trial"
            )
        github_url, api_url = _github_addresses(args, env)
        options = SetupOptions(
            manifest=load_manifest(find_manifest(args.manifest)),
            webhook_url=web_address(hook, "the webhook URL"),
            env_file=args.env_file,
            github_url=web_address(github_url, "--github-url"),
            api_url=web_address(api_url, "the API URL"),
            org=args.org,
            name=args.name,
            force=args.force or _holds_no_app_keys(args.env_file, env),
            port=args.port,
        )
        done = asyncio.run(run_setup(options, open_browser=not args.no_browser))
    except SetupError as exc:
        print(f"flakybot setup: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("flakybot setup: stopped; no App was registered", file=sys.stderr)
        return 1
    if not args.webhook_url:  # a webhook proxy's channel: deliveries wait there for a relay
        print(f"flakybot serve relays the channel's deliveries from {hook} (WEBHOOK_PROXY_URL)")
    return done


def _probot_env(env_file: Path) -> dict[str, str]:
    """The variables setup reads, as Probot's does: the environment's, else the env file's."""
    from dotenv import dotenv_values

    names = ("WEBHOOK_PROXY_URL", "GHE_HOST", "GHE_PROTOCOL", "GITHUB_API_URL")
    in_file = dotenv_values(env_file) if env_file.is_file() else {}
    found = {name: os.environ.get(name) or in_file.get(name) for name in names}
    return {name: value for name, value in found.items() if value}


def _github_addresses(args: argparse.Namespace, env: dict[str, str]) -> tuple[str, str]:
    """GitHub's web address and REST API root: the options', else GHE_HOST's (GitHub
    Enterprise Server), else github.com's."""
    host, protocol = env.get("GHE_HOST"), env.get("GHE_PROTOCOL") or "https"
    web = f"{protocol}://{host}" if host else "https://github.com"
    api = api_url_from_env(env) or "https://api.github.com"
    return args.github_url or web, args.api_url or api


def _holds_no_app_keys(env_file: Path, env: dict[str, str]) -> bool:
    """A plain env file with none of the App's keys (one holding WEBHOOK_PROXY_URL, as
    Probot's instructions make it): setup adds its lines and keeps the others."""
    from dotenv import dotenv_values

    from bot.registration import ENV_KEYS

    if not env_file.is_file() or env_file.is_symlink():
        return False
    return not set(dotenv_values(env_file)) & set(ENV_KEYS)


async def serve(settings: Settings) -> int:
    from bot.runtime import Bot
    from bot.triage.logscan import use_engine

    try:
        scanner = use_engine(settings.log_scanner)
    except ValueError as exc:  # LOG_SCANNER=hyperscan where it is not installed
        print(f"flakybot serve: cannot start: LOG_SCANNER: {exc}", file=sys.stderr)
        return 2
    try:
        bot = await Bot.create(settings)
    except ConfigError as exc:
        print(f"flakybot serve: cannot start: {exc}", file=sys.stderr)
        return 2
    url = await bot.start()
    log.info("listening on %s%s", url, settings.webhook_path)
    log.info("log scanner: %s", scanner)
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
