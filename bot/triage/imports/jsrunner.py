"""Whether the runner of a JavaScript/TypeScript test erases its type-only imports without
checking types: read from the test file and the configuration the walk read, never run.

A type-only import (`import type {X} from './x'`, `jsscan.types_only`) is erased by every
compiler, so `./x` runs for the test only if something else imports it. Whether a change to
a file reached only through such imports can break the test depends on whether its run
checks types:

- vitest transforms each file on its own (esbuild, or oxc in later vite) and never checks
  types, except its type tests (`typecheck`: by default the `*.test-d.ts` / `*.spec-d.ts`
  files; its `include` may name others);
- jest with a transform that strips types (babel-jest with preset-typescript, @swc/jest,
  esbuild-jest, ...) does not check them; ts-jest does, unless told not to
  (`isolatedModules`, `diagnostics: false`), so it counts as checking, and so does a jest
  configuration the walk cannot read whole (a `preset`, a spread of another file, a
  transform it does not know);
- `bun test` strips types;
- node's test runner: TypeScript runs through `--experimental-strip-types` (erases), `tsx`
  (erases) or `ts-node` (checks unless transpile-only), chosen on a command line: unknown;
- a type test checks types whoever runs it: a `*.test-d.ts` file (vitest's, tsd's), a
  `*.tst.ts` file (TSTyche), a test importing tsd or TSTyche. An assertion about types in
  another test (`expectTypeOf`, `assertType`) does nothing when it runs: its failure came
  from running it, not from checking its types (vitest checks those only in
  `--typecheck` runs of the files `typecheck.include` names, read as above).

The runner is the one the test imports (`vitest`, `bun:test`, `@jest/globals`), else the
one whose configuration is read (vitest.config.*, a vite.config.* with a `test` key; a
jest.config.* or package.json's `jest` key) when only one is and no package.json read runs
another, and no script points it at a configuration file of another name (`--config`).
Anything else is unknown, and type-only imports count as any import does. But a test
written in JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`) holds no type-only import of its own,
and no runner checks its types (ts-jest, or TypeScript's `allowJs`, aside: a configuration
read that names either keeps them): what it reaches only through a package's `types` entry or a
triple-slash reference in a declaration file never runs for it, and tsconfig.json's options
that only TypeScript reads do not apply to it (`goes_through_typescript`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.triage.imports.jsscan import Token, key_values, loads_jsonc, specifiers, tokens
from bot.triage.imports.language import RunsWithout

NODE = "node's test runner"
VITEST = "vitest"
JEST = "jest"
BUN = "bun test"
JAVASCRIPT = "a JavaScript test's run"
_JAVASCRIPT_TESTS = (".js", ".jsx", ".mjs", ".cjs")
# Named like a type test: vitest's typecheck default (`*.{test,spec}-d.?(c|m)[jt]s?(x)`),
# tsd's `index.test-d.ts`, TSTyche's `*.tst.ts`.
_TYPE_TEST_NAME = re.compile(r"(?:\.(?:test|spec)-d|\.tst)\.[cm]?[jt]sx?$")
# The runners of type tests: a test importing one is theirs, and checked. An assertion about
# types in a test another runner runs (vitest's `expectTypeOf` and `assertType`,
# expect-type's) does nothing at run time: only a type checker reads it, and that is a
# run of its own (`vitest --typecheck` on the files `typecheck.include` names, read below;
# `tsc`, whose errors name no test).
_TYPE_TEST_MODULES = frozenset({"tsd", "tsd-lite", "tstyche"})
_IMPORTED_RUNNERS = {VITEST: VITEST, "bun:test": BUN, "@jest/globals": JEST}
# Modules of runners whose type checking is not known: a test importing one is theirs.
_OTHER_RUNNER_MODULES = frozenset(
    {"node:test", "mocha", "ava", "uvu", "tap", "tape", "zora", "@playwright/test", "jasmine"}
)
# Another runner in a package.json's scripts: the configuration read may not be what runs.
_OTHER_RUNNERS = frozenset(
    {"mocha", "ava", "jasmine", "uvu", "tap", "tape", "ts-node", "tsd", "tstyche", "karma"}
    | {"playwright", "cypress", "airtap", "wtr", "web-test-runner"}
)
# Configuration files of runners and bundlers that may read tsconfig.json for a test.
_TSCONFIG_READERS = ("vite.config.", "vitest.config.", "vitest.workspace.", "jest.config.")
# `node --test`, `tsx --test`: node's runner.
_NODE_RUNNERS = frozenset({"node", "tsx"})
# The options that point vitest or jest at a configuration file of another name.
_ELSEWHERE = frozenset({"--config", "-c", "--workspace"})
_COMMANDS = re.compile(r"[&|;]")
# Jest transforms that strip types without checking them (`transform` values).
_STRIPPING_TRANSFORMS = frozenset(
    {
        "babel-jest",
        "@swc/jest",
        "esbuild-jest",
        "jest-esbuild",
        "esbuild-jest-transform",
        "@sucrase/jest-plugin",
        "esbuild-runner/jest",
    }
)
_LITERAL_NAMES = frozenset({"true", "false", "null", "undefined"})
# A `transform` key is a regular expression over file names (`^.+\\.tsx?$`).
_PATTERN = re.compile(r"[\^$*+?()\[\]|\\]")


def runs_without(test_file: str, source: str, configs: Mapping[str, str]) -> RunsWithout | None:
    """What the runner of `test_file` leaves out (module doc), None when nothing is known
    to be: type-only imports (`types_erased_by`), and packages' `browser` entries for a
    test of node's own runner (`node:test`), which loads what node resolves."""
    runner = types_erased_by(test_file, source, configs)
    if not runner and _javascript_run(test_file, configs):
        runner = JAVASCRIPT
    imported = {spec.module for spec in specifiers(source, typescript=True) or []}
    if "node:test" in imported:
        return RunsWithout(NODE, types=runner == JAVASCRIPT, browser=True)
    return RunsWithout(runner, types=True) if runner else None


