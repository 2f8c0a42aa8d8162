"""Failed tests from a Visual Studio / `dotnet test` TRX file.

Results name a test by its display name; `TestDefinitions` give its class. The id is the
fully qualified name (`Namespace.Class.Method(args)`), .NET's own form. A result with inner
results (data-driven MSTest) fails once however many of its rows failed.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.messages import head
from bot.triage.reports.traces import location, repo_frames, trace_paths
from bot.triage.reports.xml_safe import local_name
from bot.triage.signature import signature

SOURCE = "trx"
FRAMEWORK = "dotnet"


def is_trx(root: Element) -> bool:
    return local_name(root) == "TestRun"


def parse_trx(root: Element) -> tuple[list[Failure], int]:
    classes = _classes(root)
    # Inner results (data-driven rows) name their parent with `parentExecutionId`.
    outer = [
        result
        for section in _children(root, "Results")
        for result in section.iter()
        if local_name(result) == "UnitTestResult" and result.get("parentExecutionId") is None
    ]
    failures: dict[str, Failure] = {}
    for result in outer:
        if result.get("outcome") == "Failed":
            failure = _failure(result, classes.get(result.get("testId") or "", ""))
            failures.setdefault(failure.test_id, failure)
    ran = [r for r in outer if r.get("outcome") != "NotExecuted"]
    return list(failures.values()), len(ran)


def _children(element: Element, name: str) -> list[Element]:
    return [c for c in element if local_name(c) == name]


def _classes(root: Element) -> dict[str, str]:
    """Test id to class name, without the assembly qualification MSTest appends."""
    classes: dict[str, str] = {}
    for definitions in _children(root, "TestDefinitions"):
        for unit_test in definitions:
            for method in _children(unit_test, "TestMethod"):
                class_name = (method.get("className") or "").split(",")[0].strip()
                classes[unit_test.get("id") or ""] = class_name
    return classes


def _failure(result: Element, class_name: str) -> Failure:
    display = (result.get("testName") or "").strip()
    if class_name and not display.startswith(class_name + "."):
        test_id = f"{class_name}.{display}"
    else:
        test_id = display
    message_text, stack = "", ""
    for element in result.iter():
        tag = local_name(element)
        if tag == "Message" and not message_text:
            message_text = element.text or ""
        elif tag == "StackTrace" and not stack:
            stack = element.text or ""
    message = head(message_text)
    frames = repo_frames(stack, PathMap())
    return Failure(
        test_id=test_id,
        name=display,
        framework=FRAMEWORK,
        location=location(frames),
        message=message,
        signature=signature(message),
        trace_paths=trace_paths(frames),
        source=SOURCE,
    )
