"""Report files read out of artifact zips built here, within caps against zip bombs."""

from __future__ import annotations

import io
import zipfile

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.reports.artifacts import MIB, read_artifact_zip

GLOBS = ["**/*.xml", "!**/coverage*.xml"]


def _zip(entries: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def test_only_files_matching_the_globs_are_read() -> None:
    data = _zip(
        {
            "junit/report.xml": b"<testsuites/>",
            "junit/coverage-final.xml": b"<coverage/>",
            "report.xml": b"<testsuite/>",
            "log.txt": b"hello",
        }
    )
    files, problems = read_artifact_zip(data, GLOBS)
    assert files == [("junit/report.xml", b"<testsuites/>"), ("report.xml", b"<testsuite/>")]
    assert problems == []


def test_unsafe_names_are_skipped() -> None:
    data = _zip(
        {
            "../evil.xml": b"<a/>",
            "/etc/abs.xml": b"<a/>",
            "C:/win.xml": b"<a/>",
            "ok/../../up.xml": b"<a/>",
            "ok.xml": b"<ok/>",
        }
    )
    files, problems = read_artifact_zip(data, GLOBS)
    assert files == [("ok.xml", b"<ok/>")]
    assert len(problems) == 4
    assert all("skipped unsafe entry name" in p for p in problems)


def test_zip_bomb_ratio_is_refused() -> None:
    bomb = _zip({"report.xml": bytes(20 * MIB)})
    assert len(bomb) < 100 * 1024
    files, problems = read_artifact_zip(bomb, GLOBS)
    assert files == []
    assert problems[0].startswith("artifact.zip: refused: report.xml compresses ")


def test_small_compressible_files_are_not_taken_for_bombs() -> None:
    files, problems = read_artifact_zip(_zip({"report.xml": b"<a/>" * 20_000}), GLOBS)
    assert problems == []
    assert files[0][1] == b"<a/>" * 20_000


def test_caps_on_size_count_and_declared_total() -> None:
    data = _zip({f"r{i}.xml": b"<a/>" for i in range(5)})
    assert read_artifact_zip(data, GLOBS, max_compressed=len(data) - 1)[0] == []
    files, problems = read_artifact_zip(data, GLOBS, max_files=4)
    assert files == []
    assert problems == ["artifact.zip: refused: 5 files, over 4"]
    files, problems = read_artifact_zip(data, GLOBS, max_total_uncompressed=19)
    assert problems == ["artifact.zip: refused: 20 bytes declared uncompressed, over 19"]


def test_declared_sizes_that_lie_are_caught_while_reading() -> None:
    content = b"<testsuite/>" * 1000
    data = bytearray(_zip({"report.xml": content}, zipfile.ZIP_STORED))
    declared = len(content).to_bytes(4, "little")
    small = (10).to_bytes(4, "little")
    # Rewrite the central directory's uncompressed size (the local header keeps the truth).
    central = data.rindex(b"PK\x01\x02")
    assert data[central + 24 : central + 28] == declared
    data[central + 24 : central + 28] = small
    files, problems = read_artifact_zip(bytes(data), GLOBS, max_total_uncompressed=100)
    assert files == []
    assert problems == ["artifact.zip: report.xml: unreadable (BadZipFile)"]


def test_not_a_zip() -> None:
    assert read_artifact_zip(b"nope", GLOBS) == ([], ["artifact.zip: not a readable zip archive"])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    files, problems = read_artifact_zip(data, GLOBS)
    assert isinstance(files, list)
    assert isinstance(problems, list)
