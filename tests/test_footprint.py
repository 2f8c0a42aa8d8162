"""Footprint of a failed test and matching of changed paths against it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.footprint import (
    REASON_CONFIG,
    REASON_DIRECTORY,
    REASON_GO_PACKAGE,
    REASON_PAIR,
    REASON_TEST_FILE,
    REASON_TESTDATA,
    REASON_TESTS_FOLDER,
    REASON_TRACEBACK,
    entry_contains,
    footprint,
    locate_test_file,
    matches,
    normalise_path,
    pair_pattern,
)
from bot.triage.models import Failure, Footprint, FootprintEntry

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"


def failure(
    test_id: str = "tests/bus/test_core.py::TestBus::test_publish",
    *,
    file: str | None = None,
    trace_paths: list[str] | None = None,
) -> Failure:
    return Failure(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        file=file,
        framework="pytest",
        trace_paths=trace_paths or [],
    )


def as_pairs(fp: Footprint) -> list[tuple[str, str]]:
    return [(entry.path, entry.reason) for entry in fp.entries]


def test_footprint_lists_file_traceback_pair_and_directory_with_reasons() -> None:
    fp = footprint(
        failure(
            file="tests/bus/test_core.py",
            trace_paths=["tests/bus/test_core.py", "src/bus/core.py", "src/bus/wire.py"],
        )
    )

    assert fp.test_id == "tests/bus/test_core.py::TestBus::test_publish"
    assert as_pairs(fp) == [
        ("tests/bus/test_core.py", REASON_TEST_FILE),
        ("src/bus/core.py", REASON_TRACEBACK),
        ("src/bus/wire.py", REASON_TRACEBACK),
        ("**/bus/core.py", REASON_PAIR),
        ("tests/bus/", REASON_DIRECTORY),
        ("tests/testdata/", REASON_TESTDATA),
    ]


def test_test_file_comes_from_the_test_id_when_the_failure_has_none() -> None:
    assert locate_test_file(failure("tests/bus/test_core.py::test_x")) == "tests/bus/test_core.py"
    assert locate_test_file(failure("./tests/a/test_b.py::test_x")) == "tests/a/test_b.py"


@pytest.mark.parametrize(
    "test_id",
    [
        "package/name/fail/TestOne",  # go test: no file in the id
        "TestBus::test_publish",  # no path before "::"
        "/abs/tests/test_x.py::test_y",
        "../tests/test_x.py::test_y",
    ],
)
def test_no_test_file_when_the_id_holds_no_repo_path(test_id: str) -> None:
    assert locate_test_file(failure(test_id)) is None
    assert footprint(failure(test_id)).entries == []


def test_a_test_at_the_repo_root_has_no_directory_entry() -> None:
    fp = footprint(failure("test_app.py::test_start"))

    assert as_pairs(fp) == [("test_app.py", REASON_TEST_FILE), ("**/app.py", REASON_PAIR)]
    assert matches(fp, ["README.md", "src/other.py"]) == []


def test_paths_outside_the_repo_never_enter_the_footprint() -> None:
    fp = footprint(
        failure(
            trace_paths=[
                "/usr/lib/python3.11/asyncio/base_events.py",
                "../outside/secret.py",
                "src/../../escape.py",
                "",
                "src//bus/./core.py",
            ]
        )
    )

    traced = [entry.path for entry in fp.entries if entry.reason == REASON_TRACEBACK]
    assert traced == ["src/bus/core.py"]


@pytest.mark.parametrize(
    ("test_file", "pattern"),
    [
        ("tests/bus/test_core.py", "**/bus/core.py"),
        ("tests/test_foo.py", "**/foo.py"),
        ("pkg/tests/test_foo.py", "**/foo.py"),
        ("bus/core_test.py", "**/bus/core.py"),
        ("internal/wire/codec_test.go", "**/internal/wire/codec.go"),
        ("spec/models/user_spec.rb", "**/models/user.rb"),
        ("src/__tests__/button.test.tsx", "**/button.tsx"),
        ("web/src/button.spec.ts", "**/web/src/button.ts"),
        ("src/test/java/com/acme/CoreTest.java", "**/java/com/acme/Core.java"),
        ("src/test/kotlin/CoreTests.kt", "**/kotlin/Core.kt"),
        ("tests/helpers.py", None),
        ("tests/conftest.py", None),
    ],
)
def test_conventional_pair(test_file: str, pattern: str | None) -> None:
    assert pair_pattern(test_file) == pattern


@pytest.mark.parametrize(
    ("changed", "inside"),
    [
        ("src/bus/core.py", True),
        ("bus/core.py", True),
        ("lib/src/bus/core.py", True),
        ("core.py", False),
        ("src/core.py", False),
        ("src/omnibus/core.py", False),
        ("src/bus/core.pyi", False),
        ("src/bus/core.py/extra", False),
    ],
)
def test_pair_pattern_matches_the_basename_under_the_same_directory(
    changed: str, inside: bool
) -> None:
    assert entry_contains(FootprintEntry(path="**/bus/core.py", reason="pair"), changed) is inside


def test_matches_says_which_entry_covers_each_changed_path() -> None:
    fp = footprint(failure(trace_paths=["src/bus/core.py"]))

    found = matches(
        fp,
        [
            "README.md",
            "src/bus/core.py",
            "tests/bus/conftest.py",
            "lib/bus/core.py",
            "tests/bus/test_core.py",
            "tests/busy/test_x.py",
        ],
    )

    assert [(path, entry.reason) for path, entry in found] == [
        ("src/bus/core.py", REASON_TRACEBACK),
        ("tests/bus/conftest.py", REASON_DIRECTORY),
        ("lib/bus/core.py", REASON_PAIR),
        ("tests/bus/test_core.py", REASON_TEST_FILE),
    ]


def test_matches_normalises_and_deduplicates_changed_paths() -> None:
    fp = footprint(failure())

    found = matches(fp, ["./tests/bus/test_core.py", "tests//bus/test_core.py"])

    assert [path for path, _ in found] == ["tests/bus/test_core.py"]


@pytest.mark.parametrize(
    "changed",
    [
        "/tests/bus/test_core.py",
        "../tests/bus/test_core.py",
        "tests/bus/../bus/test_core.py",
        "tests/bus/../../etc/passwd",
        "",
    ],
)
def test_absolute_and_climbing_changed_paths_never_match(changed: str) -> None:
    assert matches(footprint(failure()), [changed]) == []


@pytest.mark.parametrize("entry_path", ["../", "/", "**/../x.py", "/etc/", "a/../"])
def test_hand_built_unsafe_entries_never_match(entry_path: str) -> None:
    fp = Footprint(test_id="t", entries=[FootprintEntry(path=entry_path, reason="mapping")])

    assert matches(fp, ["x.py", "etc/passwd", "a/b.py", "../x.py"]) == []


segment = st.sampled_from(["tests", "src", "bus", "core.py", "..", ".", "", "a b", "x.py"])
raw_path = st.lists(segment, min_size=1, max_size=5).map("/".join)


@given(
    test_file=raw_path,
    trace=st.lists(raw_path, max_size=4),
    changed=st.lists(st.one_of(raw_path, raw_path.map(lambda p: "/" + p)), max_size=6),
)
def test_every_match_is_a_safe_path_covered_by_its_entry(
    test_file: str, trace: list[str], changed: list[str]
) -> None:
    fp = footprint(failure(f"{test_file}::test_x", trace_paths=trace))

    for entry in fp.entries:
        assert ".." not in entry.path.split("/")
        assert not entry.path.startswith("/")
    for path, entry in matches(fp, changed):
        assert normalise_path(path) == path
        assert ".." not in path.split("/")
        assert not path.startswith("/")
        assert entry in fp.entries
        assert entry_contains(entry, path)


def test_real_pytorch_failure_footprint() -> None:
    log = CORPUS / "logs" / "pytorch-test-infra" / "pytest_failure.txt"
    if not log.is_file():
        pytest.fail(
            f"corpus not available at {CORPUS} (tests/fixtures/corpus is part of the repository)"
        )
    marked = re.search(
        "^#=MATCH=# .*\u2039(?P<test_id>[^\u203a]+)\u203a", log.read_text(), re.MULTILINE
    )
    assert marked is not None

    fp = footprint(failure(marked["test_id"]))

    assert as_pairs(fp) == [
        ("distributed/test_c10d_spawn_gloo.py", REASON_TEST_FILE),
        ("**/distributed/c10d_spawn_gloo.py", REASON_PAIR),
        ("distributed/", REASON_DIRECTORY),
    ]
    found = matches(fp, ["torch/distributed/c10d_spawn_gloo.py", "torch/nn/functional.py"])
    assert [path for path, _ in found] == ["torch/distributed/c10d_spawn_gloo.py"]


# --- testdata, __tests__, Go packages, config mappings -------------------------------------


def reasons_for(test_id: str, changed: str, **kwargs: object) -> list[str]:
    fp = footprint(Failure(test_id=test_id, name=test_id.rpartition("::")[2], **kwargs))
    return [entry.reason for _, entry in matches(fp, [changed])]


def test_testdata_folders_above_the_test_up_to_the_test_root_are_in_its_footprint() -> None:
    test_id = "tests/unit/parse/test_doc.py::test_roundtrip"

    assert reasons_for(test_id, "tests/unit/testdata/a.json", framework="pytest") == [
        REASON_TESTDATA
    ]
    assert reasons_for(test_id, "tests/testdata/a.json", framework="pytest") == [REASON_TESTDATA]
    # Above the test tree, and a sibling's folder: not this test's data.
    assert reasons_for(test_id, "testdata/a.json", framework="pytest") == []
    assert reasons_for(test_id, "tests/other/testdata/a.json", framework="pytest") == []


def test_a_tests_folder_depends_on_the_folder_it_sits_in() -> None:
    test_id = "src/cart/__tests__/total.test.ts > total > adds discounts"
    where = {"framework": "jest", "file": "src/cart/__tests__/total.test.ts"}

    assert reasons_for(test_id, "src/cart/discounts.ts", **where) == [REASON_TESTS_FOLDER]
    assert reasons_for(test_id, "src/user/profile.ts", **where) == []


@pytest.mark.parametrize(
    "test_id",
    [
        "github.com/acme/bus/internal/wire.TestParse/nested_braces",
        "github.com/acme/bus/internal/wire",
    ],
)
def test_a_go_test_depends_on_its_package_found_from_the_import_path(test_id: str) -> None:
    name = test_id.rpartition(".")[2] if ".Test" in test_id else test_id

    def reasons(changed: str) -> list[str]:
        fp = footprint(Failure(test_id=test_id, name=name, framework="go"))
        return [entry.reason for _, entry in matches(fp, [changed])]

    assert reasons("internal/wire/lexer.go") == [REASON_GO_PACKAGE]
    assert reasons("internal/store/db.go") == []
    assert reasons("wire/x.go") == [REASON_GO_PACKAGE]  # a tail of the path, over-matched
    assert reasons("github.com/x.go") == []  # a host is never a repo directory
    # A sub-folder is another package (or a nested module), which the test runs only if
    # it imports it: the walk says so, not the package's folder.
    assert reasons("internal/wire/codec/codec.go") == []
    assert reasons("internal/wire/v2/go.mod") == []
    # Its testdata/ is the package's own: `go test` reads it from the package's folder.
    assert reasons("internal/wire/testdata/golden/a.json") == [REASON_GO_PACKAGE]


def test_only_go_tests_get_a_package_from_their_id() -> None:
    fp = footprint(Failure(test_id="pkg/wire.TestParse", name="TestParse", framework="pytest"))

    assert REASON_GO_PACKAGE not in [entry.reason for entry in fp.entries]


def test_config_mappings_add_glob_entries_for_the_tests_they_name() -> None:
    mappings = {"tests/e2e/**": ["src/web/**", "*.html"], "tests/unit/**": ["**"]}
    e2e = Failure(test_id="tests/e2e/test_pay.py::test_pay", name="test_pay", framework="pytest")

    fp = footprint(e2e, mappings)

    mapped = [(e.path, e.glob) for e in fp.entries if e.reason.startswith(REASON_CONFIG)]
    assert mapped == [("src/web/**", True), ("*.html", True)]
    assert [path for path, _ in matches(fp, ["src/web/views.py", "docs/x.html", "src/a.py"])] == [
        "src/web/views.py",
        "docs/x.html",
    ]


def test_a_mapping_to_everything_matches_every_change() -> None:
    e2e = Failure(test_id="tests/e2e/test_pay.py::test_pay", name="test_pay", framework="pytest")

    fp = footprint(e2e, {"tests/e2e/**": ["**"]})

    assert [path for path, _ in matches(fp, ["README.md", "a/b/c.py"])] == ["README.md", "a/b/c.py"]


def test_a_glob_pathspec_refuses_matches_nothing() -> None:
    entry = FootprintEntry(path="a/b\\", reason=REASON_CONFIG, glob=True)

    assert matches(Footprint(test_id="t", entries=[entry]), ["a/b", "a/b\\"]) == []


def test_a_located_go_test_depends_on_its_own_folder_and_its_testdata() -> None:
    """A module in go/: no tail of the import path is the package's folder, its test file's
    folder is; its testdata/ is strong evidence, a sub-package is not."""
    failure = Failure(
        test_id="github.com/acme/bus/internal/wire.TestParse", name="TestParse", framework="go"
    )
    located = failure.model_copy(update={"file": "go/internal/wire/parse_test.go"})
    fp = footprint(located)

    def reasons(changed: str) -> list[str]:
        return [entry.reason for _, entry in matches(fp, [changed])]

    assert reasons("go/internal/wire/testdata/golden.json") == [REASON_GO_PACKAGE]
    assert reasons("go/internal/wire/lexer.go") == [REASON_GO_PACKAGE]
    assert reasons("go/internal/wire/sub/x.go") == []  # another package: the walk's to say
