"""Log parsers, one module per test runner, and the one registry that lists them.

Every log parser is registered here, in `REGISTRY`, and nowhere else. A registration names:

- `name`: how extraction and the scanner refer to the parser (`active_parsers`,
  `markers_fired`); unique.
- `parse`: a function from clean log lines (see `actions_log.clean_log`) to the failed tests
  it recognises, `list[Failure]`. It must be pure and linear in the size of the log.
- `marker`: a regex matching every line the parser needs to see at least one of, tried on one
  clean line at a time (MULTILINE; `^` and `$` are the line's ends). A job log is streamed
  through `logscan.LogScanner`, which keeps only the lines some marker matches (with the lines
  around them) and runs only the parsers whose marker matched: a parser whose marker misses
  its runner's key lines never sees that runner's output. Each top-level alternative of the
  marker must hold a literal word (`Failure`, `FAILED`, `panic`): the scanner searches those
  words first, so an alternative without one is tried on every line of every log.

To add a runner: write `parsers/<runner>.py` with a `MARKER` and a `parse_<runner>` function,
add one `LogParser` line to `REGISTRY`, and give it tests on a real log (with its provenance
under `tests/fixtures/logs/`). Nothing else needs to know about it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from bot.triage.models import Failure
from bot.triage.parsers import (
    bun,
    cargo,
    dotnet,
    go_test,
    gradle,
    jest,
    maven,
    minitest,
    mocha,
    node_test,
    phpunit,
    pytest,
    rspec,
    unittest,
)

Parser = Callable[[Sequence[str]], list[Failure]]


@dataclass(frozen=True)
class LogParser:
    """One registered log parser: see the module's docstring."""

    name: str
    parse: Parser
    marker: re.Pattern[str]


REGISTRY: tuple[LogParser, ...] = (
    LogParser("pytest", pytest.parse_pytest, pytest.MARKER),
    LogParser("go_test", go_test.parse_go_test, go_test.MARKER),
    LogParser("maven", maven.parse_maven, maven.MARKER),
    LogParser("gradle", gradle.parse_gradle, gradle.MARKER),
    LogParser("cargo", cargo.parse_cargo, cargo.MARKER),
    LogParser("unittest", unittest.parse_unittest, unittest.MARKER),
    LogParser("dotnet", dotnet.parse_dotnet, dotnet.MARKER),
    LogParser("rspec", rspec.parse_rspec, rspec.MARKER),
    LogParser("minitest", minitest.parse_minitest, minitest.MARKER),
    LogParser("phpunit", phpunit.parse_phpunit, phpunit.MARKER),
    LogParser("jest", jest.parse_jest, jest.MARKER),
    LogParser("vitest", jest.parse_vitest, jest.MARKER),
    LogParser("mocha", mocha.parse_mocha, mocha.MARKER),
    LogParser("bun", bun.parse_bun, bun.MARKER),
    LogParser("node_test", node_test.parse_node_test, node_test.MARKER),
)


def _by_name(registry: Sequence[LogParser]) -> Mapping[str, Parser]:
    names = [p.name for p in registry]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"log parsers registered twice: {', '.join(duplicates)}")
    return MappingProxyType({p.name: p.parse for p in registry})


# The registry by name, in its order: what extraction runs.
PARSERS: Mapping[str, Parser] = _by_name(REGISTRY)

__all__ = ["PARSERS", "REGISTRY", "LogParser", "Parser"]
