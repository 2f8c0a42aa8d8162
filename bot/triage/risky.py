"""Changed paths that can break any test: CI workflows, lockfiles, build manifests,
Dockerfiles, shared test setup. They never make a failure related on their own (every test
would be), but they are named as a caveat and lower the confidence of "unrelated".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.triage.footprint import normalise_path
from bot.triage.globs import glob_matches

CONFIGURED = "listed in risky_paths"

# (what it is, gitignore-style globs); a glob without "/" matches at any depth.
BUILT_IN: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CI configuration", (".github/workflows/**", ".github/actions/**", ".circleci/**")),
    (
        "lockfile",
        (
            "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
            "bun.lock", "bun.lockb", "poetry.lock", "Pipfile.lock", "uv.lock", "pdm.lock",
            "Cargo.lock", "go.sum", "Gemfile.lock", "composer.lock", "gradle.lockfile",
            "packages.lock.json", "mix.lock",
        ),
    ),
    (
        "build manifest",
        (
            "package.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements*.txt",
            "Pipfile", "tox.ini", "noxfile.py", "go.mod", "go.work", "Cargo.toml", "Gemfile",
            "*.gemspec", "composer.json", "pom.xml", "build.gradle", "build.gradle.kts",
            "settings.gradle", "settings.gradle.kts", "gradle.properties", "Makefile",
            "CMakeLists.txt", "*.csproj", "*.fsproj", "*.vbproj", "*.sln",
            "Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props",
            "tsconfig.json",
        ),
    ),
    (
        "container image",
        ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "docker-compose*.yml", "compose.yaml"),
    ),
    (
        "shared test setup",
        (
            "conftest.py", "pytest.ini", "jest.config.*", "jest.setup.*", "vitest.config.*",
            "vitest.setup.*", "vitest.workspace.*", "setupTests.*", ".mocharc.*",
            "karma.conf.*",
        ),
    ),
)  # fmt: skip


def risky_changes(
    changed_paths: Iterable[str], configured: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(changed path, what makes it risky) for each risky path, in the given order, once."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for raw in changed_paths:
        path = normalise_path(raw)
        if path is None or path in seen:
            continue
        seen.add(path)
        why = _why_risky(path, configured)
        if why is not None:
            found.append((path, why))
    return found


def _why_risky(path: str, configured: Sequence[str]) -> str | None:
    for what, globs in BUILT_IN:
        if any(glob_matches(glob, path) for glob in globs):
            return what
    if any(glob_matches(glob, path) for glob in configured):
        return CONFIGURED
    return None
