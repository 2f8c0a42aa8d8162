"""Failed scenarios from Cucumber's JSON (`--format json`, cucumber-js, cucumber-ruby,
cucumber-jvm): a list of features, each with its scenarios (`elements`) and their steps.

A scenario is `feature file \u203a Feature \u203a Scenario`; a Scenario Outline's rows share
their name, so each row after the first is told by its place (`example 2`), which an edit
elsewhere in the file does not move. A scenario fails when a step or hook of it failed, or,
as a strict run (cucumber-js' default) counts them, is undefined, ambiguous or pending.
cucumber-ruby writes a Background as an element of its own before each scenario: its failure
is the next scenario's.
"""

from __future__ import annotations

from collections import Counter
from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import dicts, mapping, number, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import Frame, repo_frames

SOURCE = "cucumber-json"
FRAMEWORK = "cucumber"
_FAILING = ("failed", "ambiguous", "undefined", "pending")


def is_cucumber_json(document: object) -> TypeGuard[list[object]]:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(f, dict) and "elements" in f and "uri" in f for f in document)
    )


def parse_cucumber_json(document: list[object]) -> tuple[list[Failure], int]:
    failures: list[Failure] = []
    ran = 0
    for feature in dicts(document):
        printed = text(feature.get("uri"))
        file = stated_path(printed, keep_name=True) if printed else None
        seen: Counter[str] = Counter()
        background: dict[str, object] | None = None
        for element in dicts(feature.get("elements")):
            if element.get("type") == "background":
                background = _failed_step(element)
                continue
            name = text(element.get("name"))
            seen[name] += 1
            steps = _steps(element)
            ran += any(mapping(s.get("result")).get("status") != "skipped" for s in steps)
            failed = background or _failed_step(element)
            background = None
            if failed is not None:
                row = f"example {seen[name]}" if seen[name] > 1 else ""
                chain = [text(feature.get("name")), name, row]
                line = number(element.get("line"))
                declared = f"{file}:{line}" if file and line else None
                failures.append(_failure(file, [c for c in chain if c], failed, declared))
    return failures, ran


def _steps(element: dict[str, object]) -> list[dict[str, object]]:
    hooks = [*dicts(element.get("before")), *dicts(element.get("after"))]
    return [*dicts(element.get("steps")), *hooks]


def _failed_step(element: dict[str, object]) -> dict[str, object] | None:
    for step in _steps(element):
        if mapping(step.get("result")).get("status") in _FAILING:
            return step
    return None


def _failure(
    file: str | None, chain: list[str], step: dict[str, object], declared: str | None
) -> Failure:
    """`declared`: the scenario's own line in its feature file (what identifies the test).
    The failed step's definition is where it ran, a frame when the error has none."""
    result = mapping(step.get("result"))
    error = text(result.get("error_message"))
    status = text(result.get("status"))
    said = f"{text(step.get('keyword'))}{text(step.get('name'))}".strip()
    message = head(error) or (f"{status} step: {said}" if status != "failed" else "")
    matched = text(mapping(step.get("match")).get("location"))
    frames = repo_frames(error, PathMap(), file)
    defined = stated_path(matched) if matched and ":" in matched else None
    if not frames and defined:
        path, _, line = defined.rpartition(":")
        frames = [Frame(path, int(line))] if line.isdigit() and path else []
    found = choose(stack=frames, attribute=declared, message=error, stack_text=error)
    return reported_failure(
        test_id=TITLE_SEPARATOR.join([file, *chain] if file else chain),
        name=TITLE_SEPARATOR.join(chain),
        file=file,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
    )