def goes_through_typescript(test_file: str, configs: Mapping[str, str]) -> bool:
    """Whether TypeScript, or a tool that reads tsconfig.json for it, may compile, check or
    resolve the test: unless it is JavaScript that no configuration read compiles with
    TypeScript (module doc), and no vitest, vite or jest configuration read names tsconfig
    (vite-tsconfig-paths, ts-jest's `pathsToModuleNameMapper(require("./tsconfig.json"))`),
    its run may read tsconfig.json whole."""
    readers = {p: t for p, t in configs.items() if _name(p).startswith(_TSCONFIG_READERS)}
    readers.update(_jest_configs(configs))  # package.json's `jest` key too
    named = any("tsconfig" in text for text in readers.values())
    return named or not _javascript_run(test_file, configs)


def _javascript_run(test_file: str, configs: Mapping[str, str]) -> bool:
    """Whether the test is JavaScript that no configuration read compiles with TypeScript
    (module doc): a type test aside, nothing checks its types."""
    return (
        test_file.endswith(_JAVASCRIPT_TESTS)
        and not _TYPE_TEST_NAME.search(test_file)
        and not any("ts-jest" in text or "allowJs" in text for text in configs.values())
    )


def types_erased_by(test_file: str, source: str, configs: Mapping[str, str]) -> str:
    """The runner that runs `test_file` with its type-only imports erased and its types
    unchecked ("vitest", "jest with @swc/jest", "bun test"), or "" when that is not known
    (module doc). `source` is the test file's text."""
    found = specifiers(source, typescript=True) or []
    imported = [spec.module for spec in found if not spec.types]
    if _TYPE_TEST_NAME.search(test_file) or _TYPE_TEST_MODULES.intersection(imported):
        return ""
    runner = _runner(imported, configs)
    if any(_configured_elsewhere(words) for words in _commands(configs)):
        return ""  # the configuration the walk read may not be the one that runs
    if runner == VITEST:
        checks = any(_vitest_checks(text) for text in _vitest_configs(configs).values())
        return "" if checks or _scripts_name(configs, "--typecheck.include") else VITEST
    if runner == JEST:
        return _jest_eraser(configs)
    return runner


def _runner(imported: Sequence[str], configs: Mapping[str, str]) -> str:
    """The runner the test imports, else the only one configured (module doc); ""."""
    for module in imported:
        name = module.split("/", 1)[0] if module.startswith(VITEST + "/") else module
        if name in _IMPORTED_RUNNERS:
            return _IMPORTED_RUNNERS[name]
        if name in _OTHER_RUNNER_MODULES:
            return ""
    if any(_runs_another(words) for words in _commands(configs)):
        return ""
    vitest = bool(_vitest_configs(configs))
    jest = bool(_jest_configs(configs))
    if vitest != jest:
        return VITEST if vitest else JEST
    return ""


def _scripts(configs: Mapping[str, str]) -> list[str]:
    """The commands of the package.json files read (`scripts`)."""
    return [
        value
        for path, text in configs.items()
        if _is_manifest(path)
        for value in _dict(_dict(loads_jsonc(text)).get("scripts")).values()
        if isinstance(value, str)
    ]


