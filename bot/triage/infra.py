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

# (kind, pattern over clean lines, MULTILINE), most telling first.
_KINDS: tuple[tuple[str, str], ...] = (
    (
        "runner-lost",
        r"The runner has received a shutdown signal"
        r"|lost communication with the server"
        r"|The hosted runner encountered an error",
    ),
    (
        "timeout",
        r"has timed out after \d+ minutes"
        r"|has exceeded the maximum execution time of \d+ minutes",
    ),
    (
        "runner-unavailable",
        r"pod failed to come online"
        r"|Pod \S+ is unhealthy with phase status"
        r"|Failed to start the job container"
        r"|No runner matching the specified labels",
    ),
    ("disk-full", r"No space left on device|\bENOSPC\b|You are running out of disk space"),
    (
        "oom",
        r"Process completed with exit code 137\b"
        r"|^(?:\S+: line \d+: +\d+ )?Killed\b"
        r"|Out of memory: Killed process"
        r"|\boom-kill\b|\bOOMKilled\b"
        r"|JavaScript heap out of memory",
    ),
    (
        "network",
        r"\bECONNRESET\b|\bETIMEDOUT\b|\bEAI_AGAIN\b"
        r"|Could not resolve host|Temporary failure in name resolution"
        r"|^npm ERR! (?:code E5\d\d|5\d\d\b)"
        r"|\b50[234] (?:Service Unavailable|Bad Gateway|Gateway Time-?out)"
        r"|\btoomanyrequests\b|You have reached your pull rate limit"
        r"|HTTPSConnectionPool\(.*(?:Read timed out|Max retries exceeded)",
    ),
    (
        "cancelled",
        r"^(?:##\[error\]|Error: )?The (?:operation|job) was cancell?ed\."
        r"|^!{3,} KeyboardInterrupt !{3,}$",
    ),
)
_PATTERNS = tuple((kind, re.compile(p, re.MULTILINE)) for kind, p in _KINDS)

# Every line classify_infra may need, for a streaming pre-filter over clean text.
INFRA_MARKER: re.Pattern[str] = re.compile("|".join(f"(?:{p})" for _, p in _KINDS), re.MULTILINE)


def classify_infra(lines: Sequence[str]) -> InfraCause | None:
    """Why the job failed outside its tests, with the first line that shows it; else None.

    `lines` are clean log lines (see actions_log.clean_log).
    """
    text = "\n".join(line[:_MAX_LINE] for line in lines)
    for kind, pattern in _PATTERNS:
        match = pattern.search(text)
        if match is not None:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            line = text[start : end if end >= 0 else len(text)].strip()
            return InfraCause(kind=kind, line=line)
    return None
