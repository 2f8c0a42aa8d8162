"""tsconfig.json (and its `tsconfig.*.json` variants): which of its parts only TypeScript
reads, so that they cannot change a test that TypeScript neither compiles nor checks
(`toml_rules`, on the parsed JSON).

A JavaScript test whose runner does not go through TypeScript (node's test runner, mocha,
jest with babel-jest, vitest: `imports/jsrunner.goes_through_typescript`; no ts-jest, no
`allowJs`, no runner configuration naming tsconfig), and whose reached code names neither
TypeScript's compiler nor a loader that reads tsconfig.json (`tools.names_typescript`), is
never compiled or checked by TypeScript: its type-checking options (`strictNullChecks` and
the other `strict...` flags but `strict`, `noImplicit...`, `noUnused...`, `lib`, `types`,
`skipLibCheck`, `noEmit`, the declaration options, ...) and the files TypeScript checks
(`include`, `exclude`, `files`) are inert for it. They count when a failed test's walk says
TypeScript may run (the walks' `tools`), or could not tell (cut short).

What other tools read for JavaScript always counts: `compilerOptions.paths`, `baseUrl` and
`rootDirs` (bun, tsx, tsconfig-paths and vite-tsconfig-paths resolve a JavaScript file's
imports through them), the `jsx...` options, `target`, `module`, `alwaysStrict`, `strict`
(which implies it) and the decorator and class field options (esbuild and bun transform
with them), `allowJs`, `checkJs`, `extends` and `references` (they bring any of these), and
everything not listed. `include`, `exclude` and `files` count too when either version sets
`paths`, `baseUrl` or `extends` (vite-tsconfig-paths applies `paths` to the files a
tsconfig includes).
"""

from __future__ import annotations

import re

from bot.triage.imports.jsscan import loads_jsonc
from bot.triage.imports.tools import TYPESCRIPT
from bot.triage.manifests import toml_rules
from bot.triage.manifests.toml_rules import INERT, Table, Tool

# `tsconfig.json`, `tsconfig.base.json`, `tsconfig.test.json`: not jsconfig.json, which
# makes TypeScript read JavaScript (`allowJs` by default).
_NAME = re.compile(r"^tsconfig(?:[.-][\w.-]*)?\.json$")
# Options only TypeScript reads: what it checks, and the declarations and build info it
# writes (module doc).
_CHECKING = frozenset(
    {
        "allowUnreachableCode", "allowUnusedLabels", "declaration", "declarationDir",
        "declarationMap", "emitDeclarationOnly", "exactOptionalPropertyTypes",
        "forceConsistentCasingInFileNames", "incremental", "isolatedDeclarations",
        "isolatedModules", "lib", "noEmit", "noEmitOnError", "noErrorTruncation",
        "noFallthroughCasesInSwitch", "noImplicitAny", "noImplicitOverride",
        "noImplicitReturns", "noImplicitThis", "noPropertyAccessFromIndexSignature",
        "noUncheckedIndexedAccess", "noUncheckedSideEffectImports", "noUnusedLocals",
        "noUnusedParameters", "skipDefaultLibCheck", "skipLibCheck", "strictBindCallApply",
        "strictBuiltinIteratorReturn", "strictFunctionTypes", "strictNullChecks",
        "strictPropertyInitialization", "tsBuildInfoFile", "typeRoots", "types",
        "useUnknownInCatchVariables",
    }
)  # fmt: skip
_FILES = ("include", "exclude", "files")
_STEERS_FILES = ("paths", "baseUrl", "extends")
_TYPESCRIPT = Tool(TYPESCRIPT)


def compared(path: str) -> bool:
    return bool(_NAME.match(path.rpartition("/")[2]))


def inert(before: str, after: str, tools: frozenset[str] | None) -> str | None:
    """The TypeScript-only parts that changed, when nothing else did and no failed test may
    run TypeScript (`tools`: what the failed tests' complete walks may run, None when a walk
    could not tell); None otherwise (module doc)."""
    old, new = loads_jsonc(before), loads_jsonc(after)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    listed = toml_rules.COUNTS if any(_sets(version) for version in (old, new)) else _TYPESCRIPT
    rules = Table(
        {
            "$schema": INERT,
            "compileOnSave": _TYPESCRIPT,
            "watchOptions": _TYPESCRIPT,
            "typeAcquisition": _TYPESCRIPT,
            **{key: listed for key in _FILES},
            "compilerOptions": Table({key: _TYPESCRIPT for key in _CHECKING}),
        }
    )
    return toml_rules.inert_values(rules, old, new, lambda tool: tools is None or tool in tools)


def _sets(config: dict[str, object]) -> bool:
    """Whether a version sets what makes its file list steer imports (module doc)."""
    options = config.get("compilerOptions")
    return "extends" in config or (
        isinstance(options, dict) and any(key in options for key in _STEERS_FILES)
    )
