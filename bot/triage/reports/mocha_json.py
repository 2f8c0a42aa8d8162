"""Failed tests from mocha's JSON reporter (`--reporter json`).

A test that failed on every retry is in `failures` with `currentRetry` retries; one that
passed after retries is in `passes` with `currentRetry` > 0, reported here as flake
evidence. Mocha prints absolute file paths; when they lie outside a runner's workspace, the
relative paths in the stacks show which part of them is the repository.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import count, mapping
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import choose
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import Frame, repo_frames

SOURCE = "mocha-json"
FRAMEWORK = "mocha"


def is_mocha_json(document: object) -> TypeGuard[dict[str, object]]:
    return isinstance(document, dict) and isinstance(document.get("failures"), list)


def parse_mocha_json(document: dict[str, object]) -> tuple[list[Failure], int]:
    failed = _tests(document.get("failures"))
    retried = [t for t in _tests(document.get("passes")) if _retries(t) > 0]
    paths = PathMap(_root([*failed, *retried]))
    failures = [_failure(t, paths, passed=False) for t in failed]
    failures.extend(_failure(t, paths, passed=True) for t in retried)
    stats = document.get("stats")
    total = stats.get("tests") if isinstance(stats, dict) else None
    if not isinstance(total, int):
        total = len(_tests(document.get("tests")))
    return failures, total


def mocha_counted(document: dict[str, object]) -> int | None:
    """The failures mocha's `stats` count (a failed hook is one too, and in `failures`)."""
    return count(mapping(document.get("stats")).get("failures"))


def _tests(value: object) -> list[dict[str, object]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _retries(test: dict[str, object]) -> int:
    retries = test.get("currentRetry")
    return retries if isinstance(retries, int) and retries > 0 else 0


def _err(test: dict[str, object]) -> dict[str, object]:
    err = test.get("err")
    return err if isinstance(err, dict) else {}


def _root(tests: Iterable[dict[str, object]]) -> str | None:
    """The directory mocha ran in, when an absolute `file` ends with a relative stack path."""
    for test in tests:
        printed = _str(test.get("file")).replace("\\", "/")
        stack = _str(_err(test).get("stack")).replace("\\", "/")
        for part in stack.replace("(", " ").split():
            relative = part.rsplit(":", 2)[0].removeprefix("./")
            if relative and not relative.startswith("/") and printed.endswith("/" + relative):
                return printed[: -len(relative) - 1]
    return None


def _failure(test: dict[str, object], paths: PathMap, *, passed: bool) -> Failure:
    title, full_title = _str(test.get("title")), _str(test.get("fullTitle"))
    suites = full_title.removesuffix(title).strip() if full_title.endswith(title) else ""
    printed_file = _str(test.get("file"))
    file = paths.to_repo(printed_file) if printed_file else None
    parts = (file or printed_file, suites, title or full_title)
    test_id = TITLE_SEPARATOR.join(p for p in parts if p)
    err = _err(test)
    message = head(_str(err.get("message"))) or head(_str(err.get("stack")))
    name = _str(err.get("name"))
    if name and message and not message.startswith(name):
        message = f"{name}: {message}"
    stack = _str(err.get("stack"))
    frames: list[Frame] = repo_frames(stack, paths, file)
    found = choose(stack=frames, attribute=None, message=_str(err.get("message")), stack_text=stack)
    retries = _retries(test)
    return reported_failure(
        test_id=test_id,
        name=TITLE_SEPARATOR.join(p for p in (suites, title) if p),
        file=file,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(retries if passed else retries + 1, retries + 1),
    )
