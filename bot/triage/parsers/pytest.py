"""Failed tests from pytest's console output.

Reads the verbose progress lines (also xdist's and pytest-rerunfailures' forms, and the
split form where a test's live log sits between its id and its outcome), the short test
summary, and the FAILURES / ERRORS sections for each failure's traceback. The outcome a test
ends a pytest session with decides: RERUN then PASSED is a pass, RERUN then FAILED a failure.
When a log holds several sessions (a wrapper that retries the whole run), a test's latest
session decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "pytest"

# The lines that lead to a failure, for the streaming pre-filter (logscan): section and block
# headers, outcome words, the rootdir paths are relative to.
MARKER = re.compile(
    r"^={3,} .*(?:FAILURES|ERRORS|short test summary info|test session starts|failed|error)"
    r".* ={3,}$"
    r"|^_{3,} .+ _{3,}$|^rootdir: |(?:^|\s)(?:FAILED|ERROR)(?:\s|$)"
)

# Lines longer than this are output, not pytest's own: only their head is matched.
_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

# A node id as pytest prints it: a .py path, `::`-separated names, and a parametrize id that
# may hold spaces and brackets (the lazy `.*?` stops at the first `]` the rest can follow).
_NODE = r"(?P<id>[^\s:\[\]]+\.py(?:::[^\s:\[\]]+)*(?:\[.*?\])?)"
_STATUS = r"(?P<status>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS|RERUN|\('RERUN', \{[^}\n]*\}\))"
_FAILING = frozenset({"FAILED", "ERROR"})
# Progress lines are read before any section header (a log window that starts mid-run) and
# in the session's own section; later sections (warnings, final stats) also name node ids.
_PROGRESS_SECTIONS = frozenset({None, "test session starts"})

_SECTION = re.compile(r"^={3,} (?P<title>.+?) ={3,}$")
_BLOCK = re.compile(r"^_+ (?P<name>.+?) _+$")
_CAPTURED = re.compile(r"^-+ ?(?:Captured |generated xml file)")
_PROGRESS = re.compile(rf"^{_NODE} {_STATUS}(?:\s|$)")
_XDIST = re.compile(rf"^\[gw\d+\] \[\s*\d+%\] {_STATUS} {_NODE}\s*$")
_PENDING = re.compile(rf"^{_NODE}(?:\s|$)")
# The default (not verbose) progress line: a test file and one letter per test.
_SHORT_PROGRESS = re.compile(
    r"^(?P<path>[^\s:\[\]]+\.py) (?P<marks>[.FEsxXR]+)(?:\s+\[\s*\d+%\])?$"
)
_BARE_STATUS = re.compile(rf"^{_STATUS}(?:\s+\[[^\]\n]*\])*\s*$")
_SUMMARY = re.compile(rf"^(?P<status>FAILED|ERROR)(?: \[[^\]\n]*\])? {_NODE}(?: - (?P<msg>.*))?$")
_ROOTDIR = re.compile(r"^rootdir: (?P<dir>[^,\n]+)")
_PYTEST_FRAME = re.compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]+\.py):(?P<line>\d+):(?: |$)")
_NATIVE_FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+)')
_E_LINE = re.compile(r"^E(?:\s(?P<text>.*))?$")
_EXCEPTION = re.compile(
    r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Timeout|Warning)\b(?::.*)?$"
)
_COLLECT_PREFIX = "ERROR collecting "
_PHASE_PREFIXES = ("ERROR at setup of ", "ERROR at teardown of ", "ERROR at call of ")


@dataclass
class _Frame:
    path: str
    line: int


@dataclass
class _Block:
    """One test's entry under FAILURES or ERRORS, up to its captured output."""

    name: str
    paths: PathMap
    frames: list[_Frame] = field(default_factory=list)
    e_groups: list[list[str]] = field(default_factory=list)
    exception_line: str = ""
    closed: bool = False
    in_e_group: bool = field(default=False, init=False)

    def feed(self, line: str) -> None:
        if self.closed:
            return
        if _CAPTURED.match(line):
            self.closed = True
            return
        e_line = _E_LINE.match(line)
        if e_line:
            text = (e_line.group("text") or "").strip()
            if not self.in_e_group:
                self.e_groups.append([])
                self.in_e_group = True
            if text:
                self.e_groups[-1].append(text)
            return
        self.in_e_group = False
        frame = _PYTEST_FRAME.match(line) or _NATIVE_FRAME.match(line)
        if frame:
            self.frames.append(_Frame(frame.group("path"), int(frame.group("line"))))
        elif _EXCEPTION.match(line):
            self.exception_line = line.strip()

    def message(self) -> str:
        groups = [g for g in self.e_groups if g]
        if groups:
            return "\n".join(groups[-1][:_MAX_MESSAGE_LINES])
        return self.exception_line

    def repo_frames(self) -> list[tuple[str, int]]:
        mapped = ((self.paths.to_repo(f.path), f.line) for f in self.frames)
        return [(path, line) for path, line in mapped if path is not None]

    def mentions(self, printed_path: str) -> bool:
        return any(f.path.replace("\\", "/").endswith(printed_path) for f in self.frames)


@dataclass
class _Record:
    test_id: str
    paths: PathMap
    session: int
    progress: str | None = None
    summary_failed: bool = False
    summary_message: str = ""
    block: _Block | None = None

    @property
    def failed(self) -> bool:
        return self.summary_failed or self.progress in _FAILING

    @property
    def block_key(self) -> str:
        """The test as a FAILURES header names it: `TestClass.test_x[param]`."""
        _, sep, name = self.test_id.partition("::")
        if not sep:
            return self.test_id
        base, bracket, param = name.partition("[")
        return base.replace("::", ".") + bracket + param


