"""Splitting SQLite migrations into statements where SQLite says they end."""

from __future__ import annotations

import pytest

from bot.store.sqlite import _bound, _statements


def test_a_semicolon_in_a_comment_or_a_string_does_not_end_a_statement() -> None:
    script = (
        "-- reruns; counted per PR\n"
        "CREATE TABLE x (a TEXT DEFAULT 'one; two');\n"
        "-- and an index\n"
        "CREATE INDEX x_a ON x (a);\n"
        "-- trailing comment;\n"
    )

    assert _statements(script) == [
        "-- reruns; counted per PR\nCREATE TABLE x (a TEXT DEFAULT 'one; two');\n",
        "-- and an index\nCREATE INDEX x_a ON x (a);\n",
    ]


def test_an_unfinished_statement_is_an_error_not_silently_dropped() -> None:
    with pytest.raises(ValueError, match="incomplete statement"):
        _statements("CREATE TABLE x (a TEXT);\nCREATE INDEX x_a ON x (a)\n")


def test_numbered_parameters_become_plain_ones_in_their_order() -> None:
    # Python 3.12.0-3.12.3 warned on every statement with SQLite's `?1` given a sequence.
    sql, args = _bound("UPDATE t SET a = $2, b = $1 WHERE c = $2 OR d = $3", ("x", "y", "z"))

    assert sql == "UPDATE t SET a = ?, b = ? WHERE c = ? OR d = ?"
    assert args == ("y", "x", "y", "z")
