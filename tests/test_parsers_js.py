"""Failed tests read from JavaScript runners' logs: jest, vitest, mocha, bun, node --test."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.failures import extract_failures
from bot.triage.models import Failure
from bot.triage.parsers import PARSERS, bun, jest, mocha, node_test
from bot.triage.parsers.actions_log import clean_log

Parse = Callable[[Sequence[str]], list[Failure]]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"
CORPUS_LOGS = Path(__file__).resolve().parent / "fixtures" / "corpus" / "logs"
SEP = " \u203a "

OURS: dict[str, tuple[Parse, re.Pattern[str]]] = {
    "jest": (jest.parse_jest, jest.MARKER),
    "vitest": (jest.parse_vitest, jest.MARKER),
    "mocha": (mocha.parse_mocha, mocha.MARKER),
    "bun": (bun.parse_bun, bun.MARKER),
    "node_test": (node_test.parse_node_test, node_test.MARKER),
}


def _lines(relative: str) -> list[str]:
    return clean_log((FIXTURES / relative).read_text(encoding="utf-8"))


def _ids(failures: list[Failure]) -> set[str]:
    return {f.test_id for f in failures}


def _by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


def _id(*parts: str) -> str:
    return SEP.join(parts)


EXPECTED: dict[str, set[str]] = {
    "jest/verbose_nested.log": {
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            'rounds [0.5, "half up"] to cents',
        ),
        _id("src/cart/discount.test.ts", "discount", "codes", 'rejects code "ÉTÉ-2026" for guests'),
        "src/api/client.test.ts",
    },
    "jest/windows_projects.log": {
        _id("src/widgets/__tests__/Clock.test.tsx", "Clock", "renders the time in “Europe/Zürich”"),
        _id("src/widgets/__tests__/Clock.test.tsx", "Clock", "ticks every second"),
    },
    "vitest/default_reporter.log": {
        "src/api/client.test.ts",
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            "rounds [0.5, 'half up'] to cents",
        ),
        _id("src/cart/discount.test.ts", "discount", "codes", 'rejects "ÉTÉ-2026" for guests'),
    },
    "vitest/windows_workspace.log": {
        _id("src/widgets/clock.test.ts", "Clock", "renders “Europe/Zürich” time"),
        _id("src/widgets/clock.test.ts", "Clock", "renders “Asia/Tōkyō” time"),
        _id("src/widgets/clock.test.ts", "Clock", "syncs with server"),
    },
    "mocha/spec_reporter.log": {
        _id("test/orders.spec.js", "Orders", "create", "rejects an empty cart"),
        _id("test/orders.spec.js", "Orders", "totals", "rounds [\"0.125\", 'bankers'] to 0.12"),
        # A hook whose stack holds only node internals: its file is unknown.
        _id("Payments", '"before each" hook for "charges the card"'),
        _id("test/db.spec.js", "db", "reconnects after the server restarts"),
    },
    "mocha/windows_esm.log": {
        _id("test/paths.spec.mjs", "paths", "resolves C:\\Users\\runner\\file.txt"),
        _id("test/watch events.spec.mjs", "watcher", 'emits "change" once'),
    },
    "bun/ci_output.log": {
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            'rounds [0.5, "half up"] to cents',
        ),
        _id("src/cart/discount.test.ts", "discount", "codes", "rejects “ÉTÉ-2026” for guests"),
        _id("src/api/client.test.ts", "api", "fetches orders"),
    },
    "bun/windows.log": {
        _id("test/paths.test.ts", "paths", "toPosix", "converts C:\\Users\\runner\\file.txt"),
    },
    "node_test/tap_nested.log": {
        _id("test/orders.test.mjs", "orders", "create", "rejects an empty cart"),
        _id("test/orders.test.mjs", "orders", 'rounds [#3, "0.125"] to 0.12'),
        # The suite whose `before` hook failed; its cancelled test is not reported.
        _id("test/db.test.mjs", "db"),
    },
    "node_test/spec_windows.log": {
        _id("test/paths.test.mjs", "paths", "resolves C:\\Users\\runner\\file.txt"),
        _id("test/watch.test.mjs", "watcher", "emits", '"change" once'),
    },
}


def _runner(fixture: str) -> str:
    return fixture.split("/")[0]


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_each_fixture_gives_exactly_its_failing_tests(fixture: str) -> None:
    parse, _ = OURS[_runner(fixture)]

    failures = parse(_lines(fixture))

    assert _ids(failures) == EXPECTED[fixture]
    assert len(failures) == len(EXPECTED[fixture])
    assert {f.framework for f in failures} == {_runner(fixture)}


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_registered_parsers_find_the_same_tests_from_the_raw_log(fixture: str) -> None:
    raw = (FIXTURES / fixture).read_text(encoding="utf-8")

    assert _ids(extract_failures(raw)) == EXPECTED[fixture]


def test_all_five_are_registered() -> None:
    for name, (parse, _) in OURS.items():
        assert PARSERS[name] is parse


# --- details, one fixture per runner ----------------------------------------------------------


def test_jest_block_gives_file_location_message_and_signature() -> None:
    failures = _by_id(jest.parse_jest(_lines("jest/verbose_nested.log")))

    rounds = failures[
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            'rounds [0.5, "half up"] to cents',
        )
    ]
    assert rounds.name == _id("discount", "percentage", 'rounds [0.5, "half up"] to cents')
    assert rounds.file == "src/cart/discount.test.ts"
    assert rounds.location == "src/cart/discount.test.ts:16"
    assert rounds.message == (
        "expect(received).toBe(expected) // Object.is equality\nExpected: 0.5\nReceived: 0.49"
    )
    assert rounds.signature == (
        "expect(received).toBe(expected) // Object.is equality | Expected: 0.5"
    )

    # Raised in the code under test: the innermost repository frame; node_modules is not ours.
    codes = failures[
        _id("src/cart/discount.test.ts", "discount", "codes", 'rejects code "ÉTÉ-2026" for guests')
    ]
    assert codes.location == "src/cart/codes.ts:4"
    assert codes.trace_paths == ["src/cart/codes.ts", "src/cart/discount.test.ts"]
    assert codes.message == "TypeError: Cannot read properties of undefined (reading 'tier')"

    suite = failures["src/api/client.test.ts"]
    assert suite.message == "Cannot find module './transport' from 'src/api/client.test.ts'"
    assert suite.location == "src/api/client.test.ts:1"


def test_jest_on_windows_maps_backslash_and_drive_paths() -> None:
    failures = _by_id(jest.parse_jest(_lines("jest/windows_projects.log")))

    clock = failures[
        _id("src/widgets/__tests__/Clock.test.tsx", "Clock", "renders the time in “Europe/Zürich”")
    ]
    assert clock.file == "src/widgets/__tests__/Clock.test.tsx"
    assert clock.location == "src/widgets/__tests__/Clock.test.tsx:22"
    ticks = failures[_id("src/widgets/__tests__/Clock.test.tsx", "Clock", "ticks every second")]
    assert ticks.location == "src/widgets/__tests__/Clock.test.tsx:40"
    assert ticks.signature.startswith('thrown: "Exceeded timeout of <duration> for a test.')


def test_vitest_error_block_and_retries() -> None:
    failures = _by_id(jest.parse_vitest(_lines("vitest/default_reporter.log")))

    rounds = failures[
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            "rounds [0.5, 'half up'] to cents",
        )
    ]
    assert rounds.file == "src/cart/discount.test.ts"
    assert rounds.location == "src/cart/discount.test.ts:16"
    assert rounds.message.splitlines()[0] == (
        "AssertionError: expected 0.49 to be 0.5 // Object.is equality"
    )
    assert (rounds.attempts_failed, rounds.attempts_total) == (1, 1)

    codes = failures[
        _id("src/cart/discount.test.ts", "discount", "codes", 'rejects "ÉTÉ-2026" for guests')
    ]
    assert codes.location == "src/cart/codes.ts:4"
    assert codes.trace_paths == ["src/cart/codes.ts", "src/cart/discount.test.ts"]
    # `(retry x2)`: the first run and two retries all failed.
    assert (codes.attempts_failed, codes.attempts_total) == (3, 3)
    # `accepts stacked codes` passed on its retry: not a failure.
    assert not any("accepts stacked codes" in i for i in failures)


def test_vitest_shared_error_and_project_labels() -> None:
    failures = jest.parse_vitest(_lines("vitest/windows_workspace.log"))

    zones = [f for f in failures if "renders" in f.name]
    assert [f.message for f in zones] == ["RangeError: Invalid time zone specified: undefined"] * 2
    assert {f.location for f in zones} == {"src/widgets/clock.ts:18"}
    (timeout,) = [f for f in failures if f.name == _id("Clock", "syncs with server")]
    assert (timeout.attempts_failed, timeout.attempts_total) == (4, 4)
    assert timeout.signature.startswith("Error: Test timed out in <duration>.")


def test_mocha_blocks_give_file_from_stack_or_timeout() -> None:
    failures = _by_id(mocha.parse_mocha(_lines("mocha/spec_reporter.log")))

    empty = failures[_id("test/orders.spec.js", "Orders", "create", "rejects an empty cart")]
    assert empty.name == _id("Orders", "create", "rejects an empty cart")
    assert empty.file == "test/orders.spec.js"
    assert empty.location == "test/orders.spec.js:18"
    # The diff after `+ expected - actual` is not part of the message.
    assert empty.message == (
        "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n422 !== 400"
    )
    assert empty.signature == (
        "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: | 422 !== 400"
    )

    hook = failures[_id("Payments", '"before each" hook for "charges the card"')]
    assert hook.file is None
    assert hook.signature == "Error: connect ECONNREFUSED 127.0.0.1:<port>"

    timeout = failures[_id("test/db.spec.js", "db", "reconnects after the server restarts")]
    assert timeout.location is None
    assert timeout.message.startswith("Error: Timeout of 2000ms exceeded.")


def test_mocha_esm_file_urls_on_windows() -> None:
    failures = _by_id(mocha.parse_mocha(_lines("mocha/windows_esm.log")))

    watcher = failures[_id("test/watch events.spec.mjs", "watcher", 'emits "change" once')]
    assert watcher.location == "src/watch.mjs:88"
    assert watcher.trace_paths == ["src/watch.mjs", "test/watch events.spec.mjs"]


def test_bun_reads_the_error_printed_before_its_fail_line() -> None:
    failures = _by_id(bun.parse_bun(_lines("bun/ci_output.log")))

    rounds = failures[
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            'rounds [0.5, "half up"] to cents',
        )
    ]
    assert rounds.file == "src/cart/discount.test.ts"
    assert rounds.location == "src/cart/discount.test.ts:16"
    assert rounds.message == "error: expect(received).toBe(expected)\nExpected: 0.5\nReceived: 0.49"
    assert rounds.signature == "error: expect(received).toBe(expected) | Expected: 0.5"

    codes = failures[
        _id("src/cart/discount.test.ts", "discount", "codes", "rejects “ÉTÉ-2026” for guests")
    ]
    assert codes.location == "src/cart/codes.ts:4"
    assert codes.message == "TypeError: undefined is not an object (evaluating 'user.tier')"

    timeout = failures[_id("src/api/client.test.ts", "api", "fetches orders")]
    assert timeout.signature == 'error: Test "fetches orders" timed out after <duration>'


def test_bun_on_windows() -> None:
    (failure,) = bun.parse_bun(_lines("bun/windows.log"))

    assert failure.file == "test/paths.test.ts"
    assert failure.location == "test/paths.test.ts:18"


def test_node_tap_reads_yaml_diagnostics() -> None:
    failures = _by_id(node_test.parse_node_test(_lines("node_test/tap_nested.log")))

    empty = failures[_id("test/orders.test.mjs", "orders", "create", "rejects an empty cart")]
    assert empty.name == _id("orders", "create", "rejects an empty cart")
    assert empty.file == "test/orders.test.mjs"
    assert empty.location == "test/orders.test.mjs:16"
    assert empty.message == "AssertionError: Expected values to be strictly equal:\n422 !== 400"
    assert empty.signature == "AssertionError: Expected values to be strictly equal: | 422 !== 400"

    rounds = failures[_id("test/orders.test.mjs", "orders", 'rounds [#3, "0.125"] to 0.12')]
    assert rounds.message == "RangeError: unsupported rounding mode: 'bankers'"
    assert rounds.trace_paths == ["lib/money.mjs", "test/orders.test.mjs"]

    hook = failures[_id("test/db.test.mjs", "db")]
    assert hook.message == "failed running before hook"
    assert hook.location == "test/helpers/db.mjs:9"


def test_node_spec_takes_files_from_the_failing_tests_summary() -> None:
    failures = _by_id(node_test.parse_node_test(_lines("node_test/spec_windows.log")))

    change = failures[_id("test/watch.test.mjs", "watcher", "emits", '"change" once')]
    assert change.file == "test/watch.test.mjs"
    assert change.location == "src/watch.mjs:88"
    assert change.message == "Error: expected 2 events, got 1"
    paths = failures[_id("test/paths.test.mjs", "paths", "resolves C:\\Users\\runner\\file.txt")]
    assert paths.location == "test/paths.test.mjs:21"


# --- partial logs -----------------------------------------------------------------------------


def test_jest_verbose_list_names_failures_whose_blocks_were_cut_off() -> None:
    lines = _lines("jest/verbose_nested.log")
    first_block = next(i for i, line in enumerate(lines) if "●" in line)
    summary = [line for line in lines if line.startswith(("Test Suites:", "Tests:"))]

    failures = jest.parse_jest(lines[:first_block] + summary)

    assert _ids(failures) == {
        _id(
            "src/cart/discount.test.ts",
            "discount",
            "percentage",
            'rounds [0.5, "half up"] to cents',
        ),
        _id("src/cart/discount.test.ts", "discount", "codes", 'rejects code "ÉTÉ-2026" for guests'),
    }
    assert all(f.message == "" for f in failures)


def test_bun_summary_names_failures_whose_lines_were_cut_off() -> None:
    lines = _lines("bun/ci_output.log")
    summary_at = next(i for i, line in enumerate(lines) if line == "3 tests failed:")

    failures = bun.parse_bun(lines[summary_at:])

    assert _ids(failures) == {
        _id("discount", "percentage", 'rounds [0.5, "half up"] to cents'),
        _id("discount", "codes", "rejects “ÉTÉ-2026” for guests"),
        _id("api", "fetches orders"),
    }


def test_node_spec_summary_alone_still_names_file_and_test() -> None:
    lines = _lines("node_test/spec_windows.log")
    summary_at = next(i for i, line in enumerate(lines) if line.endswith("failing tests:"))

    failures = node_test.parse_node_test(lines[summary_at:])

    assert _ids(failures) == {
        _id("test/paths.test.mjs", "resolves C:\\Users\\runner\\file.txt"),
        _id("test/watch.test.mjs", '"change" once'),
    }


def test_node_tap_without_location_uses_the_name_chain() -> None:
    log = [
        "TAP version 13",
        "# Subtest: outer",
        "    # Subtest: inner",
        "    not ok 1 - inner",
        "      ---",
        "      error: 'boom'",
        "      ...",
        "not ok 1 - outer",
        "  ---",
        "  failureType: 'subtestsFailed'",
        "  ...",
        "# fail 1",
    ]

    (failure,) = node_test.parse_node_test(log)

    assert failure.test_id == _id("outer", "inner")
    assert failure.file is None
    assert failure.message == "boom"


def test_mocha_numbered_lines_inside_an_error_are_not_new_failures() -> None:
    log = [
        "  1 passing (4ms)",
        "  1 failing",
        "",
        "  1) parser",
        "       reads lists:",
        "     Error: unexpected items:",
        "  3) third",
        "  1) first",
        "      at Context.<anonymous> (test/parser.spec.js:7:9)",
    ]

    (failure,) = mocha.parse_mocha(log)

    assert failure.test_id == _id("test/parser.spec.js", "parser", "reads lists")
    assert failure.message == "Error: unexpected items:\n3) third\n1) first"


# --- marker windows: what the streaming pre-filter feeds on huge logs -------------------------


def _keep_windows(
    lines: Sequence[str],
    marker: re.Pattern[str],
    before: int = 40,
    after: int = 300,
    tail: int = 2000,
) -> list[str]:
    keep = [False] * len(lines)
    for i, line in enumerate(lines):
        if marker.search(line):
            for j in range(max(i - before, 0), min(i + after + 1, len(lines))):
                keep[j] = True
    for j in range(max(len(lines) - tail, 0), len(lines)):
        keep[j] = True
    return [line for line, kept in zip(lines, keep, strict=True) if kept]


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_marker_windows_of_a_huge_log_give_the_same_failures(fixture: str) -> None:
    parse, marker = OURS[_runner(fixture)]
    lines = _lines(fixture)
    noise = [f"[server] GET /health 200 in {i}ms" for i in range(2500)]
    huge = noise + lines + noise

    windows = _keep_windows(huge, marker)

    assert len(windows) < len(huge) - 2000
    assert parse(windows) == parse(lines)


# --- other runners' logs ----------------------------------------------------------------------


def _foreign_logs() -> list[Path]:
    return sorted(
        p
        for p in FIXTURES.glob("*/*.log")
        if p.parent.name not in ("jest", "vitest", "mocha", "bun", "node_test")
    )


@pytest.mark.parametrize("name", sorted(OURS))
def test_nothing_from_each_others_fixtures(name: str) -> None:
    parse, _ = OURS[name]
    for fixture in sorted(EXPECTED):
        if _runner(fixture) != name:
            assert parse(_lines(fixture)) == [], fixture


@pytest.mark.parametrize("name", sorted(OURS))
def test_nothing_from_other_runners_fixtures(name: str) -> None:
    parse, _ = OURS[name]
    for path in _foreign_logs():
        assert parse(clean_log(path.read_text(encoding="utf-8"))) == [], path


@pytest.mark.parametrize("name", sorted(OURS))
def test_nothing_from_the_corpus_logs(name: str) -> None:
    if not CORPUS_LOGS.is_dir():
        pytest.fail(f"{CORPUS_LOGS} is absent: the corpus is in tests/fixtures/corpus")
    parse, _ = OURS[name]
    logs = sorted(p for p in CORPUS_LOGS.rglob("*") if p.suffix == ".txt")
    assert logs
    for path in logs:
        assert parse(clean_log(path.read_text(encoding="utf-8", errors="replace"))) == [], path


# --- arbitrary text ---------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "FAIL src/a.test.ts",
        " FAIL  src/a.test.ts > S > t",
        "  ● S \u203a t",
        "Tests:       1 failed, 1 total",
        "⎯⎯⎯ Failed Tests 1 ⎯⎯⎯",
        "   \u00d7 S > t 3ms (retry x2)",
        " \u276f src/a.test.ts (2 tests | 1 failed) 4ms",
        " \u276f src/a.ts:3:9",
        "      at Object.<anonymous> (src/a.test.ts:1:2)",
        "      at file:///D:/a/r/r/x.mjs:1:1",
        "  1 failing",
        "  1) Suite",
        "       test:",
        "src/a.test.ts:",
        "(fail) S > t [1.00ms]",
        "1 tests failed:",
        " 1 fail",
        "TAP version 13",
        "# Subtest: x",
        "not ok 1 - x",
        "    not ok 1 - y # TODO",
        "  ---",
        "  location: '/home/runner/work/r/r/a.js:1:1'",
        "  error: |-",
        "  stack: |-",
        "  ...",
        "\u25b6 s",
        "  \u2716 t (1ms)",
        "\u2716 failing tests:",
        "test at a.js:1:1",
        "\u2139 fail 1",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=60)), max_size=40))
def test_parsers_never_raise_on_arbitrary_text(parts: list[str]) -> None:
    for parse, _ in OURS.values():
        failures = parse(parts)
        assert len(_ids(failures)) == len(failures)


@given(st.lists(st.text()))
def test_parsers_never_raise_on_any_lines(lines: list[str]) -> None:
    for parse, _ in OURS.values():
        parse(lines)


# --- markers: the jest and vitest parsers run only on their runners' logs ---------------------


@pytest.mark.parametrize(
    "line",
    [
        " FAIL  src/a.test.ts",
        "FAIL src/a.test.ts (5.2 s)",
        " FAIL   web  src\\widgets\\Clock.test.tsx",
        " FAIL  |unit| src/a.test.ts > S > t",
        " FAIL  src/a.test.ts [ src/a.test.ts ]",
    ],
)
def test_the_js_marker_matches_jest_and_vitest_fail_headers(line: str) -> None:
    assert jest.MARKER.search(line)


@pytest.mark.parametrize(
    "line", ["FAIL", "FAIL\texample.com/shop/cart\t0.123s", "FAIL\texample.com/a [build failed]"]
)
def test_the_js_marker_skips_go_test_fail_lines(line: str) -> None:
    # The scanner tries a line with its newline.
    assert jest.MARKER.search(line + "\n") is None


def test_the_js_marker_matches_no_line_of_a_go_test_log() -> None:
    logs = sorted((FIXTURES / "go_test").glob("*.log"))
    if CORPUS_LOGS.is_dir():
        logs += sorted((CORPUS_LOGS / "go-junit-report").glob("*.txt"))
    assert logs
    for path in logs:
        lines = clean_log(path.read_text(encoding="utf-8", errors="replace"))
        assert [line for line in lines if jest.MARKER.search(line + "\n")] == [], path


def test_npm_s_banner_names_the_workspace_package_whose_jest_printed_the_paths() -> None:
    lines = [
        "> @acme/web@1.4.0 test",
        "> jest --ci",
        "FAIL test/cart.test.ts",
        "  ● cart \u203a adds the lines",
        "    expect(received).toBe(expected)",
        "> acme-api@0.1.0 test:unit",
        "FAIL src/a.test.ts",
        "  ● a \u203a works",
        "    boom",
    ]

    failures = jest.parse_jest(lines)

    assert [(f.file, f.workspace) for f in failures] == [
        ("test/cart.test.ts", "@acme/web"),
        ("src/a.test.ts", "acme-api"),
    ]
