"""`flakybot parse`, run as a subprocess on real logs and reports."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bot.triage.reports import FORMATS

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
FIXTURES = ROOT / "tests" / "fixtures" / "logs"


def _corpus(relative: str) -> Path:
    path = CORPUS / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    return path


def _as_served(path: Path, tmp_path: Path) -> Path:
    """A temporary copy of a corpus log without its fixture tool's markers (INDEX.md)."""
    kept = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.startswith("#=SOURCE=#"):
            kept.append(line.removeprefix("#=MATCH=# ").replace("\u2039", "").replace("\u203a", ""))
    copy = tmp_path / path.name
    copy.write_text("\n".join(kept), encoding="utf-8")
    return copy


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "parse", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _json(*args: str | Path) -> list[dict[str, Any]]:
    done = _run("--json", *args)
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_a_pytest_log_prints_its_failure() -> None:
    log = _corpus("logs/pytorch-test-infra/pytest_failure.txt")

    done = _run(log)

    assert done.returncode == 0, done.stderr
    assert "job: 1 failed test\n" in done.stdout
    assert (
        "  - distributed/test_c10d_spawn_gloo.py::TestDistributedNNFunctionsGloo::test_all_gather"
        in done.stdout.splitlines()
    )
    assert "framework: pytest  source: log  attempts: 1/1 failed" in done.stdout
    assert "signature: RuntimeError: Process 0 terminated or timed out after <duration>" in (
        done.stdout
    )


def test_json_lists_each_file_with_its_class_and_failures(tmp_path: Path) -> None:
    timeout = _as_served(_corpus("logs/pytorch-test-infra/gha_timeout.txt"), tmp_path)
    report = _corpus("reports/test-reporter/__tests__/fixtures/python-xunit-pytest.xml")
    passing = _corpus("logs/blastradius/agno-agi__agno__job97433407085__log.txt")

    infra, junit, nothing = _json(timeout, report, passing)

    assert (infra["job"], infra["infra"]["kind"], infra["failures"]) == ("infra", "timeout", [])
    assert "has timed out after 360 minutes." in infra["infra"]["line"]
    assert junit["job"] == "tests-failed"
    assert [f["test_id"] for f in junit["failures"]] == [
        "tests/test_lib.py::test_always_fail",
        "tests/test_lib.py::test_error",
    ]
    assert junit["failures"][0] == {
        "test_id": "tests/test_lib.py::test_always_fail",
        "file": "tests/test_lib.py",
        "location": "tests/test_lib.py:25",
        "location_source": "stack",
        "location_note": "",
        "declared_at": None,
        "unplaced_frames": [],
        "framework": "pytest",
        "source": "junit",
        "signature": "assert False",
        "message": junit["failures"][0]["message"],
        "attempts_failed": 1,
        "attempts_total": 1,
    }
    assert (nothing["job"], nothing["failures"]) == ("unknown", [])


def test_formats_are_told_by_extension_and_content() -> None:
    gojson = _corpus("logs/go-junit-report/101-fail.gojson.txt")  # a .txt holding go test -json
    trx = _corpus("reports/test-reporter/__tests__/fixtures/dotnet-trx.trx")
    log = FIXTURES / "infra" / "oom_killed.log"

    results = _json(gojson, trx, log)

    assert [r["format"] for r in results] == ["auto", "auto", "log"]
    assert [f["source"] for f in results[0]["failures"]] == ["go-json"]
    assert {f["source"] for f in results[1]["failures"]} == {"trx"}
    assert (results[2]["job"], results[2]["infra"]["kind"]) == ("infra", "oom")


def test_an_explicit_format_is_obeyed() -> None:
    gojson = _corpus("logs/go-junit-report/101-fail.gojson.txt")

    (as_log,) = _json("--format", "log", gojson)

    # Read as a console log, go's JSON events name no failure: the format was not sniffed.
    assert (as_log["format"], as_log["job"], as_log["failures"]) == ("log", "unknown", [])


def test_a_broken_report_is_a_problem_and_still_exit_0() -> None:
    corrupt = _corpus(
        "reports/publish-unit-test-result-action/python/test/files/junit-xml/pytest/corrupt-xml.xml"
    )

    (result,) = _json(corrupt)

    assert result["job"] == "unknown"
    assert result["problems"][0].startswith("corrupt-xml.xml")


def test_a_missing_file_exits_2_with_a_message(tmp_path: Path) -> None:
    done = _run(tmp_path / "nope.log")

    assert done.returncode == 2
    assert done.stdout == ""
    assert f"flakybot parse: no such file: {tmp_path / 'nope.log'}" in done.stderr


