"""The bot's short replies to `/flaky` commands (pure).

Each function returns one line or a few; the handler joins a comment's lines into one reply.
Everything a user or a log wrote (check names, test ids, GitHub's words) goes through
`bot/report/markdown.py`, so a reply never formats, links or mentions anyone.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.report.markdown import code_span, escape_inline, shorten
from bot.triage.models import RunRate
from bot.triage.stats import describe_rate

_SHORT_SHA = 7
_NAME_LIMIT = 120
_LISTED = 5


def help_text(
    commands_per_hour: int, commands_per_repo_hour: int, problem: str | None = None
) -> str:
    lines = [f"{escape_inline(problem)}." if problem else ""]
    lines += [
        "`/flaky` commands, one per line at the start of a line:",
        "- `/flaky rerun [check]`: rerun the failed GitHub Actions jobs of the PR's head commit "
        "(all of them, or the named check), within the repository's rerun limits",
        "- `/flaky status`: triage the head commit's failed checks again and refresh the "
        "triage comment",
        "- `/flaky wrong [test id]`: the verdict on this test (or on the whole PR) is wrong; "
        "recorded and counted, and the test is no longer called unrelated on this PR",
        "- `/flaky track #N <test id>`: make open issue N the tracking issue of this test "
        "(needs write access: it retitles the issue and adds the bot's section to it)",
        "- `/flaky quarantine [test id] [7d | 2w | 2026-12-31]`: quarantine the test (on its "
        "tracking issue: the issue's tests) until then, 14 days by default; its failures stop "
        "failing the flaky-triage check unless related to the PR. Again: renews it. Needs "
        "write access and `quarantine:` in the repository's settings",
        "- `/flaky unquarantine [test id]`: end the quarantine (needs write access)",
        "- `/flaky help`: this text",
        "",
        "Who may: the PR's author and anyone with write, maintain or admin access to the "
        f"repository, at most {commands_per_hour} commands per person and PR in an hour, "
        f"{commands_per_repo_hour} on all the repository's PRs together.",
    ]
    return "\n".join(lines).strip("\n")


def not_permitted() -> str:
    return (
        "Not done: `/flaky` commands are for the PR's author and people with write access "
        "to the repository."
    )


def rate_limited(commands_per_hour: int) -> str:
    return (
        f"Not done: one person may give {commands_per_hour} `/flaky` comments on a PR in an "
        "hour; try again later."
    )


def rate_limited_in_repo(commands_per_repo_hour: int) -> str:
    return (
        f"Not done: one person may give {commands_per_repo_hour} `/flaky` comments on this "
        "repository's PRs in an hour; try again later."
    )


def too_many(read: int, given: int) -> str:
    return f"Only the first {read} of the {given} commands in this comment were read."


def rerun_results(head_sha: str, results: Sequence[tuple[str, str]]) -> str:
    """One line per failed check of the head: rerun, or why not."""
    lines = [f"Failed checks of {_sha(head_sha)}:"]
    lines += [f"- {_name(check)}: {escape_inline(note)}" for check, note in results]
    return "\n".join(lines)


def nothing_failed(head_sha: str, check: str | None, failed: Sequence[str] = ()) -> str:
    if check is None:
        return f"No check of {_sha(head_sha)} has failed: nothing to rerun."
    others = f" Failed checks: {_names(failed)}." if failed else ""
    return f"No failed check of {_sha(head_sha)} is named {_name(check)}.{others}"


def nothing_to_triage(head_sha: str) -> str:
    return f"No check of {_sha(head_sha)} has failed: nothing to triage."


def feedback_recorded(test_id: str | None, *, new: bool) -> str:
    subject = "this PR's verdicts" if test_id is None else f"the verdict on {_test(test_id)}"
    if not new:
        return f"Already recorded: you dispute {subject}."
    scope = "its tests are" if test_id is None else "it is"
    return f"Recorded: you dispute {subject}; {scope} no longer called unrelated on this PR."


def unknown_test(test_id: str, failed: Sequence[str]) -> str:
    known = f" Failed tests: {', '.join(_test(t) for t in failed[:_LISTED])}" if failed else ""
    more = f", and {len(failed) - _LISTED} more" if len(failed) > _LISTED else ""
    return f"Not recorded: {_test(test_id)} has not failed on this PR.{known}{more}"


def quarantine_off() -> str:
    return (
        "Not done: quarantine is off in this repository (`quarantine:` in "
        "`.github/flaky.yml` turns it on)."
    )


def quarantine_not_permitted() -> str:
    return "Not done: quarantining a test needs write access to the repository."


def quarantine_needs_test(command: str) -> str:
    return (
        f"Not done: on a pull request, name the test: `/flaky {command} <test id>` (on its "
        "tracking issue, the issue's tests are meant)."
    )


def not_tracked(test_id: str) -> str:
    return (
        f"Not done: {_test(test_id)} has no tracking issue, where a quarantine is shown. The "
        "bot opens one once the test's flakiness is shown; `/flaky track #N <test id>` "
        "adopts an existing issue."
    )


def not_in_issue(test_id: str, issue: int) -> str:
    return f"Not done: issue #{issue} does not track {_test(test_id)}."


def bad_expiry(why: str) -> str:
    return f"Not done: {escape_inline(why)}."


def quarantined(tests: Sequence[str], until: str, owner: str, issue: int, *, renewed: bool) -> str:
    what = "Renewed the quarantine of" if renewed else "Quarantined"
    return (
        f"{what} {_tests(tests)} until {until} (owner {code_span(owner)}, tracking issue "
        f"#{issue}): a failure of it no longer fails the flaky-triage check, unless it is "
        "related to the pull request."
    )


def unquarantined(tests: Sequence[str], issue: int | None) -> str:
    where = f" (tracking issue #{issue})" if issue else ""
    if not tests:
        return f"Nothing to end: no test{where} is quarantined."
    return f"Ended the quarantine of {_tests(tests)}{where}: its failures fail the check again."


def quarantine_ending(test_id: str, until: str, owner: str, *, mention: bool) -> str:
    """The reminder on a tracking issue that a quarantine ends soon; `mention`: the owner is
    @-mentioned (notified), else named in code."""
    who = f"@{owner.lstrip('@')}" if mention else code_span(owner)
    return (
        f"The quarantine of {_test(test_id)} ends on {until}. {who}: `/flaky quarantine` on this "
        "issue renews it (with an expiry such as `7d`); once it ends, its failures fail the "
        "flaky-triage check again."
    )


def quarantine_week(
    test_id: str, rates: Sequence[tuple[str, RunRate]], prs: Sequence[int], until: str
) -> str:
    """A quarantined test's week, on its tracking issue: still failing, and how often."""
    failed = [(check, rate) for check, rate in rates if rate.failures]
    if not failed:
        ran = sum(rate.runs for _, rate in rates)
        return (
            f"Quarantine of {_test(test_id)}, the last 7 days: no failure in {ran:,} recorded "
            f"run{'s' if ran != 1 else ''}. It ends on {until}; `/flaky unquarantine` ends it now "
            "if the test is fixed."
        )
    where = "; ".join(f"{describe_rate(rate)} of {_name(check)}" for check, rate in failed)
    hit = f", on {', '.join(f'#{n}' for n in prs[:_LISTED])}" if prs else ""
    return (
        f"Quarantine of {_test(test_id)}, the last 7 days: still failing: {where}{hit}. It ends "
        f"on {until}; `/flaky quarantine` on this issue renews it."
    )


def not_on_issue(command: str) -> str:
    return f"Not done: `/flaky {escape_inline(command)}` works on pull requests."


def _tests(tests: Sequence[str]) -> str:
    shown = ", ".join(_test(t) for t in tests[:_LISTED])
    more = len(tests) - _LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def _sha(sha: str) -> str:
    return code_span(sha[:_SHORT_SHA])


def _name(name: str) -> str:
    return code_span(shorten(name, _NAME_LIMIT))


def _names(names: Sequence[str]) -> str:
    listed = ", ".join(_name(n) for n in names[:_LISTED])
    return listed + (f", and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _test(test_id: str) -> str:
    return code_span(shorten(test_id, _NAME_LIMIT * 2))
