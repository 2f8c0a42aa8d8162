"""Failed examples from RSpec's console output.

RSpec numbers each failure, `  1) Widget renders the title`, then `Failure/Error: <code>`, the
message, and `# ./spec/x_spec.rb:12:in ...` backtrace lines. `Failed examples:` lists
`rspec ./spec/x_spec.rb:12 # Widget renders the title`, which ties a description to its file.
The id is `spec/x_spec.rb \u203a Widget renders the title`: a line number moves with every edit,
the description does not. rspec-retry's `RSpec::Retry: 2nd try ./spec/x_spec.rb:12` lines
count attempts; an example that passed on a retry is not listed as a failure at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "rspec"
SEPARATOR = " \u203a "

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(
    r"^\s+Failure/Error: |^rspec \S+ # |^Failures:$|^An error occurred while loading "
    r"|RSpec::Retry: "
)

_HEADER = re.compile(r"^\s+\d+\) (?P<description>\S.*)$")
_FAILURE_ERROR = re.compile(r"^\s+(?:Failure/Error: |Got \d+ failures?)")
_FRAME = re.compile(r"^\s*# (?P<path>[^\s:]+):(?P<line>\d+)(?::in |$)")
_FAILED_EXAMPLE = re.compile(
    r"^rspec '?(?P<path>[^\s:'\[]+)(?::\d+|\[[\d:]+\])'? # (?P<description>.+)$"
)
_LOAD_ERROR = re.compile(r"^An error occurred while loading (?P<path>\S+?)\.?$")
_RETRY = re.compile(r"^RSpec::Retry: (?P<n>\d+)(?:st|nd|rd|th) try (?P<path>[^\s:]+:\d+)")
_LIBRARY = ("vendor/bundle/", "vendor/ruby/")


@dataclass
class _Example:
    description: str | None  # None: the file failed to load
    load_path: str | None = None
    body: list[str] = field(default_factory=list)
    frames: list[tuple[str, int]] = field(default_factory=list)


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.examples: list[_Example] = []
        self.pending: _Example | None = None
        self.current: _Example | None = None
        self.files: dict[str, str] = {}  # description -> repo path, from Failed examples
        self.locations: dict[str, str] = {}  # description -> printed `path:line`
        self.retries: dict[str, int] = {}

    def feed(self, line: str) -> None:
        header = _HEADER.match(line)
        if header:
            self.pending = _Example(header.group("description").strip())
            self.current = None
            return
        if self.pending is not None:
            if not line.strip():
                return
            if _FAILURE_ERROR.match(line):
                self.current = self.pending
                self.examples.append(self.current)
            self.pending = None
        load = _LOAD_ERROR.match(line)
        if load:
            self.current = _Example(None, load.group("path"))
            self.examples.append(self.current)
            return
        failed = _FAILED_EXAMPLE.match(line)
        if failed:
            self.current = None
            repo = self.paths.to_repo(failed.group("path"))
            if repo is not None:
                self.files[failed.group("description").strip()] = repo
            self.locations[failed.group("description").strip()] = line.split(" # ", 1)[0]
            return
        retry = _RETRY.match(line)
        if retry:
            path = retry.group("path").removeprefix("./")
            self.retries[path] = max(self.retries.get(path, 1), int(retry.group("n")))
            return
        if self.current is not None:
            frame = _FRAME.match(line)
            if frame:
                repo = self.paths.to_repo(frame.group("path"))
                if repo is not None and not repo.startswith(_LIBRARY):
                    self.current.frames.append((repo, int(frame.group("line"))))
            elif not self.current.frames:
                self.current.body.append(line)

    def failures(self) -> list[Failure]:
        found: dict[str, Failure] = {}
        for example in self.examples:
            failure = self.to_failure(example)
            found.setdefault(failure.test_id, failure)
        return list(found.values())

    def to_failure(self, example: _Example) -> Failure:
        description = example.description
        file: str | None
        if description is None:
            file = self.paths.to_repo(example.load_path or "")
            test_id = name = file or example.load_path or ""
        else:
            spec_frames = [path for path, _ in example.frames if path.endswith("_spec.rb")]
            file = self.files.get(description) or (spec_frames[0] if spec_frames else None)
            test_id = f"{file}{SEPARATOR}{description}" if file else description
            name = description
        message = _message(example.body)
        tries = 1
        printed = self.locations.get(description or "")
        if printed is not None:
            tries = self.retries.get(
                printed.removeprefix("rspec ").strip("'").removeprefix("./"), 1
            )
        location = f"{example.frames[0][0]}:{example.frames[0][1]}" if example.frames else None
        return Failure(
            test_id=test_id,
            name=name,
            file=file,
            framework=FRAMEWORK,
            location=location,
            message=message,
            signature=signature(message),
            trace_paths=list(dict.fromkeys(path for path, _ in example.frames)),
            attempts_failed=tries,
            attempts_total=tries,
        )


def _message(body: list[str]) -> str:
    """What follows `Failure/Error: <code>`; the code line itself when nothing does."""
    lines = [line.strip() for line in body if line.strip()]
    if not lines:
        return ""
    first = lines[0].removeprefix("Failure/Error: ")
    rest = [line for line in lines[1:] if line != "(compared using ==)"]
    return "\n".join(rest[:_MAX_MESSAGE_LINES]) if rest else first


def parse_rspec(lines: Sequence[str]) -> list[Failure]:
    """The examples RSpec reports as failed, and spec files that failed to load."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
