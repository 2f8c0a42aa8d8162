"""TypeScript's type-only imports: told apart by the scanner, followed as a separate set by
the walk, and left out only for a test whose runner erases them without checking types."""

from __future__ import annotations

import pytest

from bot.shared import Source
from bot.triage.imports import ImportWalk, Tree, TreeFile
from bot.triage.imports.jsconfig import BROWSER, TYPES, entry_readers
from bot.triage.imports.jsrunner import JAVASCRIPT, NODE, runs_without, types_erased_by
from bot.triage.imports.jsscan import specifiers
from bot.triage.imports.walk import walk_from_json, walk_to_json
from bot.triage.models import EvidenceKind, Failure, Verdict
from bot.triage.verdict import decide
from tests.test_imports_walk import layout, walked

# Real lines: remeda (packages/remeda/src/mapValues.ts, sortBy.ts), ts-pattern
# (src/types/FindSelected.ts); the rest are the forms TypeScript's handbook gives.
TYPE_ONLY = [
    ('import type { Simplify } from "type-fest";', [("type-fest", True)]),
    ("import type * as symbols from '../internals/symbols';", [("../internals/symbols", True)]),
    ("import type Default from './d'", [("./d", True)]),
    (  # ts-pattern's src/types/DistributeUnions.ts (trimmed)
        "import { BuildMany } from './BuildMany';\nimport type {\n  IsAny,\n  Values,\n"
        "  IsStrictArray,\n} from './helpers';\n",
        [("./BuildMany", False), ("./helpers", True)],
    ),
    # A clause that never closes is no clause; the next import is read as usual.
    ("import type { A\nimport type { B } from './b'", [("./b", True)]),
    ("export type { A, B } from './types'", [("./types", True)]),
    (
        "export type * from './all'; export type * as ns from './ns'",
        [("./all", True), ("./ns", True)],
    ),
    ("let m: typeof import('./mod')", [("./mod", True)]),
    ("function f(): import('./mod').Thing<X> {}", [("./mod", True)]),
    (
        '/// <reference types="vite/client" />\n/// <reference path="globals.d.ts" />',
        [
            ("vite/client", True),
            ("./globals.d.ts", True),
        ],
    ),
    # Imports that run.
    (
        'import { purryOrderRules, type OrderRule } from "./internal/purryOrderRules";',
        [("./internal/purryOrderRules", False)],
    ),
    # `import {type X}` only: `import {} from` under verbatimModuleSyntax, which runs it.
    ("import { type A, type B } from './a'", [("./a", False)]),
    ("import type from './default-named-type'", [("./default-named-type", False)]),
    ("import type, { b } from './b'", [("./b", False)]),
    ("import('./lazy').then((m) => m.run())", [("./lazy", False)]),
    (
        "const m = await import('./lazy'); import('./x').catch(fail)",
        [
            ("./lazy", False),
            ("./x", False),
        ],
    ),
    ("import('./called').run()", [("./called", False)]),
    ("export type Alias = Pick<A, 'a'>; export { type A } from './re'", [("./re", False)]),
    # Imported once for its types and once to run: it runs.
    ("import type { T } from './both'\nimport { t } from './both'", [("./both", False)]),
]


@pytest.mark.parametrize(("source", "expected"), TYPE_ONLY)
def test_the_scanner_tells_type_only_imports(source: str, expected: list[tuple[str, bool]]) -> None:
    found = specifiers(source, typescript=True)
    assert found is not None
    assert [(spec.module, spec.types) for spec in found] == expected


def test_in_javascript_every_import_runs() -> None:
    """Flow writes `import type` too, and a .js file is not TypeScript: nothing is typed."""
    found = specifiers("import type { T } from './t'\n/// <reference path='x.d.ts' />\n")
    assert [(spec.module, spec.types) for spec in found or []] == [("./t", False)]


