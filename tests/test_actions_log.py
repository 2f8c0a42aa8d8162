"""Cleaning raw GitHub Actions job logs into plain lines."""

from __future__ import annotations

from bot.triage.parsers.actions_log import clean_log, is_workflow_command, workflow_command


def test_timestamp_prefix_is_stripped_only_at_line_start() -> None:
    raw = (
        "2026-07-30T10:55:18.2467887Z cachedir: .pytest_cache\n"
        "2026-07-30T10:55:18.2469937Z \n"
        "2026-07-30T10:55:18.2470097Z started at 2026-07-30T10:55:18.2470097Z here\n"
    )

    assert clean_log(raw) == [
        "cachedir: .pytest_cache",
        "",
        "started at 2026-07-30T10:55:18.2470097Z here",
    ]


def test_lines_without_timestamps_are_kept_as_they_are() -> None:
    assert clean_log("plain\n  indented\n") == ["plain", "  indented"]


def test_ansi_colour_and_cursor_codes_are_removed() -> None:
    raw = (
        "2026-08-04T15:28:04.7585157Z \x1b[32mPASSED\x1b[0m\x1b[32m [ 5%]\x1b[0m\n"
        "\x1b[1m\x1b[31mFAILED\x1b[0m tests/a.py::t\x1b[K\n"
        "\x1b]0;window title\x07title gone\n"
        "\x1b]8;;https://example.org\x1b\\link\x1b]8;;\x1b\\ text\n"
        "\x1b[?25lcursor hidden\x1b[?25h\n"
    )

    assert clean_log(raw) == [
        "PASSED [ 5%]",
        "FAILED tests/a.py::t",
        "title gone",
        "link text",
        "cursor hidden",
    ]


def test_crlf_and_bare_cr_redraws() -> None:
    raw = "first\r\nsecond\r\n 10%\r 55%\r100%\r\nlast\r"

    assert clean_log(raw) == ["first", "second", "100%", "last"]


def test_timestamp_after_crlf_is_stripped() -> None:
    raw = "2026-07-30T10:55:18.2467887Z a\r\n2026-07-30T10:55:18.2467888Z b\r\n"

    assert clean_log(raw) == ["a", "b"]


def test_workflow_commands_stay_recognisable() -> None:
    lines = clean_log(
        "2026-08-04T15:27:21.6146871Z ##[group]Runner Image Provisioner\n"
        "2026-08-04T15:27:21.6151239Z ##[endgroup]\n"
        "2026-08-04T15:28:47.1183501Z ##[error]    raise RuntimeError('Event loop is closed')\n"
        "2026-08-04T15:28:47.1188796Z RuntimeError: Event loop is closed\n"
    )

    assert [is_workflow_command(line) for line in lines] == [True, True, True, False]
    assert workflow_command(lines[0]) == ("group", "Runner Image Provisioner")
    assert workflow_command(lines[1]) == ("endgroup", "")
    assert workflow_command(lines[2]) == ("error", "    raise RuntimeError('Event loop is closed')")
    assert workflow_command(lines[3]) is None


def test_command_marker_mid_line_is_not_a_command() -> None:
    assert not is_workflow_command("echo ##[error]not at the start")


def test_pathological_inputs_are_cleaned_without_backtracking() -> None:
    # Unterminated escapes and near-miss timestamps, repeated over megabytes: each pattern is
    # a single pass, so this finishes as fast as a plain copy would.
    unterminated_osc = "\x1b]" + "a" * 2_000_000
    near_timestamps = "2026-07-30T10:55:18.246" * 100_000
    many_lines = "2026-07-30T10:55:18.2467887Z x\n" * 100_000

    assert clean_log(unterminated_osc) == [""]
    assert clean_log(near_timestamps) == [near_timestamps]
    assert clean_log(many_lines) == ["x"] * 100_000


def test_empty_log() -> None:
    assert clean_log("") == []
