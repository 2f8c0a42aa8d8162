"""Label Java pairs with `javac -verbose`.

A test file's closure is every source file javac parses to compile it (`[parsing started
...]`), with the Maven/Gradle source folders on its source path (`--sourcepath`, default
src/main/java and src/test/java) and JUnit's jars from Debian (junit5, junit4) on the class
path: javac reads a file of the source path when the code it compiles needs a class of it,
and compiles it in turn (`-implicit:class`). Other libraries are not on the class path here;
javac reports their missing symbols as errors and still parses what the repository's code
names, which is all the closure needs (nothing is run). Kotlin is not labelled (README).

    python -m bench.replays.label_java --git-dir M --repository owner/name [--commit SHA] \
        --tests src/test/java/a/BTest.java ... [--sourcepath src/main/java src/test/java]
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from bench.replays import labels

JARS = Path("/usr/share/java")
CLASS_PATH = (
    "junit-jupiter-api",
    "junit-jupiter-params",
    "apiguardian-api",
    "opentest4j",
    "junit4",
    "hamcrest",
)
_PARSED = re.compile(r"^\[parsing started \w+\[(?:([^:\]]+):)?([^\]]+)\]\]$", re.MULTILINE)


def closure(root: Path, test: str, sourcepath: list[str]) -> set[str]:
    jars = [str(JARS / f"{name}.jar") for name in CLASS_PATH if (JARS / f"{name}.jar").exists()]
    with tempfile.TemporaryDirectory() as out:
        command = [
            "javac",
            "-verbose",
            "-proc:none",
            "-implicit:class",
            "-Xmaxerrs",
            "100000",
            "-d",
            out,
            "-cp",
            ":".join(jars),
            "-sourcepath",
            ":".join(sourcepath),
            test,
        ]
        log = subprocess.run(command, cwd=root, capture_output=True, text=True)
    found = set()
    for folder, name in _PARSED.findall(log.stdout + log.stderr):
        path = (root / (folder or "") / name).resolve()
        if path.is_relative_to(root) and path.is_file():
            found.add(str(path.relative_to(root)))
    return found


def is_source(path: str) -> bool:
    return path.endswith(".java") and not path.endswith("Test.java")


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--sourcepath", nargs="+", default=["src/main/java", "src/test/java"])
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    version = subprocess.run(["javac", "-version"], capture_output=True, text=True)
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        closures = {test: closure(root, test, args.sourcepath) for test in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "javac -verbose -implicit:class (the files it parses)",
        "version": (version.stdout or version.stderr).strip(),
        "script": "bench/replays/label_java.py",
        "options": {
            "tests": args.tests,
            "sourcepath": args.sourcepath,
            "per_side": args.per_side,
            "history": args.history,
        },
    }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "java", tool, chosen))
    if args.removals:
        labels.removals(
            args,
            commit,
            "java",
            tool,
            is_source,
            lambda root, tests: {test: closure(root, test, args.sourcepath) for test in tests},
        )


if __name__ == "__main__":
    main()