REMEDA_VITEST = (
    'import { defineConfig } from "vitest/config";\n\nexport default defineConfig({\n'
    '  test: {\n    projects: [\n      {\n        test: {\n          name: "types",\n'
    '          include: ["src/**/*.test-d.ts"],\n          typecheck: {\n'
    "            enabled: true,\n            only: true,\n            ignoreSourceErrors: true,\n"
    "          },\n        },\n      },\n    ],\n  },\n});\n"
)  # remeda's packages/remeda/vitest.config.ts, its `types` project (the others cut)
TS_PATTERN_JEST = "module.exports = {\n  preset: 'ts-jest',\n  testEnvironment: 'node',\n};\n"
DORNY_JEST = (
    "module.exports = {\n  clearMocks: true,\n  moduleFileExtensions: ['js', 'ts'],\n"
    "  testEnvironment: 'node',\n  testMatch: ['**/*.test.ts'],\n  transform: {\n"
    "    '^.+\\\\.ts$': ['ts-jest', {useESM: true}]\n  },\n  moduleNameMapper: {\n"
    "    '^(\\\\.{1,2}/.*)\\\\.js$': '$1'\n  },\n  extensionsToTreatAsEsm: ['.ts'],\n"
    "  verbose: true\n}\n"
)  # dorny/test-reporter's jest.config.cjs
SWC_JEST = "module.exports = {\n  transform: {\n    '^.+\\\\.(t|j)sx?$': '@swc/jest',\n  },\n}\n"
VITEST_TEST = 'import { expect, test } from "vitest";\nimport { add } from "./add";\n'
GLOBALS_TEST = 'import { add } from "./add";\ntest("adds", () => expect(add(1, 2)).toBe(3));\n'

RUNNERS = [
    # vitest erases types; its type tests and a custom typecheck `include` check them.
    ("src/add.test.ts", VITEST_TEST, {"vitest.config.ts": REMEDA_VITEST}, "vitest"),
    ("src/add.test-d.ts", VITEST_TEST, {"vitest.config.ts": REMEDA_VITEST}, ""),
    # An assertion about types does nothing when vitest runs it (date-fns' src/add/test.ts
    # `assertType<Date>(result)`); tsd's and TSTyche's tests are theirs, and checked.
    ("src/add.test.ts", VITEST_TEST + "assertType<number>(add(1, 2))\n", {}, "vitest"),
    ("src/add.test.ts", VITEST_TEST + "expectTypeOf(add).toBeFunction()\n", {}, "vitest"),
    ("src/add.test.ts", VITEST_TEST + 'import { expectType } from "tsd";\n', {}, ""),
    ("src/add.test.ts", VITEST_TEST + 'import { expect as e } from "tstyche";\n', {}, ""),
    ("src/add.test.ts", GLOBALS_TEST, {"vitest.config.mts": REMEDA_VITEST}, "vitest"),
    (
        "src/add.test.ts",
        VITEST_TEST,
        {"vitest.config.ts": "export default { test: { typecheck: { include: ['**/*.ts'] } } }"},
        "",
    ),
    (
        "src/add.test.ts",
        VITEST_TEST,
        {"vite.config.ts": "export default { test: { typecheck: shared.typecheck } }"},
        "",
    ),
    (
        "src/add.test.ts",
        VITEST_TEST,
        {"package.json": '{"scripts": {"test": "vitest --typecheck.include=\'**/*.ts\'"}}'},
        "",
    ),
    (  # the configuration that runs may be another than the one read
        "src/add.test.ts",
        VITEST_TEST,
        {"package.json": '{"scripts": {"test": "vitest run --config ./config/vitest.ts"}}'},
        "",
    ),
    (
        "tests/add.test.ts",
        GLOBALS_TEST,
        {"jest.config.js": SWC_JEST, "package.json": '{"scripts": {"test": "jest -c unit.js"}}'},
        "",
    ),
    # A vite.config.* without `test` configures no tests.
    ("src/add.test.ts", GLOBALS_TEST, {"vite.config.ts": "export default { base: '/' }"}, ""),
    # jest: ts-jest checks types; a transform that strips them does not.
    ("tests/add.test.ts", GLOBALS_TEST, {"jest.config.cjs": TS_PATTERN_JEST}, ""),
    ("__tests__/add.test.ts", GLOBALS_TEST, {"jest.config.cjs": DORNY_JEST}, ""),
    ("tests/add.test.ts", GLOBALS_TEST, {"jest.config.js": SWC_JEST}, "jest with @swc/jest"),
    (
        "tests/add.test.ts",
        GLOBALS_TEST,
        {"package.json": '{"jest": {"transform": {"^.+\\\\.tsx?$": "babel-jest"}}}'},
        "jest with babel-jest",
    ),
    ("tests/add.test.ts", GLOBALS_TEST, {"jest.config.js": "module.exports = {...base}"}, ""),
    ("tests/add.test.ts", GLOBALS_TEST, {"jest.config.js": "module.exports = {}"}, ""),
    (
        "tests/add.test.ts",
        GLOBALS_TEST,
        {"jest.config.js": "module.exports = { transform: {'^.+\\\\.ts$': swc} }"},
        "",
    ),
    # bun strips types; node's runner, or two runners configured: unknown.
    ("add.test.ts", "import { test } from 'bun:test'\n", {}, "bun test"),
    ("add.test.ts", "import { test } from 'node:test'\n", {"vitest.config.ts": ""}, ""),
    ("add.test.ts", GLOBALS_TEST, {"vitest.config.ts": "", "jest.config.js": SWC_JEST}, ""),
    (
        "add.test.ts",
        GLOBALS_TEST,
        {"vitest.config.ts": "", "package.json": '{"scripts": {"test:unit": "mocha"}}'},
        "",
    ),
    ("add.test.ts", GLOBALS_TEST, {}, ""),
]


