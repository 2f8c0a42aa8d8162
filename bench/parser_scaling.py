"""How the time of each parser of repository content grows with its input, on hostile input.

For every scanner the walk (and the settings and CODEOWNERS readers) runs on a file from a
repository, and for every pathological shape (unclosed comments and strings, long lines of
quotes, backslashes or slashes, deep nesting, many `import` tokens, long dotted names, many
f-string substitutions), times the call on n and on 2n bytes (the best of --repeat runs, in
CPU time: steadier on a shared machine) and prints JSON. Per scanner: the worst ratio
t(2n)/t(n) over the shapes with the shape that gave it (about 2 when the time is linear,
below 2 when fixed costs dominate), and the slowest call on a file of the largest size the
walk reads (`WalkLimits.file_bytes`): how long one such file can hold the interpreter.
Run on a quiet machine:
`python bench/parser_scaling.py [--n 65536] [--repeat 3] [--scanner NAME ...]`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable

from bot.config import load_mapping
from bot.triage import owners
from bot.triage.imports import csharp, go_scan, golang, jsscan, jvm_scan, php, roots, ruby, rust
from bot.triage.imports.python import imports_of
from bot.triage.imports.routed import routed_by
from bot.triage.imports.values import loads_toml
from bot.triage.imports.walk import WalkLimits

# Each shape is a unit repeated to the size wanted.
SHAPES: dict[str, str] = {
    "unclosed_block_comments": "/* ",
    "block_comment_lines": "/*\n",
    "double_quotes": '"',
    "single_quotes": "'",
    "backticks": "`",
    "backslashes": "\\",
    "slashes": "/",
    "slash_star": "/*/",
    "quote_backslash": '"\\',
    "triple_quotes": '"""',
    "raw_string_opens": 'r#"',
    "template_substitutions": "`${",
    "heredoc_opens": "<<<A\n",
    "embedded_doc_opens": "=begin\n",
    "xml_comment_opens": "<!--",
    "include_attributes": 'Include="',
    "import_tokens": "import ",
    "import_lines": "import 'a';\n",
    "require_calls": "require('a')\n",
    "open_braces": "{",
    "open_brackets": "[",
    "open_parens": "(",
    "dotted_name": "a.",
    "quoted_dotted_key": '"a".',
    "fstring_substitutions": "{a}",
    "commas": ", ",
    "hashes": "#",
    "owners_rules": "/* @a\n",
    "globs": "**/",
    "newlines": "\n",
    "blank_lines": " \n",
    "nested_key_objects": "alias: {",
    "nested_key_arrays": "setupFiles: [",
    "yaml_anchors": "- &a [*a]\n",
    "slices": "1:2,",
    "comparisons": "a<",
    "decorators": "@a\n",
    "type_clauses": "import type {",
    "type_clause_names": "import type { a, ",
    "type_queries": "typeof import('a').",
    "references": '/// <reference path="',
}


def _wrapped(prefix: str, suffix: str, scan: Callable[[str], object]) -> Callable[[str], object]:
    return lambda text: scan(prefix + text + suffix)


SCANNERS: dict[str, Callable[[str], object]] = {
    "jsonc (tsconfig, package.json)": jsscan.loads_jsonc,
    "javascript imports": jsscan.specifiers,
    "typescript imports": lambda text: jsscan.specifiers(text, typescript=True),
    "javascript config keys": lambda text: jsscan.key_strings(text, ["setupFiles"]),
    "vite/jest aliases": lambda text: jsscan.key_entries(text, "alias"),
    "go.mod": lambda text: (golang.module_path(text), golang.local_replacements(text, "")),
    "go imports": go_scan.go_imports,
    "go import block": _wrapped("package x\nimport (\n", "", go_scan.go_imports),
    "java/kotlin": jvm_scan.scan_jvm,
    "scala (nested comments)": lambda text: jvm_scan.scan_jvm(text, nested_comments=True),
    "kotlin declarations": jvm_scan.kotlin_declared,
    "kotlin uses": jvm_scan.kotlin_uses,
    "php": lambda text: php.names_of(text, ""),
    "composer.json": lambda text: php.autoload_of("composer.json", text),
    "ruby loads": ruby.loads_of,
    "ruby constants": ruby.constants_of,
    "rust modules": rust.modules_of,
    "toml (Cargo.toml, pyproject)": loads_toml,
    "toml dotted f-string": _wrapped('x = f"', '"', loads_toml),
    "csproj": lambda text: csharp.references_of("a/a.csproj", text),
    "python imports (ast)": imports_of,
    "python import statement": _wrapped("import ", "a\n", imports_of),
    "python f-string": _wrapped("x = f'", "'\n", imports_of),
    "python subscript": _wrapped("x = a[", "0]\n", imports_of),
    "python routed test (django)": lambda text: routed_by("Python", text),
    "ini (setup.cfg, tox.ini)": lambda text: roots.configured_roots({"setup.cfg": text}),
    "CODEOWNERS": lambda text: owners.parse(text, ".github/CODEOWNERS"),
    "settings YAML": load_mapping,
}


def _best(scan: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        scan(text)
        best = min(best, time.process_time() - start)
    return best


def _text(unit: str, size: int) -> str:
    return unit * (size // len(unit))


def measure(name: str, n: int, repeat: int) -> dict[str, object]:
    scan = SCANNERS[name]
    ratios: dict[str, float] = {}
    for shape, unit in SHAPES.items():
        small, large = _best(scan, _text(unit, n), repeat), _best(scan, _text(unit, 2 * n), repeat)
        # Calls under 5 ms measure the clock more than the scanner.
        ratios[shape] = large / small if large >= 0.005 else 0.0
    worst = max(ratios, key=lambda shape: ratios[shape])
    cap = WalkLimits().file_bytes
    at_cap = {shape: _best(scan, _text(unit, cap), 1) for shape, unit in SHAPES.items()}
    slowest = max(at_cap, key=lambda shape: at_cap[shape])
    return {
        "scanner": name,
        "worst_ratio": round(ratios[worst], 2),
        "worst_shape": worst if ratios[worst] else "(every call under 5 ms)",
        "slowest_ms_at_file_cap": round(at_cap[slowest] * 1000, 1),
        "slowest_shape": slowest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64 * 1024, help="bytes of the smaller input")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scanner", nargs="*", default=list(SCANNERS), choices=list(SCANNERS))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    results = [measure(name, args.n, args.repeat) for name in args.scanner]
    print(
        json.dumps(
            {
                "n_bytes": args.n,
                "file_cap_bytes": WalkLimits().file_bytes,
                "load_before": load_before,
                "load_after": os.getloadavg()[0],
                "scanners": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
