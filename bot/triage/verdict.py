"""Decide, per failed test, whether the pull request could have caused it.

The order of the rules encodes the bot's one hard rule: a failure whose footprint meets the
PR's changes is RELATED whatever else is known, and "unrelated" or "flaky" is only said when
it can be shown. In order:

1. RELATED: a changed path is in the test's footprint (a pass on rerun makes it "flaky, but
   touches code this PR changed", still RELATED). This beats a broken base: a PR touching a
   test that already fails on the base branch is the place to fix it.
2. BROKEN_BASE: the same test failed with the same (non-generic) signature on the PR's base
   commit or in the latest run of the check on the base branch.
3. UNKNOWN: the footprint is empty, or GitHub's file list is cut off, so an overlap cannot be
   ruled out.
4. FLAKY: flakiness shown: passed on rerun of the same commit, failed then passed within the
   run (the runner's own retries), or known history (the same signature on other PRs by
   other authors, or on the base branch).
5. UNRELATED: none of that; failed again on rerun is said, and lowers the confidence.

Afterwards: a `/flaky wrong` on the test (or the whole PR) turns FLAKY or UNRELATED into
UNKNOWN; a mass failure does the same (`decide_extraction`). Risky changed paths (workflows,
lockfiles, build files, shared fixtures) never make a failure related; they are caveats that
lower the confidence one step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from bot.shared import GITHUB_FILES_LIMIT
from bot.triage.failures import match_key
from bot.triage.footprint import (
    REASON_CONFIG,
    REASON_DIRECTORY,
    REASON_GO_PACKAGE,
    REASON_IMPORTED,
    REASON_PAIR,
    REASON_RUNS,
    REASON_TEST_FILE,
    REASON_TESTDATA,
    REASON_TESTS_FOLDER,
    REASON_TRACEBACK,
    STRONG_REASONS,
    describe_chain,
    footprint,
    matches,
    walk_key,
)
from bot.triage.imports import ImportWalk
from bot.triage.models import (
    Confidence,
    Decision,
    Evidence,
    EvidenceKind,
    Extraction,
    Failure,
    FootprintEntry,
    PastOccurrence,
    TestContext,
    Verdict,
)
from bot.triage.risky import risky_changes
from bot.triage.stats import describe_flips, describe_rate

NO_TEST_IDENTIFIED = "no failed test could be identified in the log"
_LISTED = 3  # paths named in one line of evidence before "and N more"
# Known flaky on one earlier occurrence is a small sample: not HIGH confidence on its own.
HISTORY_FOR_HIGH = 2
PROBLEMS_NAMED = 5  # unreadable reports or logs named per decision before "and N more"

_CLEARED = frozenset({Verdict.FLAKY, Verdict.UNRELATED})
_LOWER = {Confidence.HIGH: Confidence.MEDIUM, Confidence.MEDIUM: Confidence.LOW}


class Rules(BaseModel):
    """The repo's settings that shape a verdict (from `.github/flaky.yml`)."""

    footprints: dict[str, list[str]] = Field(default_factory=dict)
    risky_paths: list[str] = Field(default_factory=list)
    history_days: int = 30


