"""Failed tests from a CTRF report (Common Test Report Format, `ctrf.io`), the JSON that
reporters for jest, Playwright, Cypress, pytest and others write.

A test is `filePath \u203a suite \u203a name` (`suite` a list from the top, or the older
reporters' `a > b` string). A failed test failed its `retries` + 1 attempts; a passed one with
failed attempts (`retryAttempts`, or `flaky` with `retries`) is flake evidence, as the
specification defines a flaky test.
"""

from __future__ import annotations

from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import count, dicts, items, mapping, number, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import attribute_location, choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames

SOURCE = "ctrf"
FRAMEWORK = "ctrf"
_RAN = frozenset({"passed", "failed"})


def is_ctrf(document: object) -> TypeGuard[dict[str, object]]:
    if not isinstance(document, dict):
        return False
    results = mapping(document.get("results"))
    return isinstance(results.get("tests"), list) and isinstance(results.get("tool"), dict)


def parse_ctrf(document: dict[str, object]) -> tuple[list[Failure], int]:
    tests = dicts(mapping(document.get("results")).get("tests"))
    framework = text(mapping(mapping(document.get("results")).get("tool")).get("name"))
    failures = [
        _failure(test, framework or FRAMEWORK)
        for test in tests
        if test.get("status") == "failed" or _failed_attempts(test)
    ]
    return failures, sum(1 for test in tests if test.get("status") in _RAN)


def ctrf_counted(document: dict[str, object]) -> int | None:
    """The failed tests the run's `summary` counts."""
    return count(mapping(mapping(document.get("results")).get("summary")).get("failed"))


def _failed_attempts(test: dict[str, object]) -> int:
    attempts = dicts(test.get("retryAttempts"))
    if attempts:
        return sum(1 for a in attempts if a.get("status") == "failed")
    return number(test.get("retries")) if test.get("flaky") is True else 0


def _suites(value: object) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(" > ") if part.strip()]
    return [s for s in items(value) if isinstance(s, str) and s]


def _failure(test: dict[str, object], framework: str) -> Failure:
    printed = text(test.get("filePath"))
    file = stated_path(printed, keep_name=True) if printed else None
    chain = [*_suites(test.get("suite")), text(test.get("name"))]
    failed = test.get("status") == "failed"
    attempts = dicts(test.get("retryAttempts"))
    last_failed = next((a for a in reversed(attempts) if a.get("status") == "failed"), {})
    source = test if failed else last_failed
    trace = text(source.get("trace"))
    message = head(text(source.get("message"))) or head(trace)
    frames = repo_frames(trace, PathMap(), file)
    line = str(number(test.get("line")) or "")
    found = choose(
        stack=frames,
        attribute=attribute_location(printed, line),
        message=text(source.get("message")),
        stack_text=trace,
    )
    total = len(attempts) or number(test.get("retries")) + 1
    return reported_failure(
        test_id=TITLE_SEPARATOR.join(p for p in (file, *chain) if p),
        name=TITLE_SEPARATOR.join(p for p in chain if p),
        file=file,
        framework=framework,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(total if failed and not attempts else max(_failed_attempts(test), 1), total),
    )
