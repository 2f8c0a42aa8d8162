"""The simulator's git data: recursive trees as GitHub lists them (truncated past its
limit), contents per ref, and blobs read in batches through GraphQL with GitHub's shapes."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.sim import Simulator, builtin_scenario
from bot.sim.git import BLOB_TEXT_LIMIT
from bot.sim.scenario import Scenario

REPO = "/repos/acme/bus"
BLOB_QUERY = (
    "query($owner: String!, $name: String!) {\n"
    "  repository(owner: $owner, name: $name) {\n{aliases}\n  }\n}"
)


def world(**update: Any) -> Scenario:
    scenario = builtin_scenario()
    scenario.files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "X = 1\n",
        "docs/readme.md": "# hi\n",
        "data/blob.bin": b"\x00\x01\x02",
        "data/latin1.txt": "caf\xe9".encode("latin-1"),
        "data/huge.py": "x" * (BLOB_TEXT_LIMIT + 10),
    }
    scenario.pull_requests[0].head_files = {"pkg/core.py": "X = 2\n", "docs/readme.md": None}
    return scenario.model_copy(update=update)


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(world(), webhook_secret="s") as running:
        yield running


async def get(sim: Simulator, path: str) -> tuple[int, Any]:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    async with aiohttp.ClientSession() as http, http.get(sim.url + path, headers=auth) as answer:
        return answer.status, await answer.json()


async def graphql(sim: Simulator, body: dict[str, Any]) -> tuple[int, Any]:
    auth = {"Authorization": f"bearer {await sim.installation_token()}"}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{sim.url}/graphql", json=body, headers=auth) as answer,
    ):
        return answer.status, await answer.json()


def git_blob_sha(data: bytes, tmp: Path) -> str:
    """What git itself names the blob (the simulator must agree, as GitHub does)."""
    path = tmp / "blob"
    path.write_bytes(data)
    out = subprocess.run(["git", "hash-object", str(path)], capture_output=True, check=True)
    return out.stdout.decode().strip()


async def test_a_recursive_tree_lists_every_blob_and_folder_per_ref(
    sim: Simulator, tmp_path: Path
) -> None:
    pr = sim.world.scenario.pull_requests[0]
    status, base = await get(sim, f"{REPO}/git/trees/{pr.base_sha}?recursive=1")
    assert status == 200 and base["truncated"] is False and base["sha"] == pr.base_sha
    kinds = {entry["path"]: entry["type"] for entry in base["tree"]}
    assert kinds["pkg"] == "tree" and kinds["pkg/core.py"] == "blob"
    assert "docs/readme.md" in kinds
    core = next(entry for entry in base["tree"] if entry["path"] == "pkg/core.py")
    assert core["size"] == 6 and core["mode"] == "100644"
    assert core["sha"] == git_blob_sha(b"X = 1\n", tmp_path)
    assert core["url"].endswith(f"/git/blobs/{core['sha']}")

    _, head = await get(sim, f"{REPO}/git/trees/{pr.head_sha}?recursive=1")
    listed = {entry["path"]: entry for entry in head["tree"]}
    assert "docs/readme.md" not in listed  # the PR removes it
    assert listed["pkg/core.py"]["sha"] == git_blob_sha(b"X = 2\n", tmp_path)

    _, top = await get(sim, f"{REPO}/git/trees/{pr.head_sha}")
    assert {entry["path"] for entry in top["tree"]} == {"data", "pkg"}
    assert (await get(sim, f"{REPO}/git/trees/{'0' * 40}?recursive=1"))[0] == 404

    _, content = await get(sim, f"{REPO}/contents/pkg/core.py?ref={pr.head_sha}")
    assert content["sha"] == listed["pkg/core.py"]["sha"]


async def test_a_tree_past_the_limit_is_truncated() -> None:
    async with Simulator(world(tree_limit=3), webhook_secret="s") as sim:
        pr = sim.world.scenario.pull_requests[0]
        _, tree = await get(sim, f"{REPO}/git/trees/{pr.base_sha}?recursive=1")
    assert tree["truncated"] is True
    assert len(tree["tree"]) == 3


async def test_graphql_reads_many_blobs_by_oid_in_githubs_shapes(sim: Simulator) -> None:
    pr = sim.world.scenario.pull_requests[0]
    _, tree = await get(sim, f"{REPO}/git/trees/{pr.head_sha}?recursive=1")
    shas = {entry["path"]: entry["sha"] for entry in tree["tree"] if entry["type"] == "blob"}
    wanted = ["pkg/core.py", "data/blob.bin", "data/latin1.txt", "data/huge.py"]
    aliases = "\n".join(
        f'b{i}: object(oid: "{shas[path]}") {{ ... on Blob {{ text isBinary isTruncated '
        "byteSize } }"
        for i, path in enumerate(wanted)
    )
    missing = f'\nb9: object(oid: "{"f" * 40}") {{ ... on Blob {{ text }} }}'
    query = BLOB_QUERY.replace("{aliases}", aliases + missing)
    status, answer = await graphql(
        sim, {"query": query, "variables": {"owner": "acme", "name": "bus"}}
    )
    assert status == 200 and "errors" not in answer
    found = answer["data"]["repository"]
    assert found["b0"] == {
        "text": "X = 2\n",
        "isBinary": False,
        "isTruncated": False,
        "byteSize": 6,
    }
    assert found["b1"]["isBinary"] is True and found["b1"]["text"] is None
    assert found["b2"]["text"] is None and found["b2"]["isBinary"] is None
    assert found["b3"]["isTruncated"] is True and len(found["b3"]["text"]) == BLOB_TEXT_LIMIT
    assert found["b9"] is None
    assert sim.calls["POST /graphql"] == 1


async def test_graphql_reads_a_file_at_a_commit_by_expression(sim: Simulator) -> None:
    """`object(expression: "sha:path")`: the file at that commit (the base's, not the
    head's), null for a path it does not have or a commit GitHub does not know."""
    pr = sim.world.scenario.pull_requests[0]
    asked = {
        "b0": f"{pr.base_sha}:pkg/core.py",
        "b1": f"{pr.head_sha}:pkg/core.py",
        "b2": f"{pr.head_sha}:docs/readme.md",
        "b3": f"{'e' * 40}:pkg/core.py",
    }
    aliases = "\n".join(
        f'{alias}: object(expression: "{expression}") {{ ... on Blob {{ text }} }}'
        for alias, expression in asked.items()
    )
    query = BLOB_QUERY.replace("{aliases}", aliases)
    _, answer = await graphql(sim, {"query": query, "variables": {"owner": "acme", "name": "bus"}})
    found = answer["data"]["repository"]
    assert found["b0"]["text"] == "X = 1\n"
    assert found["b1"]["text"] == "X = 2\n"
    assert found["b2"] is None and found["b3"] is None


async def test_graphql_errors_as_github_answers_them(sim: Simulator) -> None:
    query = BLOB_QUERY.replace("{aliases}", "")
    _, other = await graphql(sim, {"query": query, "variables": {"owner": "acme", "name": "x"}})
    assert other["data"] == {"repository": None}
    assert other["errors"][0]["type"] == "NOT_FOUND"
    assert (
        "Could not resolve to a Repository with the name 'acme/x'." in other["errors"][0]["message"]
    )
    _, unparsed = await graphql(sim, {"query": "{ viewer { login } }"})
    assert "data" not in unparsed and unparsed["errors"]