def test_json_says_where_each_location_came_from(tmp_path: Path) -> None:
    report = tmp_path / "TEST-CartTest.xml"
    report.write_text(
        '<testsuite name="com.acme.CartTest"><testcase classname="com.acme.CartTest" '
        'name="total" file="D:\\a\\store\\store\\src\\CartTest.kt" line="17">'
        '<failure message="expected 90"/></testcase><testcase classname="pkg" name="TestPut">'
        "<failure>    store_test.go:41: got 2</failure></testcase></testsuite>"
    )

    [junit] = _json(report)

    located = {f["test_id"]: (f["location"], f["location_source"]) for f in junit["failures"]}
    assert located == {
        "com.acme.CartTest#total": ("src/CartTest.kt:17", "attribute"),
        "pkg#TestPut": ("store_test.go:41", "stack"),
    }
    done = _run(report)
    assert "location: src/CartTest.kt:17 (from attribute)" in done.stdout


def test_json_names_the_log_scanner_and_both_find_the_same(tmp_path: Path) -> None:
    log = _corpus("logs/pytorch-test-infra/pytest_failure.txt")
    report = _corpus("reports/test-reporter/__tests__/fixtures/python-xunit-pytest.xml")

    (by_default, report_result) = _json(log, report)
    (by_re2,) = _json("--scanner", "re2", log)

    assert by_re2["scanner"] == "re2"
    assert by_default["scanner"] in ("hyperscan", "re2")
    assert report_result["scanner"] is None  # a report is parsed whole, never pre-filtered
    assert by_re2["failures"] == by_default["failures"] != []
    assert ", re2 scanner" in _run("--scanner", "re2", log).stdout.splitlines()[0]


def test_without_hyperscan_parse_uses_re2_and_refuses_to_be_told_otherwise() -> None:
    """A process where `import hyperscan` fails, as on a platform without its wheel."""
    log = _corpus("logs/pytorch-test-infra/pytest_failure.txt")

    def parse_without_hyperscan(*args: str) -> subprocess.CompletedProcess[str]:
        code = (
            "import sys; sys.modules['hyperscan'] = None; from bot.cli import main; "
            "sys.exit(main(['parse', *sys.argv[1:]]))"
        )
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    done = parse_without_hyperscan("--json", str(log))
    refused = parse_without_hyperscan("--scanner", "hyperscan", str(log))

    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert result["scanner"] == "re2"
    assert result["failures"] == _json(log)[0]["failures"] != []
    assert refused.returncode == 2
    assert "pip install hyperscan" in refused.stderr


# An OSC sequence that retitles the terminal, a cursor movement with erasure, a C1 control
# (CSI in one character) and a right-to-left override.
HOSTILE_NAME = "job\x1b]0;pwned\x07\x1b[2K\x1b[1A\x9b31m\u202egnp.txt"


@pytest.mark.parametrize("as_json", [False, True])
def test_parse_escapes_control_characters_in_what_it_prints(tmp_path: Path, as_json: bool) -> None:
    log = _corpus("logs/pytorch-test-infra/pytest_failure.txt")
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"{HOSTILE_NAME}/1_Run tests.txt", log.read_bytes())
        zf.writestr("1_" + HOSTILE_NAME.replace("/", "") + ".txt", b"\x1b[31mFAILED\x1b[0m\n")

    done = _run(*(["--json"] if as_json else []), archive)

    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert "pwned" in printed  # the name is shown, its controls written out
    hidden = [c for c in printed if unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\t"]
    assert hidden == []
    assert "<U+001B>]0;pwned<U+0007>" in printed or "\\u001b]0;pwned\\u0007" in printed
    assert "<U+009B>31m<U+202E>gnp" in printed


def test_nunit_and_xunit_reports_are_read_and_every_format_is_listed(tmp_path: Path) -> None:
    reports = ROOT / "tests" / "fixtures" / "reports"
    # No .xml suffix: told from the content's root.
    nunit = tmp_path / "TestResult"
    nunit.write_bytes((reports / "nunit" / "dorny-dotnet-nunit.xml").read_bytes())

    results = _json(nunit, reports / "xunit" / "testcase1.xml")
    listed = _run("--help").stdout

    assert [r["format"] for r in results] == ["auto", "auto"]
    assert {f["source"] for f in results[0]["failures"]} == {"nunit"}
    assert len(results[0]["failures"]) == 5
    assert [f["test_id"] for f in results[1]["failures"]] == [
        "MyProject.Tests.SampleFact.FailedTest"
    ]
    for name in FORMATS:
        assert f"\n  {name} " in listed
