"""Label C# pairs with Mono's C# compiler (`mcs`): what breaks when a file is left out.

There is no .NET SDK here, and `mcs` prints no list of the files a compilation needs, so the
closure comes from the compiler's errors. The test's project and the projects it references
(`--sources`, their folders) are compiled as one library, with Debian's NUnit 2.6 and the
`--references` assemblies; a file whose code `mcs` cannot compile on its own (C# beyond mcs,
NUnit 3's API) is left out first, until the rest compiles, and recorded (`left_out`). Then,
for each file S, S is left out and every file `mcs` reports an error in
(`path(line,col): error CSnnnn`) is left out with it, again and again until the rest
compiles: what was left out needs S, directly or through another file (leaving out files
round by round also reaches the errors `mcs` does not report while earlier ones stand, as
it stops before binding method bodies when a declaration fails). A test's closure is the
test file and every file S whose removal takes the test with it.

What it misses: a dependency the code still compiles without (a removed overload or
extension method another one replaces, a name resolved by reflection, a file read at run
time), and anything outside `--sources`, which the test's project does not compile.

    python -m bench.replays.label_csharp --git-dir M --repository owner/name [--commit SHA] \
        --sources Lib Lib.Test --tests Lib.Test/ATest.cs ... [--references System.Data ...]
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.replays import labels

NUNIT = Path("/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll")
MONO = Path("/usr/lib/mono")
STDLIB = ("mscorlib.dll", "System.dll", "System.Core.dll")
_ERROR = re.compile(r"^(.+?)\(\d+,\d+\): error CS\d+", re.MULTILINE)
_ANY_ERROR = re.compile(r"error CS\d+")


class Compiler:
    """One `mcs` compilation of a set of files: the files it reports errors in."""

    def __init__(
        self, root: Path, references: Iterable[str], defines: Iterable[str], api: str = ""
    ) -> None:
        self.root = root
        self.options = [f"-r:{NUNIT}", *(f"-r:{name}" for name in references)]
        self.options += [f"-define:{name}" for name in defines]
        if api:  # the reference assemblies of that .NET Framework, not Mono's own mscorlib
            self.options += ["-nostdlib", f"-lib:{MONO / api}", *(f"-r:{n}" for n in STDLIB)]

    def errors(self, files: Iterable[str]) -> set[str]:
        given = sorted(files)
        with tempfile.TemporaryDirectory() as out:
            command = ["mcs", "-target:library", "-warn:0", f"-out:{out}/x.dll", *self.options]
            log = subprocess.run([*command, *given], cwd=self.root, capture_output=True, text=True)
        text = log.stdout + log.stderr
        located = set(_ERROR.findall(text)) & set(given)
        if log.returncode != 0 and not located:
            raise SystemExit(f"mcs failed with no error in a given file:\n{text[-2000:]}")
        if log.returncode == 0 and _ANY_ERROR.search(text):
            raise SystemExit(f"mcs reported errors and succeeded:\n{text[-2000:]}")
        return located


def compilable(compiler: Compiler, files: set[str]) -> tuple[set[str], list[str]]:
    """The files less those left out, round by round, until the rest compiles."""
    kept, left_out = set(files), []
    while kept and (failed := compiler.errors(kept)):
        kept -= failed
        left_out += sorted(failed)
    return kept, left_out


def dependents(compiler: Compiler, files: set[str], source: str) -> set[str]:
    """The files that cannot compile without `source` (module doc)."""
    rest = files - {source}
    return rest - compilable(compiler, rest)[0]


def closures(
    root: Path, tests: list[str], sources: list[str], compiler: Compiler
) -> tuple[dict[str, set[str]], list[str]]:
    files = {
        str(path.relative_to(root))
        for folder in sources
        for path in (root / folder).rglob("*.cs")
        if path.is_file()
    }
    kept, left_out = compilable(compiler, files)
    lost = [test for test in tests if test not in kept]
    if lost:
        raise SystemExit(f"mcs cannot compile the tests {', '.join(lost)}; left out {left_out}")
    ordered = sorted(kept)
    with ThreadPoolExecutor(max_workers=2) as pool:
        needing = dict(
            zip(ordered, pool.map(lambda s: dependents(compiler, kept, s), ordered), strict=True)
        )
    found = {test: {test} | {s for s, users in needing.items() if test in users} for test in tests}
    return found, left_out


def is_source(path: str) -> bool:
    return path.endswith(".cs") and not path.endswith(("Test.cs", "Tests.cs"))


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", required=True, help="folders compiled together")
    parser.add_argument("--references", nargs="*", default=[], help="assemblies (-r:)")
    parser.add_argument("--define", nargs="*", default=[], help="symbols (-define:)")
    parser.add_argument("--api", default="", help="compile against /usr/lib/mono/API (4.7.1-api)")
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    version = subprocess.run(["mcs", "--version"], capture_output=True, text=True)
    with labels.checkout(args.git_dir, commit) as folder:
        root = Path(folder).resolve()
        labels.present(root, args.tests)
        compiler = Compiler(root, args.references, args.define, args.api)
        found, left_out = closures(root, args.tests, args.sources, compiler)
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
    tool = {
        "tool": "mcs: the files left out with each file until the rest compiles (NUnit 2.6.3)",
        "version": version.stdout.strip(),
        "script": "bench/replays/label_csharp.py",
        "options": {
            "tests": args.tests,
            "sources": args.sources,
            "references": args.references,
            "define": args.define,
            "api": args.api,
            "per_side": args.per_side,
            "history": args.history,
        },
        "left_out": left_out,
    }
    chosen = labels.pairs(found, candidates, args.per_side, past, args.history)
    labels.save(args.manifest, labels.entry(args, commit, "csharp", tool, chosen))


if __name__ == "__main__":
    main()
