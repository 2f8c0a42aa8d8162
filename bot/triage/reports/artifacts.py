"""Report files out of an Actions artifact zip, with caps against zip bombs.

Declared sizes are checked before anything is read, and the bytes really decompressed are
counted while reading, because a zip's declared sizes can lie.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence

import pathspec

MIB = 1024 * 1024
_CHUNK = 64 * 1024
# Below this size an entry's compression ratio says nothing: a few KiB of repeated log
# lines compress 100-fold and are harmless.
_RATIO_FLOOR = MIB
_DRIVE = re.compile(r"^[A-Za-z]:")


def read_artifact_zip(
    data: bytes,
    globs: Sequence[str],
    *,
    max_compressed: int = 50 * MIB,
    max_total_uncompressed: int = 200 * MIB,
    max_files: int = 1000,
    max_ratio: int = 100,
    name: str = "artifact.zip",
) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The files in zip `data` whose names match the gitignore-style `globs`, and problems.

    A zip over a cap is refused whole: a problem and no files. Names that could escape a
    directory (`..`, absolute, drive letters) are skipped with a problem.
    """
    if len(data) > max_compressed:
        return [], [f"{name}: refused: {len(data)} bytes compressed, over {max_compressed}"]
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        return [], [f"{name}: not a readable zip archive"]
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        refusal = _refusal(entries, max_files, max_total_uncompressed, max_ratio)
        if refusal:
            return [], [f"{name}: refused: {refusal}"]
        spec = pathspec.GitIgnoreSpec.from_lines(globs)
        problems: list[str] = []
        files: list[tuple[str, bytes]] = []
        budget = max_total_uncompressed
        for info in entries:
            if _unsafe(info.filename):
                problems.append(f"{name}: skipped unsafe entry name {info.filename!r}")
                continue
            if not spec.match_file(info.filename):
                continue
            content, problem = _read(archive, info, budget)
            if problem == "cap":
                return [], [f"{name}: refused: over {max_total_uncompressed} bytes decompressed"]
            if problem:
                problems.append(f"{name}: {info.filename}: {problem}")
                continue
            budget -= len(content)
            files.append((info.filename, content))
        return files, problems


def _refusal(
    entries: list[zipfile.ZipInfo], max_files: int, max_total: int, max_ratio: int
) -> str | None:
    if len(entries) > max_files:
        return f"{len(entries)} files, over {max_files}"
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


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> tuple[bytes, str]:
    """The entry's bytes, read in chunks and stopped once they pass `budget`."""
    chunks: list[bytes] = []
    size = 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > budget:
                    return b"", "cap"
                chunks.append(chunk)
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as error:
        # Corrupt data, a bad CRC, encryption or an unsupported compression method.
        return b"", f"unreadable ({error.__class__.__name__})"
    return b"".join(chunks), ""
