"""The dashboard in a real headless Chromium (Debian's), driven by Playwright.

Screenshots land in build/screenshots/ (or $SCREENSHOT_DIR) for a person to open. Without
Chromium the test is skipped on a developer's machine, and fails under CI, whose .ci/run
installs it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.demo import running, settle
from bot.sim.scenario import builtin_scenario
from bot.triage.models import Verdict

if TYPE_CHECKING:
    from playwright.async_api import Page

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture
def screenshots() -> Path:
    folder = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "build" / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_dashboard_ranked_table_sparklines_and_test_page_in_chromium(
    tmp_path: Path, chromium: str, screenshots: Path
) -> None:
    from playwright.async_api import async_playwright

    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox"]
            )
            page = await browser.new_page(java_script_enabled=False)
            page.set_default_timeout(10_000)
            await page.goto(bot.url + "/")
            await page.click("text=acme/bus")
            rows = page.locator("#flaky-tests tr")
            row_count = await rows.count()
            first_row = await rows.first.inner_text()
            sparkline = page.locator("#flaky-tests svg.sparkline").first
            spark_box = await sparkline.bounding_box()
            spark_label = await sparkline.get_attribute("aria-label")
            await page.screenshot(path=screenshots / "dashboard-repo.png", full_page=True)
            await page.click("#flaky-tests a >> nth=0")
            heading = await page.locator("h1").inner_text()
            chart = await page.locator("svg.outcomes").bounding_box()
            modes = await page.locator("#modes tr").count()
            await page.screenshot(path=screenshots / "dashboard-test.png", full_page=True)
            await browser.close()

    assert row_count == 1
    assert "test_publish_waits_for_ack" in first_row
    assert first_row.startswith("1")
    assert spark_box is not None and spark_box["width"] > 50 and spark_box["height"] > 10
    assert spark_label is not None and "failures over the last 30 days" in spark_label
    assert heading == "tests/bus/test_core.py::test_publish_waits_for_ack"
    assert chart is not None and chart["width"] > 100
    assert modes == 1
    for name in ("dashboard-repo.png", "dashboard-test.png"):
        assert (screenshots / name).read_bytes().startswith(b"\x89PNG")


# GitHub's layout rules for a comment's markdown that decide what can overflow, as its
# stylesheet sets them (github-markdown-css, `.markdown-body`): words break rather than
# overflow, a table is its own scrolling box at most as wide as the comment, a code block
# scrolls inside itself.
_GITHUB_MARKDOWN_LAYOUT = """
body{margin:0;font:16px/1.5 sans-serif}
.markdown-body{word-wrap:break-word;padding:16px}
.markdown-body table{display:block;width:max-content;max-width:100%;overflow:auto;
border-collapse:collapse;white-space:nowrap}
.markdown-body td,.markdown-body th{padding:6px 13px;border:1px solid #d0d7de}
.markdown-body pre{padding:16px;overflow:auto}
.markdown-body pre>code{white-space:pre}
.markdown-body code{padding:.2em .4em;font-size:85%}
.markdown-body ul{padding-left:2em}
"""
PHONE, DESKTOP = 375, 1280


def big_comment() -> str:
    """A comment with every part at its widest: advice, a full table, a row of 400 tests,
    long test ids, a long error, a left-out count with the dashboard link."""
    from tests.test_comment_groups import check, comment, decision, mass

    long_id = "tests/integration/payments/test_" + "settlement_" * 12 + ".py::test_refund"
    related = [decision(long_id, Verdict.RELATED, matched_paths=["src/" + "deep/" * 20 + "x.py"])]
    flaky = [decision(f"tests/f_{n}.py::t", Verdict.FLAKY, tracking_issue=n) for n in range(1, 10)]
    return comment(
        check(related, name="unit (ubuntu-latest, 3.12, postgres-16, with-extras)"),
        check(mass(400), name="integration"),
        check(flaky, name="e2e", conclusion="success", attempt=2),
        dashboard_url="https://triage.example.org/octo/bus/pull/7",
    )


async def overflow(page: Page, width: int) -> dict[str, int]:
    await page.set_viewport_size({"width": width, "height": 800})
    return dict(
        await page.evaluate(
            """() => ({
              page: document.documentElement.scrollWidth,
              view: window.innerWidth,
              widest: Math.max(...[...document.querySelectorAll('table, pre, details')]
                .map(e => e.getBoundingClientRect().right)),
            })"""
        )
    )


async def test_the_comment_fits_a_phone_and_a_desktop_as_github_renders_it(
    chromium: str, screenshots: Path
) -> None:
    from playwright.async_api import async_playwright

    from tests.github_markdown import to_html

    html = (
        f'<!doctype html><meta charset="utf-8"><style>{_GITHUB_MARKDOWN_LAYOUT}</style>'
        f'<div class="markdown-body">{to_html(big_comment())}</div>'
    )
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = await browser.new_page(java_script_enabled=True)
        await page.set_content(html)
        await page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        sizes = {}
        for width in (PHONE, DESKTOP):
            sizes[width] = await overflow(page, width)
            await page.screenshot(path=screenshots / f"comment-{width}.png", full_page=True)
        await page.set_viewport_size({"width": PHONE, "height": 800})
        phone_table_scrolls = await page.evaluate(
            "(() => { const t = document.querySelector('table');"
            " return t.scrollWidth > t.clientWidth; })()"
        )
        await browser.close()

    for width, size in sizes.items():
        assert size["view"] == width
        assert size["page"] <= size["view"], f"the page scrolls sideways at {width} px: {size}"
        assert size["widest"] <= size["view"], f"a table or block sticks out at {width} px"
    assert phone_table_scrolls  # the table is wider than a phone: it scrolls in its own box


async def test_the_dashboards_pr_page_fits_a_phone(
    tmp_path: Path, chromium: str, screenshots: Path
) -> None:
    from playwright.async_api import async_playwright

    from tests.test_dashboard_pull import forty_refused

    async with running(forty_refused(), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox"]
            )
            page = await browser.new_page(java_script_enabled=True)
            await page.goto(bot.url + "/acme/shop/pull/21")
            sizes = {width: await overflow(page, width) for width in (PHONE, DESKTOP)}
            decisions = await page.locator(".decision").count()
            await page.set_viewport_size({"width": PHONE, "height": 800})
            await page.screenshot(path=screenshots / "dashboard-pull-375.png")
            await browser.close()

    assert decisions == 40
    for width, size in sizes.items():
        assert size["page"] <= size["view"] == width, f"sideways scroll at {width} px: {size}"
