"""Decide, per failed test, whether the pull request could have caused it.

The order of the rules encodes the bot's one hard rule: a failure whose footprint meets the
PR's changes for certain is RELATED whatever else is known, and "unrelated" or "flaky" is
only said when no such meeting is possible. Evidence has a strength
(`FootprintEntry.strength`, see `footprint.py`): strong is what the test's run reads for
certain (the test file, its traceback, what it imports and what runs for it, the Go
package, the repo's `footprints` mappings, and a changed path the failure names whole in its
id or error: `_with_named`); weak is a guess from names and folders (same folder, name pair,
test data folder, the folder a `__tests__` tests). Another test file of the same runner, and
prose, near a walked test are no evidence at all (`importable.near_but_no_evidence`): test
files do not depend on each other unless one imports the other, which the walk sees.

For a test whose imports a language of `bot/triage/imports` reads (a "walked" test), in
order:

1. RELATED: a strong hit (a pass on rerun makes it "flaky, but touches code this PR
   changed", still RELATED). This beats a broken base: a PR touching a test that already
   fails on the base branch is the place to fix it.
2. BROKEN_BASE: the same test failed with the same (non-generic) signature on the PR's base
   commit or in the latest run of the check on the base branch. It beats weak hits and an
   incomplete walk (with medium confidence).
3. UNKNOWN: the footprint is empty; GitHub's file list is cut off; or the walk could not
   rule out a change: it was partial (or not made) and the PR changes a file of the test's
   language that the walk did not reach (in any project of the repository: projects import
   each other by package name), or the PR removes (or renames away) a file of its language
   that an import of the closure could have named at the base commit
   (`imports/removed.py`). The evidence names the paths and what cut the walk.
4. FLAKY: flakiness shown: passed on rerun of the same commit, failed then passed within the
   run (the runner's own retries), or known history (the same signature on other PRs by
   other authors, or on the base branch).
5. UNRELATED: none of that; failed again on rerun is said, and lowers the confidence. A
   failure that reproduces on rerun next to a weak hit is UNKNOWN instead: a data file the
   test reads without importing it may be the cause.

So FLAKY and UNRELATED are said of a walked test only when the walk was complete, or when
every changed file it would read is outside what the test could import (documentation,
another language: `importable.could_import`). Each changed path a rule cleared is named
with the rule ("ruled out: tests/test_b.py is another test file the walk of tests/test_a.py
did not reach"). A pass on rerun does not clear an UNKNOWN: it is "flaky (passed on rerun of
the same commit); this PR's change to X could not be ruled out", never "unrelated".

Weak hits are caveats ("this PR changes src/util.py in the test's folder; the test does not
import it") and lower the confidence one step, like risky paths.

A test of a walked language whose file could not be located (a Go package or JVM class in
no folder of the commit's tree, a failure of a walked framework that names no file) is a
walked test without its walk: a changed file of its language is not ruled out (UNKNOWN,
"could not be located"), never judged by the names of folders that may not exist.

A test no language reads, and every test when imports were not followed at all (`imports`
None: the walk's depth is 0), keep the name-and-folder rules: any hit, weak or strong,
makes the failure RELATED (with medium confidence unless a hit is strong), and no walk is
needed for FLAKY or UNRELATED.

A strong hit on a configuration file that steers the test's imports (`REASON_RESOLVES`: a
tsconfig, a package.json, go.mod, ...) is no hit when the PR changed only parts of it that
cannot steer resolution (`inert`, from `manifests.inert_change`: a package.json's `version`
or `scripts`, a dependency's version in go.mod, Cargo.toml, pyproject.toml or a .csproj); it
is a caveat instead, named with the parts, that lowers the confidence as a risky path does.
Not a pyproject.toml's for a test that may run a linter or a type checker with its settings
(a pytest plugin's lint item, `src/app.py::mypy`; a test named after the tool): every change
counts for it (`manifests.holds_for`; the code a walk reads counts a tool's section in
`manifests.inert_change`).

Afterwards: a `/flaky wrong` on the test (or the whole PR) turns FLAKY or UNRELATED into
UNKNOWN; a mass failure does the same (`decide_extraction`). Risky changed paths (workflows,
lockfiles, build files, shared fixtures) never make a failure related; they are caveats that
lower the confidence one step.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from pydantic import BaseModel, Field

from bot.shared import GITHUB_FILES_LIMIT
from bot.triage.failures import match_key
from bot.triage.footprint import (
    MASS_WALK_FILES,
    REASON_CONFIG,
    REASON_DIRECTORY,
    REASON_GO_PACKAGE,
    REASON_IMPORTED,
    REASON_PAIR,
    REASON_RESOLVES,
    REASON_RUNS,
    REASON_TEST_FILE,
    REASON_TESTDATA,
    REASON_TESTS_FOLDER,
    REASON_TRACEBACK,
    describe_chain,
    footprint,
    locate_test_file,
    matches,
    normalise_path,
    plan_walk,
    walk_key,
)
from bot.triage.history import queue_base
from bot.triage.importable import (
    could_import,
    is_documentation,
    near_but_no_evidence,
    other_test_file,
)
from bot.triage.imports import ImportWalk
from bot.triage.imports.language import Language
from bot.triage.imports.languages import language_of
from bot.triage.imports.locate import failure_language
from bot.triage.imports.removed import could_be_named
from bot.triage.manifests import holds_for
from bot.triage.models import (
    Confidence,
    Decision,
    Evidence,
    EvidenceKind,
    Extraction,
    Failure,
    Footprint,
    FootprintEntry,
    PastOccurrence,
    Reason,
    Strength,
    TestContext,
    Verdict,
    WalkSummary,
)
from bot.triage.risky import risky_changes
from bot.triage.stats import describe_flips, describe_rate

NO_TEST_IDENTIFIED = "no failed test could be identified in the log"
# How an UNKNOWN failure that passed on rerun begins: flaky, never "unrelated to this PR".
FLAKY_NOT_RULED_OUT = "flaky (passed on rerun of the same commit)"
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
    files: AbstractSet[str] | None = None,
    inert: Mapping[str, str] | None = None,
) -> list[Decision]:
    """One Decision per failure, or a single UNKNOWN one when there is no failure.

    ``changed_complete`` is False when the PR has more files than GitHub lists;
    ``passed_on_rerun`` / ``reproduced_on_rerun`` describe a rerun of the same commit (at
    most one of them can be true); ``contexts`` holds what the store knows about each test,
    keyed by ``match_key(test_id)``; ``imports`` the walks of test files' imports, keyed
    by test file (None: imports were not followed at all, and every test keeps the
    name-and-folder rules; a mapping: a test of a walked language missing from it has no
    walk); ``files`` the paths of the commit's file list, None when it was not read (or
    GitHub cut it): they tell which changed files are gone at the commit (removed, or
    renamed away); ``inert`` the changed manifests whose change cannot steer resolution,
    each with the fields that changed (module doc).
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
    # Normalised once: every failure reads every path, and a PR may change thousands.
    changed = tuple(dict.fromkeys(p for raw in changed_paths if (p := normalise_path(raw))))
    risky = risky_changes(changed, rules.risky_paths)
    return [
        _decide_one(
            _Facts(
                failure=failure,
                changed_paths=changed,
                changed_complete=changed_complete,
                passed_on_rerun=passed_on_rerun,
                reproduced_on_rerun=reproduced_on_rerun,
                context=(contexts or {}).get(match_key(failure.test_id), TestContext()),
                rules=rules,
                risky=risky,
                imports=(imports or {}).get(walk_key(failure)),
                walking=imports is not None,
                files=files,
                inert=inert or {},
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
    files: AbstractSet[str] | None = None,
    inert: Mapping[str, str] | None = None,
) -> list[Decision]:
    """`decide` on what one job's extraction found, knowing why a job can fail without a test.

    No failed test but an infrastructure cause: one INFRA decision quoting the line. A mass
    failure (more failed tests than the repo's threshold) is never judged test by test: what
    would have been flaky or unrelated is UNKNOWN; RELATED and BROKEN_BASE stay, since they
    name a cause (the handler follows the imports of up to `MASS_WALK_FILES` of its test
    files, `footprint.mass_walk`, so a regression among them is RELATED; the evidence says
    when that limit left test files out).
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
            files=files,
            inert=inert,
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
    files: AbstractSet[str] | None,
    inert: Mapping[str, str] | None,
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
    runner = extraction.runner.os if extraction.runner is not None else None
    if imports is not None and runner is not None:
        # What the job's runner built: a file only other runners build cannot break it.
        imports = {key: walk.on(runner) for key, walk in imports.items()}
    decisions = decide(
        extraction.failures,
        changed_paths,
        changed_complete=changed_complete,
        passed_on_rerun=passed_on_rerun,
        reproduced_on_rerun=reproduced_on_rerun,
        contexts=contexts,
        rules=rules,
        imports=imports,
        files=files,
        inert=inert,
    )
    if not extraction.mass_failure:
        return decisions
    mass = (
        f"{len(extraction.failures):,} tests failed in this job: a mass failure, "
        "not judged test by test"
    ) + _mass_walk_cut(extraction.failures, changed_paths, changed_complete, imports)
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


def _mass_walk_cut(
    failures: Sequence[Failure],
    changed_paths: Sequence[str],
    changed_complete: bool,
    imports: Mapping[str, ImportWalk] | None,
) -> str:
    """What the budget of a mass failure's walk left out (`footprint.mass_walk`), if any."""
    if imports is None:
        return ""
    wanted = {plan.key for f in failures if (plan := plan_walk(f, changed_paths, changed_complete))}
    if len(wanted) <= MASS_WALK_FILES:
        return ""
    return (
        f"; the imports of {MASS_WALK_FILES:,} of its {len(wanted):,} test files were "
        "followed, the limit in a mass failure"
    )


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


@dataclass(frozen=True)
class _Facts:
    failure: Failure
    changed_paths: Sequence[str]  # normalised, each once
    changed_complete: bool
    passed_on_rerun: bool
    reproduced_on_rerun: bool
    context: TestContext
    rules: Rules
    risky: list[tuple[str, str]]
    imports: ImportWalk | None
    walking: bool  # imports were followed: a walked test missing from them has no walk
    files: AbstractSet[str] | None  # the commit's files, when known
    inert: Mapping[str, str]  # changed manifests that cannot steer resolution: their fields


@dataclass(frozen=True)
class _Reading:
    """What the test's footprint says about the PR's changes (module doc)."""

    test_file: str | None
    entries: list[FootprintEntry]
    hits: list[tuple[str, FootprintEntry]]  # changed paths in the footprint, each once
    related: list[tuple[str, FootprintEntry]]  # the hits that make the failure related
    weak: list[tuple[str, FootprintEntry]]  # the hits that are only caveats
    # Weak hits on files the walk never reads (data, fixtures): the test may read them
    # without importing them, so they are not ruled out.
    unsure: list[tuple[str, FootprintEntry]]
    open_paths: list[str]  # changed paths the walk could not rule out
    # Changed paths a rule clears, by rule ("is ...", "are ..."), in the PR's order.
    ruled_out: dict[tuple[str, str], list[str]]
    walk: ImportWalk | None
    # Configuration that steers the test, changed only in fields that cannot steer it.
    inert: list[tuple[str, FootprintEntry]] = field(default_factory=list)


@dataclass(frozen=True)
class _Call:
    verdict: Verdict
    evidence: str
    confidence: Confidence


def _decide_one(facts: _Facts) -> Decision:
    """Read the footprint against the change, list the facts, apply the first rule that
    holds (module doc), lower the confidence for caveats, then hear `/flaky wrong`."""
    reading = _read(facts)
    risky = [*_inert_caveats(facts, reading), *_risky_caveats(facts, reading)]
    caveats = [*_weak_caveats(reading), *risky]
    items = [
        *_footprint_items(facts, reading),
        *[Evidence(kind=EvidenceKind.RISKY, text=text) for text in risky],
        *_run_items(facts),
        *_history_items(facts),
        *_base_and_rate_items(facts.context),
    ]
    call = next(c for rule in _RULES if (c := rule(facts, reading)) is not None)
    if caveats and call.verdict is not Verdict.RELATED:
        call = replace(call, confidence=_LOWER.get(call.confidence, call.confidence))
    call, items = _heard(facts.context, call, items)
    return Decision(
        failure=facts.failure,
        verdict=call.verdict,
        evidence=call.evidence,
        matched_paths=[path for path, _ in reading.hits],
        footprint=reading.entries,
        confidence=call.confidence,
        items=items,
        caveats=caveats,
        rate=facts.context.rate,
        history=facts.context.history,
        walk=_summary(facts.imports),
    )


def _read(facts: _Facts) -> _Reading:
    """The hits, split by strength, and the changed paths the walk could not rule out. A
    test no walker reads keeps the name-and-folder rules: every hit makes it related."""
    # A walk knows its test file even when the failure names only a class (JVM).
    walked = facts.imports.test_file if facts.imports is not None else None
    test_file = walked or locate_test_file(facts.failure)
    language = language_of(test_file) if test_file is not None else None
    found = _with_named(footprint(facts.failure, facts.rules.footprints, facts.imports), facts)
    hits = matches(found, facts.changed_paths)
    inert = _inert_hits(facts, hits)
    hits = [hit for hit in hits if hit not in inert]
    if (test_file is None or language is None) and facts.walking:
        # A walked language's test that could not be located, or whose file no walker reads
        # (a pytest plugin's YAML typing case, `typesafety/test_x.yml::case`, runs mypy on
        # the package): its walk is missing, never replaced by the names of folders.
        language = failure_language(facts.failure)
    if language is None or not facts.walking:
        return _Reading(test_file, found.entries, hits, hits, [], [], [], {}, facts.imports, inert)
    if facts.imports is not None and test_file is not None:
        # The walk sees a test that imports another test file (a strong hit); without that
        # import, another test file of the runner, or prose, is no evidence at all.
        hits = [hit for hit in hits if _strong(hit) or not near_but_no_evidence(test_file, hit[0])]
    strong = [hit for hit in hits if _strong(hit)]
    weak = [hit for hit in hits if not _strong(hit)]
    unsure = [hit for hit in weak if not hit[0].endswith(language.sources)]
    open_paths = _open_paths(facts, test_file, language, {path for path, _ in strong})
    kept = {path for path, _ in [*hits, *inert, *facts.risky]} | set(open_paths)
    ruled_out = {} if test_file is None else _ruled_out(facts, test_file, language.name, kept)
    return _Reading(
        test_file,
        found.entries,
        hits,
        strong,
        weak,
        unsure,
        open_paths,
        ruled_out,
        facts.imports,
        inert,
    )


def _inert_hits(
    facts: _Facts, hits: list[tuple[str, FootprintEntry]]
) -> list[tuple[str, FootprintEntry]]:
    """The hits on configuration that steers the test, changed only in parts that cannot
    steer it (`facts.inert`), where that holds for this test (`manifests.holds_for`)."""
    return [
        hit
        for hit in hits
        if hit[1].reason == REASON_RESOLVES
        and hit[0] in facts.inert
        and holds_for(hit[0], facts.failure.test_id)
    ]


def _with_named(found: Footprint, facts: _Facts) -> Footprint:
    """The footprint, with each changed path the failure names in its id or error as a
    strong entry (after the other strong ones, which say more): a test that runs a file it
    does not import (`test_docs[docs/a.md]`, "cannot open tests/fixtures/b.json") says so,
    and no rule may rule that file out."""
    text = f"{facts.failure.test_id}\n{facts.failure.message}"
    # A plain substring test first: a PR may change thousands of paths.
    mentioned = [path for path in facts.changed_paths if path in text]
    if not mentioned:
        return found
    strong = [entry for entry in found.entries if entry.strength is Strength.STRONG]
    covered = {path for path, _ in matches(Footprint(test_id="", entries=strong), mentioned)}
    named = [
        FootprintEntry(path=path, reason=Reason.NAMED)
        for path in mentioned
        if path not in covered and re.search(rf"(?<![\w./-]){re.escape(path)}(?![\w/-])", text)
    ]
    if not named:
        return found
    weak = found.entries[len(strong) :]  # footprint() puts strong entries first
    return found.model_copy(update={"entries": [*strong, *named, *weak]})


def _strong(hit: tuple[str, FootprintEntry]) -> bool:
    return hit[1].strength is Strength.STRONG


def _open_paths(
    facts: _Facts, test_file: str | None, language: Language, reached: set[str]
) -> list[str]:
    """Changed files a walk of this test would read and could not rule out: files of the
    test's language that the walk did not reach, when the walk is partial or was not made
    (its test file not located: None; configuration of the language too, and anything
    but prose for a test file no walker reads), or when the file is gone at the commit (removed or
    renamed away: the walk cannot see an import of a file that is not there) and an import
    of the closure could have named it (`removed.could_be_named`), or it is another test
    file of the runner that the failure names (an import of it fails, naming it)."""
    complete = facts.imports is not None and not facts.imports.partial
    gone = _gone(facts)
    # A test file no walker reads (a YAML typing case) may be checked against anything.
    unread = test_file is not None and language_of(test_file) is None
    return [
        path
        for path in facts.changed_paths
        if path not in reached
        and (not complete or (test_file is not None and _gone_unseen(facts, test_file, path, gone)))
        and (
            path.endswith(language.sources)
            or (not complete and (unread or _configures(language, path)))
        )
        and (could_import(test_file, path) if test_file else not is_documentation(path))
    ]


def _configures(language: Language, path: str) -> bool:
    """A configuration file of the language (pyproject.toml, go.mod, a .csproj): without a
    complete walk, which of its settings the test depends on is not known."""
    return bool(language.configs) and path.rpartition("/")[2].endswith(language.configs)


def _gone(facts: _Facts) -> list[str]:
    """The changed paths gone at the commit (removed, or renamed away)."""
    files = facts.files
    return [] if files is None else [path for path in facts.changed_paths if path not in files]


def _gone_unseen(facts: _Facts, test_file: str, path: str, gone: Sequence[str]) -> bool:
    """A changed file gone at the commit that a complete walk cannot rule out."""
    if facts.files is None or path in facts.files or facts.imports is None:
        return False
    if _named_by_failure(facts.failure, path):
        return True
    if other_test_file(test_file, path):
        return False
    language = language_of(test_file)
    return language is None or could_be_named(facts.imports, language, path, gone)


def _named_by_failure(failure: Failure, path: str) -> bool:
    """Whether the failure's error or traceback names the file (an import of it that
    fails): `tests/test_old.py` by `test_old`, `web/cart.test.ts` by `cart.test`."""
    stem = path.rpartition("/")[2].rpartition(".")[0]
    return path in failure.trace_paths or (bool(stem) and stem in failure.message)


def _ruled_out(
    facts: _Facts, test_file: str, language: str, kept: AbstractSet[str]
) -> dict[tuple[str, str], list[str]]:
    """Each changed path no rule kept (a hit, an open path, a risky path), under the rule
    that cleared it (its words for one path and for several)."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in facts.changed_paths:
        if path not in kept:
            found.setdefault(_rule(facts, test_file, language, path), []).append(path)
    return found


def _rule(facts: _Facts, test_file: str, language: str, path: str) -> tuple[str, str]:
    """What clears a changed path nothing kept: ("is documentation, ...", "are ...")."""
    if is_documentation(path):
        return _is_are("documentation, which no test imports")
    if not could_import(test_file, path):
        return _is_are(f"code of another language, which a {language} test does not import")
    if facts.imports is None or facts.imports.partial or facts.imports.skipped:
        return _is_are(f"no {language} code, and not near the test")
    if (left_out := _not_run(facts.imports, path)) is not None:
        return _is_are(left_out)
    gone = facts.files is not None and path not in facts.files
    if not other_test_file(test_file, path) and gone:
        what = f"gone at this commit, and nothing the complete walk of {test_file} reached names it"
        return _is_are(what)
    if not other_test_file(test_file, path):
        return _is_are(f"outside what the complete walk of {test_file} reached")
    if gone:
        what = "gone at this commit, that the failure does not name"
        return f"is another test file, {what}", f"are other test files, {what}"
    what = f"the walk of {test_file} did not reach"
    return f"is another test file {what}", f"are other test files {what}"


def _not_run(walk: ImportWalk, path: str) -> str | None:
    """Why a file the walk reached never ran for the test ("reached only through type
    imports, which vitest erases", "built only on Windows (...), not on this job's Linux
    runner"); None for another."""
    return next((reached.why for reached in walk.not_run if reached.path == path), None)


def _is_are(what: str) -> tuple[str, str]:
    return f"is {what}", f"are {what}"


# --- the facts, as evidence lines ------------------------------------------------------------


def _footprint_items(facts: _Facts, reading: _Reading) -> list[Evidence]:
    """The hits or the untouched footprint, the weak hits, the walk, and what is unknown."""
    items: list[Evidence] = []
    if reading.related:
        items.append(Evidence(kind=EvidenceKind.OVERLAP, text=_touched(reading.related)))
    elif reading.entries:
        items.append(Evidence(kind=EvidenceKind.NO_OVERLAP, text=_untouched(reading)))
    items += [Evidence(kind=EvidenceKind.WEAK, text=text) for text in _weak_caveats(reading)]
    if facts.imports is not None:
        items.append(Evidence(kind=EvidenceKind.IMPORTS, text=facts.imports.describe()))
    items += [Evidence(kind=EvidenceKind.RULED_OUT, text=text) for text in _cleared(reading)]
    unknown = None
    if not reading.entries:
        unknown = _NO_FOOTPRINT
    elif not reading.related and not facts.changed_complete:
        unknown = _cut_off(reading)
    elif not reading.related and reading.open_paths:
        unknown = _not_ruled_out(reading)
    if unknown is not None:
        items.append(Evidence(kind=EvidenceKind.INCOMPLETE, text=unknown))
    return items


def _run_items(facts: _Facts) -> list[Evidence]:
    """What reruns of the same commit and retries inside the run showed."""
    items: list[Evidence] = []
    if facts.passed_on_rerun:
        items.append(Evidence(kind=EvidenceKind.RERUN, text="passed on rerun of the same commit"))
    if facts.reproduced_on_rerun:
        text = "failed again on rerun of the same commit, with the same error"
        items.append(Evidence(kind=EvidenceKind.RERUN, text=text))
    failure = facts.failure
    if failure.attempts_total > 1:
        outcome = "passed in the end" if _retried_pass(failure) else "never passed"
        text = (
            f"failed {failure.attempts_failed:,} of {failure.attempts_total:,} tries within "
            f"this run and {outcome}"
        )
        items.append(Evidence(kind=EvidenceKind.RETRIES, text=text))
    return items


def _history_items(facts: _Facts) -> list[Evidence]:
    items: list[Evidence] = []
    known = _known(facts)
    if known:
        items.append(Evidence(kind=EvidenceKind.HISTORY, text=known))
    other = [past for past in facts.context.history if not past.same_signature]
    if other:
        text = (
            f"failed {len(other):,} other {_times(len(other))} in the last "
            f"{facts.rules.history_days} days with a different error: a different failure, "
            "not counted"
        )
        items.append(Evidence(kind=EvidenceKind.HISTORY, text=text))
    return items


def _base_and_rate_items(context: TestContext) -> list[Evidence]:
    items: list[Evidence] = []
    base = context.base
    if base is not None:
        text = (
            f"failed the same way on {base.where}"
            if base.same_signature
            else f"also failed on {base.where}, with a different error"
        )
        items.append(Evidence(kind=EvidenceKind.BASE, text=text))
    if context.rate is not None:
        items.append(Evidence(kind=EvidenceKind.RATE, text=describe_rate(context.rate)))
        flips = describe_flips(context.rate)
        if flips:
            items.append(Evidence(kind=EvidenceKind.RATE, text=flips))
    return items


def _cleared(reading: _Reading) -> list[str]:
    """ "ruled out: tests/test_b.py is another test file the walk of tests/test_a.py did not
    reach", one line per rule, naming its paths."""
    texts = []
    for (one, many), paths in reading.ruled_out.items():
        named = ", ".join(paths[:_LISTED])
        more = len(paths) - _LISTED
        named += f", and {more:,} more" if more > 0 else ""
        texts.append(f"ruled out: {named} {one if len(paths) == 1 else many}")
    return texts


def _weak_caveats(reading: _Reading) -> list[str]:
    """ "this PR changes src/util.py in the test's folder; the test does not import it"."""
    texts = [
        _weak_caveat(path, entry, reading.walk, (path, entry) in reading.unsure)
        for path, entry in reading.weak
    ]
    more = len(texts) - _LISTED
    if more > 0:
        texts = [*texts[:_LISTED], f"and {more:,} more changed paths near the test"]
    return texts


def _weak_caveat(path: str, entry: FootprintEntry, walk: ImportWalk | None, unsure: bool) -> str:
    if entry.reason == REASON_PAIR:
        where = f", the test file's conventional pair by name ({entry.path})"
    elif entry.reason == REASON_TESTDATA:
        where = f" in the test data folder {entry.path}"
    elif entry.reason == REASON_TESTS_FOLDER:
        where = f" in {entry.path}, the folder its __tests__ tests"
    else:
        where = " in the test's folder"
    if unsure:
        how = "the test may read it without importing it"
    elif walk is None:
        how = "its imports were not followed"
    elif walk.partial:
        how = "the part of its imports that was read does not reach it"
    elif (left_out := _not_run(walk, path)) is not None:
        how = "it is " + left_out
    else:
        how = "the test does not import it"
    return f"this PR changes {path}{where}; {how}"


def _inert_caveats(facts: _Facts, reading: _Reading) -> list[str]:
    """ "this PR changes packages/money/package.json, which configures how the test's
    imports resolve, but only `version`, which cannot change that"."""
    return [
        f"this PR changes {path}, which {REASON_RESOLVES}, but only {facts.inert[path]}, "
        "which cannot change that"
        for path, _ in reading.inert
    ]


def _risky_caveats(facts: _Facts, reading: _Reading) -> list[str]:
    """Risky changed paths outside what makes the failure related (and outside the
    configuration changed only in fields that cannot steer it: said once, above)."""
    related = {path for path, _ in [*reading.related, *reading.inert]}
    return [
        f"this PR changes {path} ({why}), which can break any test"
        for path, why in facts.risky
        if path not in related
    ]


# --- the rules, in order (module doc) --------------------------------------------------------


def _related(facts: _Facts, reading: _Reading) -> _Call | None:
    if not reading.related:
        return None
    evidence = _touched(reading.related)
    if facts.passed_on_rerun:
        evidence = f"passed on rerun, but touches code this PR changed; {evidence}"
    strong = any(_strong(hit) for hit in reading.related)
    certain = strong and not facts.passed_on_rerun and not _broken_base(facts)
    return _Call(Verdict.RELATED, evidence, Confidence.HIGH if certain else Confidence.MEDIUM)


def _base_broken(facts: _Facts, reading: _Reading) -> _Call | None:
    base = facts.context.base
    if base is None or not _broken_base(facts):
        return None
    known = bool(reading.entries) and facts.changed_complete
    reason = _untouched(reading) if known else "not the PR's doing"
    sure = known and not reading.open_paths  # a weak hit lowers it as a caveat
    confidence = Confidence.HIGH if sure else Confidence.MEDIUM
    return _Call(Verdict.BROKEN_BASE, f"failed the same way on {base.where}; {reason}", confidence)


def _cannot_tell(facts: _Facts, reading: _Reading) -> _Call | None:
    """No footprint, a cut-off list of changes, or a change the walk could not rule out. A
    pass on rerun shows the test is flaky, not that the PR's change is not the cause: still
    UNKNOWN, never "unrelated" (module doc)."""
    if not reading.entries:
        reason = _NO_FOOTPRINT
    elif not facts.changed_complete:
        reason = _cut_off(reading)
    elif reading.open_paths:
        reason = _not_ruled_out(reading)
    else:
        return None
    if facts.passed_on_rerun:
        reason = f"{FLAKY_NOT_RULED_OUT}; {_not_ruled_out_after_pass(reading, reason)}"
    return _Call(Verdict.UNKNOWN, reason, Confidence.LOW)


def _not_ruled_out_after_pass(reading: _Reading, reason: str) -> str:
    """ "this PR's change to src/b.py could not be ruled out: the walk ... is partial"."""
    if not reading.entries or not reading.open_paths:
        return reason
    return f"this PR's change to {_named_open(reading)} could not be ruled out: {_unseen(reading)}"


def _flaky(facts: _Facts, reading: _Reading) -> _Call | None:
    failure, untouched = facts.failure, _untouched(reading)
    if facts.passed_on_rerun:
        evidence = f"passed on rerun of the same commit; {untouched}"
        return _Call(Verdict.FLAKY, evidence, Confidence.HIGH)
    if _retried_pass(failure):
        evidence = (
            f"failed {failure.attempts_failed:,} of {failure.attempts_total:,} tries within "
            f"this run, then passed; {untouched}"
        )
        return _Call(Verdict.FLAKY, evidence, Confidence.HIGH)
    known = _known(facts)
    if known:
        same = sum(past.same_signature for past in facts.context.history)
        confidence = Confidence.HIGH if same >= HISTORY_FOR_HIGH else Confidence.MEDIUM
        return _Call(Verdict.FLAKY, f"known flaky: {known}; {untouched}", confidence)
    return None


def _unrelated(facts: _Facts, reading: _Reading) -> _Call:
    untouched = _untouched(reading)
    if reading.unsure:
        # No flakiness shown, next to a file the test may read: not ruled out.
        evidence = (
            f"{_weak_caveats(reading)[0]}: weak evidence, but a change the test reads "
            "cannot be ruled out, and no flakiness is shown"
        )
        return _Call(Verdict.UNKNOWN, evidence, Confidence.LOW)
    if facts.reproduced_on_rerun:
        # Failing twice on the same code, and nothing shows why: the least sure "unrelated".
        evidence = f"failed again on rerun of the same commit; {untouched}"
        return _Call(Verdict.UNRELATED, evidence, Confidence.LOW)
    return _Call(Verdict.UNRELATED, untouched, Confidence.MEDIUM)


_RULES: tuple[Callable[[_Facts, _Reading], _Call | None], ...] = (
    _related,
    _base_broken,
    _cannot_tell,
    _flaky,
    _unrelated,
)


def _heard(
    context: TestContext, call: _Call, items: list[Evidence]
) -> tuple[_Call, list[Evidence]]:
    """A `/flaky wrong` on the test turns FLAKY or UNRELATED into UNKNOWN."""
    if not context.disputed_by:
        return call, items
    who = ", ".join(f"@{login}" for login in context.disputed_by)
    said = f"{who} said this verdict was wrong (/flaky wrong)"
    items = [*items, Evidence(kind=EvidenceKind.FEEDBACK, text=said)]
    if call.verdict in _CLEARED:
        evidence = f"{said}; the bot had said {call.verdict}: {call.evidence}"
        call = _Call(Verdict.UNKNOWN, evidence, Confidence.LOW)
    return call, items


# --- small facts and texts -------------------------------------------------------------------

_NO_FOOTPRINT = (
    "no path this test depends on is known (no test file or traceback paths), "
    "so a change to it cannot be ruled out"
)


def _broken_base(facts: _Facts) -> bool:
    return facts.context.base is not None and facts.context.base.same_signature


def _retried_pass(failure: Failure) -> bool:
    return failure.attempts_failed < failure.attempts_total


def _known(facts: _Facts) -> str | None:
    same = [past for past in facts.context.history if past.same_signature]
    return _history_text(same, facts.rules.history_days)


def _untouched(reading: _Reading) -> str:
    if not reading.weak:
        entries = reading.entries
        return f"this PR changes none of {_the_paths(entries)} it depends on: {_list(entries)}"
    strong = [entry for entry in reading.entries if entry.strength is Strength.STRONG]
    return f"this PR changes none of {_the_paths(strong)} it reads for certain: {_list(strong)}"


def _cut_off(reading: _Reading) -> str:
    return (
        f"this PR changes more files than GitHub lists ({GITHUB_FILES_LIMIT:,}), so a change "
        f"to {_the_paths(reading.entries)} it depends on cannot be ruled out"
    )


def _not_ruled_out(reading: _Reading) -> str:
    """ "the walk of tests/test_a.py's imports is partial (the limit of 100 files read was
    reached), so a change to src/b.py cannot be ruled out"."""
    return f"{_unseen(reading)}, so a change to {_named_open(reading)} cannot be ruled out"


def _unseen(reading: _Reading) -> str:
    """Why the walk cannot see the open paths."""
    walk = reading.walk
    if reading.test_file is None:
        return "its test file could not be located in the commit's tree"
    if walk is None:
        return f"the imports of {reading.test_file} were not followed"
    if not walk.partial and walk.unplaced is not None:
        return (
            f"an import the walk of {reading.test_file} reached may have named a file this PR "
            "removes or renames away"
        )
    if not walk.partial:
        return (
            f"the walk of {reading.test_file}'s imports cannot see an import of a file this "
            "PR removes or renames away"
        )
    return f"the walk of {reading.test_file}'s imports is partial ({'; '.join(walk.cut[:_LISTED])})"


def _named_open(reading: _Reading) -> str:
    named = ", ".join(reading.open_paths[:_LISTED])
    more = len(reading.open_paths) - _LISTED
    return named + (f", and {more:,} more" if more > 0 else "")


def _summary(walk: ImportWalk | None) -> WalkSummary | None:
    if walk is None:
        return None
    return WalkSummary(
        test_file=walk.test_file,
        language=walk.language,
        files_read=len(walk.read),
        files_found=len(walk.reached),
        depth=walk.depth,
        cut=list(walk.cut),
    )


def _history_text(same: Sequence[PastOccurrence], days: int) -> str | None:
    """ "failed the same way on 2 other PRs by 2 other authors (#12, #15) and 1 run on main
    in the last 30 days"; runs of the base branch's merge queue add "and in main's merge queue
    (1 run)"."""
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
    on_branches = [past for past in branch_runs if queue_base(past.branch) is None]
    if on_branches:
        branches = sorted({past.branch or "a branch" for past in on_branches})
        parts.append(
            f"{len(on_branches):,} {_plural(len(on_branches), 'run')} on {', '.join(branches)}"
        )
    where = [f"on {' and '.join(parts)}"] if parts else []
    queued = Counter(base for past in branch_runs if (base := queue_base(past.branch)))
    where += [
        f"in {base}'s merge queue ({count:,} {_plural(count, 'run')})"
        for base, count in sorted(queued.items())
    ]
    text = f"failed the same way {' and '.join(where)} in the last {days} days"
    reruns = [past.passed_on_rerun for past in same if past.passed_on_rerun is not None]
    if reruns:
        text += f"; passed on rerun {sum(reruns):,} of {len(reruns):,} {_times(len(reruns))}"
    return text


def _touched(found: list[tuple[str, FootprintEntry]]) -> str:
    if len(found) == 1:
        path, entry = found[0]
        if entry.reason in (REASON_IMPORTED, REASON_RUNS):
            depth = f" (depth {len(entry.chain)})" if len(entry.chain) > 1 else ""
            return f"{describe_chain(entry)}, which this PR changes{depth}"
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
    if entry.reason == Reason.NAMED:
        return "which the failure names (in its test id or error)"
    if entry.reason == REASON_IMPORTED:
        return f"which the test imports at depth {len(entry.chain)}"
    if entry.reason == REASON_RUNS:
        return f"which is {entry.detail or 'a file'} that runs for the test"
    if entry.reason == REASON_RESOLVES:
        last = entry.chain[-1] if entry.chain else None
        step = f" ({last.importer} imports {last.module})" if last else ""
        return f"which {REASON_RESOLVES}{step}"
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
