"""JavaScript and TypeScript: what a test file loads, read with a small scanner
(`jsscan.py`, never run), and where each specifier is found in the repository.

What runs for a test: the test file; the setup files its jest or vitest configuration
names (`setupFiles`, `setupFilesAfterEnv`, `globalSetup`, in `jest.config.*`, `package.json`'s
`jest` key, `vitest.config.*`, `vite.config.*` from the test's folder up: `jsconfig.py`);
and, transitively, what those load: `import ... from`, `export ... from`, `import 'x'`,
`import('x')` and `require('x')` with a literal, `jest.mock('x')` and its kin.

A specifier resolves as node and TypeScript do: a relative one (`./x`, `../x`) against the
importing file, as written, with an extension added (`.ts`, `.tsx`, `.d.ts`, `.js`, ...),
`./x.js` written for `x.ts` (TypeScript's NodeNext style), or as a folder (node's
LOAD_AS_DIRECTORY: the entries its package.json names, with that package.json, and its
`index.*`); an absolute one (`/src/main.ts`) from vite's root (a vite config's folder, else
the repository's). A path that names no file of the tree, and a folder or a package of the
repository whose entries name none, is `Unresolved`: the walk is partial, never complete
without it; so is a path built at run time (`` require(`./locale/${lang}`) ``). A bare
one goes through, in order: an alias of the bundler or test runner (vite's
`resolve.alias` with a literal replacement, jest's `moduleNameMapper` of the form
`^prefix(.*)$`), the nearest tsconfig's `paths`, its `baseUrl`; else it may name a package
of the repository itself (a monorepo's workspace): a folder holding a package.json whose
name is the package's last segment (`@acme/utils` in `packages/utils/`) or scope-last
(`@babel/core` in `packages/babel-core/`), or whose package.json was read and names it.
That package's `src/index.*` (or `index.*`, `lib/index.*`) and its package.json (as
configuration: `Target.configures`) are imported, and the package.json's entries (`main`,
`module`, what `exports` maps "." to, ...; a built file in `dist/` or `lib/` that is not in
the tree is looked for under `src/`) at the next depth. For `pkg/sub`, only what node
resolves: what the package.json's `exports` maps `./sub` to (an exact key or a `*` pattern,
every condition's target: `jsconfig.exported`), nothing when `exports` exists without it
(node refuses the import), and `sub` under the folder, its `src/` or `lib/` only when the
package has no `exports`; so a test of one entry point does not depend on the whole package.
Anything else (`react`, `node:fs`)
is not the repository's and is left out. Not followed: webpack's aliases, a vite alias found
by a regular expression, other `moduleNameMapper` patterns, jest's `moduleDirectories`,
package.json `imports` (`#x`), and `import.meta.glob`.

Some imports load nothing for some runners (`jsrunner.py`): TypeScript's type-only imports
(`jsscan.types_only`, triple-slash references) and a package.json's `types` entries are
marked `Target.types`, its `browser` entry `Target.browser`; the test file says what its
runner leaves out (`RunsWithout`), and the walk keeps what only those imports reach apart.

What a file the pull request removed could have been (`removed.py`): the file a path
specifier names, with any extension or as a folder's `index.*` (one that found `x.js` may
have found `x.ts` at the base commit), and the files an alias, tsconfig `paths` or `baseUrl`
would map a bare specifier to, or, in a package of the repository, its entry and subpath under
the package's folder, `src/` or `lib/`. A bare specifier no rule maps names an installed
package; a workspace package removed whole takes its package.json with it, and a removed
package.json, tsconfig or runner configuration keeps every removed file open.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.shared import Tree
from bot.triage.imports import jsconfig, tools
from bot.triage.imports.jsconfig import Alias, Aliases, SetupRef, normalize
from bot.triage.imports.jsrunner import goes_through_typescript, runs_without
from bot.triage.imports.jsscan import loads_jsonc, specifiers, tokens
from bot.triage.imports.language import Runs, RunsWithout, Start, Target, Unplaced, Unresolved
from bot.triage.imports.paths import join, parent

JS_TESTS = (".js", ".jsx", ".mjs", ".cjs")
TS_TESTS = (".ts", ".tsx", ".mts", ".cts")
SCANNED = (*JS_TESTS, *TS_TESTS, ".vue", ".svelte", ".astro")
# What a test can load: scripts, and the JSON, styles and components they import.
SOURCES = (*SCANNED, ".json", ".css", ".scss", ".sass", ".less")
EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
# The TypeScript file a `.js` specifier names under NodeNext resolution.
_TS_FOR_JS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_BUILD_FOLDERS = frozenset({"dist", "lib", "build", "esm", "cjs", "out"})
_PACKAGE_ENTRY_FOLDERS = ("src", "", "lib")
_SKIPPED_FOLDERS = frozenset({"node_modules"})
_NESTED_MANIFEST = "/" + jsconfig.MANIFEST
_ONE_READER = ({jsconfig.TYPES}, {jsconfig.BROWSER})
_SCRIPT_SUFFIX = re.compile(r"(?:\.d)?\.[cm]?[jt]sx?$")


@dataclass(frozen=True)
class Script:
    """One `Language` object per name: JavaScript reads `.js` tests, TypeScript `.ts`
    ones; both resolve alike and either may load the other's files."""

    name: str
    tested: tuple[str, ...]
    sources: tuple[str, ...] = SOURCES
    configs: tuple[str, ...] = ()  # every configuration file read ends in one of `sources`

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(self.tested) and not test_file.endswith(".d.ts")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        return jsconfig.config_candidates(test_file, tree)

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        return jsconfig.steering(test_file, configs, goes_through_typescript(test_file, configs))

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`src/a.ts` as `src/a.ts` and `src/a`, `src/a/index.js` also as `src/a`; None
        for configuration (module doc)."""
        name = path.rpartition("/")[2]
        if name in jsconfig.CONFIG_NAMES or jsconfig.is_variant(name):
            return None
        stem = _SCRIPT_SUFFIX.sub("", path)
        index = [parent(path)] if stem.rpartition("/")[2] == "index" and parent(path) else []
        return [path, stem, *index]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> ScriptResolver:
        named: dict[str, str] = {}
        roots: list[str] = []
        manifests: dict[str, dict[str, object]] = {}
        for path, text in configs.items():
            folder, _, file_name = path.rpartition("/")
            manifest = loads_jsonc(text) if file_name == jsconfig.MANIFEST else None
            if isinstance(manifest, dict):
                manifests[path] = manifest
                if isinstance(name := manifest.get("name"), str):
                    named.setdefault(name, folder)
            if file_name.startswith(("vite.config.", "vitest.config.")):
                roots.append(folder)
        return ScriptResolver(
            tree=tree,
            test_file=test_file,
            configs=configs,
            aliases=jsconfig.aliases(test_file, configs),
            named=named,
            roots=(*roots, ""),
            setups=tuple(jsconfig.setup_refs(configs)),
            aliased=tuple(jsconfig.module_aliases(configs)),
            manifests=manifests,
        )


@dataclass(frozen=True)
class ScriptResolver:
    tree: Tree
    test_file: str
    configs: Mapping[str, str]  # the configuration files read, for the test's runner
    aliases: Aliases
    named: Mapping[str, str]  # package name -> folder, from the package.json files read
    roots: tuple[str, ...]  # where a `/x` specifier is looked for: vite's roots, then ours
    setups: tuple[SetupRef, ...]
    aliased: tuple[Alias, ...] = ()  # vite's `resolve.alias`, jest's `moduleNameMapper`
    # The package.json files this walk has read (path -> its data), and the subpaths asked
    # of each package (`_exported`). The walk reads a file's importers before the file, so
    # a package.json read later gives its entries for every subpath asked so far; one asked
    # after it was read (or of a package.json read with the configuration) is answered at
    # once.
    manifests: dict[str, dict[str, object]] = field(default_factory=dict)
    asked: dict[str, set[str]] = field(default_factory=dict)
    # The package.json files of the folders imported by path, and the package names
    # imported: a package of theirs whose entries name no file is `Unresolved`.
    folders: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)

    @functools.cached_property
    def packages(self) -> Mapping[str, tuple[str, ...]]:
        """Folder name -> the folders of that name holding a package.json: a pass over the
        whole tree, made only when a bare specifier is left after the aliases."""
        return _package_folders(self.tree)

    def starts(self) -> Sequence[Start]:
        found = {
            path: Start(path, f"a setup file named in {ref.config}")
            for ref in self.setups
            for path in self._setup_files(ref)
        }
        return list(found.values())

    def imports(
        self, path: str, source: str
    ) -> Sequence[Target | Unresolved | Unplaced | RunsWithout | Runs] | None:
        """What the file loads; type-only imports marked (`Target.types`) in TypeScript;
        what its specifiers could have named at the base commit (`Unplaced`); for the test
        file, what its runner leaves out, when that is known (`jsrunner`); and whether
        TypeScript may run (`Runs`: `tools.names_typescript`)."""
        if path.rpartition("/")[2] == jsconfig.MANIFEST:
            return self._entries(path, source)
        if not path.endswith(SCANNED):
            return []  # JSON, styles: they load nothing
        found = specifiers(source, typescript=path.endswith(TS_TESTS))
        if found is None:
            return None
        targets: list[Target | Unresolved | Unplaced | RunsWithout | Runs] = list(
            dict.fromkeys(t for spec in found for t in self.resolve(spec.module, path, spec.types))
        )
        targets += [
            Unplaced(spec.module, stems)
            for spec in found
            if (stems := self.stems(spec.module, path))
        ]
        if path == self.test_file and (without := runs_without(path, source, self.configs)):
            targets.append(without)
        typescript = path == self.test_file and goes_through_typescript(path, self.configs)
        if typescript or _names_typescript(source):
            targets.append(Runs(frozenset({tools.TYPESCRIPT})))
        else:
            targets.append(Runs(frozenset()))
        return list(dict.fromkeys(targets))

    def stems(self, spec: str, importer: str) -> tuple[str, ...]:
        """What a specifier could have named at the base commit (module doc): the paths it
        is looked for at, each also without a script extension."""
        bare = spec.split("?", 1)[0]
        if bare.startswith(("./", "../")) or bare in (".", ".."):
            bases = [normalize(parent(importer), bare)]
        elif bare.startswith("/"):
            bases = [join(root, bare.lstrip("/")) for root in self.roots]
        elif ":" in bare.split("/", 1)[0]:
            return ()
        else:
            bases = [alias.apply(bare) for alias in self.aliased]
            bases += self._substitutions(bare)
            if self.aliases.base_url is not None:
                bases.append(normalize(self.aliases.base_url, bare))
            name, subpath = _split_package(bare)
            bases += [
                join(folder, under, subpath or "index")
                for folder in self._package_folders(name)
                for under in _PACKAGE_ENTRY_FOLDERS
            ]
        named = [base for base in bases if base]
        return tuple(dict.fromkeys([*named, *(_SCRIPT_SUFFIX.sub("", base) for base in named)]))

    def _substitutions(self, spec: str) -> list[str | None]:
        """Every path tsconfig `paths` maps a bare specifier to, whichever names files."""
        found: list[str | None] = []
        for pattern, subs in self.aliases.paths:
            head, star, tail = pattern.partition("*")
            if not star and pattern == spec:
                found += [normalize(self.aliases.paths_base, sub) for sub in subs]
            elif star and "*" not in tail and _fits(spec, head, tail):
                middle = spec[len(head) : len(spec) - len(tail)]
                found += [
                    normalize(self.aliases.paths_base, sub.replace("*", middle)) for sub in subs
                ]
        return found

    def resolve(self, spec: str, importer: str, types: bool = False) -> list[Target | Unresolved]:
        """The repository files one specifier loads, as `importer` writes it; `Unresolved`
        for a path (`./x`, `../`, `/src/x`) that names nothing in the tree. `types`: the
        specifier is imported for its types alone."""
        bare = spec.split("?", 1)[0]  # vite's `./icon.svg?raw`
        if bare.startswith(("./", "../")) or bare in (".", ".."):
            base = normalize(parent(importer), bare)
            files = [] if base is None else self._path_files(base)
        elif bare.startswith("/"):  # vite reads `/src/main.ts` from its root
            found = (self._path_files(join(root, bare.lstrip("/"))) for root in self.roots)
            files = next((files for files in found if files), [])
        elif ":" in bare.split("/", 1)[0]:
            return []  # `node:fs`, `virtual:x`, a URL: not the repository's
        else:
            files = self._bare(bare)
            if not files:
                return []  # a package from the registry (`react`): not the repository's
        # A package.json found by a package's name, or as a folder's (`require('../')`), is
        # read for its entries (`main`, `exports`): configuration, unlike one the specifier
        # names (`./package.json`).
        named = bare.endswith(".json")
        subpath = "" if bare.startswith((".", "/")) else _split_package(bare)[1]
        # A package's entries that only TypeScript or only bundlers read (`entry_readers`).
        readers = {} if named else self._readers([p for p in files if _is_manifest(p)], subpath)
        targets: list[Target | Unresolved] = [
            Target(
                path,
                spec,
                _loads_more(path),
                configures=_is_manifest(path) and not named,
                types=types or readers.get(path) == jsconfig.TYPES,
                browser=readers.get(path) == jsconfig.BROWSER,
            )
            for path in files
        ]
        if not files or (not named and all(self._read_empty(p, subpath) for p in files)):
            # (a package.json read later says so itself)
            targets.append(Unresolved(spec, types=types))
        return targets

    def _read_empty(self, path: str, subpath: str) -> bool:
        """A package.json already read, of a package surely imported, that names no file
        for the subpath (and does not refuse it: `exports` without it): all an import found,
        when it is all there is."""
        manifest = self.manifests.get(path) if _is_manifest(path) else None
        if manifest is None or not self._imported(path, manifest):
            return False
        return not subpath or jsconfig.package_entries(manifest, subpath) != []

    def _path_files(self, base: str) -> list[str]:
        """What node loads for a path (LOAD_AS_FILE, then LOAD_AS_DIRECTORY): the file as
        written or with an extension; else, for a folder, the entries its package.json
        names (`main`; bundlers read `module`, `exports`, ...: every one counts) with that
        package.json, and its `index.*`."""
        files = self.files_at(base, indexes=False)
        if files:
            return files
        manifest = join(base, jsconfig.MANIFEST)
        found = []
        if manifest in self.tree.files:
            self.folders.add(manifest)
            found = [*self._exported(base, "", guess=False), manifest]
        return list(dict.fromkeys(found + self.files_at(join(base, "index"))))

    def _bare(self, spec: str) -> list[str]:
        """A bare specifier, in the order the tools look: an alias of the bundler or test
        runner, tsconfig `paths`, its `baseUrl`, a package of the repository."""
        for alias in self.aliased:
            base = alias.apply(spec)
            if base is not None and (files := self.files_at(base)):
                return files
        return self._paths(spec) or self._base_url(spec) or self._workspace(spec)

    def files_at(self, base: str, indexes: bool = True) -> list[str]:
        """The files a path without (or with) its extension names: the file itself, the
        TypeScript file for a `.js` name, `base.<ext>`, or (`indexes`) the folder's
        `index.<ext>`."""
        files = self.tree.files
        if base in files:
            return [base]
        stem, dot, suffix = base.rpartition(".")
        typed = [stem + ts for ts in _TS_FOR_JS.get(dot + suffix, ()) if stem + ts in files]
        if typed:
            return typed
        found = [base + ext for ext in EXTENSIONS if base + ext in files]
        if found or not indexes:
            return found
        return [index for ext in EXTENSIONS if (index := join(base, "index" + ext)) in files]

    def _paths(self, spec: str) -> list[str]:
        """tsconfig `paths`: an exact pattern first, else the `*` pattern with the longest
        prefix; its substitutions in order, the first that names files wins."""
        exact = [subs for pattern, subs in self.aliases.paths if pattern == spec]
        starred = [
            (len(head), subs, spec[len(head) : len(spec) - len(tail)])
            for pattern, subs in self.aliases.paths
            if pattern.count("*") == 1
            for head, tail in [pattern.split("*")]
            if spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head + tail)
        ]
        if exact:
            chosen, star = exact[0], ""
        elif starred:
            _, chosen, star = max(starred, key=lambda item: item[0])
        else:
            return []
        for substitution in chosen:
            base = normalize(self.aliases.paths_base, substitution.replace("*", star))
            if base is not None and (files := self.files_at(base)):
                return files
        return []

    def _base_url(self, spec: str) -> list[str]:
        if self.aliases.base_url is None:
            return []
        base = normalize(self.aliases.base_url, spec)
        return [] if base is None else self.files_at(base)

    def _workspace(self, spec: str) -> list[str]:
        """A package of the repository itself (module doc): its entry and package.json."""
        name, subpath = _split_package(spec)
        self.names.add(name)
        found: list[str] = []
        for folder in self._package_folders(name):
            found += self._exported(folder, subpath)
            found.append(join(folder, jsconfig.MANIFEST))
        return list(dict.fromkeys(found))

    def _package_folders(self, name: str) -> Sequence[str]:
        """The folders of the repository's packages a package name may be (module doc)."""
        if name in self.named:
            return [self.named[name]]
        scope, _, last = name.rpartition("/")
        guesses = [last, f"{scope.lstrip('@')}-{last}"] if scope else [last]
        return [f for guess in guesses for f in self.packages.get(guess, ())]

    def _exported(self, folder: str, subpath: str, guess: bool = True) -> list[str]:
        """`pkg` (subpath "") or `pkg/sub`: the package's entries (`package_entries`: for
        a subpath, what `exports` maps `./sub` to, none when it exports other subpaths only,
        or `sub` under the folder when it has no `exports`), known once its package.json is
        read (until then, asked of it: `_entries`). The package itself is also looked for
        at once as `src/index.*`, `index.*`, `lib/index.*` (`guess`)."""
        path = join(folder, jsconfig.MANIFEST)
        guessed = self._package_entry(folder, "") if guess and not subpath else []
        self.asked.setdefault(path, set()).add(subpath)
        manifest = self.manifests.get(path)
        if manifest is None:
            return guessed
        entries = jsconfig.package_entries(manifest, subpath)
        if entries is None:
            return self._under(folder, subpath)
        return guessed + [file for entry in entries for file in self._entry_files(folder, entry)]

    def _under(self, folder: str, subpath: str) -> list[str]:
        """`pkg/sub` of a package without `exports`: `sub` under its folder, its `src/` or
        `lib/`, or the source of a built file (`pkg/dist/x.js`: `src/x`)."""
        return self._package_entry(folder, subpath) or self._entry_files(folder, subpath)

    def _package_entry(self, folder: str, subpath: str) -> list[str]:
        for under in _PACKAGE_ENTRY_FOLDERS:
            if files := self.files_at(join(folder, under, subpath or "index")):
                return files
        return []

    def _entries(self, path: str, source: str) -> list[Target | Unresolved] | None:
        """A package.json's entry points as files of the tree, for the package itself or
        each subpath its importers asked for (`_exported`); none asked (a JSON import of
        it): the package's own entries. A subpath asked whose entries name no file of the
        tree (nor, for the package itself, an `index.*`) is `Unresolved`."""
        manifest = loads_jsonc(source)
        if not isinstance(manifest, dict):
            return None
        known = path in self.manifests  # read with the configuration: asks answered at once
        self.manifests[path] = manifest
        folder, found = parent(path), list[Target | Unresolved]()
        asked = self.asked.pop(path, set())
        for subpath in sorted(asked or {""}):
            entries = jsconfig.package_entries(manifest, subpath)
            if entries is None:  # no `exports`: the subpath is a path under the folder
                named = [(file, subpath) for file in self._under(folder, subpath)]
            else:
                named = [(f, e) for e in entries for f in self._entry_files(folder, e)]
                if not subpath and not named:  # node's LOAD_INDEX
                    named = [(f, "index") for f in self.files_at(join(folder, "index"))]
            readers = self._readers([path], subpath)
            found += [
                Target(
                    file,
                    entry,
                    follow=_loads_more(file),
                    types=readers.get(file) == jsconfig.TYPES,
                    browser=readers.get(file) == jsconfig.BROWSER,
                )
                for file, entry in named
            ]
            refused = bool(subpath) and entries == []  # node refuses an unexported subpath
            if asked and not known and not named and not refused and self._imported(path, manifest):
                found.append(Unresolved(", ".join(entries or []) or "./" + subpath))
        unique: dict[str, Target | Unresolved] = {}
        for target in found:  # one file, as its first entry names it; run if any entry runs
            key = target.path if isinstance(target, Target) else ""
            kept = unique.setdefault(key, target)
            if isinstance(kept, Target) and isinstance(target, Target) and kept != target:
                unique[key] = replace(
                    kept, types=kept.types and target.types, browser=kept.browser and target.browser
                )
        return list(unique.values())

    def _readers(self, manifests: Sequence[str], subpath: str) -> dict[str, str]:
        """The files of the package.json files read (of `manifests`) that, for `subpath`, only
        one kind of tool reads (`jsconfig.entry_readers`): file -> `TYPES` or `BROWSER`. A
        file also named by another entry, of any of them, is absent."""
        found: dict[str, set[str]] = {}
        for path in manifests:
            manifest = self.manifests.get(path)
            if manifest is None:
                continue
            readers = jsconfig.entry_readers(manifest, subpath)
            for entry in jsconfig.package_entries(manifest, subpath) or []:
                for file in self._entry_files(parent(path), entry):
                    found.setdefault(file, set()).add(readers.get(entry, ""))
        return {
            file: kinds.pop()
            for file, kinds in found.items()
            if len(kinds) == 1 and "" not in kinds
        }

    def _imported(self, path: str, manifest: Mapping[str, object]) -> bool:
        """Whether the package of this package.json is surely what an import named: its
        folder's path (`require('../')`), or its `name`; not a folder guessed from a
        package's last segment (`react` for `examples/react/`)."""
        return path in self.folders or manifest.get("name") in self.names

    def _entry_files(self, folder: str, entry: str) -> list[str]:
        """An entry's files in the tree; a built file not in the tree (`dist/index.js`) is
        looked for under `src/`."""
        base = normalize(folder, entry)
        if base is None:
            return []
        return self.files_at(base) or self.files_at(_built_to_source(folder, base))

    def _setup_files(self, ref: SetupRef) -> list[str]:
        value = ref.value
        if value.startswith(jsconfig.ROOT_DIR):
            value = "./" + value.removeprefix(jsconfig.ROOT_DIR).lstrip("/")
        base = normalize(ref.root, value)
        files = [] if base is None else self.files_at(base)
        if files or value.startswith(("./", "../", "/")):
            return files
        return self._bare(value)


