"""Label Python pairs with the standard library's `modulefinder`.

A test's closure is what modulefinder finds from the test file and the conftest.py files
pytest runs for it (its folder's and every parent's), with the import path pytest's
default "prepend" mode gives (the first folder upward without an __init__.py) followed by
the project's source roots (`--roots`, e.g. src). Only files in the checkout count.

    python -m bench.replays.label_python --git-dir M --repository owner/name \
        [--commit SHA] --roots src --tests tests/test_a.py ...
"""

from __future__ import annotations

import platform
from modulefinder import ModuleFinder
from pathlib import Path

from bench.replays import labels


def basedir(script: Path) -> Path:
    folder = script.parent
    while (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def conftests(root: Path, test: Path) -> list[Path]:
    found = []
    folder = test.parent
    while True:
        if (folder / "conftest.py").exists():
            found.append(folder / "conftest.py")
        if folder == root:
            return found
        folder = folder.parent


def closure(root: Path, test: str, roots: list[str]) -> set[str]:
    script = root / test
    found: set[str] = set()
    for run in [script, *conftests(root, script)]:
        finder = ModuleFinder(path=[str(basedir(run)), *(str(root / r) for r in roots)])
        finder.run_script(str(run))
        for module in finder.modules.values():
            path = Path(getattr(module, "__file__", None) or "")
            if path.is_absolute() and path.is_relative_to(root):
                found.add(str(path.relative_to(root)))
    return found


def is_source(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(".py")
        and not name.startswith("test_")
        and not name.endswith("_test.py")
        and name != "conftest.py"
        and not path.startswith("docs/")
    )


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--roots", nargs="*", default=["."], help="source roots")
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder)
        labels.present(root, args.tests)
        closures = {test: closure(root, test, args.roots) for test in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "modulefinder",
        "version": f"Python {platform.python_version()}",
        "script": "bench/replays/label_python.py",
        "options": {
            "roots": args.roots,
            "tests": args.tests,
            "per_side": args.per_side,
            "history": args.history,
        },
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "python", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "python",
            tool,
            is_source,
            lambda root, tests: {test: closure(root, test, args.roots) for test in tests},
        )


if __name__ == "__main__":
    main()
