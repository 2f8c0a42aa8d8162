"""Throughput and memory of streamed log extraction and of a streamed JUnit report.

The log case (`--case log`) measures against `grep -c FAIL` on the same file:

Writes a deterministic GitHub Actions job log of --size-mb megabytes (timestamps, groups,
ANSI colours, passing pytest / jest / go test output) with 20 failures scattered through it,
streams it in 1 MiB chunks through LogScanner and every log parser, and prints JSON:
{mb_per_s, grep_mb_per_s, ratio_to_grep, compile_ms, peak_rss_mb, failures_found, ...}. The
scanner's marker database is compiled before the timed scan, as the bot compiles it once per
process, and its compile time is reported alone as compile_ms. Exit status 1
when a failure is missed.

The report case (`--case report`) writes a deterministic JUnit file of --report-mb megabytes
holding --cases test cases (nested suites, each case with its `file`/`line` attributes and a
line of output, 20 failed with a JVM stack), streams it in 1 MiB chunks through
`read_report` (iterparse, each case cleared once read) and prints {mb_per_s, mb_per_cpu_s,
cases_per_s, peak_rss_mb, failures_found, located (by source), ...}. The bot caps a file at
`xml_safe.MAX_ELEMENTS`; this file holds four times that, so the bench raises the cap for the
parse and says so (`max_elements`) and what the default cap does (`default_cap`).

Each case runs in a process of its own, so peak RSS is that case's. Run it on a quiet
machine: `python bench/parse_bench.py` (both cases).
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
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bot.triage.failures import extract_from_chunks, log_scanner
from bot.triage.reports import read_report
from bot.triage.reports.xml_safe import MAX_ELEMENTS

CHUNK = 1024 * 1024
FAILURES = 20
SUITE_CASES = 100  # cases per inner suite


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


def _case_xml(n: int, pad: str) -> str:
    module, feature = n // 10_000, n // SUITE_CASES
    klass = f"com.example.m{module}.Feature{feature}Test"
    path = f"src/test/java/com/example/m{module}/Feature{feature}Test.java"
    head = (
        f'<testcase classname="{klass}" name="handlesCase{n}" time="0.003" '
        f'file="{path}" line="{20 + n % 400}">'
    )
    failure = ""
    if n % (REPORT_EVERY) == REPORT_EVERY // 2:
        failure = (
            f'<failure message="expected:&lt;{n}&gt; but was:&lt;{n + 1}&gt;" '
            'type="org.opentest4j.AssertionFailedError">'
            f"org.opentest4j.AssertionFailedError: expected: &lt;{n}&gt;\n"
            f"\tat {klass}.handlesCase{n}(Feature{feature}Test.java:{20 + n % 400})\n"
            "\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)\n</failure>"
        )
    return f"{head}{failure}<system-out>case {n}: {pad}</system-out></testcase>\n"


REPORT_EVERY = 10_000  # one failed case in so many: 20 in 200,000


def write_junit(path: Path, cases: int, size: int) -> None:
    """About `size` bytes of JUnit XML holding `cases` test cases, written as it goes."""
    base = len(_case_xml(cases - 1, ""))
    pad = "x" * max(0, size // cases - base)
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="bench">\n')
        for n in range(cases):
            if n % SUITE_CASES == 0:
                if n:
                    out.write("</testsuite></testsuite>\n")
                out.write(
                    f'<testsuite name="m{n // 10_000}"><testsuite name="Feature{n // SUITE_CASES}">'
                )
            out.write(_case_xml(n, pad))
        out.write("</testsuite></testsuite>\n</testsuites>\n")


def report_case(size_mb: int, cases: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp:
        report = Path(tmp) / "TEST-bench.xml"
        write_junit(report, cases, size_mb * 1024 * 1024)
        size_mb_real = report.stat().st_size / 1e6
        rss_before = _peak_rss_mb()
        cap = 10 * cases
        start, cpu_start = time.perf_counter(), time.process_time()
        result = read_report(report.name, _chunks(report), max_elements=cap)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        refused = read_report(report.name, _chunks(report)).problems
    expected = cases // REPORT_EVERY
    sources = Counter(f.location_source for f in result.failures if f.location)
    return {
        "case": "report",
        "size_mb": round(size_mb_real, 1),
        "cases": result.tests_total,
        "elements": result.elements,
        "mb_per_s": round(size_mb_real / elapsed, 1),
        "cases_per_s": round(result.tests_total / elapsed),
        "seconds": round(elapsed, 2),
        # CPU time: on a shared machine the wall clock also counts other processes' turns.
        "cpu_seconds": round(cpu, 2),
        "mb_per_cpu_s": round(size_mb_real / cpu, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_before_parse_mb": round(rss_before, 1),
        "failures_found": len(result.failures),
        "failures_expected": expected,
        "located": dict(sources),
        "max_elements": cap,
        "default_cap": refused[0] if refused else f"read under {MAX_ELEMENTS} elements",
        "problems": result.problems,
    }


def log_case(size_mb: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp:
        log = Path(tmp) / "job.log"
        write_log(log, size_mb * 1024 * 1024)
        size_mb_real = log.stat().st_size / 1e6
        rss_before = _peak_rss_mb()

        start = time.perf_counter()
        log_scanner()
        compile_elapsed = time.perf_counter() - start

        start = time.perf_counter()
        extraction = extract_from_chunks(_chunks(log))
        elapsed = time.perf_counter() - start

        grep = shutil.which("grep") or "grep"
        start = time.perf_counter()
        subprocess.run([grep, "-c", "FAIL", str(log)], check=False, capture_output=True)
        grep_elapsed = time.perf_counter() - start

    found = {f.test_id for f in extraction.failures}
    return {
        "case": "log",
        "size_mb": round(size_mb_real, 1),
        "mb_per_s": round(size_mb_real / elapsed, 1),
        "grep_mb_per_s": round(size_mb_real / grep_elapsed, 1),
        "ratio_to_grep": round(elapsed / grep_elapsed, 1),
        "compile_ms": round(compile_elapsed * 1000, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_before_scan_mb": round(rss_before, 1),
        "failures_found": len(found & expected_ids()),
        "failures_expected": FAILURES,
        "missed": sorted(expected_ids() - found),
    }


def _missed(result: dict[str, object]) -> bool:
    if result["case"] == "log":
        return bool(result["missed"])
    return result["failures_found"] != result["failures_expected"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=("both", "log", "report"), default="both")
    parser.add_argument("--size-mb", type=int, default=200, help="the log's size")
    parser.add_argument("--report-mb", type=int, default=50, help="the JUnit file's size")
    parser.add_argument("--cases", type=int, default=200_000, help="the JUnit file's cases")
    args = parser.parse_args()
    if args.case == "both":
        # One process a case: ru_maxrss is a process's peak, the log's would hide the report's.
        results = []
        for case in ("log", "report"):
            command = [sys.executable, __file__, "--case", case, "--size-mb", str(args.size_mb)]
            command += ["--report-mb", str(args.report_mb), "--cases", str(args.cases)]
            done = subprocess.run(command, check=False, capture_output=True, text=True)
            results.append(json.loads(done.stdout))
    elif args.case == "log":
        results = [log_case(args.size_mb)]
    else:
        results = [report_case(args.report_mb, args.cases)]
    for result in results:
        print(json.dumps(result))
    return 1 if any(_missed(r) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
