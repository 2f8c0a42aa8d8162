"""Fault injection: scripted errors, dropped connections and latency, decided per request."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from bot.sim.scenario import FaultRule, Faults

INJECTED = "Injected by a scenario fault rule"


@dataclass(frozen=True)
class Fault:
    status: int | None  # None: drop the connection without answering
    headers: dict[str, str]
    after_applying: bool = False  # drop it only once the request was carried out
    message: str = INJECTED
    rate_limit: str | None = None  # "primary" or "secondary": answer as GitHub's limit does
    retry_after: int | None = None


@dataclass
class FaultPlan:
    faults: Faults
    rng: random.Random = field(init=False)
    _left: list[int | None] = field(init=False)
    _patterns: list[re.Pattern[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.faults.seed)
        self._left = [self._budget(rule) for rule in self.faults.rules]
        self._patterns = [re.compile(rule.path) for rule in self.faults.rules]

    @staticmethod
    def _budget(rule: FaultRule) -> int | None:
        if rule.probability is not None:
            return None
        return rule.times if rule.times is not None else 1

    def latency_s(self) -> float:
        if self.faults.latency_ms == 0:
            return 0.0
        if self.faults.latency == "fixed":
            return self.faults.latency_ms / 1000
        return self.rng.uniform(0, self.faults.latency_ms) / 1000

    def decide(self, method: str, path: str) -> Fault | None:
        """The first rule that matches and still fires, consuming one of its `times`."""
        for index, rule in enumerate(self.faults.rules):
            if rule.method not in {"*", method} or not self._patterns[index].search(path):
                continue
            left = self._left[index]
            if left is None:
                assert rule.probability is not None  # budgetless rules are the random ones
                if self.rng.random() >= rule.probability:
                    continue
            elif left == 0:
                continue
            else:
                self._left[index] = left - 1
            return Fault(
                status=None if rule.drop_connection else rule.status,
                headers=rule.headers,
                after_applying=rule.after_applying,
                message=rule.message or INJECTED,
                rate_limit=rule.rate_limit,
                retry_after=rule.retry_after,
            )
        return None
