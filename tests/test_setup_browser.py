"""`flakybot setup` end to end: the command runs as a person runs it (its own process, its
own page on 127.0.0.1), a real Chromium presses "Register GitHub App", the simulator plays
github.com's new-App page and the API's code conversion, and `.env` appears readable by its
owner alone, holding what GitHub handed out, with the key never shown.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from bot.config import Settings
from bot.registration import CHECKOUT_MANIFEST, load_manifest
from bot.sim import Simulator, builtin_scenario
from tests import test_dashboard_browser

ROOT = Path(__file__).resolve().parents[1]
HOOK = "https://flaky.example.org/api/github/webhooks"
# The dashboard test's: skip without Chromium ("optional tool:"), fail under CI.
chromium = test_dashboard_browser.chromium
screenshots = test_dashboard_browser.screenshots
CREDENTIALS = ("APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH", "WEBHOOK_SECRET", "WEBHOOK_PROXY_URL")


async def start_setup(sim: Simulator, folder: Path) -> tuple[asyncio.subprocess.Process, str]:
    """`flakybot setup` in `folder` (no app.yml there: it finds the checkout's), and the
    address of its page, read from its first line."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    env |= {"PYTHONPATH": str(ROOT), "GITHUB_API_URL": sim.url, "WEBHOOK_PROXY_URL": HOOK}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "setup",
        "--no-browser",
        "--github-url",
        sim.url,
        cwd=folder,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    first = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
    assert first.startswith("Open http://127.0.0.1:"), first
    return process, first.split()[1].rstrip("/")


async def test_register_the_app_in_a_browser_and_find_it_in_env(
    tmp_path: Path, chromium: str, screenshots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.async_api import async_playwright

    async with Simulator(builtin_scenario(), webhook_secret="unused") as sim:
        process, url = await start_setup(sim, tmp_path)
        try:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=chromium, args=["--no-sandbox"]
                )
                page = await browser.new_page()
                page.set_default_timeout(10_000)
                await page.goto(url + "/")
                await page.screenshot(path=screenshots / "setup-start.png")
                await page.click("text=Register GitHub App")
                install = await page.locator("#install").get_attribute("href")
                landed = page.url
                await page.screenshot(path=screenshots / "setup-done.png")
                await browser.close()
            out, err = await asyncio.wait_for(process.communicate(), 20)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        [app] = sim.manifests.apps

    printed = out.decode() + err.decode()
    assert process.returncode == 0, printed
    assert landed.startswith(url + "/done?code=")
    assert install == f"{app_url(app.slug)}/installations/new"
    assert f"Install it on your repositories: {install}" in printed
    # The hook came from WEBHOOK_PROXY_URL, which serve relays itself (as Probot does).
    assert f"flakybot serve relays the channel's deliveries from {HOOK}" in printed
    # The key and the secret stay in .env: not one line of the key is printed.
    key_lines = [line for line in app.pem.splitlines() if "-----" not in line]
    assert not [line for line in key_lines if line in printed]
    assert app.webhook_secret not in printed
    env = tmp_path / ".env"
    if os.name == "posix":
        assert env.stat().st_mode & 0o777 == 0o600
    for name in CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=env)
    assert settings.app_id == app.id
    assert settings.private_key_pem().strip() == app.pem.strip()
    assert settings.secret() == app.webhook_secret
    assert f"APP_URL={app_url(app.slug)}\n" in env.read_text()
    manifest = load_manifest(CHECKOUT_MANIFEST)
    assert app.manifest == manifest | {
        "hook_attributes": {**manifest["hook_attributes"], "url": HOOK},
        "redirect_url": url + "/done",
    }


def app_url(slug: str) -> str:
    return f"https://github.com/apps/{slug}"
