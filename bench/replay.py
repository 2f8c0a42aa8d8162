"""The bot's verdicts on real repositories at real commits, against each ecosystem's own tools.

Each pair of `bench/replays/manifest.json` is a commit of a real repository, a test file and
the files a pull request would change; its truth ("related" or "unrelated") says whether a
changed file is in the test's closure as the language's own tool sees it (modulefinder,
esbuild's metafile, `go list -deps -test`, cargo and rustc, javac, kotlinc, mcs, Ruby's and
PHP's lists of loaded files: the `bench/replays/label_*.py` scripts, bench/README.md). For each
pair the bench builds the commit's `Tree` from a local git mirror, drives the bot's real
walk (`bot.triage.imports.walk`) over what it wants, round by round, as the handler does,
then asks `verdict.decide_extraction` with a passing rerun (an unrelated verdict becomes
"flaky"), for a job on a Linux runner, where the labels were computed (a Go file built only
on Windows is then outside the job's build, as `go list` on Linux says).

Per language it prints the pairs, the precision of "flaky"/"unrelated" (of the pairs the
bot cleared, the share truly unrelated), the recall (of the truly unrelated pairs, the share
cleared), the share of "unknown" with its reasons (the walks' cuts, paths and numbers
blanked), the GitHub calls per triage (1 tree + the GraphQL queries of each round, split by
the handler's own rules, `plan.plan_reads` and `plan.batches`; none when no walk is
planned) and every
pair cleared although related (`false_cleared`: a bug), and every truly unrelated pair said
related (`unrelated_said_related`: recall lost); and the same figures for the pairs that
change a path gone at their commit, removed or renamed away (`removed_files`).

    python bench/replay.py [--manifest bench/replays/manifest.json] [--mirrors DIR]
                           [--files N] [--bytes N] [--file-bytes N]

The mirrors are `fetch`ed bare repositories, `DIR/<mirror>/repo` or `DIR/<mirror>` (default
$REPLAY_MIRRORS, else /work/.mirror). Every int field of `WalkLimits` is an option. Prints
JSON; never asserts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.handlers.sources import QUERY
from bot.shared import Source, Tree, TreeFile, Unreadable
from bot.triage import manifests
from bot.triage.footprint import plan_walk
from bot.triage.imports import ImportWalk, WalkLimits, walk
from bot.triage.imports.plan import batches, plan_reads
from bot.triage.imports.walk import ImportsMemo
from bot.triage.models import Extraction, Failure, Verdict
from bot.triage.runner_header import RunnerHeader
from bot.triage.verdict import decide_extraction

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "replays" / "manifest.json"
CLEARED = frozenset({Verdict.FLAKY, Verdict.UNRELATED})
FRAMEWORKS = {"csharp": "dotnet", "go": "go", "python": "pytest", "rust": "cargo"}
_PATHISH = re.compile(r"[\w.@+-]*(?:/[\w.@+-]+)+|[\w-]+\.\w{1,5}\b")
_NUMBER = re.compile(r"\d[\d,]*")

# The labels were computed on this Linux machine: the job they stand for ran on Linux.
LABELLED_ON = RunnerHeader(os="Linux")


@dataclass(frozen=True)
class Pair:
    test: str
    changed: tuple[str, ...]
    truth: str  # "related" or "unrelated"
    # The commit of the repository's history whose changes these are (its parent is the
    # PR's base); empty for a change made up for one file, which has no base to compare.
    origin: str = ""


@dataclass(frozen=True)
class Checkout:
    repository: str
    mirror: str
    commit: str
    language: str
    pairs: tuple[Pair, ...]


@dataclass(frozen=True)
class Triage:
    """One pair's outcome: the verdict, the walk (None: none planned) and its calls."""

    pair: Pair
    verdict: Verdict
    walk: ImportWalk | None
    calls: int
    reasons: tuple[str, ...] = ()
    gone: bool = False  # a changed path is not in the commit's tree (removed, renamed away)
    evidence: str = ""  # the decision's one-line evidence: why "related", say


def load_manifest(data: Mapping[str, Any]) -> list[Checkout]:
    """The manifest's checkouts (module doc); a pair's truth must be related or unrelated."""
    checkouts = []
    for entry in data["repositories"]:
        pairs = []
        for raw in entry["pairs"]:
            if raw["truth"] not in ("related", "unrelated"):
                raise ValueError(f"{entry['repository']}: truth {raw['truth']!r}")
            origin = str(raw.get("from", ""))
            pairs.append(Pair(raw["test"], tuple(raw["changed"]), raw["truth"], origin))
        checkouts.append(
            Checkout(
                entry["repository"],
                entry["mirror"],
                entry["commit"],
                entry["language"],
                tuple(pairs),
            )
        )
    return checkouts


