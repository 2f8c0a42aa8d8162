"""The JavaScript/TypeScript import walk: the scanner, the resolver, and real layouts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.demo import final_decisions, running, settle
from bot.shared import Source
from bot.sim.scenario import load_scenario
from bot.triage.imports import ImportWalk, WalkLimits
from bot.triage.imports.javascript import JAVASCRIPT, TYPESCRIPT
from bot.triage.imports.jsconfig import (
    aliases,
    exported,
    likely_setup_files,
    package_entries,
    setup_refs,
)
from bot.triage.imports.jsrunner import goes_through_typescript
from bot.triage.imports.jsscan import key_strings, loads_jsonc, specifiers
from bot.triage.imports.language import Found, Target, Unresolved
from bot.triage.imports.languages import language_of
from bot.triage.imports.tools import names_typescript
from bot.triage.models import Verdict
from tests.test_imports_walk import EXCERPT_ENDS, depths, layout, tree_of, walked


def _paths(targets: Sequence[Found]) -> list[str]:
    """The files found, and an import that names none as "unresolved: <module>"."""
    return [
        t.path if isinstance(t, Target) else f"unresolved: {t.module}"
        for t in targets
        if isinstance(t, Target | Unresolved)
    ]


SCANNED = [
    ("import a, { b } from './a'", ["./a"]),
    ('import type { T } from "../types"', ["../types"]),
    ("import * as ns from './ns'; export * from './re'", ["./ns", "./re"]),
    ("export { c } from '@/lib/c'", ["@/lib/c"]),
    ("export { d as default } from './d.js'", ["./d.js"]),
    ("import './side.css'", ["./side.css"]),
    ("const { x } = require('./req')", ["./req"]),
    ("const p = require.resolve('./res')", ["./res"]),
    ("import x = require('./ts-style')", ["./ts-style"]),
    ("const lazy = () => import('./lazy')", ["./lazy"]),
    ("const t = await import(`./tpl`)", ["./tpl"]),
    ("jest.mock('./mocked', () => ({}))", ["./mocked"]),
    ("vi.mock('./vmock'); vi.importActual('./actual')", ["./vmock", "./actual"]),
    ("jest.requireActual('./real')", ["./real"]),
    # In comments and strings: not imports.
    ("// import x from './comment'\n", []),
    ("/* require('./block') */", []),
    ("const s = \"import x from './in-string'\"", []),
    ("const t = `require('./in-template')`", []),
    ("x.import('./method'); y.require('./method')", []),
    ("const from = 'x'; obj = { from: './y' }", []),
    # Code inside a template's substitution is code.
    ("const t = `a ${require('./in-subst')} b`", ["./in-subst"]),
    ("const t = `a ${ {k: `n${1}`}.k } b`; import('./after')", ["./after"]),
    # A regular expression with quotes and slashes does not derail the scanner.
    ("const r = /'import(\"x\")\\//g; require('./after-regex')", ["./after-regex"]),
    ("const d = a / 2 / b; require('./after-division')", ["./after-division"]),
    ("if (x) return /\"/.test(y)\nrequire('./next-line')", ["./next-line"]),
    # An apostrophe in JSX text costs at most its line; `</p>` is not a regex.
    ("const e = <p>Don't</p>\nconst f = require('./after-jsx')", ["./after-jsx"]),
    ("#!/usr/bin/env node\nrequire('./after-hashbang')", ["./after-hashbang"]),
    ("import a from './a'\nimport b from './a'", ["./a"]),
    # A path built at run time names no file: the walk cannot see which it loads.
    ("require(`./locale/${lang}.js`); import(`../x/${a}`)", ["./locale/${…}", "../x/${…}"]),
    ("import(`${base}/a`); require(name)", []),  # not a path: a package, perhaps
]


@pytest.mark.parametrize(("source", "expected"), SCANNED)
def test_the_scanner_finds_what_the_file_loads(source: str, expected: list[str]) -> None:
    found = specifiers(source)
    assert found is not None
    assert [spec.module for spec in found] == expected


@pytest.mark.parametrize("source", ["/* never closed", "const t = `never closed"])
def test_a_comment_or_template_that_never_ends_is_unreadable(source: str) -> None:
    assert specifiers("import a from './a'\n" + source) is None


def test_jsonc_allows_comments_and_trailing_commas_but_not_in_strings() -> None:
    text = '{ // c\n "a": [1, 2,], /* x */ "b": "//not, a comment", "c": "/* nor */",\n}'
    assert loads_jsonc(text) == {"a": [1, 2], "b": "//not, a comment", "c": "/* nor */"}
    assert loads_jsonc("{ not json") is None


def test_key_strings_reads_the_literals_a_key_is_given() -> None:
    source = (
        "export default defineConfig({ test: { setupFiles: ['./a.ts', \"b\"],\n"
        "  globalSetup: path.resolve(__dirname, 'g.ts'), environment: 'jsdom' } })"
    )
    assert key_strings(source, ["setupFiles", "globalSetup"]) == {
        "setupFiles": ["./a.ts", "b"],
        "globalSetup": ["g.ts"],
    }


def test_languages_are_named_by_extension() -> None:
    assert language_of("src/a.test.ts") is TYPESCRIPT
    assert language_of("src/a.test.tsx") is TYPESCRIPT
    assert language_of("src/a.spec.mjs") is JAVASCRIPT
    assert language_of("types/a.d.ts") is None


LIB = {
    "src/lib/a.ts": "",
    "src/lib/b.tsx": "",
    "src/lib/c.js": "",
    "src/lib/d.d.ts": "",
    "src/lib/index.ts": "",
    "src/widget/index.tsx": "",
    "src/data.json": "",
    "src/styles.css": "",
    "src/deep/x.mts": "",
}
RESOLVED = [
    ("src/t.test.ts", "./lib/a", ["src/lib/a.ts"]),
    ("src/t.test.ts", "./lib/a.js", ["src/lib/a.ts"]),  # NodeNext: `.js` written for `.ts`
    ("src/t.test.ts", "./lib/b.js", ["src/lib/b.tsx"]),
    ("src/t.test.ts", "./lib/c.js", ["src/lib/c.js"]),
    ("src/t.test.ts", "./lib/c", ["src/lib/c.js"]),
    ("src/t.test.ts", "./lib/d", ["src/lib/d.d.ts"]),
    ("src/t.test.ts", "./lib", ["src/lib/index.ts"]),
    ("src/t.test.ts", "./widget", ["src/widget/index.tsx"]),
    ("src/t.test.ts", "./data.json", ["src/data.json"]),
    ("src/t.test.ts", "./styles.css", ["src/styles.css"]),
    ("src/t.test.ts", "./deep/x.mjs", ["src/deep/x.mts"]),
    ("src/lib/a.ts", "../data.json?raw", ["src/data.json"]),
    ("src/lib/a.ts", ".", ["src/lib/index.ts"]),
    ("src/t.test.ts", "./absent", ["unresolved: ./absent"]),
    ("src/t.test.ts", "/src/lib/a", ["src/lib/a.ts"]),  # vite: from the project's root
    ("src/t.test.ts", "../../outside", ["unresolved: ../../outside"]),
    ("src/t.test.ts", "react", []),
    ("src/t.test.ts", "node:fs", []),
]


@pytest.mark.parametrize(("importer", "spec", "expected"), RESOLVED)
def test_relative_specifiers_resolve_like_node_and_typescript(
    importer: str, spec: str, expected: list[str]
) -> None:
    resolver = TYPESCRIPT.resolver(importer, tree_of({**LIB, importer: ""}), {})
    assert _paths(resolver.resolve(spec, importer)) == expected


def test_data_and_styles_are_in_the_footprint_unread() -> None:
    files = {
        "test/a.test.ts": "import rows from './rows.json'\nimport '../src/a.css'\n",
        "test/rows.json": "[" + "1," * 200_000 + "1]",  # over the size limit: never read
        "src/a.css": "p { color: red }",
    }
    result = walked("test/a.test.ts", files)
    assert depths(result) == {"test/rows.json": 1, "src/a.css": 1}
    assert result.read == ("test/a.test.ts",)
    assert not result.partial


TSCONFIG = """{
  // comments and trailing commas, as tsconfig allows
  "extends": "../tsconfig.base.json",
  "compilerOptions": {
    "paths": {
      "@/*": ["./web/src/*"],
      "@app/config": ["./web/config/prod", "./web/config/default"],
      "@app/*": ["./missing/*", "./web/src/app/*"],
    },
  },
}"""
ALIASED = {
    "web/tsconfig.json": TSCONFIG,
    "tsconfig.base.json": '{"compilerOptions": {"baseUrl": ".", "paths": {"#s/*": ["shared/*"]}}}',
    "web/src/lib/x.ts": "",
    "web/src/app/main.ts": "",
    "web/config/default.ts": "",
    "shared/util/strings.ts": "",
    "web/src/t.test.ts": "",
}
ALIAS_CASES = [
    # `paths` resolve against the `baseUrl` the extended file sets (TypeScript's rule).
    ("@/lib/x", ["web/src/lib/x.ts"]),
    ("@app/config", ["web/config/default.ts"]),  # exact pattern; first substitution absent
    ("@app/main", ["web/src/app/main.ts"]),  # the second substitution
    ("shared/util/strings", ["shared/util/strings.ts"]),  # baseUrl from the extended file
    ("#s/util/strings", []),  # the extending file's `paths` replace the base's
    ("lodash", []),
]


@pytest.mark.parametrize(("spec", "expected"), ALIAS_CASES)
def test_tsconfig_paths_and_base_url_through_extends(spec: str, expected: list[str]) -> None:
    configs = {p: t for p, t in ALIASED.items() if p.endswith(".json")}
    resolver = TYPESCRIPT.resolver("web/src/t.test.ts", tree_of(ALIASED), configs)
    assert _paths(resolver.resolve(spec, "web/src/t.test.ts")) == expected


def test_a_solution_style_tsconfig_finds_paths_in_the_config_it_references() -> None:
    """Vite's react-ts template: tsconfig.json only references tsconfig.app.json, which
    holds `paths`; both are read in the first round."""
    files = {
        "tsconfig.json": '{"files": [], "references": [{"path": "./tsconfig.app.json"}]}',
        "tsconfig.app.json": '{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}',
        "tsconfig.node.json": '{"compilerOptions": {"types": ["node"]}}',
        "src/lib/utils.ts": "",
        "src/App.test.tsx": "import { cn } from '@/lib/utils'\n",
    }
    tree = tree_of(files)
    assert [p for p in TYPESCRIPT.config_files("src/App.test.tsx", tree) if "config" in p] == [
        "tsconfig.json",
        "tsconfig.app.json",
        "tsconfig.node.json",
    ]
    assert depths(walked("src/App.test.tsx", files)) == {"src/lib/utils.ts": 1}


def test_paths_without_base_url_are_relative_to_the_file_declaring_them() -> None:
    configs = {
        "tsconfig.base.json": '{"compilerOptions": {"paths": {"~/*": ["./src/*"]}}}',
        "app/tsconfig.json": '{"extends": "../tsconfig.base.json"}',
    }
    found = aliases("app/test/a.test.ts", configs)
    assert (found.base_url, found.paths_base) == (None, "")
    assert found.paths == (("~/*", ("./src/*",)),)


def test_paths_are_relative_to_base_url_when_set() -> None:
    configs = {
        "tsconfig.json": '{"compilerOptions": {"baseUrl": "src", "paths": {"~/*": ["*"]}}}',
    }
    assert aliases("test/a.test.ts", configs).paths_base == "src"


ALIAS_CONFIGS = [
    (
        "web/vite.config.ts",
        "export default defineConfig({ resolve: { alias: {\n"
        "  '@': fileURLToPath(new URL('./src', import.meta.url)),\n"
        "  '~lib': path.resolve(__dirname, 'src/lib'),\n} } })",
    ),
    (
        "web/vitest.config.mts",
        "export default { resolve: { alias: [\n"
        "  { find: /^never$/, replacement: 'x' },\n"
        "  { find: '@', replacement: resolve(__dirname, './src') },\n"
        "  { find: '~lib', replacement: '/src/lib' },\n] } }",
    ),
    (
        "web/jest.config.js",
        "module.exports = { moduleNameMapper: {\n"
        "  '\\\\.(css|less)$': 'identity-obj-proxy',\n"
        "  '^@/(.*)$': '<rootDir>/src/$1',\n"
        "  '^~lib$': '<rootDir>/src/lib/index',\n"
        "  '^~lib/(.*)$': ['<rootDir>/src/lib/$1'],\n} }",
    ),
    (
        "web/package.json",
        '{"jest": {"moduleNameMapper": {"^@/(.*)$": "<rootDir>/src/$1",'
        ' "^~lib/(.*)$": "<rootDir>/src/lib/$1", "^~lib$": "<rootDir>/src/lib"}}}',
    ),
]


@pytest.mark.parametrize(("config", "text"), ALIAS_CONFIGS)
def test_vite_aliases_and_jest_module_name_mappers(config: str, text: str) -> None:
    files = {
        config: text,
        "web/src/app/main.ts": "",
        "web/src/lib/index.ts": "",
        "web/src/lib/dates.ts": "",
        "web/test/a.test.ts": "",
    }
    resolver = TYPESCRIPT.resolver("web/test/a.test.ts", tree_of(files), {config: text})
    resolved = {
        spec: _paths(resolver.resolve(spec, "web/test/a.test.ts"))
        for spec in ("@/app/main", "~lib", "~lib/dates", "react")
    }
    assert resolved == {
        "@/app/main": ["web/src/app/main.ts"],
        "~lib": ["web/src/lib/index.ts"],
        "~lib/dates": ["web/src/lib/dates.ts"],
        "react": [],
    }


MONOREPO = {
    "package.json": '{"name": "acme", "workspaces": ["packages/*"]}',
    "packages/utils/package.json": '{"name": "@acme/utils", "main": "dist/index.js"}',
    "packages/utils/src/index.ts": "export * from './strings'\n",
    "packages/utils/src/strings.ts": "",
    "packages/utils/src/deep/x.ts": "",
    "packages/babel-core/package.json": '{"name": "@babel/core"}',
    "packages/babel-core/index.js": "",
    "packages/api/package.json": '{"name": "@acme/api", "exports": {".": "./build/main.js"}}',
    "packages/api/src/main.ts": "",
    "packages/web/package.json": '{"name": "@acme/web"}',
    "packages/web/test/a.test.ts": "",
}
WORKSPACE_CASES = [
    ("@acme/utils", ["packages/utils/src/index.ts", "packages/utils/package.json"]),
    # A subpath is what its package.json says (`exports`, or a path under the folder
    # without it): the package.json first, then its entry for the subpath.
    ("@acme/utils/deep/x", ["packages/utils/package.json"]),
    ("@babel/core", ["packages/babel-core/index.js", "packages/babel-core/package.json"]),
    ("@acme/api", ["packages/api/package.json"]),  # no conventional entry: its package.json
    # Read in round 1, known by its name: no entry, no index.js, so no file it loads.
    ("@acme/web", ["packages/web/package.json", "unresolved: @acme/web"]),
    ("@other/thing", []),
]


@pytest.mark.parametrize(("spec", "expected"), WORKSPACE_CASES)
def test_workspace_packages_resolve_to_their_folder(spec: str, expected: list[str]) -> None:
    test = "packages/web/test/a.test.ts"
    configs = {
        p: t for p, t in MONOREPO.items() if p in ("package.json", "packages/web/package.json")
    }
    resolver = TYPESCRIPT.resolver(test, tree_of(MONOREPO), configs)
    assert _paths(resolver.resolve(spec, test)) == expected


def test_a_package_json_leads_to_its_entries_built_files_looked_for_under_src() -> None:
    resolver = TYPESCRIPT.resolver("packages/web/test/a.test.ts", tree_of(MONOREPO), {})
    api = resolver.imports("packages/api/package.json", MONOREPO["packages/api/package.json"])
    assert [(t.path, t.module) for t in api or [] if isinstance(t, Target)] == [
        ("packages/api/src/main.ts", "./build/main.js")
    ]
    utils = resolver.imports("packages/utils/package.json", MONOREPO["packages/utils/package.json"])
    assert _paths(utils or []) == ["packages/utils/src/index.ts"]
    assert resolver.imports("packages/api/package.json", "{ not json") is None


def test_a_workspace_import_is_walked_to_the_changed_file() -> None:
    files = {**MONOREPO, "packages/web/test/a.test.ts": "import { s } from '@acme/utils'\n"}
    result = walked("packages/web/test/a.test.ts", files)
    assert depths(result)["packages/utils/src/strings.ts"] == 2
    assert not result.partial


def test_a_subpath_of_a_package_without_exports_is_a_path_under_its_folder() -> None:
    files = {**MONOREPO, "packages/web/test/a.test.ts": "import { x } from '@acme/utils/deep/x'\n"}
    found = depths(walked("packages/web/test/a.test.ts", files))
    assert found["packages/utils/src/deep/x.ts"] == 2  # through packages/utils/package.json
    assert "packages/utils/src/index.ts" not in found


EXPORTS = {
    "./package.json": "./package.json",
    ".": {"import": {"types": "./dist/index.d.mts", "default": "./dist/index.mjs"}},
    "./adapters/fetch": {
        "node": {"import": "./dist/fetch/node.mjs", "require": "./dist/fetch/node.cjs"},
        "default": ["./dist/fetch/index.mjs", "./dist/fetch/index.cjs"],
    },
    "./internal/*": None,
    "./*": {"types": "./dist/*.d.ts", "default": "./dist/*.js"},
    "./features/*.js": "./src/features/*.js",
    "./features/private/*": None,
}
EXPORTED = [
    (".", ["./dist/index.d.mts", "./dist/index.mjs"]),
    (
        "./adapters/fetch",
        [
            "./dist/fetch/node.mjs",
            "./dist/fetch/node.cjs",
            "./dist/fetch/index.mjs",
            "./dist/fetch/index.cjs",
        ],
    ),
    ("./utils/strings", ["./dist/utils/strings.d.ts", "./dist/utils/strings.js"]),
    ("./features/x.js", ["./src/features/x.js"]),  # the longer prefix wins over `./*`
    ("./features/private/y", []),  # null: not exported
    ("./internal/z", []),
    ("./package.json", ["./package.json"]),
]


@pytest.mark.parametrize(("key", "expected"), EXPORTED)
def test_exports_resolve_as_node_reads_them(key: str, expected: list[str]) -> None:
    assert exported(EXPORTS, key) == expected


def test_exports_sugar_and_unexported_subpaths() -> None:
    assert exported("./index.js", ".") == ["./index.js"]
    assert exported({"import": "./a.mjs", "require": "./a.cjs"}, ".") == ["./a.mjs", "./a.cjs"]
    assert exported("./index.js", "./sub") == []
    # With `exports`, node refuses a subpath it does not list: no path under the folder.
    assert package_entries({"exports": {".": "./i.js"}}, "src/x") == []
    assert package_entries({"main": "./i.js"}, "src/x") is None


def _resolved_through_manifest(
    name: str, importer: str, manifest: str, specs: list[str]
) -> dict[str, list[str]]:
    """Each specifier's files before its package.json is read, what the package.json then
    gives for them, and each one's files once it is known."""
    tree, files = layout(name)
    resolver = TYPESCRIPT.resolver(importer, tree, {})
    before = {spec: _paths(resolver.resolve(spec, importer)) for spec in specs}
    assert all(paths == [manifest] for paths in before.values())  # what it says is unknown
    entries = _paths(resolver.imports(manifest, str(files[manifest])) or [])
    after = {spec: _paths(resolver.resolve(spec, importer))[:-1] for spec in specs}
    return {"entries": entries, **after}


