"""Label Rust pairs with `cargo metadata` and rustc's dep-info.

A test target's closure is what cargo compiles for it from the repository: the test
target's own module tree; its crate's library, binaries (an integration test may run them)
and build script; and, through the path dependencies `cargo metadata` lists (normal, dev
and build ones of the test's crate, normal and build ones further on), each dependency's
library and build script. A target's module tree is the source files rustc's dep-info
names (`rustc --emit=dep-info`, every feature of the crate on: a superset of any build);
rustc writes it even when the registry crates it imports are missing, which they are here
(offline: `cargo metadata --offline --no-deps`).

    python -m bench.replays.label_rust --git-dir M --repository owner/name [--commit SHA] \
        --tests crates/a/tests/b.rs ...
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.replays import labels

OWN_KINDS: tuple[str, ...] = ("lib", "rlib", "proc-macro", "bin", "custom-build")
DEP_KINDS: tuple[str, ...] = ("lib", "rlib", "proc-macro", "custom-build")


def metadata(root: Path) -> dict[str, Any]:
    command = ["cargo", "metadata", "--offline", "--no-deps", "--format-version", "1"]
    out = subprocess.run(command, cwd=root, capture_output=True, check=True).stdout
    return dict(json.loads(out))


def tree_of(root: Path, package: dict[str, Any], src_path: str) -> set[str]:
    """The files rustc's dep-info names for one target (module doc)."""
    features = [f'--cfg=feature="{name}"' for name in package["features"]]
    with tempfile.TemporaryDirectory() as out:
        info = Path(out) / "deps.d"
        command = [
            "rustc",
            f"--edition={package.get('edition') or '2021'}",
            "--crate-type=lib",
            f"--emit=dep-info={info}",
            "--cap-lints=allow",
            *features,
            src_path,
        ]
        subprocess.run(command, cwd=root, capture_output=True)
        text = info.read_text() if info.exists() else ""
    first = text.split("\n", 1)[0].partition(":")[2]
    found = {str(Path(src_path).resolve().relative_to(root))}
    for name in first.split():
        path = (root / name).resolve()
        if path.is_relative_to(root) and path.is_file():
            found.add(str(path.relative_to(root)))
    return found


def closure(root: Path, data: dict[str, Any], test: str) -> set[str]:
    packages = {str(Path(p["manifest_path"]).parent): p for p in data["packages"]}
    target_path = str(root / test)
    owner = next(p for p in data["packages"] for t in p["targets"] if t["src_path"] == target_path)
    found = tree_of(root, owner, target_path)
    todo: list[tuple[dict[str, Any], tuple[str, ...], bool]] = [(owner, OWN_KINDS, True)]
    seen: set[str] = set()
    while todo:
        package, kinds, first = todo.pop()
        if package["id"] in seen:
            continue
        seen.add(package["id"])
        for target in package["targets"]:
            if any(kind in kinds for kind in target["kind"]):
                found |= tree_of(root, package, target["src_path"])
        for dep in package["dependencies"]:
            if dep.get("path") and (first or dep["kind"] != "dev"):
                todo.append((packages[dep["path"]], DEP_KINDS, False))
    return found


def is_source(path: str) -> bool:
    return path.endswith(".rs")


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    versions = [
        subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
        for tool in ("cargo", "rustc")
    ]
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        data = metadata(root)
        closures = {test: closure(root, data, test) for test in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "cargo metadata --offline --no-deps; rustc --emit=dep-info",
        "version": "; ".join(versions),
        "script": "bench/replays/label_rust.py",
        "options": {"tests": args.tests, "per_side": args.per_side, "history": args.history},
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "rust", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "rust",
            tool,
            is_source,
            lambda root, tests: {test: closure(root, metadata(root), test) for test in tests},
        )


if __name__ == "__main__":
    main()