def decide(
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    *,
    changed_complete: bool = True,
    passed_on_rerun: bool = False,
    reproduced_on_rerun: bool = False,
    contexts: Mapping[str, TestContext] | None = None,
    rules: Rules | None = None,
    imports: Mapping[str, ImportWalk] | None = None,
) -> list[Decision]:
    """One Decision per failure, or a single UNKNOWN one when there is no failure.

    ``changed_complete`` is False when the PR has more files than GitHub lists;
    ``passed_on_rerun`` / ``reproduced_on_rerun`` describe a rerun of the same commit (at
    most one of them can be true); ``contexts`` holds what the store knows about each test,
    keyed by ``match_key(test_id)``; ``imports`` the walks of test files' imports, keyed
    by test file.
    """
    if passed_on_rerun and reproduced_on_rerun:
        raise ValueError("a rerun cannot both pass and reproduce the failure")
    if not failures:
        return [
            Decision(
                failure=None,
                verdict=Verdict.UNKNOWN,
                evidence=NO_TEST_IDENTIFIED,
                confidence=Confidence.LOW,
                items=[Evidence(kind=EvidenceKind.INCOMPLETE, text=NO_TEST_IDENTIFIED)],
            )
        ]
    rules = rules or Rules()
    risky = risky_changes(changed_paths, rules.risky_paths)
    return [
        _decide_one(
            _Facts(
                failure=failure,
                changed_paths=changed_paths,
                changed_complete=changed_complete,
                passed_on_rerun=passed_on_rerun,
                reproduced_on_rerun=reproduced_on_rerun,
                context=(contexts or {}).get(match_key(failure.test_id), TestContext()),
                rules=rules,
                risky=risky,
                imports=(imports or {}).get(walk_key(failure)),
            )
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
    contexts: Mapping[str, TestContext] | None = None,
    rules: Rules | None = None,
    imports: Mapping[str, ImportWalk] | None = None,
) -> list[Decision]:
    """`decide` on what one job's extraction found, knowing why a job can fail without a test.

    No failed test but an infrastructure cause: one INFRA decision quoting the line. A mass
    failure (more failed tests than the repo's threshold) is never judged test by test: what
    would have been flaky or unrelated is UNKNOWN; RELATED and BROKEN_BASE stay, since they
    name a cause.
    """
    return _naming_problems(
        _decide_extraction(
            extraction,
            changed_paths,
            changed_complete=changed_complete,
            passed_on_rerun=passed_on_rerun,
            reproduced_on_rerun=reproduced_on_rerun,
            contexts=contexts,
            rules=rules,
            imports=imports,
        ),
        extraction.problems,
    )


def _decide_extraction(
    extraction: Extraction,
    changed_paths: Sequence[str],
    *,
    changed_complete: bool,
    passed_on_rerun: bool,
    reproduced_on_rerun: bool,
    contexts: Mapping[str, TestContext] | None,
    rules: Rules | None,
    imports: Mapping[str, ImportWalk] | None,
) -> list[Decision]:
    if not extraction.failures and extraction.infra is not None:
        cause = extraction.infra
        text = f"infrastructure failure ({cause.kind}), not a test: {cause.line.strip()}"
        return [
            Decision(
                failure=None,
                verdict=Verdict.INFRA,
                evidence=text,
                items=[Evidence(kind=EvidenceKind.INFRA, text=text)],
            )
        ]
    decisions = decide(
        extraction.failures,
        changed_paths,
        changed_complete=changed_complete,
        passed_on_rerun=passed_on_rerun,
        reproduced_on_rerun=reproduced_on_rerun,
        contexts=contexts,
        rules=rules,
        imports=imports,
    )
    if not extraction.mass_failure:
        return decisions
    mass = (
        f"{len(extraction.failures):,} tests failed in this job: a mass failure, "
        "not judged test by test"
    )
    return [
        d.model_copy(
            update={
                "verdict": Verdict.UNKNOWN,
                "evidence": mass,
                "confidence": Confidence.LOW,
                "items": [*d.items, Evidence(kind=EvidenceKind.MASS, text=mass)],
            }
        )
        if d.verdict in _CLEARED
        else d
        for d in decisions
    ]


def _naming_problems(decisions: list[Decision], problems: Sequence[str]) -> list[Decision]:
    """Each decision with what the job left that could not be read (a report refused for its
    XML entities, an unsafe name in an artifact, a log cut short): said, never silent. A job
    with no test identified says it in its one line, since it has no details section."""
    if not problems:
        return decisions
    shown = list(problems[:PROBLEMS_NAMED])
    if len(problems) > PROBLEMS_NAMED:
        shown.append(f"and {len(problems) - PROBLEMS_NAMED:,} more")
    unread = [Evidence(kind=EvidenceKind.UNREAD, text=f"not read: {p}") for p in shown]
    named = "; ".join(shown)
    return [
        d.model_copy(
            update={
                "items": [*d.items, *unread],
                "evidence": d.evidence
                if d.failure is not None
                else f"{d.evidence}; not read: {named}",
            }
        )
        for d in decisions
    ]


def summarise(decisions: Iterable[Decision]) -> Counter[Verdict]:
    """How many decisions reached each verdict."""
    return Counter(decision.verdict for decision in decisions)


class _Facts(BaseModel):
    failure: Failure
    changed_paths: Sequence[str]
    changed_complete: bool
    passed_on_rerun: bool
    reproduced_on_rerun: bool
    context: TestContext
    rules: Rules
    risky: list[tuple[str, str]]
    imports: ImportWalk | None = None


def _decide_one(facts: _Facts) -> Decision:
    failure, context = facts.failure, facts.context
    test_footprint = footprint(failure, facts.rules.footprints, facts.imports)
    entries = test_footprint.entries
    found = matches(test_footprint, facts.changed_paths)
    matched = {path for path, _ in found}
    items: list[Evidence] = []
    caveats: list[str] = []

    def add(kind: EvidenceKind, text: str) -> None:
        items.append(Evidence(kind=kind, text=text))

    untouched = f"this PR changes none of {_the_paths(entries)} it depends on: {_list(entries)}"
    if found:
        add(EvidenceKind.OVERLAP, _touched(found))
    elif entries:
        add(EvidenceKind.NO_OVERLAP, untouched)
    no_footprint = (
        "no path this test depends on is known (no test file or traceback paths), "
        "so a change to it cannot be ruled out"
    )
    cut_off = (
        f"this PR changes more files than GitHub lists ({GITHUB_FILES_LIMIT:,}), so a change "
        f"to {_the_paths(entries)} it depends on cannot be ruled out"
    )
    if facts.imports is not None:
        add(EvidenceKind.IMPORTS, facts.imports.describe())
    if not entries:
        add(EvidenceKind.INCOMPLETE, no_footprint)
    elif not facts.changed_complete and not found:
        add(EvidenceKind.INCOMPLETE, cut_off)
    for path, why in facts.risky:
        if path not in matched:
            text = f"this PR changes {path} ({why}), which can break any test"
            add(EvidenceKind.RISKY, text)
            caveats.append(text)
    if facts.passed_on_rerun:
        add(EvidenceKind.RERUN, "passed on rerun of the same commit")
    if facts.reproduced_on_rerun:
        add(EvidenceKind.RERUN, "failed again on rerun of the same commit, with the same error")
    retried_pass = failure.attempts_failed < failure.attempts_total
    if failure.attempts_total > 1:
        outcome = "passed in the end" if retried_pass else "never passed"
        add(
            EvidenceKind.RETRIES,
            f"failed {failure.attempts_failed:,} of {failure.attempts_total:,} tries within "
            f"this run and {outcome}",
        )
    same = [past for past in context.history if past.same_signature]
    other = [past for past in context.history if not past.same_signature]
    known = _history_text(same, facts.rules.history_days)
    if known:
        add(EvidenceKind.HISTORY, known)
    if other:
        add(
            EvidenceKind.HISTORY,
            f"failed {len(other):,} other {_times(len(other))} in the last "
            f"{facts.rules.history_days} days with a different error: a different failure, "
            "not counted",
        )
    base = context.base
    broken_base = base is not None and base.same_signature
    if base is not None:
        add(
            EvidenceKind.BASE,
            f"failed the same way on {base.where}"
            if base.same_signature
            else f"also failed on {base.where}, with a different error",
        )
    if context.rate is not None:
        add(EvidenceKind.RATE, describe_rate(context.rate))
        flips = describe_flips(context.rate)
        if flips:
            add(EvidenceKind.RATE, flips)

    # The rules, in order (module doc).
    if found:
        evidence = _touched(found)
        if facts.passed_on_rerun:
            evidence = f"passed on rerun, but touches code this PR changed; {evidence}"
        strong = any(e.reason in STRONG_REASONS for _, e in found)
        certain = strong and not facts.passed_on_rerun and not broken_base
        verdict = Verdict.RELATED
        confidence = Confidence.HIGH if certain else Confidence.MEDIUM
    elif broken_base:
        assert base is not None
        reason = untouched if entries and facts.changed_complete else "not the PR's doing"
        evidence = f"failed the same way on {base.where}; {reason}"
        verdict = Verdict.BROKEN_BASE
        sure = entries and facts.changed_complete
        confidence = Confidence.HIGH if sure else Confidence.MEDIUM
    elif not entries:
        verdict, evidence, confidence = Verdict.UNKNOWN, no_footprint, Confidence.LOW
    elif not facts.changed_complete:
        verdict, evidence, confidence = Verdict.UNKNOWN, cut_off, Confidence.LOW
    elif facts.passed_on_rerun:
        verdict, confidence = Verdict.FLAKY, Confidence.HIGH
        evidence = f"passed on rerun of the same commit; {untouched}"
    elif retried_pass:
        verdict, confidence = Verdict.FLAKY, Confidence.HIGH
        evidence = (
            f"failed {failure.attempts_failed:,} of {failure.attempts_total:,} tries within "
            f"this run, then passed; {untouched}"
        )
    elif known:
        verdict = Verdict.FLAKY
        confidence = Confidence.HIGH if len(same) >= HISTORY_FOR_HIGH else Confidence.MEDIUM
        evidence = f"known flaky: {known}; {untouched}"
    elif facts.reproduced_on_rerun:
        # Failing twice on the same code, and nothing shows why: the least sure "unrelated".
        verdict, confidence = Verdict.UNRELATED, Confidence.LOW
        evidence = f"failed again on rerun of the same commit; {untouched}"
    else:
        verdict, evidence, confidence = Verdict.UNRELATED, untouched, Confidence.MEDIUM
    if caveats and verdict is not Verdict.RELATED:
        confidence = _LOWER.get(confidence, confidence)

    if context.disputed_by:
        who = ", ".join(f"@{login}" for login in context.disputed_by)
        said = f"{who} said this verdict was wrong (/flaky wrong)"
        add(EvidenceKind.FEEDBACK, said)
        if verdict in _CLEARED:
            evidence = f"{said}; the bot had said {verdict}: {evidence}"
            verdict, confidence = Verdict.UNKNOWN, Confidence.LOW

    return Decision(
        failure=failure,
        verdict=verdict,
        evidence=evidence,
        matched_paths=[path for path, _ in found],
        footprint=entries,
        confidence=confidence,
        items=items,
        caveats=caveats,
        rate=context.rate,
        history=context.history,
    )


def _history_text(same: Sequence[PastOccurrence], days: int) -> str | None:
    """ "failed the same way on 2 other PRs by 2 other authors (#12, #15) and 1 run on main
    in the last 30 days"."""
    if not same:
        return None
    prs = sorted({past.pr_number for past in same if past.pr_number is not None})
    branch_runs = [past for past in same if past.pr_number is None]
    parts = []
    if prs:
        named = ", ".join(f"#{number}" for number in prs[:_LISTED])
        more = f", and {len(prs) - _LISTED:,} more" if len(prs) > _LISTED else ""
        authors = len({past.author for past in same if past.pr_number is not None})
        by = "another author" if authors == 1 else f"{authors:,} other authors"
        parts.append(f"{len(prs):,} other {_plural(len(prs), 'PR')} by {by} ({named}{more})")
    if branch_runs:
        branches = sorted({past.branch or "a branch" for past in branch_runs})
        parts.append(
            f"{len(branch_runs):,} {_plural(len(branch_runs), 'run')} on {', '.join(branches)}"
        )
    text = f"failed the same way on {' and '.join(parts)} in the last {days} days"
    reruns = [past.passed_on_rerun for past in same if past.passed_on_rerun is not None]
    if reruns:
        text += f"; passed on rerun {sum(reruns):,} of {len(reruns):,} {_times(len(reruns))}"
    return text


def _touched(found: list[tuple[str, FootprintEntry]]) -> str:
    if len(found) == 1:
        path, entry = found[0]
        if entry.reason in (REASON_IMPORTED, REASON_RUNS):
            return f"{describe_chain(entry)}, which this PR changes"
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
    if entry.reason == REASON_IMPORTED:
        return f"which the test imports at depth {len(entry.chain)}"
    if entry.reason == REASON_RUNS:
        return f"which is {entry.detail or 'a file'} that runs for the test"
    if entry.reason == REASON_PAIR:
        return f"which is the test file's conventional pair ({entry.path})"
    if entry.reason == REASON_DIRECTORY:
        return f"which is in the test's directory {entry.path}"
    if entry.reason == REASON_TESTDATA:
        return f"which is in the test data folder {entry.path}"
    if entry.reason == REASON_TESTS_FOLDER:
        return f"which is in {entry.path}, the folder its __tests__ tests"
    if entry.reason == REASON_GO_PACKAGE:
        return f"which is in the test's Go package ({entry.path})"
    if entry.reason.startswith(REASON_CONFIG):
        return f"which the repo's footprints setting maps to this test ({entry.path})"
    return f"which is in its footprint ({entry.reason})"


def _the_paths(entries: Sequence[FootprintEntry]) -> str:
    return "the 1 path" if len(entries) == 1 else f"the {len(entries):,} paths"


def _list(entries: Sequence[FootprintEntry]) -> str:
    named = ", ".join(entry.path for entry in entries[:_LISTED])
    more = len(entries) - _LISTED
    return f"{named}, and {more:,} more" if more > 0 else named


def _times(count: int) -> str:
    return "time" if count == 1 else "times"


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