def test_vue_subpath_exports_reach_their_entry_files_not_the_package_root() -> None:
    """vuejs/core: packages/vue/package.json exports "./server-renderer", "./compiler-sfc",
    ... with nested `import`/`require` conditions, files in the tree beside it."""
    specs = ["vue/server-renderer", "vue/compiler-sfc", "vue/src/index"]
    found = _resolved_through_manifest(
        "vue-core", "packages/vue/__tests__/index.spec.ts", "packages/vue/package.json", specs
    )
    assert found["vue/server-renderer"] == [
        "packages/vue/server-renderer/index.d.mts",
        "packages/vue/server-renderer/index.mjs",
        "packages/vue/server-renderer/index.d.ts",
        "packages/vue/server-renderer/index.js",
    ]
    assert "packages/vue/compiler-sfc/index.browser.mjs" in found["vue/compiler-sfc"]
    assert found["vue/src/index"] == []  # not exported: node refuses it
    assert not {"packages/vue/index.mjs", "packages/vue/index.js"} & set(found["entries"])
    assert not any(p.startswith("packages/vue/src/") for p in found["entries"])


def test_trpc_subpath_exports_reach_the_adapter_sources_only() -> None:
    """trpc/trpc: packages/server/package.json exports each adapter with `import`/`require`
    conditions holding `types`/`default`, all built files under dist/ (sources in src/)."""
    specs = ["@trpc/server/adapters/standalone", "@trpc/server/adapters/fastify"]
    found = _resolved_through_manifest(
        "trpc",
        "packages/tests/server/adapters/standalone.test.ts",
        "packages/server/package.json",
        specs,
    )
    assert found == {
        "entries": [
            "packages/server/src/adapters/fastify/index.ts",
            "packages/server/src/adapters/standalone.ts",
        ],
        "@trpc/server/adapters/standalone": ["packages/server/src/adapters/standalone.ts"],
        "@trpc/server/adapters/fastify": ["packages/server/src/adapters/fastify/index.ts"],
    }


