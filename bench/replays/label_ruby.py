"""Label Ruby pairs with Ruby's own `$LOADED_FEATURES`, after the test file ran.

A test file's closure is every file of the checkout in `$LOADED_FEATURES` once `ruby` has
loaded and run it (`ruby -Ilib -Itest -r<hook> test_file`: test-unit's and minitest's
autorun run the tests at exit, and the hook, registered first, writes the list last): what
the test required at load time and while running, autoloads included; and every file Ruby
compiled meanwhile (a `:script_compiled` TracePoint), since `Kernel#load` leaves what it
loads out of `$LOADED_FEATURES` (rake's test_rake_file_task.rb loads lib/rake/phony.rb so,
test_rake_rake_test_loader.rb lib/rake/rake_test_loader.rb). The tests run in the
temporary checkout, `--timeout` seconds at most each; their outcome does not matter.

    python -m bench.replays.label_ruby --git-dir M --repository owner/name [--commit SHA] \
        --tests test/test_a.rb ... [--load-path lib test]
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bench.replays import labels

HOOK = """compiled = []
TracePoint.new(:script_compiled) do |tp|
  compiled << tp.instruction_sequence.path unless tp.eval_script
end.enable
at_exit { File.write(ENV.fetch("FEATURES_OUT"), ($LOADED_FEATURES + compiled).join("\\n")) }
"""


def closure(root: Path, test: str, load_path: list[str], timeout: float) -> set[str]:
    with tempfile.TemporaryDirectory() as out:
        hook, features = Path(out) / "hook.rb", Path(out) / "features.txt"
        hook.write_text(HOOK)
        command = ["ruby", *(f"-I{p}" for p in load_path), f"-r{hook}", test]
        env = {**os.environ, "FEATURES_OUT": str(features)}
        subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=timeout)
        listed = features.read_text().splitlines() if features.exists() else []
    found = {test}
    for name in listed:
        path = Path(name).resolve()
        if path.is_relative_to(root) and path.is_file():
            found.add(str(path.relative_to(root)))
    return found


def is_source(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".rb") and not name.startswith("test_") and not name.endswith("_spec.rb")


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--load-path", nargs="*", default=["lib", "test"])
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    version = subprocess.run(["ruby", "--version"], capture_output=True, text=True).stdout
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        closures = {t: closure(root, t, args.load_path, args.timeout) for t in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "ruby $LOADED_FEATURES and the files compiled after the test file ran",
        "version": version.strip(),
        "script": "bench/replays/label_ruby.py",
        "options": {
            "tests": args.tests,
            "load_path": args.load_path,
            "per_side": args.per_side,
            "history": args.history,
        },
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "ruby", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "ruby",
            tool,
            is_source,
            lambda root, tests: {
                test: closure(root, test, args.load_path, args.timeout) for test in tests
            },
        )


if __name__ == "__main__":
    main()