def _commands(configs: Mapping[str, str]) -> list[set[str]]:
    """The commands of the package.json scripts read, each as its set of words (a program
    by its file name, an option without its `=value`)."""
    return [
        {word.partition("=")[0].rpartition("/")[2] for word in command.split()}
        for script in _scripts(configs)
        for command in _COMMANDS.split(script)
    ]


def _runs_another(words: set[str]) -> bool:
    return bool(words & _OTHER_RUNNERS) or (bool(words & _NODE_RUNNERS) and "--test" in words)


def _configured_elsewhere(words: set[str]) -> bool:
    """Whether a command runs vitest or jest with `--config` (or `-c`, `--workspace`): a
    configuration file the walk may not have read."""
    return bool(words & {VITEST, JEST} and words & _ELSEWHERE)


def _scripts_name(configs: Mapping[str, str], word: str) -> bool:
    return any(word in script for script in _scripts(configs))


def _vitest_configs(configs: Mapping[str, str]) -> dict[str, str]:
    """vitest.config.* files, and vite.config.* files that configure tests (`test:`)."""
    return {
        path: text
        for path, text in configs.items()
        if _name(path).startswith(("vitest.config.", "vitest.workspace."))
        or (_name(path).startswith("vite.config.") and key_values(text, "test"))
    }


def _vitest_checks(text: str) -> bool:
    """Whether a vitest configuration may check a test's types beyond its type tests: a
    `typecheck` that names its own `include` (the default is the `*.test-d.*` files), or
    whose options are a variable or a call the scanner does not follow."""
    return any(
        _opaque(value) or "include" in _keys(value) for value in key_values(text, "typecheck")
    )


def _keys(value: Sequence[Token]) -> set[str]:
    """The object keys written in a value (`{enabled: true, 'include': [...]}`)."""
    return {
        token.text
        for index, token in enumerate(value)
        if token.kind in ("name", "string") and _punct(value, index + 1, ":")
    }


def _opaque(value: Sequence[Token]) -> bool:
    """Whether a value names a variable or calls something: what it holds is not read."""
    names = {token.text for token in value if token.kind == "name"}
    return bool(names - _keys(value) - _LITERAL_NAMES)


def _punct(toks: Sequence[Token], at: int, text: str) -> bool:
    return at < len(toks) and toks[at] == ("punct", text)


def _jest_configs(configs: Mapping[str, str]) -> dict[str, str]:
    """jest.config.* files, and package.json files with a `jest` key."""
    return {
        path: text
        for path, text in configs.items()
        if _name(path).startswith("jest.config.")
        or (_is_manifest(path) and JEST in _dict(loads_jsonc(text)))
    }


def _jest_eraser(configs: Mapping[str, str]) -> str:
    """ "jest with @swc/jest" when every jest configuration read names only transforms that
    strip types, and nothing else can change that (module doc); else ""."""
    transforms: set[str] = set()
    for path, text in _jest_configs(configs).items():
        named = _json_transforms(path, text) if path.endswith(".json") else _js_transforms(text)
        if not named:
            return ""
        transforms |= named
    if not transforms or not transforms <= _STRIPPING_TRANSFORMS:
        return ""
    return f"jest with {', '.join(sorted(transforms))}"


def _json_transforms(path: str, text: str) -> set[str] | None:
    """The transforms a JSON jest configuration names; None when it has a `preset` or no
    `transform` (babel-jest by default, unless a preset says otherwise: not relied on)."""
    data = _dict(loads_jsonc(text))
    section = _dict(data.get(JEST)) if _is_manifest(path) else data
    transform = section.get("transform")
    if "preset" in section or not isinstance(transform, dict):
        return None
    values = [v[0] if isinstance(v, list) and v else v for v in transform.values()]
    return {value for value in values if isinstance(value, str)} or None


def _js_transforms(text: str) -> set[str] | None:
    """The transforms a script jest configuration names: the string literals of its
    `transform` that are not file patterns. None when it may hold more than it says: a
    `preset`, a spread (`...base`), a relative import, or no `transform` written out."""
    toks = tokens(text) or ()
    spread = any(toks[i : i + 3] == (("punct", "."),) * 3 for i in range(len(toks) - 2))
    relative = any(s.module.startswith(".") for s in specifiers(text) or [])
    values = key_values(text, "transform")
    if spread or relative or key_values(text, "preset") or len(values) != 1:
        return None
    if _opaque(values[0]):
        return None
    return {t.text for t in values[0] if t.kind == "string" and not _PATTERN.search(t.text)} or None


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _is_manifest(path: str) -> bool:
    return _name(path) == "package.json"


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}