SETUP_CASES = [
    ("jest.config.js", "module.exports = { setupFilesAfterEnv: ['<rootDir>/test/setup.ts'] }"),
    ("jest.config.json", '{"setupFiles": ["./test/setup"]}'),
    ("package.json", '{"jest": {"globalSetup": "<rootDir>/test/setup.ts"}}'),
    ("vitest.config.ts", "export default defineConfig({ test: { setupFiles: 'test/setup.ts' } })"),
    ("vite.config.mts", "export default { test: { setupFiles: ['./test/setup.ts'] } }"),
    ("jest.config.ts", "export default { rootDir: 'test', setupFiles: ['<rootDir>/setup.ts'] }"),
]


@pytest.mark.parametrize(("config", "text"), SETUP_CASES)
def test_setup_files_named_in_runner_configs_run_for_the_test(config: str, text: str) -> None:
    files = {
        config: text,
        "test/setup.ts": "import './helpers'\n",
        "test/helpers.ts": "",
        "test/a.test.ts": "",
    }
    result = walked("test/a.test.ts", files)
    [setup] = [r for r in result.reached if r.path == "test/setup.ts"]
    assert (setup.why, setup.depth) == (f"a setup file named in {config}", 0)
    assert depths(result)["test/helpers.ts"] == 1
    # Read with the configuration (its name is a setup file's), so its imports are read in
    # the second round: nothing left to read after as many rounds as a Python test takes.
    assert (result.partial, result.wanted) == (False, ())


