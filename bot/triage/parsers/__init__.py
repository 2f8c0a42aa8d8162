"""Log parsers, one module per test runner.

Each parser takes clean log lines (see `actions_log.clean_log`) and returns the failed tests
it recognises. To add a runner, write `parsers/<runner>.py` with a parse function of that
shape and register it in `PARSERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.triage.models import Failure
from bot.triage.parsers.bun import parse_bun
from bot.triage.parsers.cargo import parse_cargo
from bot.triage.parsers.dotnet import parse_dotnet
from bot.triage.parsers.go_test import parse_go_test
from bot.triage.parsers.gradle import parse_gradle
from bot.triage.parsers.jest import parse_jest, parse_vitest
from bot.triage.parsers.maven import parse_maven
from bot.triage.parsers.mocha import parse_mocha
from bot.triage.parsers.node_test import parse_node_test
from bot.triage.parsers.phpunit import parse_phpunit
from bot.triage.parsers.pytest import parse_pytest
from bot.triage.parsers.rspec import parse_rspec
from bot.triage.parsers.unittest import parse_unittest

Parser = Callable[[Sequence[str]], list[Failure]]

PARSERS: dict[str, Parser] = {
    "pytest": parse_pytest,
    "go_test": parse_go_test,
    "maven": parse_maven,
    "gradle": parse_gradle,
    "cargo": parse_cargo,
    "unittest": parse_unittest,
    "dotnet": parse_dotnet,
    "rspec": parse_rspec,
    "phpunit": parse_phpunit,
    "jest": parse_jest,
    "vitest": parse_vitest,
    "mocha": parse_mocha,
    "bun": parse_bun,
    "node_test": parse_node_test,
}

__all__ = ["PARSERS", "Parser"]
