"""Label Kotlin pairs with the Kotlin compiler's class files.

kotlinc, unlike javac, compiles the sources it is given rather than those a file needs, so
the closure is read from what it writes: the source sets (`--fragment NAME=DIR,DIR`; with
more than one, a multiplatform build where each fragment refines the one before, e.g.
`common=src/commonMain/kotlin,src/commonTest/kotlin jvm=src/jvmMain/kotlin,...`) are
compiled together for the JVM by `K2JVMCompiler` (kotlin-test, kotlin-test-junit and
JUnit 4 on the class path); `jdeps -verbose:class -filter:none` gives every class's
classes; each class's file is its package and its `SourceFile` attribute (`javap -v`: a
file facade `FooKt`, a nested class `A$B` and every class of a file name that file), and
the classes an inline function's body came from are read from its `SourceDebugExtension`
(SMAP). A test file's closure is the files of the classes reachable from its own.

What leaves no class behind is outside the closure: an `expect` declaration (the JVM has
its `actual`), a `const val` (its value is copied), a type alias.

The compiler is npm's `kotlin-compiler` (JetBrains' kotlinc distribution), installed in a
temporary folder, or `--kotlinc-lib DIR` (a `lib` folder of one); JUnit 4 and Hamcrest come
from the local Maven repository (`--junit`).

    python -m bench.replays.label_kotlin --git-dir M --repository owner/name [--commit SHA] \
        --tests src/commonTest/kotlin/a/BTest.kt ... --fragment common=DIR,DIR ...
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path

from bench.replays import labels

M2 = Path.home() / ".m2" / "repository"
JUNIT = (
    M2 / "junit/junit/4.13.2/junit-4.13.2.jar",
    M2 / "org/hamcrest/hamcrest-core/1.3/hamcrest-core-1.3.jar",
)
COMPILER_JARS = (
    "kotlin-compiler",
    "kotlin-stdlib",
    "kotlin-script-runtime",
    "kotlin-reflect",
    "kotlinx-coroutines-core-jvm",
    "annotations-13.0",
)
_PACKAGE = re.compile(r"^\s*package\s+([\w.`]+)", re.MULTILINE)
_EDGE = re.compile(r"^\s+(\S+)\s+->\s+(\S+)\s", re.MULTILINE)
_CLASS = re.compile(r"^Classfile (.+\.class)$", re.MULTILINE)
_SOURCE = re.compile(r'^SourceFile: "([^"]+)"$', re.MULTILINE)
# Each `+ N File.kt` line of the SMAP's file section and the class on the line after it;
# the lookahead leaves the newline before the next entry to it (consuming it skipped every
# second entry: the first file inlined into a class, before 2026-12-07).
_SMAP_CLASS = re.compile(r"\\n\+ \d+ [^\\]+\\n([\w/$]+)(?=\\n)")


@contextmanager
def compiler(lib: Path | None) -> Iterator[Path]:
    """The `lib` folder of a kotlinc distribution: `lib`, or npm's in a temporary folder."""
    if lib is not None:
        yield lib
        return
    with tempfile.TemporaryDirectory(prefix="kotlinc-") as folder:
        subprocess.run(["npm", "init", "-y"], cwd=folder, check=True, capture_output=True)
        command = ["npm", "install", "--ignore-scripts", "kotlin-compiler"]
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
        yield Path(folder) / "node_modules" / "kotlin-compiler" / "lib"


