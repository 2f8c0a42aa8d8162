"""The shapes a job log reaches `flakybot parse` in, turned back into the raw log GitHub serves.

- `raw`: the log as GitHub serves it (API, "View raw logs"): a timestamp on every line.
- `plain`: the same without timestamps (a terminal, a copy from the web view, a CI elsewhere).
- `gh-run-view`: `gh run view --log` or `--log-failed`: `job<TAB>step<TAB>timestamp text` on
  every line, every job of the run in one file. Each job is read on its own.
- `archive`: the zip of a run's logs (`gh run download --log`, "Download log archive"): one
  `.txt` per job at the top (`1_build.txt`) and, in a folder per job, one per step
  (`build/3_Run tests.txt`). A job's own file is read when there is one, else its steps' files
  in order.

Any of them may carry escape codes written out as the two characters `^[` (a terminal's
rendering, copied): those are made escape bytes again, for the log cleaner to remove.
Every function here works on one line or one chunk at a time, in bounded memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

LogKind = Literal["raw", "plain", "gh-run-view", "archive"]

_BOM = b"\xef\xbb\xbf"
_STAMP = rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z"
_TIMESTAMPED = re.compile(rb"^(?:" + _BOM + rb")?" + _STAMP + rb"(?: |$)")
# `job<TAB>step<TAB>` before a timestamp; gh writes a byte order mark where a step starts.
_GH_LINE = re.compile(rb"^(?P<job>[^\t\n]+)\t[^\t\n]*\t(?:" + _BOM + rb")?(?=" + _STAMP + rb")")
# The same prefix on any line of gh's output: a multi-line annotation's later lines have no
# timestamp of their own.
_GH_PREFIX = re.compile(rb"^(?P<job>[^\t\n]+)\t[^\t\n]*\t(?:" + _BOM + rb")?")
# A terminal's `^[[31m` / `^[]8;;` for ESC, in a log copied out of it.
_CARET_ESCAPE = re.compile(rb"\^\[(?=[\[\]])")
_STEP_FILE = re.compile(r"^(?P<n>\d+)_(?P<name>.+)\.txt$")
# Lines looked at to tell the form: a log's first lines are the runner's own.
_SNIFF_LINES = 50
# A line longer than this without a newline is passed on in pieces (the scanner cuts it).
_MAX_PARTIAL = 1024 * 1024


@dataclass
class LogForm:
    """What a log file was read as, for the person who asked."""

    kind: LogKind
    timestamps: bool
    caret_escapes: bool = False
    job: str | None = None  # gh-run-view and archive: the job these lines are from

    def describe(self) -> str:
        what = {
            "raw": "raw job log",
            "plain": "job log",
            "gh-run-view": "`gh run view --log` output",
            "archive": "run log archive",
        }[self.kind]
        details = [f'job "{self.job}"'] if self.job else []
        details.append("timestamps" if self.timestamps else "no timestamps")
        if self.caret_escapes:
            details.append("escape codes written as ^[")
        return f"{what} ({', '.join(details)})"


def sniff(head: bytes) -> LogForm:
    """The form of a log (not an archive) from its first bytes."""
    lines = [line for line in head.split(b"\n")[:_SNIFF_LINES] if line.strip()]
    if not lines:
        return LogForm("plain", timestamps=False)
    gh = sum(1 for line in lines if _GH_LINE.match(line))
    if 2 * gh > len(lines):
        return LogForm("gh-run-view", timestamps=True, caret_escapes=b"^[" in head)
    stamped = sum(1 for line in lines if _TIMESTAMPED.match(line))
    timestamps = 2 * stamped > len(lines)
    return LogForm("raw" if timestamps else "plain", timestamps, caret_escapes=b"^[" in head)


def jobs_of(form: LogForm, chunks: Iterable[bytes]) -> Iterator[tuple[str, bytes]]:
    """`(job, raw log bytes)` pieces of a log file read in `form`, whole lines each, in file
    order; one job's lines are contiguous in gh's output. Prefixes are cut and `^[` made
    ESC; a form without jobs yields the job "". `form.caret_escapes` becomes True when a
    `^[` escape is met anywhere in the file."""
    rest = b""
    job = ""
    for chunk in chunks:
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            for job, piece in _pieces(form, data[:cut]):
                yield job, piece
        if len(rest) > _MAX_PARTIAL:
            yield job, rest
            rest = b""
    if rest:
        yield from _pieces(form, rest + b"\n")


def _pieces(form: LogForm, data: bytes) -> Iterator[tuple[str, bytes]]:
    data, escapes = _CARET_ESCAPE.subn(b"\x1b", data)
    form.caret_escapes = form.caret_escapes or escapes > 0
    if form.kind != "gh-run-view":
        yield "", data
        return
    job = ""
    lines: list[bytes] = []
    for line in data.splitlines(keepends=True):
        match = _GH_PREFIX.match(line)
        name = match.group("job").decode("utf-8", "replace") if match else job
        if name != job and lines:
            yield job, b"".join(lines)
            lines = []
        job = name
        lines.append(line[match.end() :] if match else line)
    if lines:
        yield job, b"".join(lines)


def archive_jobs(names: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The jobs of a run's log archive, each with the member files that hold its log, in
    order: its own top-level `N_job.txt`, else its folder's step files by step number."""
    own: dict[str, str] = {}
    steps: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        folder, _, base = name.rpartition("/")
        step = _STEP_FILE.match(base)
        if not folder and step:
            own[step.group("name")] = name
        elif folder and "/" not in folder and step:
            steps.setdefault(folder, []).append((int(step.group("n")), name))
    jobs = [(job, [member]) for job, member in own.items()]
    jobs += [
        (job, [member for _, member in sorted(files)])
        for job, files in steps.items()
        if job not in own
    ]
    return jobs
