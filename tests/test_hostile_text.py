"""Test names and messages written to attack the bot's markdown, end to end.

A failed test's id and message come from the log, which anyone who can open a PR controls.
Whatever they hold, the PR comment and the tracking issue mention nobody, link nothing,
reference no issue and open no HTML element: those parts stay inside code, or are escaped.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import builtin_scenario

DEMO_LOG = (Path(__file__).parents[1] / "bot/sim/scenarios/demo-attempt-1.log").read_text()
NAME = "test_publish_waits_for_ack"
HOSTILE_NAME = (
    f"{NAME}[@octocat <img src=x onerror=alert(1)> **b** | #1 [x](http://e.vil) `c` </details>]"
)
HOSTILE_MESSAGE = "@admin <script>x</script> | **boom** #3 [y](http://e.vil) ``` </details>"
HOSTILE_ID = f"tests/bus/test_core.py::{HOSTILE_NAME}"

# What must never reach GitHub's markdown outside code: mentions, references, HTML...
HAZARDS = ["@octocat", "@admin", "#1 ", "#3", "<img", "<script"]
# ... and markdown syntax, which GitHub does not read inside an HTML block (a <summary> line
# right after its <details> line), where the test's name is HTML-escaped instead.
MARKDOWN = ["](http://e.vil)", "**b**", "**boom**"]


def prose(text: str) -> str:
    """The text without HTML comments, fenced blocks and code spans: what GitHub reads as
    markdown (the tracking issue's hidden record is an HTML comment)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r"^(`{3,})\w*\n.*?\n\1$", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"(?<!\\)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


async def test_hostile_test_names_and_messages_render_harmless_in_comment_and_issue(
    tmp_path: Path,
) -> None:
    log = DEMO_LOG.replace(NAME, HOSTILE_NAME).replace(
        "ack not received within 2.0s", HOSTILE_MESSAGE
    )
    scenario = builtin_scenario()
    check = scenario.checks[0]
    check.attempts[0] = check.attempts[0].model_copy(update={"log": log})
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    # The test was read with its whole name, and the pass on rerun made it flaky.
    assert verdicts == {HOSTILE_ID: "flaky"}
    (comment,) = sim.bot_comments(7)
    (issue,) = sim.issues_created
    for body in (comment.body, issue.body):
        shown = prose(body)
        assert [h for h in HAZARDS if h in shown] == []
        markdown = "\n".join(
            line for line in shown.splitlines() if not line.startswith("<summary>")
        )
        assert [h for h in MARKDOWN if h in markdown] == []
        for line in body.splitlines():
            if line.startswith("<summary>"):
                assert line.endswith("</summary>") and "<" not in line[9:-10]
        # Only the bot's own collapsible sections: none opened or closed by the log.
        assert shown.count("<details>") == shown.count("</details>")
        assert "<details>" in shown or body is issue.body
    # Inside code the id stays verbatim, so it can be copied (GitHub links nothing in code).
    assert f"``{HOSTILE_ID}``" in comment.body
