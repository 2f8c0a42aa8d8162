"""The secrets a simulated world hands the bot, and a search for them in what the bot wrote.

The App's private key (each line of its PEM body, so a key cut into pieces is still found),
every installation token the simulator issued, and the webhook secret must never appear in
a log line, a comment, an issue or an HTTP answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from bot.sim.server import Simulator

# A PEM body line is 64 base64 characters; shorter ones (the last) still say too much.
_MIN_LINE = 16


def secrets_of(sim: Simulator) -> dict[str, str]:
    """What to look for, by a name that says what it is (never the value itself)."""
    found: dict[str, str] = {}
    for number, line in enumerate(sim.private_key_pem.splitlines(), start=1):
        if not line.startswith("-----") and len(line) >= _MIN_LINE:
            found[f"private key line {number}"] = line
    for number, token in enumerate(sim.tokens.issued, start=1):
        found[f"installation token {number}"] = token
    found["webhook secret"] = sim.webhook_secret
    return found


def written_by_the_bot(sim: Simulator) -> dict[str, str]:
    """Every text the bot left in the simulated world: comments, issues, request bodies."""
    texts = {f"comment {c.id}": c.body for c in sim.world.comments.values()}
    for issue in sim.issues:
        texts[f"issue #{issue.number}"] = f"{issue.title}\n{issue.body}"
    for index, write in enumerate(sim.writes):
        texts[f"write {index} {write.method} {write.path}"] = json.dumps(write.body)
    return texts


def leaks(secrets: Mapping[str, str], texts: Mapping[str, str]) -> list[str]:
    """`where: what` for each secret found in a text; empty when nothing leaked."""
    return [
        f"{where}: {name}"
        for where, text in texts.items()
        for name, value in secrets.items()
        if value and value in text
    ]
