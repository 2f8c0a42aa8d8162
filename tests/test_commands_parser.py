"""Reading `/flaky` commands out of comment markdown: what counts and what never does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.commands import Command, Name, parse_commands


def names(body: str) -> list[str]:
    return [str(command.name) for command in parse_commands(body)]


def test_one_command_per_line_at_the_start_of_a_line_in_any_case() -> None:
    body = "Thanks.\n/flaky rerun\n  /FLAKY Status\nplease /flaky help\n/Flaky HELP"
    assert names(body) == ["rerun", "status", "help"]


def test_arguments_keep_spaces_and_lose_one_pair_of_quotes() -> None:
    assert parse_commands("/flaky rerun tests (3.12)") == [
        Command(name=Name.RERUN, argument="tests (3.12)")
    ]
    assert parse_commands("/flaky wrong `tests/test_a.py::test_x[a b]`") == [
        Command(name=Name.WRONG, argument="tests/test_a.py::test_x[a b]")
    ]
    assert parse_commands('/flaky rerun "lint"  ') == [Command(name=Name.RERUN, argument="lint")]
    assert parse_commands("/flaky wrong") == [Command(name=Name.WRONG)]
    assert parse_commands("/flaky status of everything") == [Command(name=Name.STATUS)]


def test_track_needs_an_issue_number_and_a_test_id() -> None:
    assert parse_commands("/flaky track #12 tests/test_a.py::test_x") == [
        Command(name=Name.TRACK, issue=12, argument="tests/test_a.py::test_x")
    ]
    assert parse_commands("/flaky track 12 `pkg.Suite/TestX`") == [
        Command(name=Name.TRACK, issue=12, argument="pkg.Suite/TestX")
    ]
    for incomplete in ("/flaky track", "/flaky track #12", "/flaky track tests/a.py #12"):
        (command,) = parse_commands(incomplete)
        assert command.name is Name.HELP
        assert command.problem == "usage: /flaky track #ISSUE TEST-ID"


def test_unknown_or_missing_subcommands_get_the_help() -> None:
    assert parse_commands("/flaky retry now") == [
        Command(name=Name.HELP, problem="unknown command /flaky retry")
    ]
    assert parse_commands("/flaky") == [Command(name=Name.HELP)]
    assert parse_commands("/flakyness is bad\n/flaky-rerun") == []


def test_quoted_lines_are_never_commands() -> None:
    body = "> /flaky rerun\n>/flaky status\n   > > /flaky help\n> said:\n> \n/flaky wrong"
    assert names(body) == ["wrong"]


def test_fenced_code_is_never_a_command_until_the_fence_closes() -> None:
    body = "\n".join(
        [
            "```",
            "/flaky rerun",
            "``",  # too short to close
            "/flaky status",
            "````",  # longer: closes
            "/flaky help",
            "~~~ text",
            "/flaky rerun",
            "```",  # the other kind: does not close
            "~~~",
            "/flaky wrong",
            "``` not a fence ` because of the backtick",
            "/flaky status",
        ]
    )
    assert names(body) == ["help", "wrong", "status"]


def test_an_unclosed_fence_hides_everything_after_it() -> None:
    assert names("/flaky help\n```python\n/flaky rerun\n") == ["help"]


def test_indented_code_is_never_a_command() -> None:
    assert names("text\n\n    /flaky rerun\n\t/flaky status\n   /flaky help") == ["help"]


def test_windows_line_ends() -> None:
    assert names("hi\r\n/flaky status\r\n/flaky help\r") == ["status", "help"]


@given(st.text())
def test_a_quoted_comment_never_yields_a_command(text: str) -> None:
    quoted = "\n".join("> " + line for line in text.splitlines())
    assert parse_commands(quoted) == []


@given(st.text().filter(lambda text: "~~~" not in text))
def test_a_fenced_comment_never_yields_a_command(text: str) -> None:
    assert parse_commands(f"~~~\n{text}\n~~~\n") == []


@pytest.mark.parametrize(
    "line", ["/flaky rerun", "/flaky status", "/flaky help", "/flaky wrong", "/flaky track #1 t"]
)
def test_every_subcommand_parses_to_itself(line: str) -> None:
    (command,) = parse_commands(line)
    assert str(command.name) == line.split()[1]
