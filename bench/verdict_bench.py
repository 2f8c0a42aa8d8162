"""What deciding costs when a job fails many tests on a PR that changes many files.

`verdict.decide` reads every changed path against every failed test (its footprint, the
paths its walk rules out, the paths its failure names), so a job of --failures failed tests
on a PR of --changed paths costs failures x changed readings: the worst case GitHub allows is
a 3,000-file PR. Each test has a complete walk; most changed paths are modules outside it,
some are prose and other test files near the tests, one a lockfile.

    python bench/verdict_bench.py [--failures 400] [--changed 3000]

Prints JSON; never asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bot.triage.imports import ImportWalk
from bot.triage.models import Failure
from bot.triage.verdict import decide


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failures", type=int, default=400)
    parser.add_argument("--changed", type=int, default=3000)
    args = parser.parse_args()
    near = ["docs/a.md", "tests/unit/test_x.py", "uv.lock", "tests/README.md"]
    modules = [f"vendor/pkg{i // 50}/mod{i}.py" for i in range(max(args.changed - len(near), 0))]
    files = [f"tests/test_{i}.py" for i in range(args.failures)]
    failures = [
        Failure(
            test_id=f"{name}::test_x",
            name="test_x",
            file=name,
            framework="pytest",
            message="AssertionError: assert 1 == 2\n" * 40,
        )
        for name in files
    ]
    walks = {name: ImportWalk(name, "Python", (), (name,), (), ()) for name in files}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    decisions = decide(failures, [*modules, *near], imports=walks)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "failures": args.failures,
                "changed_paths": len(modules) + len(near),
                "seconds": round(seconds, 3),
                "per_failure_ms": round(1000 * seconds / max(args.failures, 1), 2),
                "verdicts": sorted({d.verdict.value for d in decisions}),
                "load_before": round(load, 2),
                "load_after": round(os.getloadavg()[0], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
