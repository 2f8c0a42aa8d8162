"""The markers of flaky tests' causes, one by one, on real failure messages from real projects.

Sources: tests/fixtures/flake_messages/INDEX.md (messages that show a marker) and
tests/fixtures/logs/PROVENANCE.md (ordinary assertion failures that show none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.triage.failures import extract
from bot.triage.flake_rules import RULES, Category, Rule, fired
from bot.triage.parsers.actions_log import clean_log
from bot.triage.user_regex import compile_user

FIXTURES = Path(__file__).parent / "fixtures"
MESSAGES = FIXTURES / "flake_messages"

# Each real message and the rules it must fire: no fewer, no more.
SHOWS: dict[str, set[str]] = {
    "go_timeout_gocql.txt": {"Go test timeout"},
    "jest_timeout_element_web.txt": {"Jest test timeout"},
    "mocha_timeout_cypress.txt": {"Mocha test timeout"},
    "pytest_timeout_smlb.txt": {"pytest-timeout"},
    "playwright_expect_forvoyez.txt": {"Playwright wait timed out"},
    "playwright_test_timeout_loculus.txt": {"Playwright wait timed out"},
    "cypress_retry_opfab.txt": {"Cypress retry timed out"},
    "testify_eventually_coder.txt": {"condition never satisfied"},
    "context_deadline_coder.txt": {"context deadline exceeded"},
    "go_race_apm_server.txt": {"data race detected"},
    "go_deadlock_fpc_sim.txt": {"Go deadlock"},
    "go_concurrent_map_capv.txt": {"concurrent map access"},
    "java_cme_jetty.txt": {"ConcurrentModificationException"},
    "sqlite_locked_turso.txt": {"database locked"},
    "econnrefused_metamask.txt": {"connection refused"},
    "connection_refused_fleet.txt": {"connection refused"},
    "econnreset_node.txt": {"connection reset"},
    "socket_hang_up_cloudserver.txt": {"connection reset"},
    "enotfound_lwm2m.txt": {"DNS lookup failed"},
    "eservfail_node.txt": {"DNS lookup failed"},
    "eaddrinuse_socketio.txt": {"port already in use"},
    "addrinuse_deno.txt": {"port already in use"},
    "emfile_datasette.txt": {"too many open files"},
    "enospc_cpython.txt": {"disk full"},
    "js_heap_jest.txt": {"out of memory"},
    "java_oom_trino.txt": {"out of memory"},
    "ebusy_atom.txt": {"file busy or locked"},
    "text_file_busy_wild.txt": {"file busy or locked"},
    "relative_day_operaton.txt": {"relative day compared"},
    "timestamp_sanctuary.txt": {"timestamp in the assertion"},
    "hypothesis_pandas.txt": {"property-based example"},
    "rspec_seed_unordered_pie.txt": {"shuffled order seed", "same items, other order"},
    "go_shuffle_teleport.txt": {"shuffled order seed", "Go test timeout"},
    "numpy_tolerance_glass.txt": {"tolerance exceeded"},
}

# Ordinary assertion failures from real job logs: no marker of a flaky cause in any of them.
PLAIN_LOGS = [
    "pytest/agno_failures_only.log",
    "jest/verbose_nested.log",
    "go_test/testify_runner_workspace.log",
    "go_test/subtests_panic.log",
    "rspec/failures_retry.log",
    "phpunit/phpunit10.log",
    "cargo/cargo_test.log",
    "vitest/default_reporter.log",
    "unittest/unittest_py312.log",
]


def message(name: str) -> str:
    return (MESSAGES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SHOWS))
def test_a_real_message_fires_exactly_its_rules(name: str) -> None:
    assert {rule.name for rule in fired(message(name))} == SHOWS[name]


def test_every_rule_fires_on_some_real_message() -> None:
    shown = set().union(*SHOWS.values())
    assert {rule.name for rule in RULES} == shown
    assert set(SHOWS) == {p.name for p in MESSAGES.glob("*.txt")}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_every_rule_runs_on_re2_with_a_weight_and_a_source(rule: Rule) -> None:
    compile_user(rule.pattern)
    assert rule.weight in (1, 2, 3)
    assert rule.source


@pytest.mark.parametrize("log", PLAIN_LOGS)
def test_ordinary_assertion_failures_fire_no_rule(log: str) -> None:
    lines = clean_log((FIXTURES / "logs" / log).read_text(encoding="utf-8"))
    failures = extract(log_lines=lines).failures
    assert failures, "the log's failures are read"
    for failure in failures:
        assert fired(failure.message) == [], failure.message


def test_a_time_zone_failure_in_a_real_log_shows_its_timestamps() -> None:
    """apache/streampark's DateUtilsTest failed 8 hours off (a runner in UTC, the test
    written for UTC+8): the one failure comparing formatted times shows the time marker; the
    others compare bare numbers, which no rule reads as time."""
    lines = clean_log(
        (FIXTURES / "logs/maven/streampark_surefire2_junit5.log").read_text(encoding="utf-8")
    )
    shown = {f.name: [r.name for r in fired(f.message)] for f in extract(log_lines=lines).failures}
    assert shown == {
        "DateUtilsTest#formatCSTTimeShouldFormatCorrectly": ["timestamp in the assertion"],
        "DateUtilsTest#secondOfDayShouldReturnCorrectSecond": [],
        "DateUtilsTest#getTimeShouldReturnMilliseconds": [],
        "DateUtilsTest#minuteOfDayShouldReturnCorrectMinute": [],
    }


def test_the_same_items_in_the_same_order_are_no_unordered_collection() -> None:
    text = message("rspec_seed_unordered_pie.txt").replace(
        '["sure_bet", "on_track"]', '["on_track", "sure_bet"]'
    )
    assert {r.category for r in fired(text)} == {Category.ORDER}


def test_other_items_are_no_unordered_collection() -> None:
    text = message("rspec_seed_unordered_pie.txt").replace(
        '["sure_bet", "on_track"]', '["sure_bet", "at_risk"]'
    )
    assert {r.category for r in fired(text)} == {Category.ORDER}


def test_only_the_message_head_is_read() -> None:
    padding = "x" * 30_000 + "\n"
    assert fired(padding + message("go_race_apm_server.txt")) == []
    assert fired(message("go_race_apm_server.txt") + padding)
