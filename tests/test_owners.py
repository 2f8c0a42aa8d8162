"""CODEOWNERS read as GitHub documents it (bot/triage/owners.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.triage import owners
from bot.triage.owners import OwnerKind

EXAMPLE = (Path(__file__).parent / "fixtures" / "codeowners" / "github-docs-example").read_text()


def _names(text: str, path: str) -> list[str]:
    return [o.text for o in owners.parse(text, "CODEOWNERS").owners(path)]


# What the comments of GitHub's example file say, read through the whole file (the last
# matching line wins, so some files end with a later line's owners than the comment's).
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", ["@global-owner1", "@global-owner2"]),
        ("src/app.js", ["@js-owner"]),  # the inline comment is not an owner
        ("cmd/main.go", ["docs@example.com"]),
        ("notes.txt", ["@octo-org/octocats"]),
        ("build/logs/today.log", ["@octocat"]),  # /build/logs/, then **/logs wins
        ("docs/getting-started.md", ["@doctocat"]),  # docs/*, then /docs/ wins
        ("docs/build-app/troubleshooting.md", ["@doctocat"]),
        ("scripts/deploy.sh", ["@doctocat", "@octocat"]),
        ("deeply/nested/logs/run.txt", ["@octocat"]),  # *.txt, then **/logs wins
        ("apps/web/index.html", ["@octocat"]),
        ("apps/github/server.rb", ["@doctocat"]),
        ("lib/apps/github/x.py", ["@octocat"]),  # apps/ anywhere; /apps/github is rooted
        ("src/apps.js", ["@js-owner"]),  # apps/ names a directory, not a file
        ("SRC/APP.JS", ["@global-owner1", "@global-owner2"]),  # case sensitive
    ],
)
def test_githubs_example_file(path: str, expected: list[str]) -> None:
    assert _names(EXAMPLE, path) == expected
    assert owners.parse(EXAMPLE, "CODEOWNERS").problems == ()


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        # `docs/*` owns files directly in docs/, not nested ones (GitHub's exception).
        ("docs/*  docs@example.com", "docs/getting-started.md", ["docs@example.com"]),
        ("docs/*  docs@example.com", "docs/build-app/troubleshooting.md", []),
        ("docs/*  docs@example.com", "src/docs/a.md", []),  # an inner slash anchors
        # A pattern without owners leaves what it matches unowned.
        ("/apps/ @octocat\n/apps/github", "apps/github/main.go", []),
        ("/apps/ @octocat\n/apps/github", "apps/gitlab/main.go", ["@octocat"]),
        ("**/logs @octocat", "logs/a", ["@octocat"]),
        ("**/logs @octocat", "a/b/logs/c/d", ["@octocat"]),
        ("/build/logs/ @doctocat", "src/build/logs/a", []),
        ("a/**/b.py @x", "a/b.py", ["@x"]),
        ("a/**/b.py @x", "a/c/d/b.py", ["@x"]),
        ("test_?.py @x", "tests/test_1.py", ["@x"]),
        ("test_?.py @x", "tests/test_12.py", []),
        ("tests/unit @x", "tests/unit/test_a.py", ["@x"]),  # a directory without slash
        ("* @a\n\n   # indented comment\n*.py @b", "x/y.py", ["@b"]),
        ("", "x.py", []),
    ],
)
def test_patterns(text: str, path: str, expected: list[str]) -> None:
    assert _names(text, path) == expected


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("!tests/ @a", "'!tests/' uses `!` negation, which CODEOWNERS lacks"),
        ("test_[ab].py @a", "'test_[ab].py' uses `[ ]` ranges, which CODEOWNERS lacks"),
        ("\\#notes @a", "'\\\\#notes' uses escapes, which CODEOWNERS lacks"),
        ("*.py owner", "'owner' is not a user, team or email address"),
        ("*.py @a @bad_user!", "'@bad_user!' is not a user, team or email address"),
        ("a" * 4097 + " @a", f"{'a' * 80!r}... is longer than 4,096 characters"),
    ],
)
def test_invalid_lines_are_skipped_and_named(line: str, problem: str) -> None:
    """GitHub skips a line of invalid syntax and reads the rest."""
    parsed = owners.parse(f"* @everyone\n{line}\n*.md @docs", ".github/CODEOWNERS")
    assert parsed.problems == (f"line 2: {problem}",)
    assert [r.line for r in parsed.rules] == [1, 3]
    assert [o.text for o in parsed.owners("src/a.py")] == ["@everyone"]
    assert [o.text for o in parsed.owners("a.md")] == ["@docs"]


def test_many_invalid_lines_are_named_by_the_first() -> None:
    parsed = owners.parse("\n".join(f"!x{n} @a" for n in range(30)), "CODEOWNERS")
    assert len(parsed.problems) == owners.MAX_PROBLEMS + 1
    assert parsed.problems[-1] == "and 10 more invalid lines"


def test_a_file_of_3_mb_is_not_loaded() -> None:
    line = "*.py @a\n"
    text = line * (owners.MAX_BYTES // len(line) + 1)
    parsed = owners.parse(text, "CODEOWNERS")
    assert parsed.rules == ()
    assert parsed.problems == ("CODEOWNERS is 3 MB or more; GitHub does not load it",)
    assert owners.parse(line * 1000, "CODEOWNERS").owners("a.py")


def test_owner_kinds_and_names() -> None:
    parsed = owners.parse(EXAMPLE, "CODEOWNERS")
    found = parsed.owners_of_all(["README.md", "notes.txt", "main.go", "README.md"])
    assert [(o.kind, o.name) for o in found] == [
        (OwnerKind.USER, "global-owner1"),
        (OwnerKind.USER, "global-owner2"),
        (OwnerKind.TEAM, "octo-org/octocats"),
        (OwnerKind.EMAIL, "docs@example.com"),
    ]
