"""Failed tests from Python unittest's console output (also Django's test runner).

unittest frames each failure with a line of 70 `=`, then `FAIL: test_x (pkg.tests.TestY.test_x)`
(Python before 3.11: `(pkg.tests.TestY)`; a subtest adds ` [msg]` or ` (i=1)`), a line of 70
`-`, and the traceback. The id is pytest-style, `pkg/tests.py::TestY::test_x`, when the
traceback shows which file the dotted module is; otherwise the dotted name itself.
pytest never prints this framing, so pytest logs give nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "unittest"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S+ \(|^FAILED \(")

_EQUALS = "=" * 70
_DASHES = "-" * 70
_HEADER = re.compile(
    r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\S+) \((?P<dotted>[\w.]+)\)"
    r"(?: (?P<sub>.+))?$"
)
_FRAME = re.compile(r'^  File "(?P<path>[^"\n]+)", line (?P<line>\d+)')


@dataclass
class _Block:
    name: str
    parts: list[str]
    sub: str
    started: bool = False  # past the `-` rule: a docstring line may come before it
    lines: list[str] = field(default_factory=list)


def _parts(name: str, dotted: str) -> list[str]:
    parts = dotted.split(".")
    return parts if parts[-1] == name else [*parts, name]


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.blocks: list[_Block] = []
        self.block: _Block | None = None
        self.after_equals = False

    def feed(self, line: str) -> None:
        if line == _EQUALS:
            self.after_equals = True
            self.block = None
            return
        header = _HEADER.match(line) if self.after_equals else None
        self.after_equals = False
        if header:
            name = header.group("name")
            self.block = _Block(
                name, _parts(name, header.group("dotted")), header.group("sub") or ""
            )
            self.blocks.append(self.block)
            return
        if self.block is None:
            return
        if line == _DASHES:
            if self.block.started:
                self.block = None  # the run's closing rule, before "Ran N tests"
            else:
                self.block.started = True
        elif self.block.started:
            self.block.lines.append(line)

    def failures(self) -> list[Failure]:
        found: dict[str, Failure] = {}
        for block in self.blocks:
            failure = self.to_failure(block)
            found.setdefault(failure.test_id, failure)
        return list(found.values())

    def to_failure(self, block: _Block) -> Failure:
        frames: list[tuple[str, int]] = []
        last_frame = -1
        for i, line in enumerate(block.lines):
            frame = _FRAME.match(line)
            if frame:
                last_frame = i
                repo = self.paths.to_repo(frame.group("path"))
                if repo is not None:
                    frames.append((repo, int(frame.group("line"))))
        message = _exception(block.lines[last_frame + 1 :])
        test_id, file = _identify(block.parts, [path for path, _ in frames])
        if block.sub:
            test_id += " " + block.sub
        location = f"{frames[-1][0]}:{frames[-1][1]}" if frames else None
        return Failure(
            test_id=test_id,
            name=".".join(block.parts[-2:]) if len(block.parts) > 1 else block.name,
            file=file,
            framework=FRAMEWORK,
            location=location,
            message=message,
            signature=signature(message),
            trace_paths=list(dict.fromkeys(path for path, _ in frames)),
        )


def _exception(lines: list[str]) -> str:
    """The exception text after the last frame: its code lines and carets skipped."""
    text: list[str] = []
    for line in lines:
        if not text and (line.startswith("    ") or not line.strip()):
            continue
        if (
            not line.strip()
            or line.startswith("During handling")
            or len(text) >= _MAX_MESSAGE_LINES
        ):
            break
        text.append(line.strip())
    return "\n".join(text)


def _identify(parts: list[str], repo_paths: list[str]) -> tuple[str, str | None]:
    """`(test id, file)`: pytest-style when a traceback path is the dotted module's file."""
    for cut in range(len(parts) - 1, 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        for path in repo_paths:
            if path == module or path.endswith("/" + module):
                return "::".join([path, *parts[cut:]]), path
    return ".".join(parts), None


def parse_unittest(lines: Sequence[str]) -> list[Failure]:
    """The tests unittest reports under FAIL:, ERROR: or UNEXPECTED SUCCESS: headers."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
