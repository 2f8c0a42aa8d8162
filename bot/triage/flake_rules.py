"""What a failure's message says about why a test flakes: the markers, as data.

The categories are the root causes of the empirical studies of flaky tests: Luo et al., "An
Empirical Analysis of Flaky Tests" (FSE 2014: async wait, concurrency, test order dependency,
resource leak, network, time, IO, randomness, floating point, unordered collections), with
Eck et al. (FSE 2019) and Parry et al.'s survey (TOSEM 2021) for platform dependency and
resource limits. Each marker is what a test runner, a runtime or an operating system prints,
never a guess from a test's own wording. A marker's weight says how much one showing tells:

- 3: the runner or runtime states the cause (`WARNING: DATA RACE`, `panic: test timed out`);
- 2: a specific error that usually has that cause but can have another (`ECONNREFUSED` is
  also a server not started yet, an asynchronous wait);
- 1: a hint (a printed seed, a timestamp in the assertion).

Markers run by RE2 (user_regex): the text they read is a pull request's log, so no
backtracking engine ever runs on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from bot.triage.user_regex import compile_user

# Only a message's head is read: a runner's statement comes first, a dump of state after it.
MESSAGE_READ = 20_000


class Category(StrEnum):
    TIMING = "timing"
    CONCURRENCY = "concurrency"
    ORDER = "order"
    NETWORK = "network"
    RESOURCES = "resources"
    IO = "io"
    TIME = "time"
    RANDOMNESS = "randomness"
    FLOAT = "float"
    UNORDERED = "unordered"
    PLATFORM = "platform"


# What the category is called where a person reads it.
CATEGORY_WORDS: dict[Category, str] = {
    Category.TIMING: "timing and asynchronous waits",
    Category.CONCURRENCY: "concurrency (races, deadlocks)",
    Category.ORDER: "test order dependence",
    Category.NETWORK: "network",
    Category.RESOURCES: "resource limits (memory, file descriptors, ports, disk)",
    Category.IO: "file system contention",
    Category.TIME: "time and date",
    Category.RANDOMNESS: "randomness",
    Category.FLOAT: "floating-point precision",
    Category.UNORDERED: "unordered collections",
    Category.PLATFORM: "one platform only",
}

_LUO = "Luo et al. FSE 2014"


@dataclass(frozen=True)
class Rule:
    """One marker: `pattern` (RE2) found in a failure's message shows `category`.

    `permutation`: the pattern's `expected` and `actual` groups must hold the same items in
    another order (an unordered collection compared as a list), else the rule does not fire.
    """

    name: str  # what the signal is called where it is listed
    category: Category
    pattern: str
    weight: int
    source: str
    permutation: bool = False


RULES: tuple[Rule, ...] = (
    Rule(
        "Go test timeout",
        Category.TIMING,
        r"panic: test timed out after \d",
        3,
        f"go test -timeout; {_LUO} (async wait)",
    ),
    Rule(
        "Jest test timeout",
        Category.TIMING,
        r"Exceeded timeout of \d+ ms for a (?:test|hook)",
        3,
        f"jest testTimeout; {_LUO} (async wait)",
    ),
    Rule(
        "Mocha test timeout",
        Category.TIMING,
        r"Timeout of \d+ms exceeded\. For async tests and hooks",
        3,
        f"mocha --timeout; {_LUO} (async wait)",
    ),
    Rule(
        "pytest-timeout",
        Category.TIMING,
        r"Failed: Timeout >\d",
        3,
        f"pytest-timeout; {_LUO} (async wait)",
    ),
    Rule(
        "Playwright wait timed out",
        Category.TIMING,
        r"Timed out \d+ms waiting for|Test timeout of \d+ms exceeded",
        3,
        f"Playwright expect and test timeouts; {_LUO} (async wait)",
    ),
    Rule(
        "Cypress retry timed out",
        Category.TIMING,
        r"Timed out retrying after \d+ms",
        3,
        f"Cypress defaultCommandTimeout; {_LUO} (async wait)",
    ),
    Rule(
        "condition never satisfied",
        Category.TIMING,
        r"Condition never satisfied",
        2,
        f"testify Eventually; {_LUO} (async wait)",
    ),
    Rule(
        "context deadline exceeded",
        Category.TIMING,
        r"context deadline exceeded",
        2,
        f"Go context.DeadlineExceeded; {_LUO} (async wait)",
    ),
    Rule(
        "data race detected",
        Category.CONCURRENCY,
        r"WARNING: DATA RACE|ThreadSanitizer: data race",
        3,
        f"Go race detector, ThreadSanitizer; {_LUO} (concurrency)",
    ),
    Rule(
        "Go deadlock",
        Category.CONCURRENCY,
        r"all goroutines are asleep - deadlock!",
        3,
        f"Go runtime; {_LUO} (concurrency)",
    ),
    Rule(
        "concurrent map access",
        Category.CONCURRENCY,
        r"fatal error: concurrent map (?:writes|read and map write|iteration and map write)",
        3,
        f"Go runtime; {_LUO} (concurrency)",
    ),
    Rule(
        "ConcurrentModificationException",
        Category.CONCURRENCY,
        r"ConcurrentModificationException",
        3,
        f"Java collections; {_LUO} (concurrency)",
    ),
    Rule(
        "database locked",
        Category.CONCURRENCY,
        r"database (?:file )?is locked",
        2,
        f"SQLite SQLITE_BUSY; {_LUO} (concurrency)",
    ),
    Rule(
        "connection refused",
        Category.NETWORK,
        r"\bECONNREFUSED\b|[Cc]onnection refused",
        2,
        f"errno ECONNREFUSED; {_LUO} (network)",
    ),
    Rule(
        "connection reset",
        Category.NETWORK,
        r"\bECONNRESET\b|[Cc]onnection reset by peer|\bsocket hang up\b",
        2,
        f"errno ECONNRESET, Node's http client; {_LUO} (network)",
    ),
    Rule(
        "DNS lookup failed",
        Category.NETWORK,
        r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|\bESERVFAIL\b|[Tt]emporary failure in name resolution"
        r"|[Nn]ame or service not known|dial tcp: lookup \S+: no such host",
        2,
        f"errno EAI_AGAIN/ENOTFOUND, c-ares ESERVFAIL, Go's resolver; {_LUO} (network)",
    ),
    Rule(
        "port already in use",
        Category.RESOURCES,
        r"\bEADDRINUSE\b|[Aa]ddress already in use|\bAddrInUse\b",
        3,
        f"errno EADDRINUSE; {_LUO} (resource leak); Parry et al. 2021 (resources)",
    ),
    Rule(
        "too many open files",
        Category.RESOURCES,
        r"Too many open files|\bEMFILE\b",
        3,
        f"errno EMFILE; {_LUO} (resource leak)",
    ),
    Rule(
        "disk full",
        Category.RESOURCES,
        r"No space left on device|\bENOSPC\b",
        3,
        "errno ENOSPC; Parry et al. 2021 (resources)",
    ),
    Rule(
        "out of memory",
        Category.RESOURCES,
        r"JavaScript heap out of memory|java\.lang\.OutOfMemoryError",
        3,
        "V8 and JVM heap limits; Parry et al. 2021 (resources)",
    ),
    Rule(
        "file busy or locked",
        Category.IO,
        r"\bEBUSY\b|resource busy or locked|being used by another process|Text file busy",
        2,
        f"errno EBUSY, ETXTBSY, Windows sharing violation; {_LUO} (IO)",
    ),
    Rule(
        "relative day compared",
        Category.TIME,
        r"(?i)\b(?:yesterday|today|tomorrow)\b[^\n]*\b(?:yesterday|today|tomorrow)\b",
        2,
        f"{_LUO} (time)",
    ),
    Rule(
        "timestamp in the assertion",
        Category.TIME,
        r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d",
        1,
        f"{_LUO} (time)",
    ),
    Rule(
        "property-based example",
        Category.RANDOMNESS,
        r"Falsifying example:",
        2,
        f"Hypothesis; {_LUO} (randomness)",
    ),
    Rule(
        "shuffled order seed",
        Category.ORDER,
        r"Randomized with seed \d+|-test\.shuffle \d+",
        1,
        f"RSpec --order random, go test -shuffle; {_LUO} (test order dependency)",
    ),
    Rule(
        "tolerance exceeded",
        Category.FLOAT,
        r"Not equal to tolerance rtol=",
        2,
        f"numpy.testing.assert_allclose; {_LUO} (floating point)",
    ),
    Rule(
        "same items, other order",
        Category.UNORDERED,
        r"expected: \[(?P<expected>[^\]\n]*)\]\s+got: \[(?P<actual>[^\]\n]*)\]",
        2,
        f"RSpec eq on arrays; {_LUO} (unordered collections)",
        permutation=True,
    ),
)


# Every marker at once, without capturing groups (RE2 then finds the match by its DFA alone):
# most messages show none, and one search tells.
_ANY = re.sub(r"\(\?P<\w+>", "(?:", "|".join(f"(?:{rule.pattern})" for rule in RULES))


def fired(message: str) -> list[Rule]:
    """The rules whose marker `message` shows, in table order."""
    head = message[:MESSAGE_READ]
    if compile_user(_ANY).search(head) is None:
        return []
    return [rule for rule in RULES if _fires(rule, head)]


def _fires(rule: Rule, text: str) -> bool:
    found = compile_user(rule.pattern).search(text)
    if found is None:
        return False
    if not rule.permutation:
        return True
    groups = found.groupdict()
    expected = _items(groups.get("expected") or "")
    actual = _items(groups.get("actual") or "")
    return len(expected) > 1 and expected != actual and sorted(expected) == sorted(actual)


def _items(listed: str) -> list[str]:
    return [item.strip() for item in listed.split(",") if item.strip()]
