"""How the sticky comment gathers failures into rows.

A job where 40 tests fail with the same error says one thing 40 times; the author needs to
read it once. A row is the failures of one job (check run) that share a verdict and a
signature; a failure with no signature, or a check with no test identified, is a row of its
own. Rows keep the order of the failures they are made from (most serious verdict first), so
the same results always give the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.report.models import CheckReport
from bot.triage.models import Decision, EvidenceKind, Verdict


def flaky_not_ruled_out(check: CheckReport, decision: Decision) -> bool:
    """A failed test the bot could not classify whose check passed on rerun: flaky, but a
    change of the PR's was not ruled out, so never "unrelated to this PR"."""
    unknown_test = decision.verdict is Verdict.UNKNOWN and decision.failure is not None
    return unknown_test and check.conclusion == "success"


@dataclass(frozen=True)
class Item:
    """One decision and the check it was made for."""

    check: CheckReport
    decision: Decision


@dataclass(frozen=True)
class Row:
    """Failures of one job that read alike: one table row, one details section."""

    check: CheckReport
    decisions: tuple[Decision, ...]

    @property
    def lead(self) -> Decision:
        return self.decisions[0]

    @property
    def verdict(self) -> Verdict:
        return self.lead.verdict

    @property
    def grouped(self) -> bool:
        return len(self.decisions) > 1

    @property
    def flaky_unknown(self) -> bool:
        """Not classified, then passed on rerun (`flaky_not_ruled_out`)."""
        return flaky_not_ruled_out(self.check, self.lead)

    @property
    def mass(self) -> bool:
        """Part of a mass failure: too many tests failed in the job to judge each."""
        return any(item.kind is EvidenceKind.MASS for item in self.lead.items)

    @property
    def tests(self) -> list[str]:
        return [d.failure.test_id for d in self.decisions if d.failure is not None]

    @property
    def tracking_issues(self) -> list[int]:
        return sorted({d.tracking_issue for d in self.decisions if d.tracking_issue is not None})


def rows_of(items: Iterable[Item]) -> list[Row]:
    """`items` (already in display order) gathered into rows, in the order each row's first
    failure comes."""
    rows: dict[tuple[object, ...], list[Item]] = {}
    for index, item in enumerate(items):
        rows.setdefault(_key(item, index), []).append(item)
    return [
        Row(check=members[0].check, decisions=tuple(m.decision for m in members))
        for members in rows.values()
    ]


def _key(item: Item, index: int) -> tuple[object, ...]:
    failure = item.decision.failure
    if failure is None or not failure.signature:
        return (index,)  # nothing says it reads like another: a row of its own
    check = item.check
    return (
        check.check_name,
        check.html_url,
        check.head_sha,
        item.decision.verdict,
        failure.signature,
    )
