"""The OpenAPI fixtures are scripts/trim_openapi.py's cut for the simulator as it is now: the
script changes nothing when run on them again, and every route the simulator serves (but
GraphQL, its blob host and the github.com pages of the App manifest flow, which GitHub's REST
description does not hold) has its operation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.trim_openapi import matches, simulator_routes

ROOT = Path(__file__).resolve().parents[1]
OPENAPI = ROOT / "tests" / "fixtures" / "corpus" / "openapi"
FIXTURES = {
    "rest": OPENAPI / "github-rest-subset.openapi.json",
    "webhooks": OPENAPI / "webhooks-schema.api.github.com.json",
}
NOT_REST = {
    ("post", "/graphql"),
    ("get", "/_blobs/{key}"),
    ("post", "/settings/apps/new"),
    ("post", "/organizations/{org}/settings/apps/new"),
}


@pytest.mark.parametrize("kind", sorted(FIXTURES))
def test_cutting_a_fixture_again_changes_nothing(kind: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "trim_openapi.py"), kind, str(FIXTURES[kind])],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == FIXTURES[kind].read_bytes()


def test_every_simulator_route_has_its_operation_in_the_fixture() -> None:
    paths = json.loads(FIXTURES["rest"].read_text())["paths"]
    missing = [
        (method, path)
        for method, path in simulator_routes()
        if (method, path) not in NOT_REST
        and not any(matches(path, t) and method in item for t, item in paths.items())
    ]
    assert missing == [], "run scripts/trim_openapi.py (tests/fixtures/corpus/openapi/INDEX.md)"
