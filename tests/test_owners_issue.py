"""Owners on the tracking issue: how they are written, whom `owners: assign` assigns, which
file each tracked test is matched by."""

from __future__ import annotations

import pytest
from gidgethub import InvalidField

from bot.github.api import _refused_assignees
from bot.handlers.tracking import owners_to_assign, tracked_files
from bot.report import issue as render
from bot.report.models import IssueInput
from bot.triage.models import RunHint
from bot.triage.tracking import TrackingIssue

OWNERS = ["@octocat", "@octo-org/octocats", "docs@example.com"]


def _section(owners: list[str], *, mention: bool) -> str:
    inp = IssueInput(
        key="tests.a.test_x",
        tests=["tests/a.py::test_x"],
        owners=owners,
        owners_file=".github/CODEOWNERS",
        mentioned=owners if mention else [],
    )
    return render.render_section(inp)


def test_owners_are_named_in_code_without_at_by_default() -> None:
    section = _section(OWNERS, mention=False)
    assert (
        "**Owners** (from `.github/CODEOWNERS`): `octocat`, `octo-org/octocats`, "
        "`docs@example.com`." in section
    )
    assert "@octocat" not in section


def test_mention_mode_mentions_users_and_teams_only() -> None:
    section = _section([*OWNERS, "@evil <img src=x>"], mention=True)
    assert "): @octocat, @octo-org/octocats, `docs@example.com`, `evil <img src=x>`." in section


def test_no_owners_no_line() -> None:
    assert "Owners" not in _section([], mention=True)


def test_only_users_are_assigned_at_most_ten() -> None:
    users = [f"@user{n}" for n in range(12)]
    assert owners_to_assign(OWNERS) == ["octocat"]
    assert owners_to_assign(users) == [f"user{n}" for n in range(10)]


def _record(tests: list[str], hint: RunHint | None) -> TrackingIssue:
    return TrackingIssue(
        repo="acme/bus", key="k", issue_number=1, title="t", tests=tests, hint=hint, created_at=0
    )


def test_test_files_come_from_the_hint_or_the_test_id() -> None:
    hint = RunHint(framework="jest", file="web/app.test.ts", name="renders", test_id="renders")
    assert tracked_files(_record(["renders"], hint)) == ["web/app.test.ts"]
    cluster = ["tests/a.py::test_one", "tests/a.py::test_two", "./tests/b.py::test_three"]
    assert tracked_files(_record(cluster, None)) == ["tests/a.py", "tests/b.py"]
    assert tracked_files(_record(["github.com/acme/bus/wire.TestParse"], None)) == []


@pytest.mark.parametrize(
    ("errors", "refused"),
    [
        # GitHub's answer, as harvester/harvester#10448 quotes it.
        (
            [
                {
                    "message": "assignees xxxxx cannot be assigned to this issue",
                    "value": ["xxxxx"],
                    "resource": "Issue",
                    "field": "assignees",
                    "code": "invalid",
                }
            ],
            {"xxxxx"},
        ),
        ([{"resource": "Issue", "field": "assignees", "code": "invalid"}], set()),
        ([{"resource": "Issue", "field": "body", "code": "custom"}], None),
        ("not a list", None),
    ],
)
def test_refused_assignees_are_read_from_the_422(errors: object, refused: set[str] | None) -> None:
    assert _refused_assignees(InvalidField(errors, "Validation Failed")) == refused
