"""Reports read out of artifact zips built here, within caps against zip bombs."""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.reports import ReportResult
from bot.triage.reports.artifacts import MIB, ExpandBudget, read_artifact_reports

GLOBS = ["**/*.xml", "!**/coverage*.xml"]
JUNIT = (
    b'<testsuite name="pytest"><testcase classname="tests.test_a" name="test_b">'
    b'<failure message="boom">boom</failure></testcase></testsuite>'
)


def _zip(entries: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method, compresslevel=9) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _read(
    data: bytes, budget: ExpandBudget | None = None, **caps: Any
) -> tuple[list[tuple[str, ReportResult]], list[str]]:
    return read_artifact_reports(data, GLOBS, budget or ExpandBudget(64 * MIB), **caps)


def _ratio_floor_entry() -> bytes:
    """Just under the size where the compression ratio is checked: 1 MiB expanding 1000-fold."""
    head = b'<testsuite name="pytest"><testcase name="t"><system-out>'
    tail = b"</system-out></testcase></testsuite>"
    return head + b"a" * (MIB - 1 - len(head) - len(tail)) + tail


def test_only_files_matching_the_globs_are_read() -> None:
    data = _zip(
        {
            "junit/report.xml": JUNIT,
            "junit/coverage-final.xml": b"<coverage/>",
            "report.xml": b"<testsuite/>",
            "log.txt": b"hello",
        }
    )
    reports, problems = _read(data)
    assert [name for name, _ in reports] == ["junit/report.xml", "report.xml"]
    assert [f.test_id for f in reports[0][1].failures] == ["tests.test_a::test_b"]
    assert problems == []


def test_unsafe_names_are_skipped() -> None:
    data = _zip(
        {
            "../evil.xml": b"<a/>",
            "/etc/abs.xml": b"<a/>",
            "C:/win.xml": b"<a/>",
            "ok/../../up.xml": b"<a/>",
            "ok.xml": b"<testsuite/>",
        }
    )
    reports, problems = _read(data)
    assert [name for name, _ in reports] == ["ok.xml"]
    assert len(problems) == 4
    assert all("skipped unsafe entry name" in p for p in problems)


def test_zip_bomb_ratio_is_refused() -> None:
    bomb = _zip({"report.xml": bytes(20 * MIB)})
    assert len(bomb) < 100 * 1024
    reports, problems = _read(bomb)
    assert reports == []
    assert problems[0].startswith("artifact.zip: refused: report.xml compresses ")


def test_small_compressible_files_are_not_taken_for_bombs() -> None:
    content = b"<testsuite>" + b"<x/>" * 20_000 + b"</testsuite>"
    reports, problems = _read(_zip({"report.xml": content}))
    assert problems == []
    assert reports[0][1].problems == []


def test_caps_on_size_count_and_declared_total() -> None:
    data = _zip({f"r{i}.xml": b"<a/>" for i in range(5)})
    assert _read(data, max_compressed=len(data) - 1)[0] == []
    reports, problems = _read(data, max_files=4)
    assert reports == []
    assert problems == ["artifact.zip: refused: 5 files, over 4"]
    reports, problems = _read(data, max_expanded=19)
    assert problems == ["artifact.zip: refused: 20 bytes declared uncompressed, over 19"]


def test_declared_sizes_that_lie_are_caught_while_reading() -> None:
    content = b"<testsuite>" + b"<testsuite/>" * 1000 + b"</testsuite>"
    data = bytearray(_zip({"report.xml": content}, zipfile.ZIP_STORED))
    declared = len(content).to_bytes(4, "little")
    small = (10).to_bytes(4, "little")
    # Rewrite the central directory's uncompressed size (the local header keeps the truth).
    central = data.rindex(b"PK\x01\x02")
    assert data[central + 24 : central + 28] == declared
    data[central + 24 : central + 28] = small
    reports, problems = _read(bytes(data), max_expanded=100)
    assert reports == []
    assert problems == ["artifact.zip: report.xml: unreadable (BadZipFile)"]


def test_entries_under_the_ratio_floor_are_capped_per_artifact() -> None:
    # The attack of issue #18.3: 199 entries of just under 1 MiB, 230 KB compressed, passed
    # every check and expanded to 208 MB held in memory.
    entry = _ratio_floor_entry()
    data = _zip({f"r{i}.xml": entry for i in range(199)})
    assert len(data) < 300 * 1024
    budget = ExpandBudget(64 * MIB)
    tracemalloc.start()
    try:
        reports, problems = _read(data, budget, max_expanded=32 * MIB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reports == []
    assert problems == [
        f"artifact.zip: refused: {199 * (MIB - 1)} bytes declared uncompressed, over {32 * MIB}"
    ]
    assert budget.spent == 0
    assert peak < 8 * MIB


def test_the_jobs_budget_spans_its_artifacts_and_is_enforced_while_reading() -> None:
    entry = _ratio_floor_entry()
    data = _zip({f"r{i}.xml": entry for i in range(20)})
    budget = ExpandBudget(50 * MIB)
    first, _ = read_artifact_reports(data, GLOBS, budget, name="a1")
    second, _ = read_artifact_reports(data, GLOBS, budget, name="a2")
    tracemalloc.start()
    try:
        third, problems = read_artifact_reports(data, GLOBS, budget, name="a3")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(first) == len(second) == 20
    assert third == []
    assert problems == [f"a3: refused: the job's reports are over {50 * MIB} bytes decompressed"]
    assert budget.exhausted
    # Stopped within a chunk of the budget, each entry parsed as it expanded.
    assert budget.spent <= 50 * MIB + 64 * 1024
    assert peak < 8 * MIB


def test_an_element_dense_report_is_refused_not_built() -> None:
    dense = b"<testsuite>" + b"<x/>" * 100_000 + b"</testsuite>"  # under the ratio floor
    reports, problems = _read(_zip({"dense.xml": dense, "ok.xml": JUNIT}))
    assert problems == []
    (dense_result, ok_result) = (result for _, result in reports)
    assert dense_result.problems == ["artifact.zip/dense.xml: refused: over 100000 XML elements"]
    assert [f.test_id for f in ok_result.failures] == ["tests.test_a::test_b"]


def test_the_jobs_xml_elements_are_budgeted_across_its_artifacts() -> None:
    # Dense reports under every byte cap still cost CPU by the element: 64 MiB of
    # `<testcase/>` is over three million of them, a minute of parsing for one job.
    dense = b"<testsuite>" + b'<testcase name="t"/>' * 45_000 + b"</testsuite>"  # < 1 MiB
    data = _zip({"a.xml": dense, "b.xml": dense})
    budget = ExpandBudget(64 * MIB, elements_total=60_000)
    first, first_problems = read_artifact_reports(data, GLOBS, budget, name="a1")
    second, second_problems = read_artifact_reports(data, GLOBS, budget, name="a2")
    assert [result.elements for _, result in first] == [45_001, 45_001]
    assert first_problems == []
    assert second == []
    assert second_problems == ["a2: refused: the job's reports hold over 60000 XML elements"]


def test_not_a_zip() -> None:
    assert _read(b"nope") == ([], ["artifact.zip: not a readable zip archive"])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    reports, problems = _read(data)
    assert isinstance(reports, list)
    assert isinstance(problems, list)
