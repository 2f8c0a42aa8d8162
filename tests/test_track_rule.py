"""Which issues `/flaky track` may adopt, and at whose word: the rule, case by case."""

from __future__ import annotations

from typing import Any

import pytest

from bot.github.api import issue_from
from bot.handlers.tracking import ADOPTABLE_TEXT, NotAdopted, adoption_refusal
from bot.report.issue import START

KEY = "tests.bus.test_core.test_publish"
OTHER = "tests.bus.test_core.test_other"
SECTION = (
    f'{START}{{"key": "{OTHER}", "tests": ["tests/bus/test_core.py::test_other"], "v": 1}} -->'
    "\n\ntally\n\n<!-- /flaky-triage:tracking-issue -->"
)


def issue(**fields: Any) -> dict[str, Any]:
    """An open issue as GitHub's `GET /repos/{owner}/{repo}/issues/{number}` shows it."""
    return {"number": 3, "state": "open", "locked": False, "body": "People's notes.", **fields}


N = NotAdopted
PULL = {"url": "https://api.github.com/repos/acme/bus/pulls/3", "merged_at": None}
CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any], NotAdopted | None]] = [
    ("an open issue, by a writer", issue(), {}, None),
    ("an issue with no body", issue(body=None), {}, None),
    ("the same test again", issue(), {"tracked_in": 3, "stored_key": KEY}, None),
    ("its own section, store forgotten", issue(body=SECTION.replace(OTHER, KEY)), {}, None),
    ("text just short enough", issue(body="x" * ADOPTABLE_TEXT), {}, None),
    ("the PR's author, no write access", issue(), {"may_write": False}, N.NOT_A_WRITER),
    ("a non-writer, even of a missing issue", None, {"may_write": False}, N.NOT_A_WRITER),
    ("no such issue", None, {}, N.MISSING),
    ("a pull request", issue(pull_request=PULL), {}, N.PULL_REQUEST),
    ("a locked issue", issue(locked=True), {}, N.LOCKED),
    ("a locked pull request", issue(locked=True, pull_request=PULL), {}, N.PULL_REQUEST),
    ("a closed issue", issue(state="closed"), {}, N.CLOSED),
    ("closed as not planned", issue(state="closed", state_reason="not_planned"), {}, N.CLOSED),
    ("the test tracked in #9", issue(), {"tracked_in": 9}, N.TEST_TRACKED_ELSEWHERE),
    ("the store tracks another here", issue(), {"stored_key": OTHER}, N.TRACKS_ANOTHER_TEST),
    ("its section names another test", issue(body=SECTION), {}, N.TRACKS_ANOTHER_TEST),
    ("text one too long", issue(body="x" * (ADOPTABLE_TEXT + 1)), {}, N.TEXT_TOO_LONG),
    (
        "the bot's section is not people's text",
        issue(body=SECTION.replace(OTHER, KEY).replace("tally", "t" * 9000) + "x" * ADOPTABLE_TEXT),
        {},
        None,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("found", "facts", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_who_may_adopt_which_issue(
    found: dict[str, Any] | None, facts: dict[str, Any], expected: NotAdopted | None
) -> None:
    given: dict[str, Any] = {"may_write": True, "tracked_in": None, "stored_key": None, **facts}

    issue = issue_from(found) if found is not None else None

    assert adoption_refusal(issue, KEY, **given) is expected