def test_files_named_like_setup_files_near_the_test_are_read_with_the_configuration() -> None:
    tree = tree_of(
        {
            "jest.setup.js": "",
            "test/setup.ts": "",
            "packages/a/setupTests.tsx": "",
            "packages/a/test/vitest.setup.mts": "",
            "packages/a/src/deep/more/setup-env.ts": "",  # too far from the folders above
            "packages/b/test/setup.ts": "",  # another package's
            "packages/a/src/backup.ts": "",
        }
    )
    assert likely_setup_files("packages/a/src/x.test.ts", tree) == [
        "packages/a/test/vitest.setup.mts",
        "packages/a/setupTests.tsx",
        "test/setup.ts",
        "jest.setup.js",
    ]


def test_a_setup_module_that_is_not_the_repositorys_is_left_out() -> None:
    configs = {
        "jest.config.js": "module.exports = { setupFilesAfterEnv: ['@testing-library/jest-dom'] }"
    }
    assert setup_refs(configs)[0].value == "@testing-library/jest-dom"
    resolver = JAVASCRIPT.resolver("a.test.js", tree_of({"a.test.js": "", **configs}), configs)
    assert resolver.starts() == []


def _walk_layout(name: str, test_file: str) -> ImportWalk:
    tree, files = layout(name)
    return walked(test_file, files, None, tree)