@dataclass
class Git:
    """A commit of a bare mirror read with git: its tree, and blob texts by SHA."""

    git_dir: Path
    texts: dict[str, Source] = field(default_factory=dict)

    def tree(self, commit: str) -> Tree:
        out = self._run("ls-tree", "-r", "-l", "-z", commit)
        files = {}
        for line in out.split(b"\0"):
            if not line:
                continue
            meta, _, path = line.partition(b"\t")
            _mode, kind, sha, size = meta.split()
            if kind == b"blob":
                files[path.decode()] = TreeFile(sha.decode(), int(size))
        return Tree(files=files)

    def read(self, shas: Iterable[str]) -> None:
        wanted = [sha for sha in dict.fromkeys(shas) if sha not in self.texts]
        if not wanted:
            return
        out = self._run("cat-file", "--batch", stdin="\n".join(wanted).encode() + b"\n")
        at = 0
        for sha in wanted:
            end = out.index(b"\n", at)
            size = int(out[at:end].split()[2])
            self.texts[sha] = _source(out[end + 1 : end + 1 + size])
            at = end + 1 + size + 1

    def at(self, commit: str, path: str) -> Source | None:
        """The file at a commit (`commit:path`), None when it is not there."""
        try:
            return _source(self._run("show", f"{commit}:{path}"))
        except subprocess.CalledProcessError:
            return None

    def _run(self, *args: str, stdin: bytes | None = None) -> bytes:
        command = ["git", f"--git-dir={self.git_dir}", *args]
        return subprocess.run(command, input=stdin, capture_output=True, check=True).stdout


def _source(blob: bytes) -> Source:
    """What GitHub's GraphQL `text` gives for a blob: none for a binary one."""
    if b"\0" in blob[:8000]:
        return Unreadable("binary")
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return Unreadable("not text")


def drive(
    test_file: str,
    tree: Tree,
    read: Callable[[list[str]], Mapping[str, Source]],
    limits: WalkLimits,
) -> tuple[ImportWalk, int]:
    """The walk as the handler makes it (`sources._walk_all`): ask, read what is wanted with
    each round's queries filled by the planner (`plan_reads`), ask again until nothing is
    wanted; and the GitHub calls it spent: the tree, then each round's queries."""
    sources: dict[str, Source] = {}
    memo: ImportsMemo = {}
    calls = 1
    found = walk(test_file, tree, sources, limits, memo)
    while found.wanted:
        missing = [path for path in found.wanted if path not in sources]
        plan = plan_reads([test_file], missing, tree, set(sources), QUERY, limits.file_bytes)
        calls += len(batches(plan, tree, QUERY))
        sources.update(read(plan))
        found = walk(test_file, tree, sources, limits, memo)
    return found, calls


def triage(
    pair: Pair,
    language: str,
    tree: Tree,
    walked: Callable[[str], tuple[ImportWalk, int]],
    inert: Mapping[str, str] | None = None,
) -> Triage:
    """The bot's verdict on one pair: the handler's plan, the walk, `decide` after a pass on
    rerun (`inert`: the changed manifests whose change cannot steer resolution)."""
    framework = FRAMEWORKS.get(language, language)
    failure = Failure(
        test_id=f"{pair.test}::replay", name="replay", file=pair.test, framework=framework
    )
    plan = plan_walk(failure, pair.changed)
    found, calls = walked(pair.test) if plan is not None else (None, 0)
    imports = {plan.key: found} if plan is not None and found is not None else {}
    files = tree.files.keys() if found is not None else None
    [decision] = decide_extraction(
        Extraction(failures=[failure], runner=LABELLED_ON),
        pair.changed,
        passed_on_rerun=True,
        imports=imports,
        files=files,
        inert=inert,
    )
    reasons: tuple[str, ...] = ()
    if decision.verdict is Verdict.UNKNOWN:
        cut = found.cut if found is not None and found.cut else ()
        incomplete = [item.text for item in decision.items if item.kind == "incomplete"]
        reasons = tuple(blank(text) for text in (cut or incomplete))
    gone = any(path not in tree.files for path in pair.changed)
    return Triage(pair, decision.verdict, found, calls, reasons, gone, decision.evidence)


def blank(text: str) -> str:
    """A reason with its paths and numbers blanked, so that like reasons group together."""
    return _NUMBER.sub("N", _PATHISH.sub("<file>", text))


