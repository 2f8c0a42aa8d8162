"""What a JavaScript/TypeScript repository's configuration says about its tests' imports:
`tsconfig.json`/`jsconfig.json` (`baseUrl`, `paths`), the setup files jest and vitest run
for every test, and a package's entry points from its `package.json`. Parsed, never run.

The files read (in the walk's first round, with the test file) are, in the test's folder
and every folder above it: tsconfig.json, jsconfig.json and their variants
(`tsconfig.base.json`, `tsconfig.app.json`, ...), package.json, and the jest, vitest and vite
configurations; so the nearest tsconfig is known, `extends` is followed when it names a
relative file that is one of them, and a solution-style tsconfig.json (`references` only)
is read through the variants beside it. An `extends` to a package (`@tsconfig/node18`) or to
a file elsewhere is not followed.

Which of the files read steer the test's imports (`steering`, strong evidence): the tsconfig
files consulted for `paths`/`baseUrl` and what they extend (a file extended elsewhere too,
unread), every package.json and jest/vitest/vite configuration from the test's folder up,
and TSTyche's configuration for a test TypeScript may check (`TYPE_TEST_CONFIGS`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from bot.shared import Tree
from bot.triage.imports.jsscan import key_entries, key_strings, loads_jsonc
from bot.triage.imports.paths import ancestors, join, parent

TSCONFIGS = ("tsconfig.json", "jsconfig.json")
MANIFEST = "package.json"
_SCRIPT_CONFIG = ("js", "ts", "cjs", "mjs", "cts", "mts")
RUNNER_CONFIGS = (
    *(f"jest.config.{ext}" for ext in (*_SCRIPT_CONFIG, "json")),
    *(f"vitest.config.{ext}" for ext in _SCRIPT_CONFIG),
    *(f"vitest.workspace.{ext}" for ext in (*_SCRIPT_CONFIG, "json")),
    *(f"vite.config.{ext}" for ext in _SCRIPT_CONFIG),
)
CONFIG_NAMES = (*TSCONFIGS, MANIFEST, *RUNNER_CONFIGS)
# TSTyche's configuration (`tstyche.json`, formerly `tstyche.config.json`): which files are
# its type tests (`testFileMatch`), the TypeScript versions and tsconfig it checks them with.
# It steers a test that TypeScript checks, never a JavaScript test's run (`steering`); its
# removal moves no import.
TYPE_TEST_CONFIGS = ("tstyche.json", "tstyche.config.json")
# Other tsconfig files of a folder: `tsconfig.base.json` to extend, `tsconfig.app.json` that a
# solution-style tsconfig.json only references (vite's templates put `paths` there).
_TSCONFIG_VARIANT = re.compile(r"^[tj]sconfig[.-][\w.-]*\.json$")
SETUP_KEYS = ("setupFiles", "setupFilesAfterEnv", "globalSetup")
ROOT_DIR = "<rootDir>"
# A setup file's usual names: setup.ts, setupTests.js, jest.setup.ts, vitest.setup.mts,
# setup-env.ts, test-setup.js.
_SETUP_NAME = re.compile(
    r"^(?:(?:jest|vitest|test)[.-]?)?setup(?:[.-]?(?:tests?|env|files?|after-?env))?"
    r"\.[cm]?[jt]sx?$",
    re.IGNORECASE,
)
_SETUP_GUESSES = 8
# jest's `moduleNameMapper` keys read: `^@/(.*)$`, `^~/(.*)`, `^config$`.
_MAPPER = re.compile(
    r"^\^(?P<prefix>(?:[^\\()\[\]{}.*+?|^$]|\\[./@~-])*)(?:(?P<rest>\(\.\*\)\$?)|\$)$"
)
_UNESCAPE = re.compile(r"\\(.)")
# A package's entry points, in the order bundlers and node look at them.
_ENTRY_FIELDS = ("source", "module", "main", "types", "typings", "browser")


def config_candidates(test_file: str, tree: Tree) -> list[str]:
    """The configuration files to read for a test: every one of `CONFIG_NAMES` in its
    folder or a folder above, nearest first; then the files named like a setup file near
    it (`likely_setup_files`)."""
    folders = ancestors(test_file)
    names = (*CONFIG_NAMES, *TYPE_TEST_CONFIGS)
    named = [path for f in folders for name in names if (path := join(f, name)) in tree.files]
    return named + _tsconfig_variants(folders, tree) + likely_setup_files(test_file, tree)


def _tsconfig_variants(folders: Sequence[str], tree: Tree) -> list[str]:
    """The `tsconfig.*.json` and `jsconfig.*.json` files in the folders, nearest first."""
    rank = {folder: index for index, folder in enumerate(folders)}
    found = [
        path
        for path in tree.files
        if "sconfig" in path
        and _TSCONFIG_VARIANT.match(path.rpartition("/")[2])
        and parent(path) in rank
    ]
    return sorted(found, key=lambda path: (rank[parent(path)], path))


def likely_setup_files(test_file: str, tree: Tree) -> list[str]:
    """Files named like a setup file (`jest.setup.ts`, `setupTests.js`, `test/setup.ts`) in
    a folder above the test or a folder beside one. Read with the configuration, before the
    configuration says which run, so that a setup file's own imports are read one round
    sooner (the first triage's call budget); one the configuration does not name is read
    and left out."""
    folders = set(ancestors(test_file))
    found = [
        path
        for path in tree.files
        if "etup" in path
        and _SETUP_NAME.match(path.rpartition("/")[2])
        and (parent(path) in folders or parent(parent(path)) in folders)
        and "node_modules/" not in path
    ]
    return sorted(found, key=lambda path: (-path.count("/"), path))[:_SETUP_GUESSES]


def steering(test_file: str, configs: Mapping[str, str], typescript: bool = True) -> list[str]:
    """The configuration files read that steer the test's imports: the tsconfig files
    `aliases` consulted (with their `extends` chains), and every package.json and jest,
    vitest or vite configuration from the test's folder up (any of them may be the one the
    run used); and, when TypeScript may check the test (`typescript`), TSTyche's. Not: a
    tsconfig variant nothing consulted (`tsconfig.eslint.json` beside a tsconfig.json that
    answered), nor a file read only because it is named like a setup file (one a
    configuration names runs for the test, a stronger reason)."""
    names = (MANIFEST, *RUNNER_CONFIGS, *(TYPE_TEST_CONFIGS if typescript else ()))
    runners = [p for p in configs if p.rpartition("/")[2] in names]
    return list(dict.fromkeys([*aliases(test_file, configs).read_from, *runners]))


def normalize(folder: str, relative: str) -> str | None:
    """`relative` from `folder` as a repository path; None when it climbs out of it."""
    joined = posixpath.normpath(posixpath.join(folder or ".", relative))
    if joined == ".":
        return ""
    if joined.startswith(("../", "/")) or joined == "..":
        return None
    return joined


@dataclass(frozen=True)
class Aliases:
    """The nearest tsconfig's module lookup: `baseUrl` and `paths` as repository paths
    (`paths` substitutions are resolved against `paths_base`, TypeScript's rule: the
    `baseUrl` when set, else the folder of the file that declares `paths`)."""

    base_url: str | None = None
    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()
    paths_base: str = ""
    paths_folder: str = ""  # where the file declaring `paths` is (while merging `extends`)
    # The tsconfig files consulted for them, `extends` chains included (a file extended
    # but not read too): a change to any of them can change the answer.
    read_from: tuple[str, ...] = ()


def aliases(test_file: str, configs: Mapping[str, str]) -> Aliases:
    """`baseUrl` and `paths` of the tsconfig (or jsconfig) nearest the test that sets
    either, `extends` followed through the files read: in each folder up from the test,
    tsconfig.json, jsconfig.json, then the folder's other tsconfig files (those a
    solution-style tsconfig.json references, say tsconfig.app.json). `read_from` lists
    the files consulted up to the one that answered (all of them when none did)."""
    consulted: list[str] = []
    for folder in ancestors(test_file):
        names = [join(folder, name) for name in TSCONFIGS]
        names += sorted(p for p in configs if parent(p) == folder and is_variant(p))
        for path in names:
            found = _options(path, configs, frozenset()) if path in configs else Aliases()
            consulted += found.read_from
            if found.paths or found.base_url is not None:
                base = found.base_url if found.base_url is not None else found.paths_folder
                return Aliases(found.base_url, found.paths, base, read_from=_once(consulted))
    return Aliases(read_from=_once(consulted))


def _once(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))


def is_variant(path: str) -> bool:
    return bool(_TSCONFIG_VARIANT.match(path.rpartition("/")[2]))


def _options(path: str, configs: Mapping[str, str], seen: frozenset[str]) -> Aliases:
    """A tsconfig's `baseUrl` (as a repository folder) and `paths` with the folder of the
    file declaring them (in `paths_base`), over those of the files it extends."""
    if path in seen:
        return Aliases()
    data = loads_jsonc(configs.get(path, ""))
    if not isinstance(data, dict):
        return Aliases(read_from=(path,))  # extended but not read: it still steers
    folder = parent(path)
    merged = Aliases(read_from=(path,))
    extends = data.get("extends")
    for base in [extends] if isinstance(extends, str) else extends or []:
        if isinstance(base, str) and base.startswith("."):
            target = normalize(folder, base if base.endswith(".json") else base + ".json")
            if target is not None:
                merged = _over(merged, _options(target, configs, seen | {path}))
    options = data.get("compilerOptions")
    if not isinstance(options, dict):
        return merged
    base_url = options.get("baseUrl")
    if isinstance(base_url, str) and (resolved := normalize(folder, base_url)) is not None:
        merged = replace(merged, base_url=resolved)
    paths = options.get("paths")
    if isinstance(paths, dict):
        listed = tuple(
            (pattern, tuple(s for s in subs if isinstance(s, str)))
            for pattern, subs in paths.items()
            if isinstance(subs, list)
        )
        merged = replace(merged, paths=listed, paths_folder=folder)
    return merged


def _over(base: Aliases, top: Aliases) -> Aliases:
    """`top`'s settings where it has them, else `base`'s (a later `extends` wins)."""
    return Aliases(
        base_url=top.base_url if top.base_url is not None else base.base_url,
        paths=top.paths or base.paths,
        paths_folder=top.paths_folder if top.paths else base.paths_folder,
        read_from=_once([*base.read_from, *top.read_from]),
    )


@dataclass(frozen=True)
class Alias:
    """A module alias of a bundler or test runner: a specifier equal to `prefix` (`whole`)
    or starting with it becomes `template` (a repository path) with `$1` the rest."""

    prefix: str
    template: str
    whole: bool = False

    def apply(self, spec: str) -> str | None:
        if self.whole:
            return self.template if spec == self.prefix else None
        if spec.startswith(self.prefix):
            return self.template.replace("$1", spec[len(self.prefix) :])
        return None


def module_aliases(configs: Mapping[str, str]) -> list[Alias]:
    """The aliases of vite's `resolve.alias` (`'@': path.resolve(__dirname, 'src')`,
    `{find: '@', replacement: ...}`: the replacement's last literal, relative to the
    config's folder) and jest's `moduleNameMapper` of the form `^prefix(.*)$` or
    `^name$` (other regular expressions are not evaluated: they come from the repository)."""
    found: list[Alias] = []
    for path, text in configs.items():
        name, folder = path.rpartition("/")[2], parent(path)
        if name.startswith(("vite.config.", "vitest.config.")):
            for find, values in key_entries(text, "alias"):
                target = normalize(folder, values[-1].lstrip("/")) if values else None
                if target is not None:
                    found += [Alias(find, target, whole=True), Alias(find + "/", target + "/$1")]
        elif name.startswith("jest.config.") or name == MANIFEST:
            found += _mapped_modules(path, text)
    return found


def _mapped_modules(path: str, text: str) -> list[Alias]:
    data = loads_jsonc(text) if path.endswith(".json") else None
    if isinstance(data, dict):
        section = data.get("jest") if path.endswith(MANIFEST) else data
        mapper = section.get("moduleNameMapper") if isinstance(section, dict) else None
        entries = [
            (key, value if isinstance(value, list) else [value])
            for key, value in (mapper.items() if isinstance(mapper, dict) else [])
        ]
    elif path.endswith(MANIFEST):
        return []
    else:
        entries = list(key_entries(text, "moduleNameMapper"))
    found: list[Alias] = []
    for pattern, values in entries:
        match = _MAPPER.match(pattern)
        first = next((v for v in values if isinstance(v, str)), None)
        if match is None or first is None or not match["prefix"]:
            continue
        prefix = _UNESCAPE.sub(r"\1", match["prefix"])
        value = first.replace(ROOT_DIR, ".")
        target = normalize(parent(path), value.lstrip("/") if value.startswith("/") else value)
        if target is not None:
            found.append(Alias(prefix, target, whole=not match["rest"]))
    return found


@dataclass(frozen=True)
class SetupRef:
    """A setup file as a runner's configuration names it (`<rootDir>/jest.setup.ts`,
    `./tests/setup.ts`, `@testing-library/jest-dom`), with the folder it is relative to."""

    config: str
    root: str
    value: str


def setup_refs(configs: Mapping[str, str]) -> list[SetupRef]:
    """The setup files (`setupFiles`, `setupFilesAfterEnv`, `globalSetup`) named in the
    jest and vitest configurations read, and in `package.json`'s `jest` key."""
    found: list[SetupRef] = []
    for path, text in configs.items():
        name = path.rpartition("/")[2]
        if name == MANIFEST or name.endswith(".json"):
            data = loads_jsonc(text)
            section = data.get("jest") if isinstance(data, dict) and name == MANIFEST else data
            values = _json_values(section) if isinstance(section, dict) else {}
        elif name in RUNNER_CONFIGS:
            values = key_strings(text, (*SETUP_KEYS, "rootDir"))
        else:
            continue
        root_dir = values.pop("rootDir", [])
        root = normalize(parent(path), root_dir[0]) if root_dir else parent(path)
        for value in (v for key in SETUP_KEYS for v in values.get(key, [])):
            found.append(SetupRef(path, root if root is not None else parent(path), value))
    return found


