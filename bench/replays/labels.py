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
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    parser.add_argument(
        "--history", type=int, default=0, help="pairs per test and truth from real commits"
    )
    parser.add_argument(
        "--removals",
        type=int,
        default=0,
        help="also label this many real commits that remove or rename away a source file",
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    return parser


def resolve(git_dir: Path, commit: str) -> str:
    command = ["git", f"--git-dir={git_dir}", "rev-parse", f"{commit}^{{commit}}"]
    return subprocess.run(command, capture_output=True, check=True, text=True).stdout.strip()


def checkout(git_dir: Path, commit: str) -> tempfile.TemporaryDirectory[str]:
    """The commit's files in a temporary folder, read through a temporary index (the
    mirror is left as it is; `git archive` would drop the export-ignore'd tests)."""
    folder = tempfile.TemporaryDirectory(prefix="replay-")
    index = Path(folder.name) / ".replay-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    git = ["git", f"--git-dir={git_dir}", f"--work-tree={folder.name}"]
    subprocess.run([*git, "read-tree", commit], env=env, check=True, capture_output=True)
    subprocess.run([*git, "checkout-index", "-a"], env=env, check=True, capture_output=True)
    index.unlink()
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
    closures: Mapping[str, Iterable[str]],
    candidates: Iterable[str],
    per_side: int,
    history: Sequence[tuple[str, list[str]]] = (),
    per_commit: int = 0,
) -> list[dict[str, Any]]:
    """Per test, up to `per_side` single changed files inside its closure and as many
    outside; then up to `per_commit` real commits (`history`: sha, changed paths) that meet
    the closure and as many that do not, each changing what that commit changed."""
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
        chosen += _real(test, inside, history, per_commit)
    return chosen


def _real(
    test: str, inside: set[str], history: Sequence[tuple[str, list[str]]], per_commit: int
) -> list[dict[str, Any]]:
    """The most recent commits that meet the closure and that do not, `per_commit` each."""
    found: dict[str, list[dict[str, Any]]] = {"related": [], "unrelated": []}
    for sha, changed in history:
        if test in changed:
            continue  # the test file itself changed: related by the name rules alone
        truth = "related" if inside.intersection(changed) else "unrelated"
        if len(found[truth]) < per_commit:
            found[truth].append({"test": test, "changed": changed, "truth": truth, "from": sha})
    return found["related"] + found["unrelated"]


def history(
    git_dir: Path, commit: str, root: Path, source: Callable[[str], bool], count: int = 300
) -> list[tuple[str, list[str]]]:
    """The last `count` commits before `commit` (merges left out) that change a source file,
    with the paths they change that are still files at `commit` (the pull request is
    replayed on it)."""
    command = [
        "git",
        f"--git-dir={git_dir}",
        "log",
        "--no-merges",
        "--format=@%H",
        "--name-only",
        f"-n{count}",
        f"{commit}~1",
    ]
    out = subprocess.run(command, capture_output=True, check=True, text=True).stdout
    found: list[tuple[str, list[str]]] = []
    for block in out.split("@")[1:]:
        sha, *names = [line for line in block.splitlines() if line]
        changed = sorted({n for n in names if (root / n).is_file()})
        if any(source(path) for path in changed):
            found.append((sha, changed))
    return found


def removing_commits(
    git_dir: Path, commit: str, source: Callable[[str], bool], count: int, scan: int = 2000
) -> list[tuple[str, list[str]]]:
    """Up to `count` commits up to `commit` (merges left out, newest first) that remove a
    source file or rename one away, each with every path it changes (a rename's two
    names, as GitHub lists a pull request's files)."""
    command = ["git", f"--git-dir={git_dir}", "log", "--no-merges", "-M", "--format=@%H"]
    command += ["--name-status", f"-n{scan}", commit]
    out = subprocess.run(command, capture_output=True, check=True, text=True).stdout
    found: list[tuple[str, list[str]]] = []
    for block in out.split("@")[1:]:
        sha, *lines = [line for line in block.splitlines() if line]
        rows = [line.split("\t") for line in lines]
        gone = [row[1] for row in rows if row[0][0] in "DR" and len(row) > 1 and source(row[1])]
        if gone and len(found) < count:
            found.append((sha, sorted({path for row in rows for path in row[1:]})))
    return found


def removals(
    args: argparse.Namespace,
    commit: str,
    language: str,
    labelled_by: dict[str, Any],
    source: Callable[[str], bool],
    closures_at: Callable[[Path, list[str]], Mapping[str, Iterable[str]]],
) -> None:
    """Label `--removals` real commits that remove or rename away a source file: per test
    present before and after, the commit's changes, "related" when one of them is in the
    test's closure before the commit (where the removed file still was) or after it. Each
    commit is an entry of its own (`save`), replayed at that commit."""
    for sha, changed in removing_commits(args.git_dir, commit, source, args.removals):
        closures: dict[str, set[str]] = {}
        try:
            for at in (f"{sha}^", sha):
                with checkout(args.git_dir, resolve(args.git_dir, at)) as folder:
                    root = Path(folder).resolve()
                    tests = [test for test in args.tests if (root / test).is_file()]
                    for test, found in closures_at(root, tests).items():
                        closures.setdefault(test, set()).update(found)
        except subprocess.CalledProcessError as error:  # the tool refused a commit: no label
            print(f"{sha}: not labelled ({error})", file=sys.stderr)
            continue
        chosen = [
            {
                "test": test,
                "changed": changed,
                "truth": "related" if closure.intersection(changed) else "unrelated",
                "from": sha,
            }
            for test, closure in sorted(closures.items())
            if test not in changed and _both(args.git_dir, sha, test)
        ]
        if chosen:
            labelled = {**labelled_by, "removals": args.removals}
            save(args.manifest, entry(args, sha, language, labelled, chosen))


def _both(git_dir: Path, sha: str, test: str) -> bool:
    """Whether the test file is in the commit and in its parent."""
    command = ["git", f"--git-dir={git_dir}", "cat-file", "-e"]
    return all(
        subprocess.run([*command, f"{at}:{test}"], capture_output=True).returncode == 0
        for at in (f"{sha}^", sha)
    )


def _key(entry: dict[str, Any]) -> tuple[str, bool, str]:
    """A repository has one entry of drawn pairs, and one per labelled removing commit."""
    removal = "removals" in entry["labelled_by"]
    return entry["repository"], removal, entry["commit"] if removal else ""


def save(manifest: Path, entry: dict[str, Any]) -> None:
    """Put `entry` in the manifest, in place of an earlier one of the same `_key`."""
    data = json.loads(manifest.read_text()) if manifest.exists() else {"repositories": []}
    kept = [e for e in data["repositories"] if _key(e) != _key(entry)]
    data["repositories"] = sorted([*kept, entry], key=lambda e: (e["language"], *_key(e)))
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
