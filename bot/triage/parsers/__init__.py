"""Log parsers, one module per test runner.

Each parser takes clean log lines (see `actions_log.clean_log`) and returns the failed tests
it recognises. To add a runner, write `parsers/<runner>.py` with a parse function of that
shape and register it in `PARSERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.triage.models import Failure
from bot.triage.parsers.pytest import parse_pytest

Parser = Callable[[Sequence[str]], list[Failure]]

PARSERS: dict[str, Parser] = {
    "pytest": parse_pytest,
}

__all__ = ["PARSERS", "Parser"]
