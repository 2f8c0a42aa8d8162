"""Test names and messages written to attack the bot's markdown, end to end.

A failed test's id and message come from the log, which anyone who can open a PR controls.
Whatever they hold, the PR comment and the tracking issue mention nobody, link nothing,
reference no issue and open no HTML element: those parts stay inside code, or are escaped.
Characters that hide or reorder text are written out (`<U+202E>`) there, in issue titles and
on the dashboard.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import aiohttp

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import Attempt, CheckSpec, Scenario, builtin_scenario
from bot.triage.failures import match_key
from tests.github_markdown import links, outside_code, to_html

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
                # The only element inside: the bot's own code around a word holding a URL.
                inside = re.sub(r"</?code>", "", line[9:-10])
                assert line.endswith("</summary>") and "<" not in inside
        # Only the bot's own collapsible sections: none opened or closed by the log.
        assert shown.count("<details>") == shown.count("</details>")
        assert "<details>" in shown or body is issue.body
    # Inside code the id stays verbatim, so it can be copied (GitHub links nothing in code).
    assert f"``{HOSTILE_ID}``" in comment.body


# A test name and message carrying links and characters that hide or reorder text; a second
# job that failed on the network, its log line naming the same hosts.
EVIL_URL = "https://evil.example/reset-your-password"
EVIL_HOST = "www.evil.example"
HIDING = {"\u202e": "<U+202E>", "\u2066": "<U+2066>", "\u2069": "<U+2069>", "\u200b": "<U+200B>"}
LINKY_NAME = f"{NAME}[{EVIL_URL} {EVIL_HOST} \u202ekcatta\u2066iso\u2069 zero\u200bwidth]"
LINKY_MESSAGE = f"log in at {EVIL_URL} or {EVIL_HOST} \u202edrawkcab\u2066 x\u200by"
NETWORK_LOG = (
    "2026-11-30T10:00:00.0000000Z ##[group]Run git fetch\n"
    f"2026-11-30T10:00:01.0000000Z fatal: unable to access '{EVIL_URL}/': "
    f"Could not resolve host: {EVIL_HOST}\n"
    "2026-11-30T10:00:01.0000000Z ##[error]Process completed with exit code 128.\n"
)


def linky_world() -> Scenario:
    log = DEMO_LOG.replace(NAME, LINKY_NAME).replace("ack not received within 2.0s", LINKY_MESSAGE)
    scenario = builtin_scenario()
    tests = scenario.checks[0]
    tests.attempts[0] = tests.attempts[0].model_copy(update={"log": log})
    fetch = CheckSpec(
        name="fetch deps", pr=7, attempts=[Attempt(conclusion="failure", log=NETWORK_LOG)]
    )
    scenario.checks.append(fetch)
    return scenario


def assert_inert_on_github(markdown: str) -> None:
    """GitHub's parser makes no link to the hosts, shows them only as code, and no hidden
    character reaches the text: each is written out."""
    rendered = to_html(markdown)
    assert [href for href in links(rendered) if "evil" in href] == []
    assert "evil.example" not in outside_code(rendered)
    assert [char for char in HIDING if char in markdown] == []


async def test_links_and_hidden_characters_from_a_log_render_inert_everywhere(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(linky_world(), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])
        test_id = next(test for test in verdicts if NAME in test)
        repo_page = await (await session.get(bot.url + "/acme/bus")).text()
        test_url = bot.url + "/acme/bus/tests/" + quote(match_key(test_id), safe="")
        test_page = await (await session.get(test_url)).text()

    # Read whole, hidden characters and all: the bot stores the name as the log wrote it.
    assert verdicts == {f"tests/bus/test_core.py::{LINKY_NAME}": "flaky", "fetch deps": "infra"}
    (comment,) = sim.bot_comments(7)
    (issue,) = sim.issues_created
    for markdown in (comment.body, issue.body):
        assert_inert_on_github(markdown)
    # The network line is the infra job's evidence, its URL and host in code.
    assert f"`'{EVIL_URL}/':` Could not resolve host: `{EVIL_HOST}`" in comment.body
    for char, shown in HIDING.items():
        assert shown in comment.body and shown in issue.body
        assert char not in issue.title and char not in repo_page + test_page
    assert "&lt;U+202E&gt;kcatta&lt;U+2066&gt;iso&lt;U+2069&gt;" in repo_page
    assert "&lt;U+202E&gt;drawkcab&lt;U+2066&gt; x&lt;U+200B&gt;y" in test_page
    assert issue.title == (
        f"Flaky test: tests/bus/test_core.py::{NAME}[{EVIL_URL} {EVIL_HOST} "
        "<U+202E>kcatta<U+2066>iso<U+2069> zero<U+200B>width]"
    )
