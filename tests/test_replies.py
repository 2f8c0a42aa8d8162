"""Replies to `/flaky` commands: short, and inert whatever users and logs wrote into them."""

from __future__ import annotations

import re

from bot.report import replies
from bot.report.markdown import ZWSP

HEAD = "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"


def test_check_names_and_test_ids_never_mention_link_or_format() -> None:
    hostile = "lint @octocat #12 <b>x</b> `tick`"
    text = "\n".join(
        [
            replies.rerun_results(HEAD, [(hostile, "not rerun: @octocat fixes #12")]),
            replies.nothing_failed(HEAD, hostile, [hostile]),
            replies.unknown_test(hostile, [hostile]),
            replies.feedback_recorded(hostile, new=True),
            replies.help_text(10, 20, f"unknown command /flaky {hostile}"),
        ]
    )
    # Code spans show their text as it is and never ping or link; outside them, it is escaped.
    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
    assert text.count("`` lint @octocat #12 <b>x</b> `tick` ``") == 6
    assert "@octocat" not in prose.replace(f"@{ZWSP}octocat", "")
    assert "#12" not in prose.replace(f"#{ZWSP}12", "")
    assert "<b>" not in prose


def test_rerun_results_name_the_commit_and_each_check() -> None:
    text = replies.rerun_results(
        HEAD, [("lint", "rerun requested (attempt 2)"), ("docs", "not rerun: the PR is closed")]
    )
    assert text.splitlines() == [
        "Failed checks of `3f1c2a9`:",
        "- `lint`: rerun requested (attempt 2)",
        "- `docs`: not rerun: the PR is closed",
    ]


def test_long_lists_are_cut_with_a_count() -> None:
    failed = [f"tests/t.py::test_{n}" for n in range(8)]
    text = replies.unknown_test("tests/t.py::nope", failed)
    assert text.endswith(", and 3 more")
    assert "test_5" not in text


def test_help_names_every_command_and_who_may() -> None:
    text = replies.help_text(3, 20)
    for command in ("rerun", "status", "wrong", "track", "help"):
        assert f"- `/flaky {command}" in text
    assert "at most 3 commands per person and PR in an hour, 20 on all the repo" in text
    assert "!" not in text
