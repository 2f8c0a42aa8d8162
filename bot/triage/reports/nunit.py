"""Failed tests from NUnit XML: NUnit 2's `<test-results>`, NUnit 3's `<test-run>`, and the
bare `<test-suite>` NUnit 3 writes for one assembly.

A test is its full name (`Namespace.Class.Method(args)`, NUnit 3's `fullname`, NUnit 2's
`name`), .NET's own form as in TRX: each case of a parameterized test is a test of its own.
A case that did not run (NUnit 2's `executed="False"`, NUnit 3's `Skipped` or a cancelled
run) is left out; inconclusive and warning cases ran and did not fail. A suite whose
`OneTimeSetUp` or `OneTimeTearDown` failed (NUnit 3's `site="SetUp"`/`"TearDown"`) with no
failed case under it is a failed test named after the suite. The same id given several
results is one test run several times: failed n of m.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.reports.dotnet import Results, Tally, dotnet_failure, failure_text
from bot.triage.reports.xml_safe import counter, local_name

SOURCE = "nunit"
_ROOTS = frozenset({"test-results", "test-run", "test-suite"})
_FAILED = frozenset({"Failure", "Error", "Failed"})  # NUnit 2's two, NUnit 3's one
_NOT_RUN = frozenset({"Skipped", "Ignored", "NotRunnable", "NotRun", "Cancelled"})
_SUITE_OWN = frozenset({"SetUp", "TearDown"})


def is_nunit(root: Element) -> bool:
    return local_name(root) in _ROOTS


def parse_nunit(root: Element) -> tuple[list[Failure], int]:
    """The failed tests of an NUnit document and the number of distinct tests that ran."""
    tally = Tally()
    for element in root.iter():
        tag = local_name(element)
        if tag == "test-case" and _ran(element):
            tally.add(_test_id(element), element, _failed(element))
        elif tag == "test-suite" and _failed_alone(element):
            tally.add(_test_id(element), element, True)
    failures = [
        _failure(test_id, results)
        for test_id, results in tally.tests.items()
        if results.first_failed is not None
    ]
    return failures, len(tally.tests)


def nunit_counted(root: Element) -> int | None:
    """The failed tests the document counts: NUnit 3's `failed`, NUnit 2's `failures` and
    `errors` (its `invalid`, tests that could not run, are not failures)."""
    if local_name(root) == "test-results":
        return counter(root, "failures", "errors")
    return counter(root, "failed")


def _ran(case: Element) -> bool:
    if case.get("executed") == "False":
        return False
    return case.get("result") not in _NOT_RUN and case.get("label") != "Cancelled"


def _failed(case: Element) -> bool:
    """Failed by its `result`; NUnit 2 before 2.5 wrote none, only `success` or a
    `<failure>`."""
    result = case.get("result")
    if result is not None:
        return result in _FAILED
    return case.get("success") == "False" or any(local_name(c) == "failure" for c in case)


def _failed_alone(suite: Element) -> bool:
    """A suite whose own set-up or tear-down failed while none of its cases did."""
    if suite.get("site") not in _SUITE_OWN or suite.get("result") not in _FAILED:
        return False
    return not any(local_name(e) == "test-case" and _failed(e) for e in suite.iter())


def _test_id(element: Element) -> str:
    return (element.get("fullname") or element.get("name") or "").strip()


def _failure(test_id: str, results: Results) -> Failure:
    element = results.first_failed
    assert element is not None
    message, stack = failure_text(element)
    # A time-out leaves its `<failure>` empty and says why in its label.
    message = message or element.get("label") or ""
    name = (element.get("name") or test_id).strip()
    return dotnet_failure(test_id, name, message, stack, results, SOURCE)
