"""A suspected cause of a test's flakiness, with the signals counted: never a cause alone.

Signals come from the failures' messages (flake_rules: a marker the runner printed) and from
their runs (concentration: all on one platform points to the platform, most in slow runs to
timing). Each failure adds, per category, the weight of its strongest marker of it, halved
when its run was not comparable (comparable.py); a concentration adds 1 per failure in it, a
correlation being weaker than a runner's statement. A cause is suspected only when

- its score is at least MIN_SCORE (one failure the runner explained, or two with a specific
  error): below it the signals are too weak, and
- it holds at least AGREEMENT of all the scores: below it the signals disagree.

Otherwise the cause is "unclear", and the signals are still listed. Confidence: high with
HIGH_AGREEMENT, at least HIGH_FAILURES failures showing it and half of all failures showing
it; medium with two failures and half of all; low otherwise (one failure, or a minority).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from bot.triage.concentration import Dimension, Where
from bot.triage.flake_rules import CATEGORY_WORDS, Category, Rule, fired
from bot.triage.models import Confidence

MIN_SCORE = 3.0
AGREEMENT = 2 / 3
HIGH_AGREEMENT = 0.9
HIGH_FAILURES = 3
NOT_COMPARABLE_FACTOR = 0.5
SIGNALS_LISTED = 8


class Signal(BaseModel):
    category: Category
    name: str  # the marker's name, or the concentration's words
    failures: int  # failures showing it
    weight: int
    source: str  # the study or runner the marker comes from; "runs" for a concentration


class SuspectedCause(BaseModel):
    category: Category | None = None  # None: unclear
    confidence: Confidence | None = None
    signals: list[Signal] = Field(default_factory=list)  # strongest first
    failures: int = 0  # the failures read
    why_unclear: str = ""

    @property
    def text(self) -> str:
        """One line: the cause (or "unclear") with every signal behind it, counted."""
        if self.category is None:
            head = f"unclear ({self.why_unclear})"
        else:
            head = f"{CATEGORY_WORDS[self.category]} (confidence: {self.confidence})"
        listed = [_signal_words(s, self.failures) for s in self.signals[:SIGNALS_LISTED]]
        more = len(self.signals) - len(listed)
        if more > 0:
            listed.append(f"{more} more")
        return head + (f"; signals: {'; '.join(listed)}" if listed else "")


class FailureText(BaseModel):
    message: str
    comparable: bool = True  # False: its run was flagged as not comparable


def suspect(failures: Sequence[FailureText], where: Where | None = None) -> SuspectedCause:
    """The suspected cause of `failures` (with where they concentrate, when known)."""
    scores: dict[Category, float] = {}
    showing: dict[Category, int] = {}
    counts: dict[Rule, int] = {}
    read: dict[str, list[Rule]] = {}  # a flaky test's failures mostly repeat one message
    for failure in failures:
        factor = 1.0 if failure.comparable else NOT_COMPARABLE_FACTOR
        strongest: dict[Category, int] = {}
        if failure.message not in read:
            read[failure.message] = fired(failure.message)
        for rule in read[failure.message]:
            counts[rule] = counts.get(rule, 0) + 1
            strongest[rule.category] = max(strongest.get(rule.category, 0), rule.weight)
        for category, weight in strongest.items():
            scores[category] = scores.get(category, 0.0) + weight * factor
            showing[category] = showing.get(category, 0) + 1
    signals = [
        Signal(
            category=rule.category,
            name=rule.name,
            failures=count,
            weight=rule.weight,
            source=rule.source,
        )
        for rule, count in counts.items()
    ]
    for found in where.found if where else []:
        pointed = _CONTEXT_CATEGORY.get(found.dimension)
        if pointed is None:
            continue
        signals.append(
            Signal(
                category=pointed, name=found.text, failures=found.failures, weight=1, source="runs"
            )
        )
        scores[pointed] = scores.get(pointed, 0.0) + found.failures
        showing[pointed] = max(showing.get(pointed, 0), found.failures)
    signals.sort(key=lambda s: (-s.weight * s.failures, s.name))
    return _decide(scores, showing, signals, len(failures))


# What a concentration points to: a platform to the platform, slow runs to timing. Attempts
# and workflow sizes point to no cause of their own: they are told, not scored.
_CONTEXT_CATEGORY = {Dimension.PLATFORM: Category.PLATFORM, Dimension.SLOW: Category.TIMING}


def _decide(
    scores: dict[Category, float],
    showing: dict[Category, int],
    signals: list[Signal],
    failures: int,
) -> SuspectedCause:
    base = SuspectedCause(signals=signals, failures=failures)
    total = sum(scores.values())
    if total == 0:
        base.why_unclear = (
            f"no marker of a known cause in {failures:,} failure "
            f"message{'' if failures == 1 else 's'}"
        )
        return base
    top = max(scores, key=lambda c: (scores[c], showing[c]))
    share = scores[top] / total
    if scores[top] < MIN_SCORE:
        base.why_unclear = "the signals are too weak"
        return base
    if share < AGREEMENT:
        base.why_unclear = "the signals point to different causes"
        return base
    shown = showing[top]
    if share >= HIGH_AGREEMENT and shown >= HIGH_FAILURES and 2 * shown >= failures:
        confidence = Confidence.HIGH
    elif shown >= 2 and 2 * shown >= failures:
        confidence = Confidence.MEDIUM
    else:
        confidence = Confidence.LOW
    return SuspectedCause(category=top, confidence=confidence, signals=signals, failures=failures)


def _signal_words(signal: Signal, failures: int) -> str:
    if signal.source == "runs":
        return signal.name
    return (
        f"{signal.name} in {signal.failures:,} of {failures:,} "
        f"failure{'' if failures == 1 else 's'} ({CATEGORY_WORDS[signal.category]})"
    )