@pytest.mark.parametrize(("test_file", "source", "configs", "runner"), RUNNERS)
def test_the_runner_that_erases_type_imports(
    test_file: str, source: str, configs: dict[str, str], runner: str
) -> None:
    assert types_erased_by(test_file, source, configs) == runner


def _walk(name: str, test_file: str, swap: dict[str, str | None] | None = None) -> ImportWalk:
    """A real layout's walk; `swap` replaces (or, None, removes) files of it."""
    tree, files = layout(name)
    listed = dict(tree.files)
    for path, text in (swap or {}).items():
        listed.pop(path, None)
        files.pop(path, None)
        if text is not None:
            listed[path] = TreeFile(sha="0" * 40, size=len(text))
            files[path] = text
    return walked(test_file, files, None, Tree(listed))


def test_remeda_vitest_leaves_out_what_only_type_imports_reach() -> None:
    """remeda/remeda: mapValues.ts `import type`s EnumerableStringKeyOf (which `import type`s
    ToString); purry.ts imports lazyDataLastImpl to run and LazyEvaluator for its type."""
    result = _walk("remeda", "packages/remeda/src/mapValues.test.ts")
    src = "packages/remeda/src/"
    typed = {r.path.removeprefix(src) for r in result.not_run}
    assert {
        "internal/types/EnumerableStringKeyOf.ts",
        "internal/types/ToString.ts",
        "internal/types/LazyEvaluator.ts",
    } <= typed
    assert {"mapValues.ts", "purry.ts", "internal/lazyDataLastImpl.ts"} <= {
        r.path.removeprefix(src) for r in result.reached
    }
    assert not typed & {r.path.removeprefix(src) for r in result.reached}
    assert src + "internal/types/ToString.ts" not in result.files
    assert {r.why for r in result.not_run} == {
        "reached only through type imports, which vitest erases"
    }
    assert not result.partial
    [to_string] = [r for r in result.not_run if r.path.endswith("ToString.ts")]
    assert [s.module for s in to_string.chain] == [
        "./mapValues",
        "./internal/types/EnumerableStringKeyOf",
        "./ToString",
    ]
    assert "7 more files reached only through type imports, which vitest erases" in (
        result.describe()
    )


def test_remeda_the_replay_miss_pipe_reaches_array_at_only_for_its_type() -> None:
    """The replay bench's pair: pipe.test.ts and internal/types/ArrayAt.ts."""
    result = _walk("remeda", "packages/remeda/src/pipe.test.ts")
    assert "packages/remeda/src/internal/types/ArrayAt.ts" in {r.path for r in result.not_run}
    assert "packages/remeda/src/internal/types/ArrayAt.ts" not in result.files


