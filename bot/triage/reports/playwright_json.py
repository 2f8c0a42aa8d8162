"""Failed tests from Playwright's JSON reporter (`--reporter=json`).

A test is `file \u203a describe blocks \u203a title`, its file the spec's path under the
project's `testDir` made repository-relative; when the run has several projects (browsers),
the project's name follows the file, as `[chromium]` leads Playwright's own list. A test's
results are its tries: `unexpected` failed every one, `flaky` passed after failing (flake
evidence), as Playwright says it. The nested suites are walked with a stack, not recursion.
"""

from __future__ import annotations

from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import count, dicts, mapping, number, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import attribute_location, choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames

SOURCE = "playwright-json"
FRAMEWORK = "playwright"
_FAILED = frozenset({"failed", "timedOut", "interrupted"})
_REPORTED = frozenset({"unexpected", "flaky"})


def is_playwright_json(document: object) -> TypeGuard[dict[str, object]]:
    return (
        isinstance(document, dict)
        and isinstance(document.get("suites"), list)
        and isinstance(document.get("config"), dict)
    )


def parse_playwright_json(document: dict[str, object]) -> tuple[list[Failure], int]:
    config = mapping(document.get("config"))
    projects = {
        text(p.get("name")): text(p.get("testDir")) or text(config.get("rootDir"))
        for p in dicts(config.get("projects"))
    }
    failures: list[Failure] = []
    ran = 0
    # The top suites are files; the suites under them are describe blocks.
    pending: list[tuple[list[str], dict[str, object]]] = [
        ([], suite) for suite in reversed(dicts(document.get("suites")))
    ]
    while pending:
        describes, suite = pending.pop()
        for spec in dicts(suite.get("specs")):
            for test in dicts(spec.get("tests")):
                ran += test.get("status") != "skipped"
                if test.get("status") in _REPORTED:
                    failures.append(_failure(spec, test, describes, projects))
        children = reversed(dicts(suite.get("suites")))
        pending.extend(([*describes, text(child.get("title"))], child) for child in children)
    return failures, ran


def playwright_counted(document: dict[str, object]) -> int | None:
    """The tests Playwright's `stats` count as failed on every try (`unexpected`)."""
    return count(mapping(document.get("stats")).get("unexpected"))


def _failure(
    spec: dict[str, object],
    test: dict[str, object],
    describes: list[str],
    projects: dict[str, str],
) -> Failure:
    project = text(test.get("projectName"))
    root = projects.get(project, "")
    printed = f"{root}/{text(spec.get('file'))}" if root else text(spec.get("file"))
    file = stated_path(printed, keep_name=True)
    shown = [f"[{project}]"] if len(projects) > 1 and project else []
    chain = [*describes, text(spec.get("title"))]
    tries = [r for r in dicts(test.get("results")) if r.get("status") != "skipped"]
    failed = [r for r in tries if r.get("status") in _FAILED]
    error = mapping(failed[-1].get("error")) if failed else {}
    stack = text(error.get("stack"))
    # The error's `location` is where it was raised: the stack's first frame, said alone.
    at = mapping(error.get("location"))
    raised = f"{text(at.get('file'))}:{number(at.get('line'))}" if at.get("line") else ""
    frames = repo_frames(f"{raised}\n{stack}", PathMap(), file)
    message = head(text(error.get("message")))
    declared = attribute_location(printed, str(number(spec.get("line")) or ""))
    found = choose(stack=frames, attribute=declared, message=message, stack_text=stack)
    return reported_failure(
        test_id=TITLE_SEPARATOR.join(p for p in (file, *shown, *chain) if p),
        name=TITLE_SEPARATOR.join(p for p in chain if p),
        file=file,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(max(len(failed), 1), max(len(tries), 1)),
    )