def _fits(spec: str, head: str, tail: str) -> bool:
    """Whether a specifier fits a `paths` pattern `head*tail`."""
    return spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head + tail)


def _loads_more(path: str) -> bool:
    """Whether the file can load others: a script or a package.json, not data or styles."""
    return path.endswith(SCANNED) or _is_manifest(path)


def _is_manifest(path: str) -> bool:
    return path.rpartition("/")[2] == jsconfig.MANIFEST


def _split_package(spec: str) -> tuple[str, str]:
    """`@scope/name/sub/path` -> (`@scope/name`, `sub/path`); `name/sub` -> (`name`, `sub`)."""
    parts = spec.split("/")
    count = 2 if spec.startswith("@") and len(parts) > 1 else 1
    return "/".join(parts[:count]), "/".join(parts[count:])


def _built_to_source(folder: str, base: str) -> str:
    """`pkg/dist/index.js` (or `pkg/dist/esm/index.js`) -> `pkg/src/index`: where a built
    entry's source usually is."""
    relative = base.removeprefix(folder + "/") if folder else base
    head, _, rest = relative.partition("/")
    if head in _BUILD_FOLDERS and rest:
        # One build's folder inside another's (`dist/esm/x.js`) is dropped too.
        while (inner := rest.partition("/"))[0] in _BUILD_FOLDERS and inner[2]:
            rest = inner[2]
        relative = "src/" + rest
    return join(folder, _SCRIPT_SUFFIX.sub("", relative))


def _package_folders(tree: Tree) -> dict[str, tuple[str, ...]]:
    """Folder name -> the folders of that name holding a package.json (not the root's, none
    under node_modules)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in tree.files:
        if not path.endswith(_NESTED_MANIFEST):
            continue
        folder = path.removesuffix(_NESTED_MANIFEST)
        if not _SKIPPED_FOLDERS.intersection(folder.split("/")):
            found[folder.rpartition("/")[2]].append(folder)
    return {name: tuple(folders) for name, folders in found.items()}


JAVASCRIPT = Script("JavaScript", JS_TESTS)
TYPESCRIPT = Script("TypeScript", TS_TESTS)


def _names_typescript(source: str) -> bool:
    """Whether a string of the script names TypeScript (`tools.names_typescript`); a file
    the scanner cannot read may."""
    found = tokens(source)
    if found is None:
        return True
    strings = (token.text for token in found if token.kind in ("string", "template"))
    return any(tools.names_typescript(text) for text in strings)
