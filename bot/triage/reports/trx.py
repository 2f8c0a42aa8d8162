"""Failed tests from a Visual Studio / `dotnet test` TRX file.

Results name a test by its display name; `TestDefinitions` give its class. The id is the
fully qualified name (`Namespace.Class.Method(args)`), .NET's own form. A result with inner
results is a container: MSTest's data-driven test (each row, `Adds (2)`, is a result of its
own) or an ordered test's `TestResultAggregation` (each inner result is one). A container
counts as a result itself only when it failed and none of its rows did (its set-up or
clean-up failed); a data-driven summary written beside its rows is dropped. The same id
given several results is one test run several times (a retry): failed n of its m results.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.reports.dotnet import Results, dotnet_failure
from bot.triage.reports.xml_safe import counter, local_name

SOURCE = "trx"
_FAILED = frozenset({"Failed", "Error", "Timeout"})
# An aborted result was stopped by the run, not failed by the test: counted as not run.
_NOT_RUN = frozenset({"NotExecuted", "NotRunnable", "Pending", "Disconnected", "Aborted"})


@dataclass
class _Test:
    """Every result of one test id, in file order."""

    outcomes: list[str] = field(default_factory=list)
    failed: Element | None = None  # the first failed result


def is_trx(root: Element) -> bool:
    return local_name(root) == "TestRun"


def parse_trx(root: Element) -> tuple[list[Failure], int]:
    classes = _classes(root)
    tests: dict[str, _Test] = {}
    for section in _children(root, "Results"):
        for result in _without_summaries(list(_leaves(section))):
            outcome = result.get("outcome") or ""
            if outcome in _NOT_RUN:
                continue
            test = tests.setdefault(_test_id(result, classes), _Test())
            test.outcomes.append(outcome)
            if outcome in _FAILED and test.failed is None:
                test.failed = result
    failures = [
        _failure(test_id, test.failed, test.outcomes)
        for test_id, test in tests.items()
        if test.failed is not None
    ]
    return failures, len(tests)


def _leaves(section: Element) -> Iterator[Element]:
    """The results of `section`: each result without inner results, the inner results of
    the others, and a container that failed with no failed row."""
    for result in section:
        inner = [r for block in _children(result, "InnerResults") for r in _leaves(block)]
        if not inner:
            yield result
            continue
        yield from inner
        row_failed = any((r.get("outcome") or "") in _FAILED for r in inner)
        if (result.get("outcome") or "") in _FAILED and not row_failed:
            yield result


def _without_summaries(results: list[Element]) -> list[Element]:
    """The results less a data-driven test's summary written beside its rows rather than
    around them (`resultType="DataDrivenTest"` next to its `DataDrivenDataRow`s)."""
    with_rows = {r.get("testId") for r in results if r.get("resultType") == "DataDrivenDataRow"}
    return [
        r
        for r in results
        if not (r.get("resultType") == "DataDrivenTest" and r.get("testId") in with_rows)
    ]


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


def _test_id(result: Element, classes: dict[str, str]) -> str:
    display = (result.get("testName") or "").strip()
    class_name = classes.get(result.get("testId") or "", "")
    if class_name and not display.startswith(class_name + "."):
        return f"{class_name}.{display}"
    return display


def _failure(test_id: str, result: Element, outcomes: list[str]) -> Failure:
    display = (result.get("testName") or "").strip()
    message_text, stack = "", ""
    # The result's own error, not one of its rows' (a container that failed by itself).
    for error in _children_path(result, ("Output", "ErrorInfo")):
        for element in error:
            if local_name(element) == "Message" and not message_text:
                message_text = element.text or ""
            elif local_name(element) == "StackTrace" and not stack:
                stack = element.text or ""
    failed = sum(1 for o in outcomes if o in _FAILED)
    results = Results(total=len(outcomes), failed=failed, first_failed=result)
    return dotnet_failure(test_id, display, message_text, stack, results, SOURCE)


def trx_counted(root: Element) -> int | None:
    """The failed results the run's `ResultSummary/Counters` count (failed, error, timeout)."""
    counters = _children_path(root, ("ResultSummary", "Counters"))
    return counter(counters[0], "failed", "error", "timeout") if counters else None


def _children_path(element: Element, names: tuple[str, ...]) -> list[Element]:
    found = [element]
    for name in names:
        found = [c for e in found for c in _children(e, name)]
    return found
