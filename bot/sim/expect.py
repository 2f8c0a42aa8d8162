"""Checking a scenario's `expect` block against what the simulator recorded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.sim.scenario import CheckRunExpectation, IssueExpectation, Scenario

if TYPE_CHECKING:
    from bot.sim.server import Simulator


def check_expectations(
    scenario: Scenario, sim: Simulator, verdicts: Mapping[str, str]
) -> list[str]:
    """One human-readable line per unmet expectation; an empty list means all were met.

    `verdicts` is the bot's final verdict per test id, supplied by the caller.
    """
    expect = scenario.expect
    problems: list[str] = []
    for wanted in expect.comments:
        bodies = [comment.body for comment in sim.bot_comments(wanted.pr)]
        if wanted.count is not None and len(bodies) != wanted.count:
            problems.append(
                f"PR #{wanted.pr}: expected {wanted.count} bot comment(s), found {len(bodies)}"
            )
        for text in wanted.contains:
            if not any(text in body for body in bodies):
                problems.append(f"PR #{wanted.pr}: no bot comment contains {text!r}")
        for text in wanted.not_contains:
            if any(text in body for body in bodies):
                problems.append(f"PR #{wanted.pr}: a bot comment contains {text!r}")
        size = max((len(body.encode()) for body in bodies), default=0)
        if wanted.max_bytes is not None and size > wanted.max_bytes:
            problems.append(
                f"PR #{wanted.pr}: a bot comment has {size:,} bytes, over {wanted.max_bytes:,}"
            )
    for issue in expect.issues:
        problems.extend(_issue_problems(issue, sim))
    for run in expect.check_runs:
        problems.extend(_check_run_problems(run, sim))
    if expect.reruns is not None and len(sim.reruns) != expect.reruns:
        problems.append(f"expected {expect.reruns} rerun request(s), found {len(sim.reruns)}")
    created = len(sim.issues_created)
    if expect.issues_created is not None and created != expect.issues_created:
        problems.append(f"expected {expect.issues_created} issue(s) created, found {created}")
    for test_id, verdict in expect.verdicts.items():
        actual = verdicts.get(test_id)
        if actual is None:
            problems.append(f"{test_id}: expected verdict {verdict!r}, the bot gave none")
        elif actual != verdict:
            problems.append(f"{test_id}: expected verdict {verdict!r}, the bot said {actual!r}")
    return problems


def _issue_problems(wanted: IssueExpectation, sim: Simulator) -> list[str]:
    titled = [
        issue
        for issue in sim.issues
        if issue.title == wanted.title and wanted.number in (None, issue.number)
    ]
    if len(titled) != 1:
        which = f"#{wanted.number} " if wanted.number is not None else ""
        return [f"expected one issue {which}titled {wanted.title!r}, found {len(titled)}"]
    (issue,) = titled
    name = f"issue #{issue.number} ({wanted.title!r})"
    problems = [
        f"{name}: its body lacks {text!r}" for text in wanted.contains if text not in issue.body
    ]
    problems += [
        f"{name}: its body has {text!r}" for text in wanted.not_contains if text in issue.body
    ]
    if wanted.state is not None and issue.state != wanted.state:
        problems.append(f"{name}: expected {wanted.state}, found {issue.state}")
    if wanted.assignees is not None and sorted(issue.assignees) != sorted(wanted.assignees):
        problems.append(f"{name}: expected assignees {wanted.assignees}, found {issue.assignees}")
    comments = len(sim.bot_comments(issue.number))
    if wanted.comments is not None and comments != wanted.comments:
        problems.append(f"{name}: expected {wanted.comments} bot comment(s), found {comments}")
    return problems


def _check_run_problems(wanted: CheckRunExpectation, sim: Simulator) -> list[str]:
    head = sim.world.pulls[wanted.pr].spec.head_sha
    runs = [
        run
        for run in sim.world.app_runs.values()
        if run.head_sha == head and run.name == wanted.name
    ]
    name = f"PR #{wanted.pr}: check run {wanted.name!r}"
    if wanted.count is not None and len(runs) != wanted.count:
        return [f"{name}: expected {wanted.count}, found {len(runs)}"]
    if not runs:
        return [f"{name}: none created"] if wanted.count != 0 else []
    run = runs[-1]
    problems = [
        f"{name}: its summary lacks {text!r}"
        for text in wanted.summary_contains
        if text not in (run.summary or "")
    ]
    if wanted.conclusion is not None and run.conclusion != wanted.conclusion:
        problems.append(f"{name}: expected {wanted.conclusion}, found {run.conclusion}")
    if wanted.annotations is not None and len(run.annotations) != wanted.annotations:
        problems.append(
            f"{name}: expected {wanted.annotations} annotation(s), found {len(run.annotations)}"
        )
    for level, count in wanted.levels.items():
        found = sum(1 for note in run.annotations if note["annotation_level"] == level)
        if found != count:
            problems.append(f"{name}: expected {count} {level} annotation(s), found {found}")
    if wanted.min_requests is not None and run.requests < wanted.min_requests:
        problems.append(f"{name}: expected {wanted.min_requests}+ requests, found {run.requests}")
    return problems


CLEARED = frozenset({"flaky", "unrelated"})  # the verdicts that tell an author to move on


@dataclass
class Accuracy:
    """How well the bot's "flaky"/"unrelated" verdicts agree with scenario labels.

    A positive is a verdict in CLEARED. Precision: of the failures the bot cleared, how many
    the labels clear too (a miss here is the error users do not forgive). Recall: of the
    failures the labels clear, how many the bot cleared.
    """

    labelled: int = 0
    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    misjudged: list[str] = field(default_factory=list)

    def add(self, scenario: str, labels: Mapping[str, str], verdicts: Mapping[str, str]) -> None:
        for test_id, label in labels.items():
            verdict = verdicts.get(test_id, "none")
            self.labelled += 1
            cleared, should = verdict in CLEARED, label in CLEARED
            self.true_positives += cleared and should
            self.false_positives += cleared and not should
            self.false_negatives += should and not cleared
            if verdict != label:
                self.misjudged.append(f"{scenario}: {test_id}: labelled {label}, said {verdict}")

    @property
    def precision(self) -> float | None:
        said = self.true_positives + self.false_positives
        return self.true_positives / said if said else None

    @property
    def recall(self) -> float | None:
        should = self.true_positives + self.false_negatives
        return self.true_positives / should if should else None
