"""Label JavaScript/TypeScript pairs with esbuild's metafile.

A test's closure is the inputs esbuild lists when it bundles the test file for node
(`--bundle --metafile --platform=node --packages=external`: a bare import of a package is
left out, a relative or tsconfig-mapped one is followed). Files esbuild never reads for
the bundle (type-only imports, which it erases) are outside the closure. esbuild comes from
npm, installed in a temporary folder (`--esbuild` to use one already installed).

    python -m bench.replays.label_js --git-dir M --repository owner/name [--commit SHA] \
        --tests test/a.test.js ... [--esbuild PATH]
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from bench.replays import labels

SOURCES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")


def install(folder: Path) -> Path:
    subprocess.run(["npm", "init", "-y"], cwd=folder, check=True, capture_output=True)
    subprocess.run(["npm", "install", "esbuild"], cwd=folder, check=True, capture_output=True)
    return folder / "node_modules" / ".bin" / "esbuild"


def closure(esbuild: Path, root: Path, test: str) -> set[str]:
    with tempfile.TemporaryDirectory() as out:
        meta = Path(out) / "meta.json"
        command = [
            str(esbuild),
            test,
            "--bundle",
            "--platform=node",
            "--packages=external",
            f"--metafile={meta}",
            f"--outfile={Path(out) / 'bundle.js'}",
            "--log-level=error",
        ]
        subprocess.run(command, cwd=root, check=True)
        inputs = json.loads(meta.read_text())["inputs"]
    return {path for path in inputs if (root / path).is_file()}


def is_source(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.endswith(SOURCES)
        and not name.endswith((".d.ts", ".d.mts", ".d.cts"))
        and ".test." not in name
        and ".spec." not in name
        and "/node_modules/" not in f"/{path}"
        and "/docs/" not in f"/{path}"
    )


def version(esbuild: Path) -> str:
    return subprocess.run([str(esbuild), "--version"], capture_output=True, text=True).stdout


def main() -> None:
    parser = labels.arguments(__doc__.splitlines()[0])
    parser.add_argument("--esbuild", type=Path, help="an installed esbuild binary")
    args = parser.parse_args()
    commit = labels.resolve(args.git_dir, args.commit)
    with tempfile.TemporaryDirectory() as tools, labels.checkout(args.git_dir, commit) as folder:
        esbuild = args.esbuild or install(Path(tools))
        args.esbuild = esbuild  # kept for the removing commits
        root = Path(folder)
        labels.present(root, args.tests)
        closures = {test: closure(esbuild, root, test) for test in args.tests}
        candidates = labels.files(root, is_source)
        past = labels.history(args.git_dir, commit, root, is_source) if args.history else []
        tool = {
            "tool": "esbuild --bundle --metafile --platform=node --packages=external",
            "version": f"esbuild {version(esbuild).strip()}",
            "script": "bench/replays/label_js.py",
            "options": {"tests": args.tests, "per_side": args.per_side, "history": args.history},
        }
    chosen = labels.pairs(closures, candidates, args.per_side, past, args.history)
    language = "typescript" if any(t.endswith(("ts", "tsx")) for t in args.tests) else "javascript"
    labels.save(args.manifest, labels.entry(args, commit, language, tool, chosen))
    if args.removals:
        with tempfile.TemporaryDirectory() as tools:
            esbuild = args.esbuild if args.esbuild.exists() else install(Path(tools))
            labels.removals(
                args,
                commit,
                language,
                tool,
                is_source,
                lambda root, tests: {test: closure(esbuild, root, test) for test in tests},
            )


if __name__ == "__main__":
    main()
