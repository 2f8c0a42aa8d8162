"""Error-text signatures: equal for the same failure across runs, distinct otherwise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.signature import MAX_LENGTH, signature


@pytest.mark.parametrize(
    ("run_a", "run_b"),
    [
        (
            "AssertionError: <app.models.Order object at 0x7f3a2b1c9d90> is not None",
            "AssertionError: <app.models.Order object at 0x7f11aa02c4f0> is not None",
        ),
        (
            "KeyError: 'job-123e4567-e89b-12d3-a456-426614174000'",
            "KeyError: 'job-9b2f1c3e-0d4a-4f5e-8c6b-7a8d9e0f1a2b'",
        ),
        (
            "RuntimeError: Process 0 terminated or timed out after 310.0115718841553 seconds",
            "RuntimeError: Process 0 terminated or timed out after 305.2209811 seconds",
        ),
        (
            "FileNotFoundError: /tmp/pytest-of-runner/pytest-3/test_export0/out.csv",
            "FileNotFoundError: /tmp/pytest-of-runner/pytest-17/test_export0/out.csv",
        ),
        (
            "ConnectionRefusedError: connect to localhost:41873 failed",
            "ConnectionRefusedError: connect to localhost:39011 failed",
        ),
        (
            "TimeoutError: deadline 2026-07-30T10:55:18.246Z passed at 10:55:19.01",
            "TimeoutError: deadline 2026-07-31T08:01:02Z passed at 08:01:03.77",
        ),
        (
            "ValueError: pid 80709 exited",
            "ValueError: pid 80710 exited",
        ),
        (
            "Failed: DID NOT RAISE, took 1.52s",
            "Failed: DID NOT RAISE, took 980ms",
        ),
        (
            "LookupError: no blob 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "LookupError: no blob 1a410efbd13591db07496601ebc7a059dd55cfe9",
        ),
    ],
)
def test_same_failure_in_two_runs_has_one_signature(run_a: str, run_b: str) -> None:
    assert signature(run_a) == signature(run_b)
    assert signature(run_a) != ""


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("AssertionError: assert 3 == 4", "AssertionError: assert 3 == 5"),
        ("KeyError: 'user'", "KeyError: 'order'"),
        ("ValueError: bad input", "TypeError: bad input"),
    ],
)
def test_different_failures_keep_different_signatures(one: str, other: str) -> None:
    assert signature(one) != signature(other)


def test_placeholders_name_what_was_replaced() -> None:
    text = (
        "ConnectionError: <Client object at 0xdeadbeef> on 127.0.0.1:5432 "
        "id 123e4567-e89b-12d3-a456-426614174000 at 2026-07-30T10:55:18Z in /tmp/x/y"
    )

    assert signature(text) == (
        "ConnectionError: <Client object> on 127.0.0.1:<port> id <uuid> at <time> in <tmp>"
    )


def test_only_the_first_lines_count() -> None:
    first = "AssertionError: assert 1 == 2\n +  where 1 = f()\n +  and 2 = g(0x1)\nnoise A"
    second = "AssertionError: assert 1 == 2\n +  where 1 = f()\n +  and 2 = g(0x1)\nnoise B"

    assert signature(first) == signature(second)
    assert signature(first) == "AssertionError: assert 1 == 2 | + where 1 = f()"


def test_length_is_bounded() -> None:
    assert len(signature("ValueError: " + "word " * 1000)) == MAX_LENGTH


def test_empty_message_gives_empty_signature() -> None:
    assert signature("") == ""
    assert signature("\n  \n") == ""


@given(st.text(max_size=3000))
def test_any_text_gives_one_bounded_line(text: str) -> None:
    result = signature(text)

    assert len(result) <= MAX_LENGTH
    assert "\n" not in result
