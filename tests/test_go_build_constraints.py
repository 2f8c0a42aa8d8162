"""Go files that some runners' builds leave out (bot/triage/imports/go_build.py): a failure
on a Linux runner cannot come from a file built only on Windows. Real files: spf13/cobra at
adbc8813 (tests/fixtures/layouts/PROVENANCE.md)."""

from __future__ import annotations

import pytest

from bot.triage.imports import Source
from bot.triage.imports.go_build import builds_on, constraint, name_os, systems_building
from bot.triage.imports.walk import walk_from_json, walk_to_json
from bot.triage.models import Extraction, Failure, Verdict
from bot.triage.runner_header import RunnerHeader
from bot.triage.verdict import decide_extraction
from tests.test_imports_walk import layout, walked

TREE, FILES = layout("cobra")
TEST = "args_test.go"


def cobra() -> dict[str, Source]:
    return dict(FILES)


def text(path: str) -> str:
    source = FILES[path]
    assert isinstance(source, str)
    return source


@pytest.mark.parametrize(
    ("path", "header", "systems"),
    [
        ("command_win.go", None, {"Windows"}),
        ("command_notwin.go", None, {"Linux", "macOS", "Windows"}),  # WSL on Windows
        ("args.go", None, {"Linux", "macOS", "Windows"}),
        ("a_windows.go", "", {"Windows"}),
        ("a_darwin_arm64_test.go", "", {"macOS"}),
        ("a_linux.go", "", {"Linux", "macOS", "Windows"}),  # containers, WSL
        ("linux.go", "", {"Linux", "macOS", "Windows"}),  # a name, not a suffix
        ("a_amd64.go", "", {"Linux", "macOS", "Windows"}),  # an architecture only
        ("a.go", "//go:build windows && amd64\n\n", {"Windows"}),
        ("a.go", "//go:build windows || cgo\n\n", {"Linux", "macOS", "Windows"}),
        ("a.go", "//go:build (darwin || freebsd) && !ios\n\n", {"macOS"}),
        ("a.go", "//go:build !unix\n\n", {"Linux", "macOS", "Windows"}),  # js, wasip1
        ("a.go", "//go:build plan9\n\n", set()),
        ("a.go", "// +build windows darwin\n\n", {"Windows", "macOS"}),
        ("a.go", "// +build windows\n// +build amd64\n\n", {"Windows"}),
        # A `// +build` line no blank line follows is the package's documentation.
        ("a.go", "// +build windows\n", {"Linux", "macOS", "Windows"}),
        # Malformed: Go refuses the file; nothing is left out here.
        ("a.go", "//go:build windows &&\n\n", {"Linux", "macOS", "Windows"}),
        ("a.go", "//go:build (windows\n\n", {"Linux", "macOS", "Windows"}),
        # After the package clause it is no constraint.
        ("a.go", "package a\n//go:build windows\n", {"Linux", "macOS", "Windows"}),
    ],
)
def test_the_runners_that_may_build_a_file(
    path: str, header: str | None, systems: set[str]
) -> None:
    source = text(path) if header is None else header + "package a\n"
    assert systems_building(path, source) == systems


def test_what_the_evidence_quotes() -> None:
    assert constraint("command_win.go", text("command_win.go")) == "`//go:build windows`"
    assert constraint("x_windows.go", "package x\n") == "its name (x_windows.go)"
    assert constraint("args.go", text("args.go")) == ""
    assert name_os("x_linux_arm64_test.go") == "linux"
    assert builds_on("command_win.go", text("command_win.go"), "a runner of its own")


def test_the_walk_keeps_constraints_and_a_job_leaves_out_what_its_runner_cannot_build() -> None:
    found = walked(TEST, cobra(), tree=TREE)
    assert not found.partial
    assert {"command_win.go", "command_notwin.go"} <= found.files
    assert [(path, sorted(b.systems)) for path, b in found.built_on] == [
        ("command_win.go", ["Windows"])
    ]
    assert walk_from_json(walk_to_json(found)) == found

    on_linux = found.on("Linux")
    assert "command_win.go" not in on_linux.files
    [left_out] = on_linux.not_run
    assert left_out.why == (
        "built only on Windows (`//go:build windows`), not on this job's Linux runner"
    )
    assert found.on("Windows") == found and found.on(None) == found


def failed_on(runner: RunnerHeader | None, changed: str) -> tuple[Verdict, str]:
    failure = Failure(
        test_id="github.com/spf13/cobra.TestNoArgs",
        name="TestNoArgs",
        file=TEST,
        framework="go",
    )
    found = walked(TEST, cobra(), tree=TREE)
    [decision] = decide_extraction(
        Extraction(failures=[failure], runner=runner),
        [changed],
        passed_on_rerun=True,
        imports={TEST: found},
        files=TREE.files.keys(),
    )
    return decision.verdict, " ".join(item.text for item in decision.items)


def test_a_change_to_a_windows_only_file_is_ruled_out_for_a_linux_job_only() -> None:
    linux = RunnerHeader(os="Linux", image="ubuntu-24.04 20260816.277.1")
    verdict, said = failed_on(linux, "command_win.go")
    assert verdict is Verdict.FLAKY
    assert "command_win.go is built only on Windows" in said
    # The same change, and the job ran on Windows, or its runner is not known: related.
    assert failed_on(RunnerHeader(os="Windows"), "command_win.go")[0] is Verdict.RELATED
    assert failed_on(None, "command_win.go")[0] is Verdict.RELATED
    assert failed_on(RunnerHeader(name="self-hosted-7"), "command_win.go")[0] is Verdict.RELATED
    # A file every runner may build stays related on Linux.
    assert failed_on(linux, "command_notwin.go")[0] is Verdict.RELATED
