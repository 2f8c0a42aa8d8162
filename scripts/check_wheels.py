"""Check that the README's install command needs no compiler on any platform the project claims.

For each target (Linux x86_64 and aarch64, macOS Intel and Apple silicon, Windows x86-64,
Python 3.11 to 3.13), every requirement of `.[dev]` that applies there (markers evaluated for
the target) must have a wheel for it in the version pip would pick: pip prefers the newest
version, and builds it from source when that version has no wheel for the platform, even
when an older one has. A pure-Python wheel (`py3-none-any`) is a wheel. The image's
platforms (deploy/Dockerfile) are checked with the `hyperscan` extra too.

The package index's listing of each requirement (the JSON form of the simple API that pip
reads, from pip's index or PIP_INDEX_URL) is fetched once and matched against every target's
wheel tags here: `pip download --platform` fetched whole wheels, minutes for the matrix.
Direct requirements only: their own dependencies are not checked (pip's `--no-deps`). It
needs the index, so CI runs it (.ci/run), not pytest.

    python scripts/check_wheels.py [--python 3.12] [--target linux-aarch64]

Exit status 1 when a requirement has no wheel on a target, naming both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging import tags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from pip._internal.models.index import PyPI

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12", "3.13")
# Linux targets: glibc 2.34 (Debian 12, Ubuntu 22.04, RHEL 9) and older tags. macOS: 14.
_GLIBC_MINOR = 34
_MACOS = (14, 0)


@dataclass(frozen=True)
class Target:
    name: str
    # PEP 508 marker values of this platform.
    sys_platform: str
    platform_machine: str
    extras: tuple[str, ...] = ("dev",)
    pythons: tuple[str, ...] = PYTHONS

    def platforms(self) -> list[str]:
        machine = self.platform_machine
        if self.sys_platform == "linux":
            legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
            names = []
            for minor in range(_GLIBC_MINOR, 4, -1):
                names.append(f"manylinux_2_{minor}_{machine}")
                if minor in legacy:
                    names.append(f"{legacy[minor]}_{machine}")
            return [*names, f"linux_{machine}"]
        if self.sys_platform == "darwin":
            return list(tags.mac_platforms(_MACOS, machine))
        return ["win_amd64"]

    def tags(self, python: str) -> set[tags.Tag]:
        version = tuple(int(part) for part in python.split("."))
        platforms = self.platforms()
        return {
            *tags.cpython_tags(version, platforms=platforms),
            *tags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms),
        }

    def environment(self, python: str) -> dict[str, str]:
        return {
            "sys_platform": self.sys_platform,
            "platform_system": {"linux": "Linux", "darwin": "Darwin"}.get(
                self.sys_platform, "Windows"
            ),
            "platform_machine": self.platform_machine,
            "python_version": python,
            "python_full_version": python + ".0",
            "os_name": "nt" if self.sys_platform == "win32" else "posix",
            "implementation_name": "cpython",
            "platform_python_implementation": "CPython",
            "extra": "",
        }


TARGETS = (
    Target("linux-x86_64", "linux", "x86_64"),
    Target("linux-aarch64", "linux", "aarch64"),
    Target("macos-x86_64", "darwin", "x86_64"),
    Target("macos-arm64", "darwin", "arm64"),
    Target("windows-amd64", "win32", "AMD64"),
    # deploy/Dockerfile's platforms: python:3.12-slim (Debian 12), with Hyperscan.
    Target("image-amd64", "linux", "x86_64", ("hyperscan",), ("3.12",)),
    Target("image-arm64", "linux", "aarch64", ("hyperscan",), ("3.12",)),
)


def requirements(target: Target, python: str) -> list[Requirement]:
    """The project's requirements (runtime and `target.extras`) that apply on the target."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in target.extras:
        lines += project["optional-dependencies"][extra]
    environment = target.environment(python)
    found = [Requirement(line) for line in lines]
    return [r for r in found if r.marker is None or r.marker.evaluate(environment)]


@dataclass(frozen=True)
class Release:
    """One file of a project on the index."""

    version: Version
    wheel_tags: frozenset[tags.Tag] | None  # None: a source distribution
    requires_python: SpecifierSet


def listing(name: str) -> list[Release]:
    index = os.environ.get("PIP_INDEX_URL", PyPI.simple_url).rstrip("/")
    request = urllib.request.Request(
        f"{index}/{canonicalize_name(name)}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        files = json.load(answer)["files"]
    return [release for f in files if not f.get("yanked") and (release := _release(f))]


def _release(file: dict[str, object]) -> Release | None:
    filename = str(file["filename"])
    requires = SpecifierSet(str(file.get("requires-python") or ""))
    try:
        if filename.endswith(".whl"):
            _, version, _, wheel_tags = parse_wheel_filename(filename)
            return Release(version, frozenset(wheel_tags), requires)
        if filename.endswith((".tar.gz", ".zip")):
            return Release(parse_sdist_filename(filename)[1], None, requires)
    except (ValueError, InvalidVersion):
        return None  # a name pip would not read either
    return None


def problem(
    requirement: Requirement, releases: Iterable[Release], target: Target, python: str
) -> str | None:
    """Why pip would build `requirement` from source on the target, or None."""
    supported = target.tags(python)
    usable = [
        r
        for r in releases
        if requirement.specifier.contains(r.version)
        and r.requires_python.contains(python + ".0")
        and (r.wheel_tags is None or r.wheel_tags & supported)
    ]
    if not usable:
        return f"{requirement}: no release installs on {target.name} python {python}"
    newest = max(r.version for r in usable)
    if any(r.version == newest and r.wheel_tags is not None for r in usable):
        return None
    return f"{requirement}: {newest} has no wheel for {target.name} python {python}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", choices=PYTHONS)
    parser.add_argument("--target", action="append", choices=[t.name for t in TARGETS])
    args = parser.parse_args()
    cells = [
        (target, python)
        for target in TARGETS
        if not args.target or target.name in args.target
        for python in target.pythons
        if not args.python or python in args.python
    ]
    names = sorted({r.name for cell in cells for r in requirements(*cell)})
    with ThreadPoolExecutor(max_workers=8) as pool:
        releases = dict(zip(names, pool.map(listing, names), strict=True))
    failed = 0
    for target, python in cells:
        found = [problem(r, releases[r.name], target, python) for r in requirements(target, python)]
        problems = [p for p in found if p]
        failed += bool(problems)
        print(f"{target.name} python {python}: {'NO WHEEL' if problems else 'ok'}")
        for p in problems:
            print(f"    {p}")
    print(f"wheels: {len(cells) - failed} of {len(cells)} targets install from wheels alone")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