def score(triages: Sequence[Triage]) -> dict[str, Any]:
    """Per language figures (module doc) of the pairs' triages."""
    unrelated = [t for t in triages if t.pair.truth == "unrelated"]
    cleared = [t for t in triages if t.verdict in CLEARED]
    right = [t for t in cleared if t.pair.truth == "unrelated"]
    unknown = [t for t in triages if t.verdict is Verdict.UNKNOWN]
    walked = [t for t in triages if t.walk is not None]
    reasons = Counter(reason for t in unknown for reason in dict.fromkeys(t.reasons))
    return {
        "pairs": len(triages),
        "truly_related": len(triages) - len(unrelated),
        "truly_unrelated": len(unrelated),
        "verdicts": dict(Counter(str(t.verdict) for t in triages)),
        "precision": _share(len(right), len(cleared)),
        "recall": _share(len(right), len(unrelated)),
        "unknown_share": _share(len(unknown), len(triages)),
        "unknown_reasons": dict(reasons.most_common()),
        "calls_per_triage": _share(sum(t.calls for t in triages), len(triages)),
        "calls_per_walked_triage": _share(sum(t.calls for t in walked), len(walked)),
        "files_read_per_walk": _share(sum(len(t.walk.read) for t in walked if t.walk), len(walked)),
        "false_cleared": [_detail(t) for t in cleared if t.pair.truth == "related"],
        "unrelated_said_related": [_detail(t) for t in unrelated if t.verdict is Verdict.RELATED],
        "removed_files": _removed(triages),
    }


def _removed(triages: Sequence[Triage]) -> dict[str, Any]:
    """The figures of the pairs that remove or rename away a file (a real commit's)."""
    gone = [t for t in triages if t.gone]
    unrelated = [t for t in gone if t.pair.truth == "unrelated"]
    cleared = [t for t in gone if t.verdict in CLEARED]
    right = [t for t in cleared if t.pair.truth == "unrelated"]
    unknown = [t for t in gone if t.verdict is Verdict.UNKNOWN]
    return {
        "pairs": len(gone),
        "truly_unrelated": len(unrelated),
        "precision": _share(len(right), len(cleared)),
        "recall": _share(len(right), len(unrelated)),
        "unknown_share": _share(len(unknown), len(gone)),
    }


def _share(part: float, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _detail(found: Triage) -> dict[str, Any]:
    walked = found.walk
    return {
        "test": found.pair.test,
        "changed": list(found.pair.changed),
        "verdict": str(found.verdict),
        "evidence": found.evidence,
        "walk": walked.describe() if walked is not None else None,
    }


def replay(checkout: Checkout, git: Git, limits: WalkLimits) -> list[Triage]:
    tree = git.tree(checkout.commit)
    walks: dict[str, tuple[ImportWalk, int]] = {}

    def read(paths: list[str]) -> dict[str, Source]:
        git.read(tree.files[path].sha for path in paths)
        return {path: git.texts[tree.files[path].sha] for path in paths}

    def walked(test_file: str) -> tuple[ImportWalk, int]:
        if test_file not in walks:
            walks[test_file] = drive(test_file, tree, read, limits)
        return walks[test_file]

    return [
        triage(
            pair, checkout.language, tree, walked, inert_changes(git, pair, walked(pair.test)[0])
        )
        for pair in checkout.pairs
    ]


def inert_changes(git: Git, pair: Pair, walk: ImportWalk | None) -> dict[str, str]:
    """As the bot's gather step (`sources.inert_changes`): each changed manifest whose change
    cannot steer resolution, compared between the change's base (its commit's parent) and
    head; none for a made-up change, which has no base."""
    if not pair.origin:
        return {}
    walked = manifests.Walked.of([walk]) if walk is not None else None
    found = {
        path: manifests.inert_change(
            path, git.at(f"{pair.origin}^", path), git.at(pair.origin, path), walked
        )
        for path in pair.changed
        if manifests.compared(path)
    }
    return {path: fields for path, fields in found.items() if fields is not None}


def mirror_dir(root: Path, mirror: str) -> Path:
    nested = root / mirror / "repo"
    return nested if nested.is_dir() else root / mirror


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    default_root = os.environ.get("REPLAY_MIRRORS", "/work/.mirror")
    parser.add_argument("--mirrors", type=Path, default=Path(default_root))
    parser.add_argument("--language", action="append", help="only these languages")
    for limit in dataclasses.fields(WalkLimits):
        if limit.type in (int, "int"):
            parser.add_argument(f"--{limit.name.replace('_', '-')}", type=int)
    args = parser.parse_args(argv)
    given = {f.name: getattr(args, f.name, None) for f in dataclasses.fields(WalkLimits)}
    limits = WalkLimits(**{name: value for name, value in given.items() if value is not None})
    checkouts = load_manifest(json.loads(args.manifest.read_text()))
    by_language: dict[str, list[Triage]] = defaultdict(list)
    missing = []
    for checkout in checkouts:
        if args.language and checkout.language not in args.language:
            continue
        git_dir = mirror_dir(args.mirrors, checkout.mirror)
        if not git_dir.is_dir():
            missing.append(checkout.repository)
            continue
        by_language[checkout.language] += replay(checkout, Git(git_dir), limits)
    result = {
        "limits": dataclasses.asdict(limits),
        "missing_mirrors": missing,
        "languages": {name: score(found) for name, found in sorted(by_language.items())},
        "all": score([t for found in by_language.values() for t in found]),
    }
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
