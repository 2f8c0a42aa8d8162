"""Peak memory of one triage handler reading hostile artifacts (issue #18.3).

Runs `flakybot serve`'s handler in this process against the simulator over real HTTP: the
demo's failing check uploads five artifacts, each a zip of JUnit entries just under the size
where the compression ratio is checked (1 MiB expanding about 1000-fold), in two shapes:
`text` (one long <system-out>, the issue's 224 KB zip expanding to 208 MB) and `elements`
(<testcase/> after <testcase/>, the densest tree). `--entries` sets the entries per zip: 199
is the issue's zip (refused on its declared size), 30 expands to 30 MiB (under an artifact's
cap, so the job's budget is what stops it). Prints JSON: per case the process's peak RSS
before and during the handler, their difference, the megabytes downloaded and the problems
the comment names. Run one case per process (peak RSS never falls):
`python bench/artifact_memory.py --shape text --entries 30`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import resource
import tempfile
import time
import zipfile
from pathlib import Path

from bot.demo import running, settle
from bot.sim.scenario import Scenario, builtin_scenario

MIB = 1024 * 1024
ARTIFACTS = 5


def _entry(shape: str) -> bytes:
    if shape == "text":
        head = b'<testsuite name="pytest"><testcase name="t"><system-out>'
        tail = b"</system-out></testcase></testsuite>"
        return head + b"a" * (MIB - 1 - len(head) - len(tail)) + tail
    head, tail, unit = b'<testsuite name="pytest">', b"</testsuite>", b'<testcase name="t"/>'
    return head + unit * ((MIB - 1 - len(head) - len(tail)) // len(unit)) + tail


def _zip(shape: str, entries: int) -> bytes:
    buffer = io.BytesIO()
    content = _entry(shape)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for i in range(entries):
            archive.writestr(f"reports/r{i}.xml", content)
    return buffer.getvalue()


def _world() -> Scenario:
    raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
    failing = raw["checks"][0]["attempts"][0]
    failing["artifacts"] = [
        {"name": f"junit-{i}", "files": {"r.xml": "<placeholder/>"}} for i in range(ARTIFACTS)
    ]
    raw["checks"][0]["attempts"] = [failing]
    raw["files"] = {".github/flaky.yml": "rerun: false\nreports:\n  - artifact: 'junit*'\n"}
    raw.pop("expect", None)
    return Scenario.model_validate(raw)


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def _measure(shape: str, entries: int, workdir: Path) -> dict[str, object]:
    data = _zip(shape, entries)
    async with running(_world(), workdir) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        for artifact in sim.world.artifacts.values():
            artifact.data = data
        before = _peak_mib()
        started = time.perf_counter()
        assert await sim.send_webhook("check_run", payload) == 202
        await settle(sim, bot)
        seconds = time.perf_counter() - started
        during = _peak_mib()
        (comment,) = sim.bot_comments(7)
    problems = sorted({line.strip() for line in comment.body.splitlines() if "not read:" in line})
    return {
        "shape": shape,
        "entries_per_zip": entries,
        "zip_kb": round(len(data) / 1024),
        "expanded_mb_per_zip": round(entries * len(_entry(shape)) / 1e6, 1),
        "downloaded_mb": round(ARTIFACTS * len(data) / 1e6, 2),
        "peak_rss_before_mib": round(before),
        "peak_rss_during_mib": round(during),
        "handler_peak_mib": round(during - before),
        "seconds": round(seconds, 1),
        "problems": problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("text", "elements"), default="text")
    parser.add_argument("--entries", type=int, default=199)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as workdir:
        result = asyncio.run(_measure(args.shape, args.entries, Path(workdir)))
    result["load_before"] = round(load[0], 2)
    result["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