def sources(root: Path, fragments: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each fragment's .kt files, repository-relative and sorted."""
    return {
        name: sorted(
            str(path.relative_to(root))
            for folder in folders
            if (root / folder).is_dir()
            for path in (root / folder).rglob("*.kt")
        )
        for name, folders in fragments.items()
    }


def compile_all(
    lib: Path, root: Path, fragments: dict[str, list[str]], out: Path, options: list[str]
) -> None:
    files = [path for paths in fragments.values() for path in paths]
    tool = ":".join(str(lib / f"{name}.jar") for name in COMPILER_JARS)
    libraries = [lib / "kotlin-stdlib.jar", lib / "kotlin-test.jar", lib / "kotlin-test-junit.jar"]
    command = ["java", "-Xmx2g", "-cp", tool, "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler"]
    command += ["-no-stdlib", "-no-reflect", "-nowarn", "-d", str(out)]
    command += ["-cp", ":".join(str(jar) for jar in [*libraries, *JUNIT]), *options]
    if len(fragments) > 1:
        names = list(fragments)
        refines = [f"{later}:{earlier}" for earlier, later in pairwise(names)]
        pieces = [f"{name}:{path}" for name, paths in fragments.items() for path in paths]
        command += ["-Xmulti-platform", f"-Xfragments={','.join(names)}"]
        command += [f"-Xfragment-refines={','.join(refines)}"]
        command += [f"-Xfragment-sources={','.join(pieces)}"]
    result = subprocess.run([*command, *files], cwd=root, capture_output=True, text=True)
    if result.returncode != 0:  # no class files: no closure to read
        print(result.stderr[-4000:], file=sys.stderr)
        raise subprocess.CalledProcessError(result.returncode, "kotlinc", stderr=result.stderr)


def read_classes(out: Path) -> list[tuple[str, str, list[str]]]:
    """Each compiled class (`a.b.C$D`), its `SourceFile` and the classes its inlined code
    came from (the SMAP's file section, which `javap -v` shows in the constant pool)."""
    classes = sorted(str(p) for p in out.rglob("*.class"))
    javap = subprocess.run(["javap", "-v", *classes], capture_output=True, text=True).stdout
    parts = _CLASS.split(javap)[1:]
    found = []
    for location, text in zip(parts[0::2], parts[1::2], strict=True):
        name = str(Path(location).relative_to(out).with_suffix("")).replace("/", ".")
        source = _SOURCE.search(text)
        inlined = [c.replace("/", ".") for c in _SMAP_CLASS.findall(text)]
        found.append((name, source.group(1) if source else "", inlined))
    return found


def owners(
    classes: list[tuple[str, str, list[str]]], files: list[str], root: Path
) -> dict[str, str]:
    """Each class's source file: the file of its package with its `SourceFile` name."""
    by_name: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in files:
        found = _PACKAGE.search((root / path).read_text(encoding="utf-8"))
        package = found.group(1).replace("`", "") if found else ""
        by_name[(package, path.rsplit("/", 1)[-1])].append(path)
    owner: dict[str, str] = {}
    for name, source, _ in classes:
        paths = by_name.get((name.rpartition(".")[0], source), [])
        if len(paths) > 1:  # two files of one package and name: the class's is unknown
            raise SystemExit(f"{name}: {source} is any of {paths}")
        if paths:
            owner[name] = paths[0]
    return owner


def class_graph(out: Path, classes: list[tuple[str, str, list[str]]]) -> dict[str, set[str]]:
    """Each class's classes: jdeps's references and the classes inlined into it."""
    edges: dict[str, set[str]] = defaultdict(set)
    jdeps = ["jdeps", "-verbose:class", "-filter:none", str(out)]
    text = subprocess.run(jdeps, capture_output=True, text=True, check=True).stdout
    for origin, target in _EDGE.findall(text):
        edges[origin].add(target)
    for name, _, inlined in classes:
        edges[name].update(inlined)
    return edges


def closures(
    lib: Path, root: Path, tests: Sequence[str], fragments: dict[str, list[str]], options: list[str]
) -> dict[str, set[str]]:
    compiled = sources(root, fragments)
    with tempfile.TemporaryDirectory(prefix="kotlin-classes-") as folder:
        out = Path(folder)
        compile_all(lib, root, compiled, out, options)
        classes = read_classes(out)
        owner = owners(classes, [p for paths in compiled.values() for p in paths], root)
        edges = class_graph(out, classes)
    found: dict[str, set[str]] = {}
    for test in tests:
        seen = {name for name, path in owner.items() if path == test}
        todo = list(seen)
        while todo:
            for target in edges.get(todo.pop(), ()):
                if target in owner and target not in seen:
                    seen.add(target)
                    todo.append(target)
        found[test] = {owner[name] for name in seen} | {test}
    return found


def fragments_of(specs: Sequence[str]) -> dict[str, list[str]]:
    """`common=src/commonMain/kotlin,src/commonTest/kotlin` each, in refining order."""
    return {name: folders.split(",") for name, _, folders in (s.partition("=") for s in specs)}


def main_folders(fragments: dict[str, list[str]]) -> list[str]:
    """The compiled folders of the code under test (not a source set named for tests)."""
    folders = [folder for paths in fragments.values() for folder in paths]
    return [f for f in folders if not re.search(r"(^|/)(test|\w*Test)(/|$)", f)]


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument(
        "--fragment",
        nargs="+",
        default=["main=src/main/kotlin,src/test/kotlin"],
        help="NAME=DIR,DIR per source set, each refining the one before",
    )
    parser.add_argument("--options", default="", help="more kotlinc options, in one string")
    parser.add_argument("--kotlinc-lib", type=Path, help="a kotlinc distribution's lib folder")
    args = parser.parse_args()
    fragments = fragments_of(args.fragment)
    folders = main_folders(fragments)
    options = args.options.split()
    missing = [str(jar) for jar in JUNIT if not jar.is_file()]
    if missing:
        raise SystemExit(f"not on this machine: {', '.join(missing)}")

    def is_source(path: str) -> bool:
        return path.endswith(".kt") and any(path.startswith(f + "/") for f in folders)

    commit = labels.resolve(args.git_dir, args.commit)
    with compiler(args.kotlinc_lib) as lib:
        version = (lib.parent / "build.txt").read_text().strip()

        def closures_at(root: Path, tests: list[str]) -> dict[str, set[str]]:
            return closures(lib, root, tests, fragments, options)

        with labels.checkout(args.git_dir, commit) as folder:
            root = Path(folder).resolve()
            labels.present(root, args.tests)
            found = closures_at(root, args.tests)
            candidates = labels.files(root, is_source)
            past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
        tool = {
            "tool": "kotlinc (K2JVMCompiler) class files: jdeps -verbose:class and the SMAP, "
            "classes mapped to files by package and SourceFile",
            "version": f"kotlinc {version}, {_java_version()}",
            "script": "bench/replays/label_kotlin.py",
            "options": {
                "tests": args.tests,
                "fragment": args.fragment,
                "options": args.options,
                "per_side": args.per_side,
                "history": args.history,
            },
        }
        chosen = labels.pairs(found, candidates, args.per_side, past, args.history)
        labels.save(args.manifest, labels.entry(args, commit, "kotlin", tool, chosen))
        if args.removals:
            labels.removals(args, commit, "kotlin", tool, is_source, closures_at)


def _java_version() -> str:
    result = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return result.stderr.splitlines()[0] if result.stderr else "java"


if __name__ == "__main__":
    main()
