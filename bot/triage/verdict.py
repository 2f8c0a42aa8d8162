"""Decide, per failed test, whether the pull request could have caused it.

The order of the checks encodes the bot's one hard rule: a failure whose
footprint meets the PR's changes is RELATED whatever else is known, and
"unrelated" or "flaky" is only said when it can be shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from bot.triage.footprint import (
    REASON_DIRECTORY,
    REASON_PAIR,
    REASON_TEST_FILE,
    REASON_TRACEBACK,
    footprint,
    matches,
)
from bot.triage.models import Decision, Extraction, Failure, FootprintEntry, Verdict

NO_TEST_IDENTIFIED = "no failed test could be identified in the log"
GITHUB_FILES_LIMIT = 3000  # GET /pulls/{n}/files lists at most this many
_LISTED = 3  # paths named in one line of evidence before "and N more"


def decide(
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    *,
    changed_complete: bool = True,
    passed_on_rerun: bool = False,
    reproduced_on_rerun: bool = False,
) -> list[Decision]:
    """One Decision per failure, or a single UNKNOWN one when there is no failure.

    ``changed_complete`` is False when the PR has more files than GitHub lists;
    ``passed_on_rerun`` / ``reproduced_on_rerun`` describe a rerun of the same
    commit (at most one of them can be true).
    """
    if passed_on_rerun and reproduced_on_rerun:
        raise ValueError("a rerun cannot both pass and reproduce the failure")
    if not failures:
        return [Decision(failure=None, verdict=Verdict.UNKNOWN, evidence=NO_TEST_IDENTIFIED)]
    return [
        _decide_one(
            failure,
            changed_paths,
            changed_complete=changed_complete,
            passed_on_rerun=passed_on_rerun,
            reproduced_on_rerun=reproduced_on_rerun,
        )
        for failure in failures
    ]


def decide_extraction(
    extraction: Extraction,
    changed_paths: Sequence[str],
    *,
    changed_complete: bool = True,
    passed_on_rerun: bool = False,
    reproduced_on_rerun: bool = False,
) -> list[Decision]:
    """`decide` on what one job's extraction found, knowing why a job can fail without a test.

    No failed test but an infrastructure cause: one INFRA decision quoting the line. A mass
    failure (more failed tests than the repo's threshold) is never judged test by test: what
    would have been flaky or unrelated is UNKNOWN; RELATED stays, since it names the change.
    """
    if not extraction.failures and extraction.infra is not None:
        cause = extraction.infra
        return [
            Decision(
                failure=None,
                verdict=Verdict.INFRA,
                evidence=f"infrastructure failure ({cause.kind}), not a test: {cause.line.strip()}",
            )
        ]
    decisions = decide(
        extraction.failures,
        changed_paths,
        changed_complete=changed_complete,
        passed_on_rerun=passed_on_rerun,
        reproduced_on_rerun=reproduced_on_rerun,
    )
    if not extraction.mass_failure:
        return decisions
    mass = (
        f"{len(extraction.failures):,} tests failed in this job: a mass failure, "
        "not judged test by test"
    )
    return [
        d
        if d.verdict is Verdict.RELATED
        else d.model_copy(update={"verdict": Verdict.UNKNOWN, "evidence": mass})
        for d in decisions
    ]


def summarise(decisions: Iterable[Decision]) -> Counter[Verdict]:
    """How many decisions reached each verdict."""
    return Counter(decision.verdict for decision in decisions)


def _decide_one(
    failure: Failure,
    changed_paths: Sequence[str],
    *,
    changed_complete: bool,
    passed_on_rerun: bool,
    reproduced_on_rerun: bool,
) -> Decision:
    test_footprint = footprint(failure)
    entries = test_footprint.entries
    found = matches(test_footprint, changed_paths)

    def decision(verdict: Verdict, evidence: str) -> Decision:
        return Decision(
            failure=failure,
            verdict=verdict,
            evidence=evidence,
            matched_paths=[path for path, _ in found],
            footprint=entries,
        )

    if found:
        touched = _touched(found)
        if passed_on_rerun:
            return decision(
                Verdict.RELATED, f"passed on rerun, but touches code this PR changed; {touched}"
            )
        return decision(Verdict.RELATED, touched)
    if not entries:
        return decision(
            Verdict.UNKNOWN,
            "no path this test depends on is known (no test file or traceback paths), "
            "so a change to it cannot be ruled out",
        )
    if not changed_complete:
        return decision(
            Verdict.UNKNOWN,
            f"this PR changes more files than GitHub lists ({GITHUB_FILES_LIMIT:,}), so a change "
            f"to {_the_paths(entries)} it depends on cannot be ruled out",
        )
    untouched = f"this PR changes none of {_the_paths(entries)} it depends on: {_list(entries)}"
    if passed_on_rerun:
        return decision(Verdict.FLAKY, f"passed on rerun of the same commit; {untouched}")
    if reproduced_on_rerun:
        return decision(Verdict.UNRELATED, f"failed again on rerun of the same commit; {untouched}")
    return decision(Verdict.UNRELATED, untouched)


def _touched(found: list[tuple[str, FootprintEntry]]) -> str:
    if len(found) == 1:
        path, entry = found[0]
        return f"this PR changes {path}, {_why(entry)}"
    named = [f"{path} ({entry.reason})" for path, entry in found[:_LISTED]]
    more = len(found) - _LISTED
    tail = f", and {more:,} more" if more > 0 else ""
    return f"this PR changes {len(found):,} paths it depends on: {', '.join(named)}{tail}"


def _why(entry: FootprintEntry) -> str:
    if entry.reason == REASON_TEST_FILE:
        return "which is the test file itself"
    if entry.reason == REASON_TRACEBACK:
        return "which is in its traceback"
    if entry.reason == REASON_PAIR:
        return f"which is the test file's conventional pair ({entry.path})"
    if entry.reason == REASON_DIRECTORY:
        return f"which is in the test's directory {entry.path}"
    return f"which is in its footprint ({entry.reason})"


def _the_paths(entries: Sequence[FootprintEntry]) -> str:
    return "the 1 path" if len(entries) == 1 else f"the {len(entries):,} paths"


def _list(entries: Sequence[FootprintEntry]) -> str:
    named = ", ".join(entry.path for entry in entries[:_LISTED])
    more = len(entries) - _LISTED
    return f"{named}, and {more:,} more" if more > 0 else named
