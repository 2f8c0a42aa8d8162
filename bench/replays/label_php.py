"""Label PHP pairs with PHP's own `get_included_files()`, after PHPUnit ran the test file.

A test file's closure is every file of the checkout PHP included while PHPUnit (Debian's)
ran it: the repository's bootstrap and autoloader (composer's, made offline with
`composer dump-autoload --dev`, or the project's own), the test and every class it loaded.
A hook prepended to the run (`auto_prepend_file`) writes the list at shutdown. The tests
run in the temporary checkout, `--timeout` seconds at most each; their outcome does not
matter, but a test PHPUnit cannot run (one written for a newer PHPUnit) loads little: pick
a commit whose tests this PHPUnit runs.

    python -m bench.replays.label_php --git-dir M --repository owner/name [--commit SHA] \
        --tests test/ATest.php ...
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bench.replays import labels

HOOK = """<?php
register_shutdown_function(static function (): void {
    file_put_contents(getenv('INCLUDED_OUT'), implode("\\n", get_included_files()));
});
"""
CONFIGS = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")


def autoloader(root: Path) -> list[str]:
    """PHPUnit's options for the project's autoloading: its configuration, else composer's."""
    env = {**os.environ, "COMPOSER_ALLOW_SUPERUSER": "1"}
    command = ["composer", "dump-autoload", "--dev", "--no-scripts", "--no-interaction"]
    subprocess.run(command, cwd=root, env=env, capture_output=True, check=True)
    if any((root / name).exists() for name in CONFIGS):
        return []
    return ["--no-configuration", "--bootstrap", "vendor/autoload.php"]


def closure(root: Path, test: str, options: list[str], timeout: float) -> set[str]:
    with tempfile.TemporaryDirectory() as out:
        hook, included = Path(out) / "hook.php", Path(out) / "included.txt"
        hook.write_text(HOOK)
        command = ["php", "-d", f"auto_prepend_file={hook}", "/usr/bin/phpunit", *options, test]
        env = {**os.environ, "INCLUDED_OUT": str(included)}
        subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=timeout)
        listed = included.read_text().splitlines() if included.exists() else []
    found = {test}
    for name in listed:
        path = Path(name).resolve()
        if path.is_relative_to(root) and path.is_file() and "vendor" not in path.parts:
            found.add(str(path.relative_to(root)))
    return found


def is_source(path: str) -> bool:
    return path.endswith(".php") and not path.endswith("Test.php") and "vendor/" not in path


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    version = subprocess.run(["phpunit", "--version"], capture_output=True, text=True).stdout
    php = subprocess.run(["php", "--version"], capture_output=True, text=True).stdout
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        options = autoloader(root)
        closures = {t: closure(root, t, options, args.timeout) for t in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "get_included_files() after phpunit ran the test file",
        "version": f"{version.strip()}; {php.splitlines()[0]}",
        "script": "bench/replays/label_php.py",
        "options": {"tests": args.tests, "per_side": args.per_side, "history": args.history},
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "php", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "php",
            tool,
            is_source,
            lambda root, tests: {
                t: closure(root, t, autoloader(root), args.timeout) for t in tests
            },
        )


if __name__ == "__main__":
    main()
