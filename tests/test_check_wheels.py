"""scripts/check_wheels.py's rule, on made-up index listings (the script itself reads the
package index, so CI runs it and pytest does not): pip installs the newest version that
fits, and builds it from source when that version has no wheel for the platform."""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import parse_tag
from packaging.version import Version

from scripts.check_wheels import TARGETS, Release, problem, requirements

LINUX_ARM = next(t for t in TARGETS if t.name == "linux-aarch64")
MAC_INTEL = next(t for t in TARGETS if t.name == "macos-x86_64")


def release(version: str, tag: str | None = None, requires: str = "") -> Release:
    tags = None if tag is None else frozenset(parse_tag(tag))
    return Release(Version(version), tags, SpecifierSet(requires))


def test_a_newer_source_only_release_is_built_even_when_an_older_has_a_wheel() -> None:
    listing = [
        release("0.7.23", "cp312-cp312-manylinux2014_aarch64"),
        release("0.9.1", "cp312-cp312-manylinux2014_x86_64"),
        release("0.9.1"),
    ]
    assert problem(Requirement("hyperscan"), listing, LINUX_ARM, "3.12") == (
        "hyperscan: 0.9.1 has no wheel for linux-aarch64 python 3.12"
    )
    # Held back to the release with a wheel, it installs.
    assert problem(Requirement("hyperscan<0.9"), listing, LINUX_ARM, "3.12") is None


def test_pure_wheels_newer_glibc_and_older_macos_tags_count() -> None:
    assert problem(Requirement("x"), [release("1", "py3-none-any")], MAC_INTEL, "3.13") is None
    newer_glibc = [release("1", "cp311-abi3-manylinux_2_28_aarch64")]
    assert problem(Requirement("x"), newer_glibc, LINUX_ARM, "3.13") is None
    old_macos = [release("1", "cp312-cp312-macosx_10_9_x86_64")]
    assert problem(Requirement("x"), old_macos, MAC_INTEL, "3.12") is None
    assert problem(Requirement("x"), old_macos, MAC_INTEL, "3.13") == (
        "x: no release installs on macos-x86_64 python 3.13"
    )


def test_a_release_for_other_pythons_is_passed_over() -> None:
    listing = [release("2", "py3-none-any", ">=3.14"), release("1", "py3-none-any")]
    assert problem(Requirement("x"), listing, LINUX_ARM, "3.12") is None
    assert problem(Requirement("x>=2"), listing, LINUX_ARM, "3.12") is not None


def test_markers_are_read_for_the_target_not_this_machine() -> None:
    names = {r.name for r in requirements(LINUX_ARM, "3.12")}
    assert "hyperscan" not in names and "uvloop" in names
    windows = next(t for t in TARGETS if t.name == "windows-amd64")
    names = {r.name for r in requirements(windows, "3.12")}
    assert "hyperscan" in names and "uvloop" not in names
    image_arm = next(t for t in TARGETS if t.name == "image-arm64")
    assert "hyperscan" in {r.name for r in requirements(image_arm, "3.12")}
