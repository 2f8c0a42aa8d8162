"""Test reports read out of an Actions artifact zip, with caps against zip bombs.

Declared sizes are checked before anything is read, and the bytes really expanded are
counted while reading, because a zip's declared sizes can lie. Expanded bytes are bounded
per artifact and per job whatever an entry's compression ratio: entries just under the size
where the ratio says anything can still expand a few hundred KiB a thousandfold. Each entry
streams into its report's parser, so an entry's bytes are never held whole.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Generator, Sequence
from contextlib import closing
from dataclasses import dataclass

import pathspec

from bot.triage.reports import ReportResult, read_report

MIB = 1024 * 1024
_CHUNK = 64 * 1024
# Below this size an entry's compression ratio says nothing: a few KiB of repeated log
# lines compress 100-fold and are harmless.
_RATIO_FLOOR = MIB
_DRIVE = re.compile(r"^[A-Za-z]:")
_UNREADABLE = (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError)
# XML elements a job's reports may hold in all: a report of tens of thousands of tests, twice
# over. A file is read whole once begun, so the last may pass it by one file's cap.
JOB_ELEMENTS = 200_000


@dataclass
class ExpandBudget:
    """Bytes the reports of one job may expand to in all, spent as entries are read, and
    XML elements they may hold: parsing costs CPU by the element (about 100,000 a second), and
    a job's budget of bytes holds millions of small elements."""

    total: int
    spent: int = 0
    elements_total: int = JOB_ELEMENTS
    elements_spent: int = 0

    def spend(self, size: int) -> bool:
        """Take `size` bytes; False once the job has expanded more than `total`."""
        self.spent += size
        return self.spent <= self.total

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.total

    def spent_out(self) -> str | None:
        """Why no more of the job's reports may be read, or None while some may."""
        if self.exhausted:
            return f"the job's reports are over {self.total} bytes decompressed"
        if self.elements_spent > self.elements_total:
            return f"the job's reports hold over {self.elements_total} XML elements"
        return None


class _OverCap(Exception):
    """More bytes expanded than the artifact's cap or the job's budget allows."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def read_artifact_reports(
    data: bytes,
    globs: Sequence[str],
    budget: ExpandBudget,
    *,
    max_compressed: int = 50 * MIB,
    max_expanded: int = 32 * MIB,
    max_files: int = 1000,
    max_ratio: int = 100,
    name: str = "artifact.zip",
) -> tuple[list[tuple[str, ReportResult]], list[str]]:
    """The reports in zip `data` whose names match the gitignore-style `globs`, by entry
    name, and problems.

    Problems name a report `name/entry`. A zip over a cap (its own `max_expanded`, or what is
    left of the job's `budget`) is refused whole: a problem and no reports. Names that could
    escape a directory (`..`, absolute, drive letters) are skipped with a problem.
    """
    if len(data) > max_compressed:
        return [], [f"{name}: refused: {len(data)} bytes compressed, over {max_compressed}"]
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        return [], [f"{name}: not a readable zip archive"]
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        if len(entries) > max_files:
            return [], [f"{name}: refused: {len(entries)} files, over {max_files}"]
        spec = pathspec.GitIgnoreSpec.from_lines(globs)
        problems = [
            f"{name}: skipped unsafe entry name {info.filename!r}"
            for info in entries
            if _unsafe(info.filename)
        ]
        wanted = [i for i in entries if not _unsafe(i.filename) and spec.match_file(i.filename)]
        refusal = _refusal(wanted, max_expanded, max_ratio)
        if refusal:
            return [], [f"{name}: refused: {refusal}"]
        meter = _Meter(max_expanded, budget)
        reports: list[tuple[str, ReportResult]] = []
        for info in wanted:
            if spent := budget.spent_out():
                return [], [f"{name}: refused: {spent}"]
            try:
                with closing(meter.chunks(archive, info)) as chunks:
                    result = read_report(f"{name}/{info.filename}", chunks)
                budget.elements_spent += result.elements
                reports.append((info.filename, result))
            except _OverCap as over:
                return [], [f"{name}: refused: {over.problem}"]
            except _UNREADABLE as error:
                # Corrupt data, a bad CRC, encryption or an unsupported compression method.
                problems.append(f"{name}: {info.filename}: unreadable ({type(error).__name__})")
        return reports, problems


def _refusal(entries: list[zipfile.ZipInfo], max_total: int, max_ratio: int) -> str | None:
    declared = sum(info.file_size for info in entries)
    if declared > max_total:
        return f"{declared} bytes declared uncompressed, over {max_total}"
    for info in entries:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= _RATIO_FLOOR and ratio > max_ratio:
            return f"{info.filename} compresses {ratio:.0f} to 1, over {max_ratio} to 1"
    return None


def _unsafe(filename: str) -> bool:
    path = filename.replace("\\", "/")
    return path.startswith("/") or bool(_DRIVE.match(path)) or ".." in path.split("/")


@dataclass
class _Meter:
    """Counts the bytes an artifact's entries expand to, against its cap and the job's."""

    cap: int
    budget: ExpandBudget
    expanded: int = 0

    def chunks(
        self, archive: zipfile.ZipFile, info: zipfile.ZipInfo
    ) -> Generator[bytes, None, None]:
        """The entry's bytes in chunks, stopped (_OverCap) as soon as a cap is passed."""
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                self.expanded += len(chunk)
                if self.expanded > self.cap:
                    raise _OverCap(f"over {self.cap} bytes decompressed")
                if not self.budget.spend(len(chunk)):
                    raise _OverCap(
                        f"the job's reports are over {self.budget.total} bytes decompressed"
                    )
                yield chunk
