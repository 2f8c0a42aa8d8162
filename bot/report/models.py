"""What the sticky PR comment and the tracking issues are rendered from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.triage.models import Decision, RunHint, RunRate
from bot.triage.quarantine import Quarantine
from bot.triage.run_context import RunContext, UsualDuration


class CheckReport(BaseModel):
    """The triage of one failed check run (one job) and what the bot did about it."""

    check_name: str
    html_url: str
    head_sha: str
    attempt: int = 1  # the bot's count of the check's runs on the commit (RunContext.attempt)
    conclusion: str  # "failure", "timed_out", "success" (a rerun that passed)
    decisions: list[Decision] = Field(default_factory=list)
    rerun_note: str | None = None  # e.g. "rerun requested (attempt 2)", "passed on rerun"
    # Where and how long the job ran, and its check's usual duration on the base branch;
    # None: not recorded (the details then say nothing of the run).
    run_context: RunContext | None = None
    usual: UsualDuration | None = None


class CommentInput(BaseModel):
    repo: str  # "owner/name"
    pr_number: int
    head_sha: str
    checks: list[CheckReport]  # results for the current head
    outdated: list[CheckReport] = Field(default_factory=list)  # results for older heads
    passing_checks: int = 0  # checks that passed on the head (`comment: always` shows them)
    # Unknown keys and invalid values in the repository's flaky.yml, named in the footer.
    config_problems: list[str] = Field(default_factory=list)
    # The settings files that applied (`owner/repo[:path]`, the one that wins first), given
    # only when one is not the repository's own; named in the footer.
    settings_from: list[str] = Field(default_factory=list)
    # This PR's page on the dashboard (every result with its whole evidence); empty: no
    # dashboard to link to.
    dashboard_url: str = ""


class IssueOccurrence(BaseModel):
    """One failure of a tracked test, as the tracking issue lists it."""

    at: float
    test_id: str
    signature: str
    location: str | None = None
    pr_number: int | None = None  # None: a run outside any pull request
    branch: str | None = None
    head_sha: str
    check_name: str
    html_url: str = ""
    attempt: int = 1
    rerun: str | None = None  # "passed on rerun", "failed again on rerun"; None: not rerun
    message: str = ""  # the failure's message, raw: what a suspected cause is read from
    context: RunContext | None = None  # where and how it ran; None: not recorded


class CheckRate(BaseModel):
    check_name: str
    rate: RunRate


class IssueInput(BaseModel):
    """What a tracking issue's bot-owned section is rendered from."""

    key: str  # the tracking key, kept in the hidden block
    tests: list[str]  # one test id, or a cluster's members
    signature: str = ""  # a cluster's shared signature
    occurrences: list[IssueOccurrence] = Field(default_factory=list)
    rates: list[CheckRate] = Field(default_factory=list)  # per check it failed in
    hint: RunHint | None = None
    window_days: int = 30  # how far back the occurrences go
    previous_issue: int | None = None  # the closed issue this one continues
    # The test's page on the dashboard (a cluster's: the repository's); empty: no dashboard.
    dashboard_url: str = ""
    # The test's owners by CODEOWNERS, as written there (`@user`, `@org/team`, an email), and
    # the file they come from; `mentioned`: those to `@`-mention (the others are named without
    # `@`, notifying none).
    owners: list[str] = Field(default_factory=list)
    owners_file: str = ""
    mentioned: list[str] = Field(default_factory=list)
    # Every recorded run of the checks it failed in over the window, passed ones too: what
    # "where failures concentrate" is measured against; `usual`: each check's usual duration
    # on the base branch.
    run_contexts: list[RunContext] = Field(default_factory=list)
    usual: list[UsualDuration] = Field(default_factory=list)
    # The quarantines on of the tests it tracks: a line each, with owner and expiry.
    quarantines: list[Quarantine] = Field(default_factory=list)
