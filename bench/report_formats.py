"""Time and peak Python memory of reading one large report of each line-stream format
(issue #26): a Dart/Flutter `--machine` stream and a TAP file of `--tests` tests (one in a
hundred failing), read in 64 KiB chunks as an artifact's entry is, and a jest `--json`
document near the 4 MiB cap. Prints JSON: per format the file's size, the seconds it took
and tracemalloc's peak. `python bench/report_formats.py --tests 50000`.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Iterator

from bot.triage.reports import read_report

_CHUNK = 64 * 1024


def _dart(tests: int) -> bytes:
    lines = ['{"protocolVersion":"0.1.1","type":"start","time":0}']
    lines.append('{"suite":{"id":0,"path":"test/big_test.dart"},"type":"suite","time":0}')
    for i in range(1, tests + 1):
        lines.append(
            f'{{"test":{{"id":{i},"name":"case {i}","suiteID":0,"groupIDs":[],"line":{i}}},'
            '"type":"testStart","time":1}'
        )
        if i % 100 == 0:
            lines.append(
                f'{{"testID":{i},"error":"Expected: <2>\\n  Actual: <1>\\n",'
                '"stackTrace":"test/big_test.dart 13:9  main.<fn>\\n","type":"error"}'
            )
        result = "failure" if i % 100 == 0 else "success"
        lines.append(f'{{"testID":{i},"result":"{result}","hidden":false,"type":"testDone"}}')
    return ("\n".join(lines) + "\n").encode()


def _tap(tests: int) -> bytes:
    lines = ["TAP version 13"]
    for i in range(1, tests + 1):
        if i % 100 == 0:
            lines += [f"not ok {i} - case {i}", "  ---", "  error: 'boom'", "  ..."]
        else:
            lines.append(f"ok {i} - case {i}")
    lines.append(f"1..{tests}")
    return ("\n".join(lines) + "\n").encode()


def _jest(tests: int) -> bytes:
    results = [
        {
            "ancestorTitles": ["suite"],
            "title": f"case {i}",
            "status": "failed" if i % 100 == 0 else "passed",
            "failureMessages": ["Error: boom\n    at /home/runner/work/a/a/src/x.test.js:3:1"]
            if i % 100 == 0
            else [],
        }
        for i in range(tests)
    ]
    suite = {"name": "/home/runner/work/a/a/src/x.test.js", "assertionResults": results}
    return json.dumps({"numTotalTests": tests, "testResults": [suite]}).encode()


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), _CHUNK):
        yield data[start : start + _CHUNK]


def _measure(name: str, data: bytes) -> dict[str, object]:
    tracemalloc.start()
    started = time.perf_counter()
    result = read_report(name, _chunks(data))
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "format": result.format,
        "bytes": len(data),
        "tests": result.tests_total,
        "failures": len(result.failures),
        "problems": result.problems,
        "seconds": round(seconds, 2),
        "peak_mib": round(peak / 1024 / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=50_000)
    args = parser.parse_args()
    figures = [
        _measure("big.json", _dart(args.tests)),
        _measure("big.tap", _tap(args.tests)),
        _measure("jest.json", _jest(args.tests // 2)),
    ]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
