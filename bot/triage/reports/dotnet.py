"""What the .NET report formats (TRX, NUnit, xUnit.net) share: a failed test read from its
message and stack trace, and the tally of one test's results in one file."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.locations import choose
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames
from bot.triage.reports.xml_safe import local_name

FRAMEWORK = "dotnet"


@dataclass
class Results:
    """Every result of one test id, in file order: how many failed, and the first that did
    (a retry runs the same id again)."""

    total: int = 0
    failed: int = 0
    first_failed: Element | None = None


@dataclass
class Tally:
    """The results of a file's tests by id."""

    tests: dict[str, Results] = field(default_factory=dict)

    def add(self, test_id: str, result: Element, failed: bool) -> None:
        tally = self.tests.setdefault(test_id, Results())
        tally.total += 1
        if failed:
            tally.failed += 1
            tally.first_failed = tally.first_failed if tally.first_failed is not None else result


def dotnet_failure(
    test_id: str, name: str, message_text: str, stack: str, results: Results, source: str
) -> Failure:
    """A failed .NET test: its message's head, and its location from its stack's frames in
    the repository."""
    message = head(message_text)
    frames = repo_frames(stack, PathMap())
    found = choose(stack=frames, attribute=None, message=message_text, stack_text=stack)
    return reported_failure(
        test_id=test_id,
        name=name,
        framework=FRAMEWORK,
        source=source,
        message=message,
        found=found,
        frames=frames,
        attempts=(results.failed, results.total),
    )


def failure_text(result: Element) -> tuple[str, str]:
    """The message and stack trace of a result's `<failure>` (NUnit's and xUnit.net's form)."""
    message, stack = "", ""
    for failure in (c for c in result if local_name(c) == "failure"):
        for part in failure:
            if local_name(part) == "message" and not message:
                message = part.text or ""
            elif local_name(part) == "stack-trace" and not stack:
                stack = part.text or ""
    return message, stack