def test_remeda_type_test_keeps_type_imports() -> None:
    """mapValues.test-d.ts runs in remeda's `types` project, type-checked: every type import
    counts."""
    result = _walk("remeda", "packages/remeda/src/mapValues.test-d.ts")
    assert result.not_run == ()
    assert "packages/remeda/src/internal/types/EnumerableStringKeyOf.ts" in result.files


def test_under_ts_jest_the_same_sources_keep_type_imports() -> None:
    """remeda's sources with ts-pattern's jest.config.cjs (`preset: 'ts-jest'`) in place of
    vitest's, and the test on jest's globals: ts-jest checks types, so a change to a type
    can fail the test, and the type-only imports count as any import."""
    test = "packages/remeda/src/mapValues.test.ts"
    _, files = layout("remeda")
    jest_test = str(files[test]).replace('import { expect, test } from "vitest";\n', "")
    swap: dict[str, str | None] = {
        "packages/remeda/vitest.config.ts": None,
        "packages/remeda/jest.config.cjs": TS_PATTERN_JEST,
        test: jest_test,
    }
    result = _walk("remeda", test, swap)
    assert result.not_run == ()
    assert "packages/remeda/src/internal/types/ToString.ts" in result.files
    assert not result.partial


def test_ts_pattern_plain_imports_of_types_run() -> None:
    """gvergnaud/ts-pattern imports its types without `type` (`import { Pattern } from
    './types/Pattern'`): kept at run time by some compilers, so they count whatever the
    runner; under its ts-jest configuration nothing is erased anyway."""
    result = _walk("ts-pattern", "tests/is-matching.test.ts")
    assert result.not_run == () and not result.partial
    assert {"src/types/DeepExclude.ts", "src/types/IsMatching.ts"} <= result.files
    vitest = _walk(
        "ts-pattern",
        "tests/is-matching.test.ts",
        {"jest.config.cjs": None, "vitest.config.ts": REMEDA_VITEST},
    )
    assert vitest.not_run == () and vitest.files == result.files


def _tiny(test: str, config: str, config_text: str) -> ImportWalk:
    files: dict[str, Source] = {
        config: config_text,
        "src/a.test.ts": test,
        "src/a.ts": "import type { T } from './t'\nexport { b } from './b'\n",
        "src/b.ts": "import { t } from './t'\nexport const b = t\n",
        "src/t.ts": "import type { U } from './u'\nexport const t = 1\n",
        "src/u.ts": "import { gone } from './gone'\nexport type U = 1\n",
        "src/only-typed.ts": "export type O = 1\n",
    }
    return walked("src/a.test.ts", files)


def test_a_file_also_imported_to_run_runs() -> None:
    test = "import { test } from 'vitest'\nimport { b } from './a'\n"
    result = _tiny(test, "vitest.config.ts", "export default {}")
    assert {r.path for r in result.reached} == {"src/a.ts", "src/b.ts", "src/t.ts"}
    # u.ts never runs: its unresolved import hides nothing the test runs.
    assert ([r.path for r in result.not_run], result.cut) == (["src/u.ts"], ())


def test_an_unresolved_type_import_cuts_the_walk_unless_erased() -> None:
    test = "import { test } from 'vitest'\nimport type { G } from './gone'\n"
    assert _tiny(test, "vitest.config.ts", "export default {}").cut == ()
    kept = _tiny(test.replace("'vitest'", "'@jest/globals'"), "jest.config.js", TS_PATTERN_JEST)
    assert kept.cut == ("could not resolve './gone' from src/a.test.ts",)


def test_a_stored_walk_keeps_its_typed_files() -> None:
    result = _walk("remeda", "packages/remeda/src/mapValues.test.ts")
    assert walk_from_json(walk_to_json(result)) == result


