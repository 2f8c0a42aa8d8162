"""Precision and recall of the bot's "flaky"/"unrelated" verdicts over the labelled scenarios.

Runs every scenario (the built-in demo and tests/scenarios/*.yml, or the files given) through
the real bot and the simulator, end to end over HTTP, and compares the bot's final verdict per
test with the scenario's `expect.verdicts` labels. Prints JSON: precision (the quality figure:
a failure labelled related, broken-base, infra or unknown that the bot calls flaky or unrelated
lowers it), recall, the counts, and every misjudged test.

    python bench/accuracy.py [SCENARIO.yml ...]

Targets: precision 1.0, recall >= 0.9.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from pathlib import Path

from bot.demo import run_scenario
from bot.sim.expect import Accuracy
from bot.sim.scenario import Scenario, builtin_scenario, load_scenario

ROOT = Path(__file__).resolve().parents[1]


async def measure(scenarios: list[Scenario]) -> dict[str, object]:
    accuracy = Accuracy()
    unmet: dict[str, list[str]] = {}
    started = time.perf_counter()
    for scenario in scenarios:
        with tempfile.TemporaryDirectory() as workdir:
            result = await run_scenario(scenario, Path(workdir))
        accuracy.add(scenario.name, scenario.expect.verdicts, result.verdicts)
        if result.problems:
            unmet[scenario.name] = result.problems
    return {
        "scenarios": len(scenarios),
        "labelled_failures": accuracy.labelled,
        "precision": accuracy.precision,
        "recall": accuracy.recall,
        "true_positives": accuracy.true_positives,
        "false_positives": accuracy.false_positives,
        "false_negatives": accuracy.false_negatives,
        "misjudged": accuracy.misjudged,
        "unmet_expectations": unmet,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    paths = args.scenarios or sorted((ROOT / "tests" / "scenarios").glob("*.yml"))
    scenarios = [load_scenario(path) for path in paths]
    if not args.scenarios:
        scenarios.insert(0, builtin_scenario())
    print(json.dumps(asyncio.run(measure(scenarios)), indent=2))


if __name__ == "__main__":
    main()
