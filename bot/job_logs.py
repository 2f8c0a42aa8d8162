"""Job-log files on disk, as `flakybot parse` is given them: a raw or plain log, `gh run view
--log` output, or the zip of a run's logs (see triage/parsers/log_forms.py for the forms).

Each job in the file is read on its own, streamed through the log scanner in bounded memory.
"""

from __future__ import annotations

import dataclasses
import itertools
import zipfile
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path
from typing import IO

from bot.triage.failures import extract_from_chunks
from bot.triage.models import Extraction
from bot.triage.parsers.log_forms import LogForm, archive_jobs, jobs_of, sniff

CHUNK = 1024 * 1024
_HEAD = 64 * 1024


def read_job_logs(path: Path) -> Iterator[tuple[LogForm, Extraction]]:
    """What each job whose log `path` holds says, with the form it was read in."""
    if zipfile.is_zipfile(path):
        yield from _read_archive(path)
        return
    with path.open("rb") as stream:
        head = stream.read(_HEAD)
        form = sniff(head)
        chunks = itertools.chain([head], _chunks(stream))
        for job, pieces in itertools.groupby(jobs_of(form, chunks), key=itemgetter(0)):
            extraction = extract_from_chunks(piece for _, piece in pieces)
            yield dataclasses.replace(form, job=job or None), extraction


def _read_archive(path: Path) -> Iterator[tuple[LogForm, Extraction]]:
    with zipfile.ZipFile(path) as archive:
        for job, members in archive_jobs(archive.namelist()):
            with archive.open(members[0]) as first:
                form = dataclasses.replace(sniff(first.read(_HEAD)), kind="archive", job=job)
            chunks = (chunk for member in members for chunk in _member_chunks(archive, member))
            extraction = extract_from_chunks(piece for _, piece in jobs_of(form, chunks))
            yield form, extraction


def _member_chunks(archive: zipfile.ZipFile, member: str) -> Iterator[bytes]:
    with archive.open(member) as stream:
        yield from _chunks(stream)
    yield b"\n"  # a step's file may end without one: the next step's first line is its own


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    return iter(lambda: stream.read(CHUNK), b"")