def test_zustand_paths_self_reference_and_vitest_setup() -> None:
    """pmndrs/zustand: tsconfig `paths` map `zustand/*` to `./src/*.ts` (no baseUrl, a
    comment in the tsconfig), vitest.config.mts names tests/setup.ts."""
    result = _walk_layout("zustand", "tests/vanilla/subscribe.test.tsx")
    found = depths(result)
    assert found["tests/setup.ts"] == 0
    assert found["src/vanilla.ts"] == 1
    assert found["src/middleware.ts"] == 1
    assert found["src/middleware/persist.ts"] == 2  # re-exported by src/middleware.ts
    assert "src/react.ts" not in found
    assert result.cut and all(EXCERPT_ENDS in reason for reason in result.cut)


def test_formik_jest_key_root_dir_and_index_re_exports() -> None:
    """jaredpalmer/formik: a yarn workspace; packages/formik/package.json's `jest` key names
    `<rootDir>/test/setupTests.ts`; the test imports `../src` (src/index.tsx)."""
    result = _walk_layout("formik", "packages/formik/test/Field.test.tsx")
    found = depths(result)
    [setup] = [r for r in result.reached if r.path == "packages/formik/test/setupTests.ts"]
    assert setup.why == "a setup file named in packages/formik/package.json"
    assert found["packages/formik/src/index.tsx"] == 1
    assert found["packages/formik/src/Field.tsx"] == 2
    assert "packages/formik-native/src/index.ts" not in found