def test_a_change_outside_the_tests_folder_reached_only_for_its_types_is_ruled_out() -> None:
    """remeda's `pipe.test.ts` walk, with the test moved out of src/ (`test/`): the change to
    ArrayAt.ts, reached only through type imports under vitest, is ruled out by name."""
    test = "packages/remeda/test/pipe.test.ts"
    _, files = layout("remeda")
    moved = str(files["packages/remeda/src/pipe.test.ts"]).replace('from "./', 'from "../src/')
    result = _walk("remeda", test, {"packages/remeda/src/pipe.test.ts": None, test: moved})
    array_at = "packages/remeda/src/internal/types/ArrayAt.ts"
    assert array_at in {r.path for r in result.not_run}
    failure = Failure(test_id=f"{test} > pipe", name="pipe", file=test, framework="vitest")
    [decision] = decide([failure], [array_at], passed_on_rerun=True, imports={test: result})
    assert decision.verdict is Verdict.FLAKY
    assert (f"ruled out: {array_at} is reached only through type imports, which vitest erases") in [
        item.text for item in decision.items if item.kind is EvidenceKind.RULED_OUT
    ]


PINO_MANIFEST = {"main": "pino.js", "browser": "./browser.js", "types": "pino.d.ts"}
# trpc's packages/server/package.json, its `exports` of "./adapters/standalone" (trimmed).
TRPC_EXPORTS = {
    "exports": {
        "./adapters/standalone": {
            "import": {
                "types": "./dist/adapters/standalone.d.mts",
                "default": "./dist/adapters/standalone.mjs",
            },
            "require": {
                "types": "./dist/adapters/standalone.d.cts",
                "default": "./dist/adapters/standalone.cjs",
            },
        }
    }
}


def test_package_entries_only_typescript_or_only_bundlers_read() -> None:
    """pinojs/pino's package.json (`main`, `browser`, `types`) and trpc's conditions."""
    assert entry_readers(PINO_MANIFEST, "") == {"./browser.js": BROWSER, "pino.d.ts": TYPES}
    assert entry_readers({**PINO_MANIFEST, "main": "./browser.js"}, "") == {"pino.d.ts": TYPES}
    assert entry_readers(TRPC_EXPORTS, "adapters/standalone") == {
        "./dist/adapters/standalone.d.mts": TYPES,
        "./dist/adapters/standalone.d.cts": TYPES,
    }


@pytest.mark.parametrize(
    ("test_file", "source", "expected"),
    [
        # pino's test/crlf.test.js: node's runner resolves as node does, without `browser`;
        # a JavaScript test never loads what only `types` entries reach.
        ("test/crlf.test.js", "const test = require('node:test')\n", (NODE, True, True)),
        # A TypeScript test under node's runner: stripped, or ts-node's check: unknown.
        ("test/a.test.ts", "import test from 'node:test'\n", (NODE, False, True)),
        ("src/add.test.ts", VITEST_TEST, ("vitest", True, False)),
        ("test/a.test.js", "const test = require('tape')\n", (JAVASCRIPT, True, False)),
        # A JavaScript type test (tsd's `index.test-d.js`) is checked: unknown.
        ("test/index.test-d.js", "const test = require('tape')\n", None),
    ],
)
def test_what_the_runner_leaves_out(
    test_file: str, source: str, expected: tuple[str, bool, bool] | None
) -> None:
    found = runs_without(test_file, source, {"vitest.config.ts": REMEDA_VITEST})
    assert (found and (found.runner, found.types, found.browser)) == expected


@pytest.mark.parametrize(
    ("config", "text"),
    [
        ("package.json", '{"jest": {"preset": "ts-jest/presets/js-with-ts"}}'),
        ("tsconfig.json", '{"compilerOptions": {"allowJs": true, "checkJs": true}}'),
    ],
)
def test_a_javascript_test_compiled_by_typescript_keeps_type_imports(
    config: str, text: str
) -> None:
    """ts-jest's js-with-ts preset, or `allowJs`, hand JavaScript tests to TypeScript."""
    assert runs_without("test/a.test.js", "const test = require('tape')\n", {config: text}) is None
