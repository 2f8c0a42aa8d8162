"""Failed tests from xUnit.net XML: v2's `<assemblies>` (v3 writes the same) and v1's
`<assembly>`.

A test is its display name (`name`, `Namespace.Class.Method(args)` unless the test renames
itself), prefixed with its class (`type`) when it does not start with it: the TRX form. A
skipped test (`Skip`, v3's `NotRun`) is left out. An `<error>` of v2's `<errors>` (a
fixture's or class's clean-up that failed, a fatal error) is a failed test named by its
`name`, or its `type` when it names nothing. The same id given several results is one test
run several times: failed n of m.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from bot.triage.models import Failure
from bot.triage.reports.dotnet import Results, Tally, dotnet_failure, failure_text
from bot.triage.reports.xml_safe import counter, local_name

SOURCE = "xunit"
_ROOTS = frozenset({"assemblies", "assembly"})
_NOT_RUN = frozenset({"Skip", "NotRun"})


def is_xunit(root: Element) -> bool:
    return local_name(root) in _ROOTS


def parse_xunit(root: Element) -> tuple[list[Failure], int]:
    """The failed tests of an xUnit.net document and the number of distinct tests that ran."""
    tally = Tally()
    for element in root.iter():
        tag = local_name(element)
        if tag == "test" and element.get("result") not in _NOT_RUN:
            tally.add(_test_id(element), element, element.get("result") == "Fail")
        elif tag == "error":
            test_id = (element.get("name") or element.get("type") or "error").strip()
            tally.add(test_id, element, True)
    failures = [
        _failure(test_id, results)
        for test_id, results in tally.tests.items()
        if results.first_failed is not None
    ]
    return failures, len(tally.tests)


def xunit_counted(root: Element) -> int | None:
    """The failed tests and errors the document's assemblies count."""
    assemblies = [root] if local_name(root) == "assembly" else list(root)
    counts = [counter(a, "failed", "errors") for a in assemblies if local_name(a) == "assembly"]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _test_id(test: Element) -> str:
    name = (test.get("name") or "").strip()
    type_name = (test.get("type") or "").strip()
    if type_name and not name.startswith(type_name + "."):
        return f"{type_name}.{name}"
    return name


def _failure(test_id: str, results: Results) -> Failure:
    element = results.first_failed
    assert element is not None
    message, stack = failure_text(element)
    name = (element.get("method") or element.get("name") or test_id).strip()
    return dotnet_failure(test_id, name, message, stack, results, SOURCE)
