"""`flakybot setup` over real HTTP against the simulator's manifest flow: the refusals (state
mismatch, expired and already-converted codes, an existing `.env`) write nothing, and the
simulator answers the conversion in GitHub's documented shapes. The browser run is in
test_setup_browser.py."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from dotenv import dotenv_values

from bot import registration, setup_page
from bot.cli import main
from bot.config import Settings
from bot.registration import (
    CHECKOUT_MANIFEST,
    RegisteredApp,
    SetupError,
    env_lines,
    load_manifest,
    manifest_for,
    write_env,
)
from bot.setup_page import SetupOptions, SetupPage
from bot.sim import Simulator, builtin_scenario
from bot.sim.manifests import CODE_LIFETIME_S, CONVERSION, manifest_problem
from tests.test_sim_openapi import assert_fits

HOOK = "https://flaky.example.org/api/github/webhooks"
CONVERSION_CALL = f"POST {CONVERSION}"


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(builtin_scenario(), webhook_secret="unused") as simulator:
        yield simulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def started_page(sim: Simulator, env_file: Path) -> SetupPage:
    options = SetupOptions(
        manifest=load_manifest(CHECKOUT_MANIFEST),
        webhook_url=HOOK,
        env_file=env_file,
        github_url=sim.url,
        api_url=sim.url,
    )
    setup = SetupPage(options)
    await setup.start()
    return setup


@pytest.fixture
async def page(sim: Simulator, tmp_path: Path) -> AsyncIterator[SetupPage]:
    setup = await started_page(sim, tmp_path / ".env")
    yield setup
    await setup.close()


async def code_from_github(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage, *, org: str | None = None
) -> tuple[str, str]:
    """Post the start page's form as the browser would; the code and state GitHub sends
    back, read from its redirect instead of followed."""
    async with http.get(page.url + "/") as answer:
        html = await answer.text()
    assert 'name="manifest"' in html and ">Register GitHub App</button>" in html
    account = f"/organizations/{org}" if org else ""
    action = f"{sim.url}{account}/settings/apps/new?state={page.state}"
    async with http.post(
        action, data={"manifest": page.manifest_json()}, allow_redirects=False
    ) as answer:
        assert answer.status == 302, await answer.text()
        location = urlsplit(answer.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == page.url + "/done"
    query = parse_qs(location.query)
    return query["code"][0], query["state"][0]


async def finish(http: aiohttp.ClientSession, page: SetupPage, code: str, state: str) -> str:
    async with http.get(page.url + "/done", params={"code": code, "state": state}) as answer:
        return f"{answer.status} {await answer.text()}"


async def test_a_state_that_does_not_match_is_refused_before_the_code_is_used(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    code, _ = await code_from_github(http, sim, page)
    shown = await finish(http, page, code, "forged-state")
    assert shown.startswith("400 ") and "state does not match" in shown
    assert sim.calls[CONVERSION_CALL] == 0
    assert not page.options.env_file.exists()
    # The real answer still works afterwards: a forged one spends nothing.
    assert (await finish(http, page, code, page.state)).startswith("200 ")
    assert page.options.env_file.exists()


async def test_an_expired_code_writes_nothing_and_says_to_register_again(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    code, state = await code_from_github(http, sim, page)
    issued = sim.manifests.codes[code].issued_at
    sim.manifests.clock = lambda: issued + CODE_LIFETIME_S + 1
    shown = await finish(http, page, code, state)
    assert shown.startswith("410 ") and "more than an hour old" in shown
    assert sim.calls[CONVERSION_CALL] == 1
    assert not page.options.env_file.exists()
    assert (await finish(http, page, "no-such-code", state)).startswith("410 ")


async def test_an_already_converted_code_names_the_app_that_exists(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    code, state = await code_from_github(http, sim, page)
    async with http.post(f"{sim.url}/app-manifests/{code}/conversions") as answer:
        assert answer.status == 201  # someone else (another tab) used it first
    shown = await finish(http, page, code, state)
    assert shown.startswith("409 ") and "already turned this code into an App" in shown
    assert f"{sim.url}/settings/apps" in shown
    assert not page.options.env_file.exists()


async def test_an_env_file_made_while_the_page_waited_is_never_overwritten(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    page.options.env_file.write_text("DATABASE_URL=sqlite:///mine.sqlite3\n")
    code, state = await code_from_github(http, sim, page)
    shown = await finish(http, page, code, state)
    assert shown.startswith("409 ") and "will not overwrite it" in shown
    assert page.options.env_file.read_text() == "DATABASE_URL=sqlite:///mine.sqlite3\n"
    assert sim.calls[CONVERSION_CALL] == 0 and not page.finished.is_set()
    # Refused before the code was spent: with the file moved away, the same answer works.
    page.options.env_file.unlink()
    assert (await finish(http, page, code, state)).startswith("200 ")
    assert "APP_ID=" in page.options.env_file.read_text()


async def test_an_env_file_that_cannot_be_written_is_refused_before_the_code_is_spent(
    http: aiohttp.ClientSession, sim: Simulator, tmp_path: Path
) -> None:
    page = await started_page(sim, tmp_path / "no-such-folder" / ".env")
    try:
        code, state = await code_from_github(http, sim, page)
        shown = await finish(http, page, code, state)
    finally:
        await page.close()
    assert shown.startswith("500 ") and "could not be written" in shown
    assert "nothing was registered" in shown
    assert sim.calls[CONVERSION_CALL] == 0 and sim.manifests.apps == []


async def test_a_key_that_cannot_be_kept_after_all_says_where_to_make_a_new_one(
    http: aiohttp.ClientSession, sim: Simulator, tmp_path: Path
) -> None:
    """The folder was writable when the code came back, and the write failed later."""
    folder = tmp_path / "gone"
    folder.mkdir()
    page = await started_page(sim, folder / ".env")
    try:
        code, state = await code_from_github(http, sim, page)
        real_write = registration.write_env

        def write_after_the_folder_went(path: Path, values: dict[str, str], *, force: bool) -> None:
            folder.rmdir()
            real_write(path, values, force=force)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(setup_page, "write_env", write_after_the_folder_went)
            shown = await finish(http, page, code, state)
    finally:
        await page.close()
    [app] = sim.manifests.apps
    assert shown.startswith("500 ") and "could not be written" in shown
    assert f"{sim.url}/settings/apps/{app.slug}" in shown
    assert app.pem.splitlines()[1] not in shown and app.webhook_secret not in shown
    assert page.finished.is_set() and page.exit_status == 1


async def test_the_page_answers_only_to_its_own_address(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    """A page elsewhere whose name was re-pointed at 127.0.0.1 (DNS rebinding) reaches the
    port with its own name as Host: it reads no state and finishes no flow."""
    code, state = await code_from_github(http, sim, page)
    port = page.url.rsplit(":", 1)[-1]
    rebound = {"Host": f"attacker.example:{port}"}
    async with http.get(page.url + "/", headers=rebound) as answer:
        assert answer.status == 421
        assert page.state not in await answer.text()
    params = {"code": code, "state": state}
    async with http.get(page.url + "/done", params=params, headers=rebound) as answer:
        assert answer.status == 421
    assert sim.calls[CONVERSION_CALL] == 0 and not page.options.env_file.exists()
    async with http.get(f"http://localhost:{port}/", headers={"Host": f"localhost:{port}"}) as ok:
        assert ok.status == 200
    assert (await finish(http, page, code, state)).startswith("200 ")


async def test_an_organisations_app_is_registered_for_the_organisation(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, state = await code_from_github(http, sim, page, org="acme-corp")
    shown = await finish(http, page, code, state)
    assert shown.startswith("200 ") and "/installations/new" in shown
    [app] = sim.manifests.apps
    assert app.owner == "acme-corp"
    assert app.manifest["hook_attributes"]["url"] == HOOK
    assert app.manifest["redirect_url"] == page.url + "/done"
    manifest = load_manifest(CHECKOUT_MANIFEST)
    assert app.manifest["default_permissions"] == manifest["default_permissions"]
    assert app.manifest["default_events"] == manifest["default_events"]
    for name in ("APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH", "WEBHOOK_SECRET"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=page.options.env_file)
    assert settings.app_id == app.id
    assert settings.private_key_pem().strip() == app.pem.strip()
    assert settings.secret() == app.webhook_secret
    assert page.finished.is_set()
    if os.name == "posix":
        assert page.options.env_file.stat().st_mode & 0o777 == 0o600


async def test_the_simulators_conversion_answers_fit_githubs_schema(
    http: aiohttp.ClientSession, sim: Simulator, page: SetupPage
) -> None:
    code, _ = await code_from_github(http, sim, page)
    template = "/app-manifests/{code}/conversions"
    for expected in (201, 422):
        async with http.post(f"{sim.url}/app-manifests/{code}/conversions") as answer:
            assert answer.status == expected
            assert_fits(template, "POST", expected, await answer.json())
    async with http.post(f"{sim.url}/app-manifests/unknown/conversions") as answer:
        assert answer.status == 404
        assert_fits(template, "POST", 404, await answer.json())


async def test_the_simulators_new_app_page_refuses_a_manifest_github_would_refuse(
    http: aiohttp.ClientSession, sim: Simulator
) -> None:
    for manifest, status in (("{not json", 400), (json.dumps({"name": "x"}), 422)):
        async with http.post(
            f"{sim.url}/settings/apps/new", data={"manifest": manifest}, allow_redirects=False
        ) as answer:
            assert answer.status == status
    assert sim.manifests.codes == {}


async def test_the_simulator_refuses_default_events_as_github_does(
    http: aiohttp.ClientSession, sim: Simulator
) -> None:
    """GitHub's words (seen by several projects): lifecycle events cannot be subscribed to,
    and every default event needs a permission that covers it."""
    base = {"name": "x", "url": "https://x.example", "redirect_url": "https://x.example/done"}
    cases = (
        (
            {"default_events": ["check_run", "installation", "installation_repositories"],
             "default_permissions": {"checks": "read"}},
            "Default events unsupported: installation and installation_repositories",
        ),
        (
            {"default_events": ["check_run", "issues"], "default_permissions": {"issues": "write"}},
            "Default events are not supported by permissions: check_run",
        ),
    )  # fmt: skip
    for extra, refusal in cases:
        data = {"manifest": json.dumps({**base, **extra})}
        async with http.post(
            f"{sim.url}/settings/apps/new", data=data, allow_redirects=False
        ) as answer:
            assert (answer.status, refusal in await answer.text()) == (422, True)
    assert sim.manifests.codes == {}


def test_the_apps_manifest_passes_githubs_checks() -> None:
    filled = manifest_for(
        load_manifest(CHECKOUT_MANIFEST),
        webhook_url=HOOK,
        redirect_url="http://127.0.0.1:8000/done",
        name=None,
    )
    assert manifest_problem(filled) is None


def test_setup_refuses_an_existing_env_file_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = tmp_path / ".env"
    env.write_text("APP_ID=1\n")
    argv = ["setup", "--no-browser", "--env-file", str(env), "--webhook-url", HOOK]
    assert main(argv) == 2
    assert "exists: setup will not overwrite it" in capsys.readouterr().err
    assert env.read_text() == "APP_ID=1\n"


@pytest.mark.skipif(os.name != "posix", reason="platform: symbolic links need POSIX here")
def test_a_dangling_env_link_is_refused_before_anything_is_registered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = tmp_path / ".env"
    env.symlink_to(tmp_path / "elsewhere" / "secrets.env")
    argv = ["setup", "--no-browser", "--env-file", str(env), "--webhook-url", HOOK]
    assert main(argv) == 2
    assert "exists: setup will not overwrite it" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="platform: symbolic links need POSIX here")
def test_force_never_writes_the_key_through_a_planted_link(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("DATABASE_URL=sqlite:///kept.sqlite3\n")
    stolen = tmp_path / "stolen"
    # The name the key was first written to before: `.env.PID.partial`, made predictable.
    (tmp_path / f".env.{os.getpid()}.partial").symlink_to(stolen)
    app = RegisteredApp(7, "bot", "https://github.com/apps/bot", "-----A-----\nNEW\n", "s3")
    write_env(env, env_lines(app), force=True)
    assert not stolen.exists()
    assert "PRIVATE_KEY=-----A-----\\nNEW" in env.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".env", f".env.{os.getpid()}.partial"]


def test_a_value_never_adds_a_line_to_env(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    injected = RegisteredApp(7, "bot", "https://github.com/apps/bot", "-----A-----", "s\nX=1")
    with pytest.raises(SetupError, match="control character in WEBHOOK_SECRET"):
        write_env(env, env_lines(injected), force=False)
    assert not env.exists()
    with pytest.raises(SetupError, match="in WEBHOOK_SECRET"):
        write_env(env, {"WEBHOOK_SECRET": "${HOME}"}, force=False)
    odd = "s3 #'\\\"x $HOME"  # read back exactly: not a comment, no escape lost
    write_env(env, {"WEBHOOK_SECRET": odd, "APP_ID": "7"}, force=False)
    assert dotenv_values(env) == {"WEBHOOK_SECRET": odd, "APP_ID": "7"}


def test_setup_needs_a_webhook_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEBHOOK_PROXY_URL", raising=False)
    assert main(["setup", "--no-browser", "--env-file", str(tmp_path / ".env")]) == 2
    assert "give --webhook-url" in capsys.readouterr().err


def test_force_replaces_the_apps_lines_and_keeps_the_others(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        'APP_ID=1\nPRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\nOLD\n'
        '-----END RSA PRIVATE KEY-----"\n'
        "DATABASE_URL=sqlite:///kept.sqlite3\n# a comment\n"
    )
    app = RegisteredApp(7, "bot", "https://github.com/apps/bot", "-----A-----\nNEW\n", "s3")
    write_env(env, env_lines(app), force=True)
    assert env.read_text().splitlines() == [
        "DATABASE_URL=sqlite:///kept.sqlite3",
        "# a comment",
        "APP_ID=7",
        "PRIVATE_KEY=-----A-----\\nNEW",
        "WEBHOOK_SECRET=s3",
        "APP_URL=https://github.com/apps/bot",
    ]
    if os.name == "posix":
        assert env.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".env"]
