"""Label Go pairs with `go list -deps -test -json`.

A test file's closure is its test binary's files: every package `go list -e -deps -test`
lists for the test file's package that lies in the checkout, with its Go, cgo and embedded
files, and the package's own test files (`_test.go`, internal and external: one binary).
Run offline (GOPROXY=off), with the checkout's go.mod cut to its module and go lines
(go.sum removed): a package of another module is then not loaded (it is not the
repository's anyway), and the module graph needs no download.

    python -m bench.replays.label_go --git-dir M --repository owner/name [--commit SHA] \
        --tests pkg/a_test.go ...
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from bench.replays import labels

OWN = ("GoFiles", "CgoFiles", "EmbedFiles")
TESTS = ("TestGoFiles", "XTestGoFiles", "TestEmbedFiles", "XTestEmbedFiles")
OFFLINE = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local", "GOWORK": "off"}


def packages(root: Path, folder: str) -> list[dict[str, Any]]:
    command = ["go", "list", "-e", "-deps", "-test", "-json", f"./{folder}" if folder else "."]
    env = {**os.environ, **OFFLINE}
    out = subprocess.run(command, cwd=root, env=env, capture_output=True, check=True).stdout
    decoder, text, at, found = json.JSONDecoder(), out.decode(), 0, []
    while at < len(text.rstrip()):
        value, at = decoder.raw_decode(text, at)
        found.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


def offline(root: Path) -> None:
    """Cut every go.mod's requirements: other modules are not needed (module doc)."""
    for mod in root.rglob("go.mod"):
        kept = [
            line for line in mod.read_text().splitlines() if line.startswith(("module ", "go "))
        ]
        mod.write_text("\n".join(kept) + "\n")
        (mod.parent / "go.sum").unlink(missing_ok=True)


def closure(root: Path, test: str) -> set[str]:
    folder = test.rpartition("/")[0]
    found: set[str] = set()
    for package in packages(root, folder):
        directory = Path(package.get("Dir", ""))
        if not directory.is_relative_to(root):
            continue
        names = [n for key in OWN for n in package.get(key) or []]
        if directory == root / folder:
            names += [n for key in TESTS for n in package.get(key) or []]
        found |= {
            str((directory / n).relative_to(root))
            for n in names
            if (directory / n).is_relative_to(root)
        }
    return found


def is_source(path: str) -> bool:
    return path.endswith(".go") and not path.endswith("_test.go")


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    version = subprocess.run(["go", "version"], capture_output=True, text=True).stdout
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        offline(root)
        closures = {test: closure(root, test) for test in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "go list -e -deps -test -json",
        "version": version.strip(),
        "script": "bench/replays/label_go.py",
        "options": {"tests": args.tests, "per_side": args.per_side, "history": args.history},
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "go", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "go",
            tool,
            is_source,
            lambda root, tests: _offline_closures(root, tests),
        )


def _offline_closures(root: Path, tests: list[str]) -> dict[str, set[str]]:
    offline(root)
    return {test: closure(root, test) for test in tests}


if __name__ == "__main__":
    main()