def test_formik_native_reaches_formik_as_a_workspace_package() -> None:
    tree, _ = layout("formik")
    importer = "packages/formik-native/src/index.ts"
    resolver = TYPESCRIPT.resolver(importer, tree, {})
    assert _paths(resolver.resolve("formik", importer)) == [
        "packages/formik/src/index.tsx",
        "packages/formik/package.json",
    ]


SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.mark.parametrize(
    ("name", "graphql"),
    [("js-imports-workspace-package", 1), ("js-imports-jest-setup-file", 1)],
)
async def test_end_to_end_the_walk_stays_within_the_call_budget(
    tmp_path: Path, name: str, graphql: int
) -> None:
    """Against the simulator: one tree, and one GraphQL query: the first round's (the test
    file with the configuration) is filled with the repository's other source files
    (`plan_reads`), which hold what the test and its setup files import."""
    async with running(load_scenario(SCENARIOS / f"{name}.yml"), tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        decisions = await final_decisions(bot.store, "acme/shop", [21])

    [decision] = decisions.values()
    assert decision.verdict is Verdict.RELATED
    [walk] = [item.text for item in decision.items if item.kind == "imports"]
    assert walk.startswith("followed the imports of ")
    assert sim.calls["GET /repos/{owner}/{repo}/git/trees/{tree_sha}"] == 1
    assert sim.calls["POST /graphql"] == graphql


def test_a_folder_import_loads_what_its_package_json_main_names_pino() -> None:
    """pino's tests `require('../')`: the root has no index.*, its package.json's `main`
    is pino.js (node's LOAD_AS_DIRECTORY)."""
    tree, files = layout("pino")
    result = walked("test/crlf.test.js", files, WalkLimits(), tree=tree)
    chains = {r.path: [(s.importer, s.module) for s in r.chain] for r in result.reached}
    assert chains["pino.js"] == [("test/crlf.test.js", "../")]
    # `types`: only TypeScript reads it, and nothing hands this JavaScript test to it;
    # `browser`: bundlers read it; the test runs under node's own runner (`node:test`).
    assert "pino.d.ts" not in chains
    assert sorted((r.path, r.why) for r in result.not_run) == [
        (
            "browser.js",
            "reached only through a package's `browser` entry, which node's test runner "
            "does not read",
        ),
        ("pino.d.ts", "reached only through type imports, which node's test runner erases"),
    ]
    # The excerpt holds the files one import away: the walk goes on past them unread, and
    # every import it read resolved.
    assert all(cut.endswith("(not in the fixture's excerpt)") for cut in result.cut)


@pytest.mark.parametrize(
    ("importer", "spec", "before", "entries"),
    [
        # The folder's package.json is read for its `main`; its index.* is node's fallback.
        ("a.test.js", "./lib", ["lib/package.json", "lib/index.js"], ["lib/main.js"]),
        ("a.test.js", "./bare", ["bare/package.json", "bare/index.ts"], ["bare/index.ts"]),
        # The root's package.json was read with the configuration: its `main` at once.
        ("test/a.test.js", "../", ["pkg.js", "package.json"], ["pkg.js"]),
        ("test/a.test.js", "..", ["pkg.js", "package.json"], ["pkg.js"]),
    ],
)
def test_a_folder_is_resolved_as_node_does(
    importer: str, spec: str, before: list[str], entries: list[str]
) -> None:
    files: dict[str, Source] = {
        "package.json": '{"main": "pkg.js"}',
        "pkg.js": "",
        "lib/package.json": '{"main": "./main"}',
        "lib/main.js": "",
        "lib/index.js": "",
        "bare/package.json": "{}",
        "bare/index.ts": "",
    }
    configs = {"package.json": str(files["package.json"])}
    resolver = JAVASCRIPT.resolver(importer, tree_of({**files, importer: ""}), configs)
    assert _paths(resolver.resolve(spec, importer)) == before
    manifests = [path for path in before if path.endswith("package.json")]
    read = [t for m in manifests for t in resolver.imports(m, str(files[m])) or []]
    assert _paths(read) == entries


@pytest.mark.parametrize(
    ("source", "cut"),
    [
        ("require('./gone')", "could not resolve './gone' from test/a.test.js"),
        ("import x from '../../out'", "could not resolve '../../out' from test/a.test.js"),
        ("import x from '/src/gone'", "could not resolve '/src/gone' from test/a.test.js"),
        ("require('./built')", "could not resolve 'dist/x.js' from test/built/package.json"),
        ("require('./empty')", "could not resolve './' from test/empty/package.json"),
        # A workspace package named by its name, its `main` not built and no source found.
        ("import '@acme/gone'", "could not resolve 'dist/i.js' from packages/gone/package.json"),
        ("import(`./pages/${name}`)", "could not resolve './pages/${…}' from test/a.test.js"),
    ],
)
def test_a_path_import_that_names_no_file_makes_the_walk_partial(source: str, cut: str) -> None:
    files: dict[str, Source] = {
        "package.json": "{}",
        "test/a.test.js": source + "\nrequire('react')\n",  # a registry package: not a cut
        "test/built/package.json": '{"main": "dist/x.js"}',
        "test/empty/package.json": "{}",
        "packages/gone/package.json": '{"name": "@acme/gone", "main": "dist/i.js"}',
    }
    assert walked("test/a.test.js", files, WalkLimits()).cut == (cut,)


def test_a_folder_asked_after_its_package_json_was_read_is_still_unresolved() -> None:
    files: dict[str, Source] = {
        "package.json": "{}",
        "test/a.test.js": "require('./empty/package.json')\nrequire('./b')\n",
        "test/b.js": "require('./empty')\n",
        "test/empty/package.json": '{"main": "gone.js"}',
    }
    result = walked("test/a.test.js", files, WalkLimits())
    assert result.cut == ("could not resolve './empty' from test/b.js",)


def test_a_javascript_test_under_node_runs_no_typescript_and_tstyche_steers_type_tests() -> None:
    """pino at 826751e4 (the parent of d981288b, "remove tstyche.config.json"): its node
    tests (test/crlf.test.js, `node:test`) are JavaScript that nothing compiles with
    TypeScript (no ts-jest, no `allowJs`): the walk says TypeScript does not run for them,
    and TSTyche's configuration (`testFileMatch: ["test/types/*.{cts,ts}"]`) does not steer
    them. It steers the type tests it selects (test/types/pino.test-d.ts), which
    TypeScript checks."""
    tree, files = layout("pino-tstyche")
    node = walked("test/crlf.test.js", files, WalkLimits(), tree=tree)
    assert node.tools == ()
    assert "tsconfig.json" in node.configs and "tstyche.config.json" not in node.configs
    types = walked("test/types/pino.test-d.ts", files, WalkLimits(), tree=tree)
    assert "tstyche.config.json" in types.configs
    assert types.tools is not None and "typescript" in types.tools


def test_a_runner_configuration_naming_tsconfig_may_read_it_for_javascript() -> None:
    """vite-tsconfig-paths in a vitest configuration resolves a JavaScript test's imports
    through tsconfig's `paths` (and the files it includes): TypeScript's settings then
    count for it, as for a test that TypeScript compiles."""
    configs = {"package.json": '{"name": "pino"}'}
    assert not goes_through_typescript("test/crlf.test.js", configs)
    vite = (
        "import tsconfigPaths from 'vite-tsconfig-paths'\n"
        "export default {plugins: [tsconfigPaths()]}"
    )
    assert goes_through_typescript("test/crlf.test.js", {**configs, "vitest.config.mjs": vite})
    assert goes_through_typescript("test/types/pino.test-d.ts", configs)


def test_what_names_typescript_in_a_script() -> None:
    """A module or a command of TypeScript's in a string does (pino's `test-types` script,
    `require("typescript")`, a loader, tsconfig.json read at run time); a test's title that
    says "typescript" does not (pino's test/basic.test.js)."""
    assert names_typescript("tsc && tstyche && ts-node test/types/pino.ts && attw --pack .")
    for text in ("typescript", "ts-node/register", "tsconfig-paths/register", "../tsconfig.json"):
        assert names_typescript(text), text
    assert not names_typescript("offers a .default() method to please typescript")
    assert not names_typescript("./lib/tools.js")
