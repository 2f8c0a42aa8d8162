"""The dashboard in a real headless Chromium (Debian's), driven by Playwright.

Screenshots land in build/screenshots/ (or $SCREENSHOT_DIR) for a person to open. Without
Chromium the test is skipped on a developer's machine, and fails under CI, whose .ci/run
installs it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bot.demo import running, settle
from bot.sim.scenario import builtin_scenario

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("optional tool: Chromium is not installed (apt-get install chromium)")
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