def _json_values(section: dict[str, object]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for key in (*SETUP_KEYS, "rootDir"):
        value = section.get(key)
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        values[key] = [item for item in items if isinstance(item, str)]
    return values


def package_entries(manifest: Mapping[str, object], subpath: str) -> list[str] | None:
    """The files a package's `package.json` names for `name` (subpath "") or `name/subpath`,
    relative to its folder. The package itself: its entry fields and what `exports` maps "."
    to. A subpath: what `exports` maps `./subpath` to, as node reads it (`exported`); none
    when `exports` does not export it (node refuses the import); None when the package has
    no `exports` (then the subpath is a path under the package's folder)."""
    found = _entries_read_by(manifest, subpath)
    return None if found is None else list(dict.fromkeys(entry for entry, _ in found))


def entry_readers(manifest: Mapping[str, object], subpath: str) -> dict[str, str]:
    """Of `package_entries`, those only one kind of tool reads: `TYPES` (named only by
    `types` or `typings`, or under a `types` condition of `exports`: TypeScript reads
    them, nothing runs them) and `BROWSER` (named only by the `browser` field: bundlers
    read it, node does not). An entry also named otherwise is absent: it may run."""
    readers: dict[str, set[str]] = {}
    for entry, reader in _entries_read_by(manifest, subpath) or []:
        readers.setdefault(entry, set()).add(reader)
    return {entry: kinds.pop() for entry, kinds in readers.items() if kinds in ({TYPES}, {BROWSER})}


TYPES = "types"
BROWSER = "browser"
_READER = {"types": TYPES, "typings": TYPES, "browser": BROWSER}


def _entries_read_by(manifest: Mapping[str, object], subpath: str) -> list[tuple[str, str]] | None:
    """`package_entries` with who reads each: `TYPES`, `BROWSER`, or "" (every runner)."""
    exports = manifest.get("exports")
    if subpath and exports is None:
        return None
    fields = [] if subpath else [(manifest.get(f), _READER.get(f, "")) for f in _ENTRY_FIELDS]
    leaves = _exported_leaves(exports, "./" + subpath if subpath else ".")
    found = [*fields, *((leaf, TYPES if TYPES in path else "") for leaf, path in leaves)]
    return [(entry, reader) for entry, reader in found if isinstance(entry, str)]


def exported(exports: object, key: str) -> list[str]:
    """The targets node's `exports` resolution reaches for `key` ("." or "./sub"): the
    entry of that exact key, else of the `*` pattern whose prefix is longest (then the
    longest key), its `*` replaced by what it matched. A string, an array or a conditions
    object without "." keys is the entry of "." alone. Every condition's target counts
    (`import`, `require`, `node`, `types`, `default`, nested ones): which conditions a
    runner sets is its configuration's (jest's `customExportConditions`, vitest's
    `resolve.conditions`), and a footprint too large is the safe side."""
    return [leaf for leaf, _ in _exported_leaves(exports, key)]


def _exported_leaves(exports: object, key: str) -> list[tuple[str, tuple[str, ...]]]:
    """`exported`'s targets, each with the conditions that lead to it."""
    if isinstance(exports, dict) and any(str(k).startswith(".") for k in exports):
        mapping: dict[object, object] = exports
    else:
        mapping = {".": exports}
    if key in mapping and "*" not in key:
        return _leaves(mapping[key], None)
    patterns = sorted(
        (k for k in mapping if isinstance(k, str) and k.count("*") == 1),
        key=lambda k: (-k.index("*"), -len(k)),
    )
    for pattern in patterns:
        head, tail = pattern.split("*")
        if not key.startswith(head) or key == head:
            continue
        if tail and not (key.endswith(tail) and len(key) >= len(pattern)):
            continue
        return _leaves(mapping[pattern], key[len(head) : len(key) - len(tail)])
    return []


def _leaves(
    value: object, star: str | None, conditions: tuple[str, ...] = ()
) -> list[tuple[str, tuple[str, ...]]]:
    """The string targets under `value` (null excludes), `*` replaced by `star` (a target
    with a `*` outside a pattern's entry is no file), each with the conditions above it."""
    if isinstance(value, str):
        if star is not None:
            return [(value.replace("*", star), conditions)]
        return [] if "*" in value else [(value, conditions)]
    if isinstance(value, dict):
        return [
            leaf
            for key, item in value.items()
            for leaf in _leaves(item, star, (*conditions, str(key)))
        ]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item, star, conditions)]
    return []
