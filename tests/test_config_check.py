"""`flakybot config check` and `flakybot config schema`: a settings file's problems and the
effective settings before any pull request meets them, and the JSON Schema editors use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from bot.config_check import check_repository, schema, schema_text
from bot.sim.scenario import load_scenario
from bot.sim.server import Simulator
from tests.fleet import APP_VARIABLES

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = Path(__file__).parent / "scenarios"


def flakybot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    unset = {*APP_VARIABLES, "GITHUB_TOKEN"}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k not in unset},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_file_with_problems_exits_1_and_prints_them_and_the_effective_settings(
    tmp_path: Path,
) -> None:
    file = tmp_path / "flaky.yml"
    file.write_text("rerunn: true\nmax_reruns: 9\ncomment: always\n")

    result = flakybot("config", "check", str(file), cwd=tmp_path)

    assert result.returncode == 1, result.stderr
    assert "problem: unknown key 'rerunn'" in result.stdout
    assert "problem: max_reruns: Input should be less than or equal to 5" in result.stdout
    settings = yaml.safe_load(result.stdout.split("effective settings", 1)[1].split(":", 1)[1])
    assert settings["comment"] == "always"  # the valid keys apply
    assert settings["max_reruns"] == 1  # the invalid value does not: the default does


def test_a_clean_file_exits_0_and_json_gives_the_settings(tmp_path: Path) -> None:
    file = tmp_path / "flaky.yml"
    file.write_text("rerun: false\nfootprints:\n  'tests/e2e/**': ['**']\n")

    result = flakybot("config", "check", str(file), "--json", cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    record = json.loads(result.stdout)
    assert record["problems"] == []
    assert record["settings"]["rerun"] is False
    assert record["settings"]["footprints"] == {"tests/e2e/**": ["**"]}


def test_a_repository_without_a_token_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = flakybot("config", "check", "acme/bus", cwd=tmp_path)

    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "GITHUB_TOKEN" in line


async def test_a_repository_is_read_as_the_bot_reads_it_organisation_and_extends_merged() -> None:
    scenario = load_scenario(SCENARIOS / "org-settings-repo-overrides.yml")
    async with Simulator(scenario, webhook_secret="unused-secret") as sim:
        checked = await check_repository("acme/bus", token=sim.personal_token(), api_url=sim.url)

    assert checked.problems == []
    assert checked.applied == ["acme/bus", "acme/.github"]
    assert checked.config.rerun is True  # the repository's key wins
    assert checked.config.max_reruns == 2  # the organisation's stays


def test_the_committed_schema_is_the_models() -> None:
    committed = (ROOT / "docs" / "flaky.schema.json").read_text()
    assert committed == schema_text(), "run: flakybot config schema > docs/flaky.schema.json"


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("_extends: .github\nrerun: false\nreports:\n  - artifact: 'junit-*'\n", True),
        ("comment: sometimes\n", False),
        ("rerunn: true\n", False),
        ("max_reruns: 9\n", False),
    ],
)
def test_the_schema_checks_a_file_as_the_bot_does(text: str, valid: bool) -> None:
    validator = Draft202012Validator(schema())
    Draft202012Validator.check_schema(schema())

    assert validator.is_valid(yaml.safe_load(text)) is valid
