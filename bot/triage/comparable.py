"""Whether a run can be compared with the others of its check, and why not.

Evidence from a run unlike the rest (a job three times its usual length, another runner
image) is weighed as such: a maintainer who reads a diagnosis off it may have to retract it.
A run is not comparable when:

- its job took at least SLOW_FACTOR times the check's usual median on the base branch. The
  median, not the 90th percentile: a check's slowest tenth holds its cache misses and cold
  starts, ordinary runs; three medians is far past them (and the issue's own measure);
- it ran on a runner image, OS, or kind of runner (self-hosted or GitHub-hosted) that at
  most RARE of its check's runs had, while at least MAJORITY had one other (and at least
  MIN_PEERS runs recorded it, so that "most runs" means something). A value a quarter of the
  runs have is part of how the check runs: failures gathering there are a finding
  (concentration.py), not noise; a run that landed on an odd runner once is an outlier.

The image is compared by name (`ubuntu-22.04`), not version: GitHub updates the images weekly.
One platform difference is named: the image, else the OS, else the kind of runner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.triage.run_context import RunContext, UsualDuration

SLOW_FACTOR = 3.0
MIN_USUAL_RUNS = 5  # fewer durations are no baseline
MIN_PEERS = 5
MAJORITY = 2 / 3
RARE = 0.1
SELF_HOSTED = "self-hosted"


def not_comparable(run: RunContext, usual: UsualDuration | None, peers: Peers) -> str | None:
    """Why `run` is not comparable with `peers` (the recorded runs of its check), or None."""
    platform = next(
        (reason for what, value_of in _PLATFORM if (reason := peers.unlike(run, what, value_of))),
        None,
    )
    return "; ".join(r for r in (_slow(run, usual), platform) if r) or None


def image_name(run: RunContext) -> str | None:
    """`ubuntu-22.04` of `ubuntu-22.04 20240422.1.0`."""
    return run.runner_image.split()[0] if run.runner_image and run.runner_image.split() else None


def runner_kind(run: RunContext) -> str | None:
    if not run.labels:
        return None
    return SELF_HOSTED if SELF_HOSTED in run.labels else "GitHub-hosted"


def duration(seconds: float) -> str:
    """`45 s`, `4 min 10 s`, `1 h 02 min`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s" if whole % 60 else f"{whole // 60} min"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _slow(run: RunContext, usual: UsualDuration | None) -> str | None:
    if run.job_seconds is None or usual is None or usual.runs < MIN_USUAL_RUNS:
        return None
    if usual.median <= 0 or run.job_seconds < SLOW_FACTOR * usual.median:
        return None
    return (
        f"took {duration(run.job_seconds)}, {run.job_seconds / usual.median:.1f} times the check's "
        f"usual {duration(usual.median)}"
    )


_PLATFORM: tuple[tuple[str, Callable[[RunContext], str | None]], ...] = (
    ("runner image", image_name),
    ("OS", lambda r: r.runner_os),
    ("kind of runner", runner_kind),
)


@dataclass(frozen=True)
class Peers:
    """What the recorded runs of one check ran on, counted once for all its runs."""

    counts: dict[str, Counter[str]]

    @classmethod
    def of(cls, runs: Sequence[RunContext]) -> Peers:
        return cls(
            {
                what: Counter(v for v in map(value_of, runs) if v is not None)
                for what, value_of in _PLATFORM
            }
        )

    def unlike(
        self, run: RunContext, what: str, value_of: Callable[[RunContext], str | None]
    ) -> str | None:
        mine = value_of(run)
        counted = self.counts[what]
        total = sum(counted.values())
        if mine is None or total < MIN_PEERS:
            return None
        usual, count = counted.most_common(1)[0]
        if mine == usual or count < MAJORITY * total or counted[mine] > RARE * total:
            return None
        return (
            f"ran on {what} {mine}, as {counted[mine]:,} of {total:,} runs of the check "
            f"did; {count:,} ran on {usual}"
        )