class _Parser:
    def __init__(self) -> None:
        self.records: dict[str, _Record] = {}
        self.session = 0
        self.section: str | None = None
        self.paths = PathMap()
        self.pending: str | None = None
        self.block: _Block | None = None
        self.blocks: list[_Block] = []
        self.failed_files: list[str] = []  # files whose short progress line shows F or E

    def record(self, test_id: str) -> _Record:
        rec = self.records.get(test_id)
        if rec is None or rec.session != self.session:
            # A test seen again in a later session starts over; insertion order is kept by
            # deleting first, so the output follows the latest session's order.
            self.records.pop(test_id, None)
            rec = _Record(test_id, self.paths, self.session)
            self.records[test_id] = rec
        return rec

    def set_progress(self, test_id: str, status: str) -> None:
        self.record(test_id).progress = status

    def feed(self, line: str) -> None:
        section = _SECTION.match(line)
        if section:
            self.open_section(section.group("title").strip().lower())
            return
        if self.section in ("failures", "errors"):
            header = _BLOCK.match(line)
            if header and header.group("name").strip("_ "):
                self.block = _Block(header.group("name"), self.paths)
                self.blocks.append(self.block)
            elif self.block is not None:
                self.block.feed(line)
            return
        if self.section == "short test summary info":
            summary = _SUMMARY.match(line)
            if summary:
                rec = self.record(summary.group("id"))
                rec.summary_failed = True
                rec.summary_message = (summary.group("msg") or "").strip()
            return
        if self.section not in _PROGRESS_SECTIONS:
            return
        root = _ROOTDIR.match(line)
        if root:
            self.paths = PathMap(root.group("dir").strip())
            return
        self.feed_progress(line)

    def open_section(self, title: str) -> None:
        self.block = None
        self.pending = None
        if title == "test session starts":
            self.session += 1
        self.section = title

    def feed_progress(self, line: str) -> None:
        match = _PROGRESS.match(line) or _XDIST.match(line)
        if match:
            self.set_progress(match.group("id"), match.group("status"))
            self.pending = None
            return
        bare = _BARE_STATUS.match(line)
        if bare:
            if self.pending is not None:
                self.set_progress(self.pending, bare.group("status"))
                self.pending = None
            return
        short = _SHORT_PROGRESS.match(line)
        if short:
            if "F" in short.group("marks") or "E" in short.group("marks"):
                self.failed_files.append(short.group("path"))
            return
        pending = _PENDING.match(line)
        if pending and "::" in pending.group("id"):
            self.pending = pending.group("id")

    def attach_blocks(self) -> None:
        failed = [r for r in self.records.values() if r.failed]
        for block in self.blocks:
            name = block.name
            if name.startswith(_COLLECT_PREFIX):
                rec = self.record_for_collection(name.removeprefix(_COLLECT_PREFIX).strip())
                rec.block = block
                continue
            for prefix in _PHASE_PREFIXES:
                name = name.removeprefix(prefix)
            candidates = [r for r in failed if r.block_key == name]
            if len(candidates) > 1:
                in_file = [r for r in candidates if block.mentions(r.test_id.split("::")[0])]
                unassigned = [r for r in (in_file or candidates) if r.block is None]
                candidates = unassigned or in_file or candidates
            if candidates:
                candidates[0].block = block
            elif (orphan := self.record_for_block(name, block)) is not None:
                orphan.block = block

    def record_for_block(self, name: str, block: _Block) -> _Record | None:
        """A test only its FAILURES entry names (`-r` without `f` and no `-v`: no summary or
        progress line names it). pytest starts a test's traceback at the test function, so
        the first frame is the test's file; else the one file whose progress line shows an
        `F` or `E`. The entry's name is the test's id within that file."""
        printed: str | None
        if block.frames:
            printed = self.paths.relative(block.frames[0].path)
        else:
            printed = self.failed_files[0] if len(set(self.failed_files)) == 1 else None
        if printed is None or self.paths.to_repo(printed) is None:
            return None
        base, bracket, param = name.partition("[")
        rec = self.record(f"{printed}::{base.replace('.', '::')}{bracket}{param}")
        rec.summary_failed = True
        return rec

    def record_for_collection(self, path: str) -> _Record:
        rec = self.records.get(path)
        if rec is None:
            rec = _Record(path, self.paths, self.session, summary_failed=True)
            self.records[path] = rec
        return rec

    def failures(self) -> list[Failure]:
        self.attach_blocks()
        return [_to_failure(r) for r in self.records.values() if r.failed]


def _to_failure(rec: _Record) -> Failure:
    printed_file, sep, name = rec.test_id.partition("::")
    message = rec.summary_message
    location: str | None = None
    trace_paths: list[str] = []
    if rec.block is not None:
        message = rec.block.message() or message
        frames = rec.block.repo_frames()
        if frames:
            path, line = frames[-1]
            location = f"{path}:{line}"
        trace_paths = list(dict.fromkeys(path for path, _ in frames))
    return Failure(
        test_id=rec.test_id,
        name=name if sep else rec.test_id,
        file=rec.paths.to_repo(printed_file),
        framework=FRAMEWORK,
        location=location,
        message=message,
        signature=signature(message),
        trace_paths=trace_paths,
    )


def parse_pytest(lines: Sequence[str]) -> list[Failure]:
    """The tests pytest reports as failed or errored, one Failure per test id.

    `lines` are clean log lines (see actions_log.clean_log); the runner's workflow-command
    lines are skipped.
    """
    parser = _Parser()
    for line in lines:
        if line.startswith("##[") and is_workflow_command(line):
            continue
        parser.feed(line[:_MAX_LINE].rstrip())
    return parser.failures()
