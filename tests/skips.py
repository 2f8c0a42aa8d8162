"""A skipped test must say why in words the run can count, or the run fails.

A test may skip only for something outside the repository that a machine may lack: its reason
starts with one of SKIP_CATEGORIES ("optional tool: Chromium is not installed"). Any other
skip (a fixture file not found, a bare `pytest.skip()`) fails the run: a fresh clone must run
every test. The summary counts the skips of each category with their reasons, so a run that
skipped the browser test says so. Loaded by conftest.py for every run of the suite.
"""

from __future__ import annotations

from collections import Counter

import pytest

SKIP_CATEGORIES = (
    "optional tool:",  # a program or package some machines lack (Chromium, Hyperscan, ...)
    "platform:",  # what only some operating systems have (/proc)
)
_UNEXPLAINED = "unexplained"


def skip_category(reason: str) -> str:
    """The category a skip's reason names, or "unexplained"."""
    return next((c.rstrip(":") for c in SKIP_CATEGORIES if reason.startswith(c)), _UNEXPLAINED)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipLedger(), "skip-ledger")


class SkipLedger:
    """Counts the run's skips by category; fails a run with an unexplained one."""

    def __init__(self) -> None:
        self.skips: Counter[tuple[str, str]] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            longrepr = report.longrepr
            text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            reason = text.removeprefix("Skipped: ")
            self.skips[(skip_category(reason), reason)] += 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        unexplained = any(category == _UNEXPLAINED for category, _ in self.skips)
        if unexplained and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.skips:
            return
        terminalreporter.section("skips by category")
        totals: Counter[str] = Counter()
        for (category, _), count in self.skips.items():
            totals[category] += count
        for category, total in sorted(totals.items()):
            verdict = ""
            if category == _UNEXPLAINED:
                verdict = " (fails the run: a skip's reason starts with one of SKIP_CATEGORIES)"
            terminalreporter.write_line(f"{category}: {total}{verdict}")
            for (of, reason), count in sorted(self.skips.items()):
                if of == category:
                    terminalreporter.write_line(f"    {count} x {reason}")
