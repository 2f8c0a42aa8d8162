"""Throughput and memory of streamed log extraction, against `grep -c FAIL` on the same file.

Writes a deterministic GitHub Actions job log of --size-mb megabytes (timestamps, groups,
ANSI colours, passing pytest / jest / go test output) with 20 failures scattered through it,
streams it in 1 MiB chunks through LogScanner and every log parser, and prints JSON:
{mb_per_s, mb_per_cpu_s, grep_mb_per_s, ratio_to_grep, compile_ms, peak_rss_mb,
failures_found, ...}. The scanner's marker database is compiled before the timed scan, as the
bot compiles it once per process, and its compile time is reported alone as compile_ms. Exit
status 1 when a failure is missed. `--scanner re2` measures the pre-filter without Hyperscan
(what an install without it uses); the JSON's `scanner` names the one measured. Run it on a
quiet machine: `python bench/parse_bench.py [--scanner auto|hyperscan|re2]`.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bot.triage.failures import extract_from_chunks, log_scanner
from bot.triage.literals import ENGINES
from bot.triage.logscan import use_engine

CHUNK = 1024 * 1024
FAILURES = 20


def _noise(rng: random.Random, n: int) -> str:
    kind = n % 6
    if kind == 0:
        return (
            f"tests/unit/test_mod{rng.randrange(97)}.py::TestThing::test_case_{n} "
            f"PASSED [ {n % 100:2d}%]"
        )
    if kind == 1:
        return f"\x1b[32m  \u2713\x1b[39m renders widget {n} correctly ({rng.randrange(40)} ms)"
    if kind == 2:
        return f"=== RUN   TestHandler/case_{n}"
    if kind == 3:
        return f"    --- PASS: TestHandler/case_{n} (0.0{rng.randrange(10)}s)"
    if kind == 4:
        return f"2026/11/30 10:00:00 INFO request id={n} path=/api/v1/items status=200 took=3ms"
    return f"ok  \texample.com/bench/svc{rng.randrange(50)}\t{rng.random():.3f}s"


def _go_failure(i: int) -> list[str]:
    return [
        f"=== RUN   TestFlaky{i}",
        f"    pool_test.go:{10 + i}: expected 1 open connection, got {i + 2}",
        f"--- FAIL: TestFlaky{i} (0.01s)",
        "FAIL",
        f"FAIL\texample.com/bench/pkg{i}\t0.123s",
    ]


def _pytest_failure(i: int) -> list[str]:
    bar = "=" * 30
    return [
        f"{bar} test session starts {bar}",
        "rootdir: /home/runner/work/bench/bench",
        f"tests/test_retry{i}.py::test_backoff_{i} FAILED [100%]",
        f"{bar} FAILURES {bar}",
        f"{'_' * 20} test_backoff_{i} {'_' * 20}",
        f"tests/test_retry{i}.py:{20 + i}: in test_backoff_{i}",
        f"E   assert {i} == {i + 1}",
        f"{bar} short test summary info {bar}",
        f"FAILED tests/test_retry{i}.py::test_backoff_{i} - assert {i} == {i + 1}",
        f"{bar} 1 failed in 0.31s {bar}",
    ]


def expected_ids() -> set[str]:
    go = {f"example.com/bench/pkg{i}.TestFlaky{i}" for i in range(0, FAILURES, 2)}
    py = {f"tests/test_retry{i}.py::test_backoff_{i}" for i in range(1, FAILURES, 2)}
    return go | py


def write_log(path: Path, size: int, seed: int = 1) -> None:
    """About `size` bytes of log, the failures spread evenly, in bounded memory."""
    rng = random.Random(seed)
    every = size // (FAILURES + 1)
    written = 0
    n = 0
    failure = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        while written < size:
            lines: list[str] = []
            if n % 5000 == 0:
                lines += ["##[endgroup]", f"##[group]Run make test-shard-{n // 5000}"]
            if failure < FAILURES and written >= every * (failure + 1):
                lines += _go_failure(failure) if failure % 2 == 0 else _pytest_failure(failure)
                failure += 1
            lines.append(_noise(rng, n))
            stamp = f"2026-11-30T10:{n // 600000 % 60:02d}:{n // 10000 % 60:02d}.{n % 10**7:07d}Z "
            text = "".join(stamp + line + "\n" for line in lines)
            out.write(text)
            written += len(text.encode())
            n += 1
        out.write("2026-11-30T11:00:00.0000000Z ##[error]Process completed with exit code 1.\n")


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            yield chunk


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--scanner", choices=["auto", *ENGINES], default="auto")
    args = parser.parse_args()
    scanner = use_engine(args.scanner)
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp:
        log = Path(tmp) / "job.log"
        write_log(log, args.size_mb * 1024 * 1024)
        size_mb = log.stat().st_size / 1e6
        rss_before = _peak_rss_mb()

        start = time.perf_counter()
        log_scanner()
        compile_elapsed = time.perf_counter() - start

        start = time.perf_counter()
        cpu_start = time.process_time()
        extraction = extract_from_chunks(_chunks(log))
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start

        grep = shutil.which("grep") or "grep"
        start = time.perf_counter()
        subprocess.run([grep, "-c", "FAIL", str(log)], check=False, capture_output=True)
        grep_elapsed = time.perf_counter() - start

    found = {f.test_id for f in extraction.failures}
    missed = sorted(expected_ids() - found)
    result = {
        "scanner": scanner,
        "size_mb": round(size_mb, 1),
        "mb_per_s": round(size_mb / elapsed, 1),
        # Per second of this process's CPU time: steadier than mb_per_s on a shared machine.
        "mb_per_cpu_s": round(size_mb / cpu, 1),
        "grep_mb_per_s": round(size_mb / grep_elapsed, 1),
        "ratio_to_grep": round(elapsed / grep_elapsed, 1),
        "compile_ms": round(compile_elapsed * 1000, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_before_scan_mb": round(rss_before, 1),
        "failures_found": len(found & expected_ids()),
        "failures_expected": FAILURES,
        "missed": missed,
    }
    print(json.dumps(result))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
