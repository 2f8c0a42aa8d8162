"""Time and peak Python memory of reading one large report of each line-stream format
(issue #26): a Dart/Flutter `--machine` stream and a TAP file of `--tests` tests (one in a
hundred failing), read in 64 KiB chunks as an artifact's entry is, and a jest `--json`
document near the 4 MiB cap. Prints JSON: per format the file's size, the seconds it took
and tracemalloc's peak. `python bench/report_formats.py --tests 50000`.

Then the locations kept: of every location that a real report's producer or peer project
states (`tests/fixtures/reports/stated/locations.json`), how many the bot keeps from the report
alone (`kept_parsed`) and once placed in the tree the peer parsed it against (`kept_placed`,
what the check handler does when it has the commit's tree), and the ones missed.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from bot.shared import Tree, TreeFile
from bot.triage.models import Failure
from bot.triage.reports import parse_report, read_report
from bot.triage.reports.locations import resolve_in_tree

_CHUNK = 64 * 1024
_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


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


def _kept(failures: list[Failure], stated: dict[str, str]) -> bool:
    """The stated location is the failure's (the line that raised), or for the test case's
    own line, the line it keeps as declared."""
    found = [f for f in failures if f.test_id == stated["test"]]
    wanted = {"raised": lambda f: f.location, "declared": lambda f: f.declared_at}
    return any(stated["at"] in (wanted[stated["kind"]](f), f.location) for f in found)


def _tree(paths: list[str] | str) -> Tree:
    if isinstance(paths, str):
        paths = [p for p in (_FIXTURES / paths).read_text().splitlines() if p]
    return Tree(files={p: TreeFile(sha="0" * 40, size=1) for p in paths})


def locations() -> dict[str, object]:
    manifest = json.loads((_FIXTURES / "reports/stated/locations.json").read_text())
    stated = parsed = placed = 0
    missed: list[str] = []
    for report in manifest["reports"]:
        path = _FIXTURES / report["report"]
        failures = parse_report(path.name, path.read_bytes()).failures
        in_tree = resolve_in_tree(failures, _tree(report["tree"])) if report["tree"] else failures
        for location in report["locations"]:
            stated += 1
            parsed += _kept(failures, location)
            if _kept(in_tree, location):
                placed += 1
            else:
                missed.append(f"{path.name}: {location['test']}: {location['at']}")
    return {
        "format": "locations",
        "reports": len(manifest["reports"]),
        "stated": stated,
        "kept_parsed": parsed,
        "kept_placed": placed,
        "missed": missed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=50_000)
    args = parser.parse_args()
    figures = [
        _measure("big.json", _dart(args.tests)),
        _measure("big.tap", _tap(args.tests)),
        _measure("jest.json", _jest(args.tests // 2)),
        locations(),
    ]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
