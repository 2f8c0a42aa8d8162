"""Jobs that failed for a reason outside the tests: the runner, the machine or the network.

Each kind is recognised by what the runner, the kernel or a package manager prints, never by
a test's own error text alone. When several kinds show, the most telling wins: the runner's
own statements (lost, timed out) before the machine's (disk, memory) before the network's,
and a plain cancellation last, because a timeout or a lost runner also cancels the job.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.triage.models import InfraCause

# Lines longer than this are output, not a runner's statement: only their head is read.
_MAX_LINE = 1000

# A network error counts only on a line that reports an error: a retry notice that later
# succeeded says "warn" or nothing. It also keeps the scanner's searches few (logscan).
_REPORTS_ERROR = r"(?=[^\n]*(?:error|Error|ERROR|npm ERR!|fatal|failure|Failure))"

# (kind, pattern over clean lines (MULTILINE), words one of which every line it matches
# holds), most telling first. The runner's own statements are `##[error]` lines. A pattern
# never matches across lines.
_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "runner-lost",
        r"^##\[error\].*(?:The runner has received a shutdown signal"
        r"|lost communication with the server|The hosted runner encountered an error"
        r"|The job was not acquired by Runner)",
        ("##[error]",),
    ),
    (
        "timeout",
        r"^##\[error\].*(?:has timed out after \d+ minutes"
        r"|has exceeded the maximum execution time of \d+ minutes)",
        ("##[error]",),
    ),
    (
        "runner-unavailable",
        r"^##\[error\].*(?:pod failed to come online|Pod \S+ is unhealthy with phase status"
        r"|Failed to start the job container|No runner matching the specified labels)",
        ("##[error]",),
    ),
    # Before any build step: the job's container or service images, the actions it uses, the
    # dependency cache (and, after the network's own errors, the checkout). A warning the
    # runner retried past is not a failure: only the runner's `##[error]` counts.
    (
        "image-pull",
        r"^##\[error\](?:Docker pull failed with exit code \d+|Failed to initialize container)",
        ("Docker pull failed", "Failed to initialize container"),
    ),
    (
        "action-download",
        r"^##\[error\](?:An action could not be found at the URI"
        r"|Failed to download (?:archive|action)"
        r"|Response status code does not indicate success: (?:5\d\d|408|429)"
        r"|The request was canceled due to the configured HttpClient\.Timeout)",
        (
            "An action could not be found",
            "Failed to download ",
            "does not indicate success",
            "HttpClient.Timeout",
        ),
    ),
    (
        "cache",
        r"^##\[error\].*(?:Aborting cache download as the download time exceeded the timeout"
        r"|Cache service responded with (?:5\d\d|429)|getCacheEntry failed)",
        ("Aborting cache download", "Cache service responded", "getCacheEntry failed"),
    ),
    ("disk-full", r"No space left on device|\bENOSPC\b", ("No space left on device", "ENOSPC")),
    (
        "oom",
        r"^##\[error\]Process completed with exit code 137\b"
        r"|^(?:\S+: line \d+: +\d+ )?Killed\b"
        r"|Out of memory: Killed process"
        r"|\boom-kill\b|\bOOMKilled\b"
        r"|FATAL ERROR: .*JavaScript heap out of memory",
        ("exit code 137", "Killed", "oom-kill", "JavaScript heap out of memory"),
    ),
    (
        "network",
        rf"^{_REPORTS_ERROR}.*(?:\bECONNRESET\b|\bETIMEDOUT\b|\bEAI_AGAIN\b"
        r"|Could not resolve host|Temporary failure in name resolution"
        r"|\bE5\d\d\b|\b50[234] (?:Service Unavailable|Bad Gateway|Gateway Time-?out)"
        r"|\btoomanyrequests\b|pull rate limit"
        r"|HTTPSConnectionPool\(.*(?:Read timed out|Max retries exceeded))",
        (
            "ECONNRESET",
            "ETIMEDOUT",
            "EAI_AGAIN",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "E5",
            " Service Unavailable",
            " Bad Gateway",
            " Gateway Time",
            "toomanyrequests",
            "pull rate limit",
            "HTTPSConnectionPool(",
        ),
    ),
    # git's own fatal line in the checkout: after "network", which names a DNS failure better.
    (
        "checkout",
        r"^(?:##\[error\])?(?:fatal: unable to access '[^'\n]*': "
        r"|error: RPC failed; |fatal: the remote end hung up unexpectedly|fatal: early EOF)",
        ("fatal: unable to access", "RPC failed", "remote end hung up", "early EOF"),
    ),
    (
        "cancelled",
        r"^(?:##\[error\]|Error: )The (?:operation|job) was cancell?ed\."
        r"|^!{3,} KeyboardInterrupt !{3,}$",
        (" was cancel", " KeyboardInterrupt "),
    ),
)
_PATTERNS = tuple((kind, re.compile(p, re.MULTILINE), words) for kind, p, words in _KINDS)

# Every line classify_infra may need, for a streaming pre-filter over clean text.
INFRA_MARKER: re.Pattern[str] = re.compile("|".join(f"(?:{p})" for _, p, _ in _KINDS), re.MULTILINE)


def classify_infra(lines: Sequence[str]) -> InfraCause | None:
    """Why the job failed outside its tests, with the first line that shows it; else None.

    `lines` are clean log lines (see actions_log.clean_log).
    """
    text = "\n".join(line[:_MAX_LINE] for line in lines)
    for kind, pattern, words in _PATTERNS:
        match = _first_match(pattern, words, text)
        if match is not None:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            line = text[start : end if end >= 0 else len(text)].strip()
            return InfraCause(kind=kind, line=line)
    return None


def _first_match(pattern: re.Pattern[str], words: Sequence[str], text: str) -> re.Match[str] | None:
    """`pattern.search(text)`, tried only on the lines holding one of `words`.

    Python's regex engine tries an unanchored pattern at every position of the text; finding
    the words is a fast substring search, and few lines hold one.
    """
    next_at = {word: text.find(word) for word in words}
    while True:
        at = min((found for found in next_at.values() if found >= 0), default=-1)
        if at < 0:
            return None
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        # Within a line's bounds the pattern reads as on the whole text: `^`, `$` and `\b`
        # see a line break at either end.
        match = pattern.search(text, start, end)
        if match is not None:
            return match
        for word, found in next_at.items():
            if 0 <= found < end:
                next_at[word] = text.find(word, end)
