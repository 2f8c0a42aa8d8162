"""Failed tests from jest's `--json` report, and vitest's (`--reporter=json` writes the same).

A test is `file \u203a describe blocks \u203a title`, as the jest log parser names it, its file
made repository-relative (a runner's checkout; elsewhere its bare name, for the tree to
place). A file whose suite failed to run (a syntax error, a failed import) has no assertion
results: it is a failure of the file. A test `jest.retryTimes` ran again has `invocations`
(jest 30) or `retryReasons`: one that passed after failed tries is flake evidence.
"""

from __future__ import annotations

from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import count, dicts, mapping, number, strings, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames

SOURCE = "jest-json"
FRAMEWORK = "jest"
_RAN = frozenset({"passed", "failed"})


def is_jest_json(document: object) -> TypeGuard[dict[str, object]]:
    return (
        isinstance(document, dict)
        and isinstance(document.get("testResults"), list)
        and "numTotalTests" in document
    )


def parse_jest_json(document: dict[str, object]) -> tuple[list[Failure], int]:
    failures: list[Failure] = []
    ran = 0
    for suite in dicts(document.get("testResults")):
        printed = text(suite.get("name")) or text(suite.get("testFilePath"))
        file = stated_path(printed, keep_name=True) if printed else None
        tests = dicts(suite.get("assertionResults"))
        ran += sum(1 for test in tests if test.get("status") in _RAN)
        failures.extend(
            _failure(file, test)
            for test in tests
            if test.get("status") == "failed" or _retries(test)
        )
        if not tests and suite.get("status") == "failed" and file:
            failures.append(_made(file, [], text(suite.get("message")), (1, 1)))
    return failures, ran


def jest_counted(document: dict[str, object]) -> int | None:
    """The failed tests and the suites that failed to run, as jest counts them."""
    counted = [count(document.get(k)) for k in ("numFailedTests", "numRuntimeErrorTestSuites")]
    known = [c for c in counted if c is not None]
    return sum(known) if known else None


def _failure(file: str | None, test: dict[str, object]) -> Failure:
    chain = [*strings(test.get("ancestorTitles")), text(test.get("title"))]
    retries = _retries(test)
    failed = test.get("status") == "failed"
    reasons = strings(test.get("failureMessages")) or strings(test.get("retryReasons"))[-1:]
    # `--testLocationInResults`: where the test is declared, when no frame says more.
    line = number(mapping(test.get("location")).get("line"))
    declared = f"{file}:{line}" if file and line else None
    attempts = (retries + failed, retries + 1)
    return _made(file, chain, "\n".join(reasons), attempts, declared)


def _retries(test: dict[str, object]) -> int:
    """Tries before the last: jest 30 counts them in `invocations`, and with
    `logErrorsBeforeRetry` keeps their errors in `retryReasons`."""
    return max(len(strings(test.get("retryReasons"))), number(test.get("invocations")) - 1, 0)


def _made(
    file: str | None,
    chain: list[str],
    error: str,
    attempts: tuple[int, int],
    declared: str | None = None,
) -> Failure:
    frames = repo_frames(error, PathMap(), file)
    message = head(error)
    found = choose(stack=frames, attribute=declared, message=message, stack_text=error)
    named = [p for p in chain if p]
    return reported_failure(
        test_id=TITLE_SEPARATOR.join([file, *named] if file else named),
        name=TITLE_SEPARATOR.join(named) or (file or ""),
        file=file,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(attempts[0], attempts[1]),
    )
