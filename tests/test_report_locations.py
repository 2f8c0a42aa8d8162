"""Locations as real reports state them (issue 26): each location a producer's or a peer
project's expected parse gives is kept (`fixtures/reports/stated/locations.json`); runner
folders map in one place for every reader; frames printed elsewhere are placed by the
commit's tree, or kept as printed and said so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.handlers.checks import _placed_in_tree
from bot.handlers.sources import SourceCache
from bot.shared import Tree, TreeFile
from bot.triage.failures import extract_failures, merge
from bot.triage.models import Extraction, Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports import FORMATS, parse_report
from bot.triage.reports.locations import UNPLACED_NOTE, resolve_in_tree, stated_path
from bot.triage.reports.traces import repo_frames, unplaced_frames

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STATED = json.loads((FIXTURES / "reports" / "stated" / "locations.json").read_text())
STATED_CASES = [
    pytest.param(report, stated, id=f"{Path(report['report']).name}:{stated['at']}")
    for report in STATED["reports"]
    for stated in report["locations"]
]


def _tree(paths: list[str] | str) -> Tree:
    if isinstance(paths, str):
        paths = [p for p in (FIXTURES / paths).read_text().splitlines() if p]
    return Tree(files={p: TreeFile(sha="0" * 40, size=1) for p in paths})


def _read(report: dict[str, Any]) -> list[Failure]:
    """The report's failures as the check handler keeps them: placed in the tree its peer
    parsed it against, when it names one."""
    path = FIXTURES / report["report"]
    failures = parse_report(path.name, path.read_bytes()).failures
    if report["tree"] is None:
        return failures
    cache = SourceCache()
    cache.trees[("peer/repo", "sha")] = _tree(report["tree"])
    extraction = Extraction(failures=failures)
    return _placed_in_tree(extraction, cache, "peer/repo", "sha").failures


@pytest.mark.parametrize(("report", "stated"), STATED_CASES)
def test_every_stated_location_of_a_real_report_is_kept(
    report: dict[str, Any], stated: dict[str, str]
) -> None:
    [failure] = [f for f in _read(report) if f.test_id == stated["test"]]

    if stated["kind"] == "raised":
        assert failure.location == stated["at"]
        assert failure.location_source in ("stack", "tree")
    else:
        assert stated["at"] in (failure.declared_at, failure.location)


def test_the_tally_takes_the_line_that_raised_and_keeps_the_cases_own_line() -> None:
    # pytest wrote the case's `file`/`line` (819, where the test is defined); its trace
    # raised at 852 in a helper the test calls.
    path = FIXTURES / "corpus/reports/publish-unit-test-result-action/python/test/files"
    data = (path / "junit-xml/pytest/junit.fail.xml").read_bytes()

    [failure] = parse_report("junit.fail.xml", data).failures

    assert (failure.location, failure.location_source) == ("test/test_spark.py:852", "stack")
    assert failure.declared_at == "test/test_spark.py:819"


def test_without_a_tree_a_frame_printed_outside_the_checkout_is_kept_as_printed_and_said() -> None:
    # dorny/test-reporter's xUnit run on a developer's machine: no runner folder to drop.
    dorny = FIXTURES / "corpus/reports/test-reporter/__tests__/fixtures"
    data = (dorny / "dotnet-trx.trx").read_bytes()

    failures = parse_report("dotnet-trx.trx", data).failures
    [failure] = [f for f in failures if f.name.endswith("Exception_In_TargetTest")]

    printed = "C:/Users/Michal/Workspace/dorny/test-reporter/reports/dotnet/"
    assert failure.location == printed + "DotnetTests.Unit/Calculator.cs:9"
    assert failure.location_note == UNPLACED_NOTE
    assert failure.unplaced_frames == [
        printed + "DotnetTests.Unit/Calculator.cs:9",
        printed + "DotnetTests.XUnitTests/CalculatorTests.cs:33",
    ]
    assert failure.trace_paths == []  # never taken for a repository path unplaced


def test_a_jvm_frame_is_placed_by_its_package_never_kept_as_printed() -> None:
    data = (FIXTURES / "reports/stated/dorny-pulsar-single-suite.xml").read_bytes()
    source = "src/test/java/org/apache/pulsar/AddMissingPatchVersionTest.java"

    [failure] = parse_report("TEST-pulsar.xml", data).failures
    [placed] = resolve_in_tree([failure], _tree([f"common/{source}", "AddMissingPatch.java"]))
    [elsewhere] = resolve_in_tree([failure], _tree(["a/org/apache/pulsar/Other.java"]))
    [twice] = resolve_in_tree([failure], _tree([f"a/{source}", f"b/{source}"]))

    assert failure.location is None
    assert failure.unplaced_frames == ["org/apache/pulsar/AddMissingPatchVersionTest.java:29"]
    assert (placed.location, placed.location_source) == (f"common/{source}:29", "tree")
    assert elsewhere.location is None  # the tree does not hold it: nothing is guessed
    assert twice.location is None  # two modules hold it: neither is chosen


def test_a_frame_several_tree_files_end_with_is_not_placed() -> None:
    failure = Failure(
        test_id="t",
        name="t",
        framework="rspec",
        location="../lib/parse.rb:3",
        location_source="stack",
        location_note=UNPLACED_NOTE,
        unplaced_frames=["../lib/parse.rb:3"],
    )

    [one] = resolve_in_tree([failure], _tree(["gems/a/lib/parse.rb", "spec/a_spec.rb"]))
    # Printed from a folder nobody named: the root's lib/ is as likely as gems/a's.
    [two] = resolve_in_tree([failure], _tree(["gems/a/lib/parse.rb", "lib/parse.rb"]))

    assert (one.location, one.location_source) == ("gems/a/lib/parse.rb:3", "tree")
    assert two.location == "../lib/parse.rb:3"
    assert two.location_note.startswith("lib/parse.rb is 2 files in the tree")


def test_a_relative_frame_above_the_working_folder_is_kept_as_printed_and_said() -> None:
    # RSpec run from a subfolder prints the library it tests relative to it.
    backtrace = ["../lib/acme/parse.rb:12:in `call'", "./spec/parse_spec.rb:7:in `block'"]
    report = {
        "version": "3.13.0",
        "examples": [
            {
                "id": "./spec/parse_spec.rb[1:1]",
                "full_description": "Parse reads",
                "status": "failed",
                "file_path": "./spec/parse_spec.rb",
                "line_number": 5,
                "exception": {"class": "RuntimeError", "message": "boom", "backtrace": backtrace},
            }
        ],
        "summary": {"example_count": 1, "failure_count": 1},
    }

    [failure] = parse_report("rspec.json", json.dumps(report).encode()).failures
    [placed] = resolve_in_tree([failure], _tree(["lib/acme/parse.rb", "spec/parse_spec.rb"]))

    # The innermost frame the repository holds for certain is the spec's own.
    assert (failure.location, failure.location_source) == ("spec/parse_spec.rb:7", "stack")
    assert failure.unplaced_frames == []  # a repository frame was found: nothing to place
    assert failure.declared_at == "spec/parse_spec.rb:5"
    assert placed.location == "spec/parse_spec.rb:7"


RUNNER_FOLDERS = [
    ("/home/runner/work/shop/shop/src/x.py", "src/x.py"),
    ("/Users/runner/work/shop/shop/Sources/A.swift", "Sources/A.swift"),
    (r"D:\a\shop\shop\src\X.cs", "src/X.cs"),
    (r"C:\actions-runner\_work\shop\shop\src\X.cs", "src/X.cs"),
    ("/opt/actions-runner/_work/shop/shop/lib/a.rb", "lib/a.rb"),
    ("/__w/shop/shop/pkg/a.go", "pkg/a.go"),
    ("/_/src/Shop/Cart.cs", "src/Shop/Cart.cs"),
    ("/github/workspace/tests/test_a.py", "tests/test_a.py"),
    ("file:///home/runner/work/shop/shop/test/a.test.mjs", "test/a.test.mjs"),
    ("file:///D:/a/shop/shop/test/a_test.dart", "test/a_test.dart"),
    ("/usr/lib/python3.11/unittest/case.py", None),
    ("/home/runner/work/shop/shop/node_modules/x/index.js", None),
]


@pytest.mark.parametrize(("printed", "expected"), RUNNER_FOLDERS)
def test_runner_folders_map_in_one_place_for_logs_reports_and_frames(
    printed: str, expected: str | None
) -> None:
    assert PathMap().to_repo(printed) == expected
    assert stated_path(printed) == expected
    frames = repo_frames(f"    at run ({printed}:12:3)", PathMap())
    assert [f"{f.path}:{f.line}" for f in frames] == ([f"{expected}:12"] if expected else [])


def test_a_log_parser_maps_a_self_hosted_windows_frame_the_same_way() -> None:
    log = (
        "2026-12-01T10:00:00.0000000Z   Failed Shop.Tests.CartTests.Adds [12 ms]\n"
        "2026-12-01T10:00:00.0000000Z   Error Message:\n"
        "2026-12-01T10:00:00.0000000Z    Assert.Equal() Failure\n"
        "2026-12-01T10:00:00.0000000Z   Stack Trace:\n"
        "2026-12-01T10:00:00.0000000Z      at Shop.Tests.CartTests.Adds() in "
        r"C:\actions-runner\_work\shop\shop\tests\CartTests.cs:line 14"
        "\n"
    )

    [failure] = extract_failures(log)

    assert failure.location == "tests/CartTests.cs:14"


def _drop_jest(document: dict[str, Any]) -> None:
    [suite] = [s for s in document["testResults"] if s["name"].endswith("cart.test.js")]
    suite["assertionResults"] = [t for t in suite["assertionResults"] if t["status"] != "failed"]


def _drop_playwright(document: dict[str, Any]) -> None:
    [spec_file] = document["suites"]
    for suite in spec_file["suites"]:
        suite["specs"] = [s for s in suite["specs"] if s["title"] != "refuses a negative discount"]


def _drop_mocha(document: dict[str, Any]) -> None:
    document["failures"] = document["failures"][1:]


def _drop_rspec(document: dict[str, Any]) -> None:
    document["examples"] = [e for e in document["examples"] if e["status"] != "failed"]


def _drop_ctrf(document: dict[str, Any]) -> None:
    tests = document["results"]["tests"]
    document["results"]["tests"] = [t for t in tests if t["status"] != "failed"]


COUNTED = [
    ("reports/jest30-shop.json", _drop_jest, "counts 3 failures, 1 were read"),
    ("reports/playwright-shop.json", _drop_playwright, "counts 1 failures, 0 were read"),
    (
        "corpus/reports/test-reporter/__tests__/fixtures/mocha-json.json",
        _drop_mocha,
        "counts 4 failures, 3 were read",
    ),
    ("reports/dorny-rspec-json.json", _drop_rspec, "counts 1 failures, 0 were read"),
    ("reports/ctrf-comprehensive.json", _drop_ctrf, "counts 1 failures, 0 were read"),
]


@pytest.mark.parametrize(("fixture", "drop", "said"), COUNTED)
def test_a_json_report_missing_failures_its_own_counts_name_is_never_clean(
    fixture: str, drop: Any, said: str
) -> None:
    """The real report as written reads with no problem; with a failed test taken out of it
    (as a truncated or hand-merged file would be), its own counters say so."""
    data = (FIXTURES / fixture).read_bytes()
    document = json.loads(data)
    drop(document)

    whole = parse_report(Path(fixture).name, data)
    cut = parse_report(Path(fixture).name, json.dumps(document).encode())

    assert whole.problems == []
    assert cut.problems == [f"{Path(fixture).name}: the report {said}"]


def test_every_format_the_registry_reads_is_documented_with_an_example() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
    table = docs.split("## Report formats", 1)[1].split("\n\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 3:
            rows[cells[0].strip("`")] = cells[2]

    assert set(FORMATS) <= set(rows)
    assert all(rows[name] for name in FORMATS)


def test_a_path_printed_from_the_working_folder_is_the_trees_file_without_its_dot() -> None:
    failure = Failure(test_id="t", name="t", framework="go", location="./pkg/a_test.go:5")

    [placed] = resolve_in_tree([failure], _tree(["pkg/a_test.go"]))

    assert (placed.location, placed.location_source) == ("pkg/a_test.go:5", "tree")


def test_a_go_panic_printed_under_a_gopath_is_kept_then_placed_by_the_tree() -> None:
    # go-junit-report's testdata: a panic whose only frame is `/src/package/name/panic/...`.
    data = (FIXTURES / "corpus/logs/go-junit-report/105-panic.gojson.txt").read_bytes()

    [failure] = parse_report("105-panic.gojson.txt", data).failures
    [placed] = resolve_in_tree([failure], _tree(["panic/main_test.go", "go.mod"]))

    assert (failure.location, failure.location_note) == (
        "/src/package/name/panic/main_test.go:6",
        UNPLACED_NOTE,
    )
    assert (placed.location, placed.location_source) == ("panic/main_test.go:6", "tree")


def test_toolchain_and_installed_frames_are_never_candidates() -> None:
    trace = (
        "panic: boom\n"
        "/usr/local/go/src/testing/testing.go:1595 +0x1a\n"
        "/rustc/90b35a6/library/core/src/panicking.rs:72:14\n"
        "/opt/hostedtoolcache/Python/3.12.1/x64/lib/python3.12/unittest/case.py:58\n"
        "/home/dev/.cache/pypoetry/virtualenvs/x/lib/python3.12/site-packages/a/b.py:3\n"
        "/Users/dev/.nuget/packages/xunit.assert/2.4.2/Assert.cs:40\n"
        "/home/dev/shop/pkg/cart_test.go:12 +0x2b\n"
    )

    assert unplaced_frames(trace, PathMap()) == ["/home/dev/shop/pkg/cart_test.go:12"]


def test_a_merged_failure_keeps_the_declared_line_and_the_frames_to_place() -> None:
    report = Failure(
        test_id="Shop.CartTests.Adds",
        name="Adds",
        framework="dotnet",
        source="trx",
        unplaced_frames=["C:/Users/me/shop/tests/CartTests.cs:14"],
    )
    log = Failure(
        test_id="Shop.CartTests.Adds",
        name="Adds",
        framework="dotnet",
        declared_at="tests/CartTests.cs:9",
    )

    [merged] = merge([log, report])

    assert merged.source == "trx"
    assert merged.unplaced_frames == ["C:/Users/me/shop/tests/CartTests.cs:14"]
    assert merged.declared_at == "tests/CartTests.cs:9"
