"""How long the tracking issue's explanation takes for a busy test (issue 28).

Renders the section of a tracked test with N occurrences over the real failure messages of
tests/fixtures/flake_messages (each message made unique, so no repeat is free), every one with
its run context, among 10 runs per failure; and the worst case for the marker scan: messages
of the longest length read (20,000 characters) holding no marker. Prints JSON: seconds per
render and per message scanned.

    python bench/flake_cause_bench.py [--occurrences 2000]

Target: a 2,000-occurrence section within 1 s; one longest message scanned within 1 ms.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bot.report.issue import render_body
from bot.report.models import IssueInput, IssueOccurrence
from bot.triage.flake_rules import MESSAGE_READ, fired
from bot.triage.run_context import RunContext, UsualDuration

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = sorted((ROOT / "tests/fixtures/flake_messages").glob("*.txt"))


def issue(count: int) -> IssueInput:
    texts = [p.read_text(encoding="utf-8") for p in MESSAGES]
    runs = [
        RunContext(
            runner_os="Windows" if n % 4 == 0 else "Linux",
            labels=["windows-latest" if n % 4 == 0 else "ubuntu-latest"],
            runner_image="ubuntu-22.04 20240422.1.0",
            job_seconds=500.0 + n % 300,
            attempt=1 + n % 2,
            jobs_in_run=n % 12,
            check_name="test",
        )
        for n in range(count * 10)
    ]
    occurrences = [
        IssueOccurrence(
            at=1_714_000_000.0 + n,
            test_id="pkg.TestX",
            signature="sig",
            head_sha=f"{n:040x}",
            check_name="test",
            html_url=f"https://github.com/a/b/actions/runs/1/job/{n}",
            message=f"run {n}\n" + texts[n % len(texts)],
            context=runs[n * 10],
        )
        for n in range(count)
    ]
    usual = [UsualDuration(check_name="test", runs=100, median=600.0, p90=780.0)]
    return IssueInput(
        key="k", tests=["pkg.TestX"], occurrences=occurrences, run_contexts=runs, usual=usual
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--occurrences", type=int, default=2_000)
    args = parser.parse_args()
    inp = issue(args.occurrences)
    started = time.perf_counter()
    body = render_body(inp)
    render = time.perf_counter() - started
    plain = ("assert left == right, the values differ in field number 7 " * 400)[:MESSAGE_READ]
    started = time.perf_counter()
    for _ in range(200):
        assert fired(plain) == []
    scan = (time.perf_counter() - started) / 200
    print(
        json.dumps(
            {
                "occurrences": args.occurrences,
                "run_contexts": len(inp.run_contexts),
                "render_seconds": round(render, 3),
                "body_chars": len(body or ""),
                "longest_plain_message_scan_ms": round(scan * 1000, 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
