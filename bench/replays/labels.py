"""What the `label_*.py` scripts share: a checkout of a mirror's commit in a temporary
folder, the choice of pairs from each test's closure, and the manifest's entry.

A labeller computes, with its ecosystem's own tool, each chosen test file's closure (the
repository files that run for it); the pairs are then drawn from the repository's source
files of that language (test files left out): as many changed files inside the closure
("related") as outside it ("unrelated") per test, chosen by a fixed seed, so that a rerun
with the same tool gives the same manifest.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).resolve().parent / "manifest.json"


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--git-dir", type=Path, required=True, help="the bare mirror")
    parser.add_argument("--repository", required=True, help="owner/name")
    parser.add_argument("--mirror", help="its folder under the mirrors (default owner+name)")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--tests", nargs="+", required=True, help="test files to label")
    parser.add_argument("--per-side", type=int, default=3, help="pairs per test and truth")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    return parser


def resolve(git_dir: Path, commit: str) -> str:
    command = ["git", f"--git-dir={git_dir}", "rev-parse", f"{commit}^{{commit}}"]
    return subprocess.run(command, capture_output=True, check=True, text=True).stdout.strip()


def checkout(git_dir: Path, commit: str) -> tempfile.TemporaryDirectory[str]:
    """The commit's files in a temporary folder (`git archive`: no .git, nothing else)."""
    folder = tempfile.TemporaryDirectory(prefix="replay-")
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", commit], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", folder.name], input=archive, check=True)
    return folder


def present(root: Path, tests: Iterable[str]) -> None:
    """Stop when a test file is not in the checkout: its closure would be a guess."""
    missing = [test for test in tests if not (root / test).is_file()]
    if missing:
        raise SystemExit(f"not in the commit: {', '.join(missing)}")


def files(root: Path, keep: Callable[[str], bool]) -> list[str]:
    """The checkout's files (repository-relative) that `keep` accepts, sorted."""
    found = (str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    return sorted(path for path in found if keep(path))


def pairs(
    closures: Mapping[str, Iterable[str]], candidates: Iterable[str], per_side: int
) -> list[dict[str, Any]]:
    """Per test, up to `per_side` changed files inside its closure and as many outside."""
    pool = sorted(set(candidates))
    chosen: list[dict[str, Any]] = []
    for test, closure in sorted(closures.items()):
        inside = set(closure)
        rng = random.Random(f"{test}")
        related = [path for path in pool if path in inside and path != test]
        unrelated = [path for path in pool if path not in inside]
        side = min(per_side, len(related), len(unrelated)) or per_side
        for truth, options in (("related", related), ("unrelated", unrelated)):
            for path in sorted(rng.sample(options, min(side, len(options)))):
                chosen.append({"test": test, "changed": [path], "truth": truth})
    return chosen


def save(manifest: Path, entry: dict[str, Any]) -> None:
    """Put `entry` in the manifest, in place of an earlier one of the same repository."""
    data = json.loads(manifest.read_text()) if manifest.exists() else {"repositories": []}
    kept = [e for e in data["repositories"] if e["repository"] != entry["repository"]]
    data["repositories"] = sorted([*kept, entry], key=lambda e: (e["language"], e["repository"]))
    manifest.write_text(json.dumps(data, indent=1) + "\n")


def entry(
    args: argparse.Namespace,
    commit: str,
    language: str,
    labelled_by: dict[str, Any],
    chosen: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "repository": args.repository,
        "mirror": args.mirror or args.repository.replace("/", "+"),
        "commit": commit,
        "language": language,
        "labelled_by": labelled_by,
        "pairs": chosen,
    }
