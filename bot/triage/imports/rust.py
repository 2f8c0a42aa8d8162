"""Rust: what a test is compiled with, read from the crate's `Cargo.toml` and the test's
`mod` declarations (never built).

The test's crate is the nearest folder up from the test file holding a `Cargo.toml`. What
runs for the test: the crate's library and binaries (`src/`, or the folders of `[lib]` and
`[[bin]]` paths; an integration test in `tests/` links the library and may run the
binaries), its build script, and the crates it depends on by path (`[dependencies]`,
`[dev-dependencies]`, `[build-dependencies]`, per-target tables; `foo.workspace = true`
found in the workspace root's `[workspace.dependencies]`): each such crate's folder but its
`tests/`, `benches/` and `examples/` (`compiled`: cargo does not build them for a crate
depending on it), and so on through their own Cargo.toml files. The Cargo.toml files are
read with the test file, all of them when the repository has at most `MANIFESTS_READ`, so
the dependencies are known at once whatever their depth; in a larger repository each
dependency's Cargo.toml is read in turn, as far as the depth limit allows. The test file's
`mod name;` declarations (and `#[path = "..."]`) are followed to their files
(`tests/common/mod.rs`); both files a `mod` may name are what a file the pull request removed
could have been (`removed.py`). So is a Cargo.toml that had a place in the test's build at
the base commit (`RustResolver.named`): one in the test's folder or a
folder above (its crate's, the workspace's), one of a crate a manifest read depends on by
path (still there or not: cargo fails on a path dependency it cannot find), and one of a
workspace member (written out, or matched by a glob such as `crates/*` at the head: cargo
fails on a member folder without a Cargo.toml, and a crate removed whole is no member); and
a target of the test's crate that the head no longer has. Any other removed Cargo.toml, a
crate removed or renamed whole that nothing of the test's build names, is ruled out with its
files.

Not followed: `use crate::...` paths (the crate's folders already hold them), crates from a
registry or git (not the repository's), and `include!`/`include_str!` of other files.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.shared import Tree
from bot.triage.imports import values
from bot.triage.imports.language import Start, Target, Unplaced
from bot.triage.imports.paths import ancestors, join, parent, resolved

MANIFEST = "Cargo.toml"
MANIFESTS_READ = 40  # more Cargo.toml files than this: dependencies are read crate by crate
_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
_ROOT_FILES = frozenset({"lib.rs", "main.rs", "mod.rs", "build.rs"})
_CRATE_ROOT_FOLDERS = ("tests", "examples", "benches", "bin")
_NOT_COMPILED = frozenset({"tests", "benches", "examples"})  # for a crate depending on it
_GLOB = re.compile(r"[*?\[]")

# Unclosed, a comment or raw string runs to the end and a string to the end of its line
# (ruby.py says why: one pass over the file, whatever it holds).
_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))"
    r'|(?P<raw>b?r(?P<hashes>#*)".*?(?:"(?P=hashes)|\Z))'
    r'|"(?P<string>(?:[^"\\\n]|\\.)*+)(?:"|$|\\)'
    r"|(?P<char>b?'(?:[^'\\\n]|\\[^'\n]{1,10})')"
    r"|(?P<word>[A-Za-z_]\w*)"
    r"|(?P<other>\S)",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class Manifest:
    """What one Cargo.toml says: the folders (ending in "/") and files its crate's own
    targets compile, its
    path dependencies ((name as written, crate folder)), and, at a workspace root, the
    workspace's path dependencies by name."""

    targets: tuple[str, ...] = ()
    dependencies: tuple[tuple[str, str], ...] = ()
    workspace: tuple[tuple[str, str], ...] = ()
    is_package: bool = False
    members: tuple[str, ...] = ()  # `[workspace] members`, as repository paths or globs


def manifest_of(path: str, text: str, workspace: Mapping[str, str] | None = None) -> Manifest:
    """The crate a Cargo.toml at `path` describes; `workspace` the workspace root's path
    dependencies, for `foo.workspace = true`. Empty when it does not parse."""
    data = values.loads_toml(text)
    if data is None:
        return Manifest()
    folder = parent(path)
    own = _path_dependencies(values.table(values.at(data, "workspace", "dependencies")), folder)
    known = {**dict(own), **(workspace or {})}
    found: list[tuple[str, str]] = []
    for table in _dependency_tables(data):
        for name, spec in table.items():
            spec = values.table(spec)
            if isinstance(spec.get("path"), str):
                where = resolved(join(folder, spec["path"]))
                if where is not None:
                    found.append((name, where))
            elif spec.get("workspace") is True and name in known:
                found.append((name, known[name]))
    members = values.items(values.at(data, "workspace", "members"))
    return Manifest(
        targets=tuple(_targets(data, folder)),
        dependencies=tuple(dict.fromkeys(found)),
        workspace=tuple(own),
        is_package="package" in data,
        members=tuple(
            cleaned
            for member in members
            if isinstance(member, str) and (cleaned := resolved(join(folder, member)))
        ),
    )


def _dependency_tables(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for name in _DEPENDENCY_TABLES:
        yield values.table(data.get(name))
    for target in values.table(data.get("target")).values():
        for name in _DEPENDENCY_TABLES:
            yield values.table(values.table(target).get(name))


def _path_dependencies(table: dict[str, Any], folder: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name, spec in table.items():
        where = values.table(spec).get("path")
        cleaned = resolved(join(folder, where)) if isinstance(where, str) else None
        if cleaned is not None:
            found.append((name, cleaned))
    return found


def _targets(data: dict[str, Any], folder: str) -> list[str]:
    """What the crate's own targets compile: `src/`, and the folders of the files `[lib]`,
    `[[bin]]` and the build script name (a file at the crate's top: that file)."""
    package = values.table(data.get("package"))
    named = [values.table(data.get("lib")).get("path"), package.get("build", "build.rs")]
    named += [values.table(binary).get("path") for binary in values.items(data.get("bin"))]
    found = [join(folder, "src") + "/"]
    for path in named:
        cleaned = resolved(join(folder, path)) if isinstance(path, str) else None
        if cleaned:
            holder = parent(cleaned)
            found.append(holder + "/" if holder and holder != folder else cleaned)
    return list(dict.fromkeys(found))


def modules_of(source: str) -> list[tuple[str, str | None]]:
    """The out-of-line modules a Rust file declares: (name, its `#[path]` if any)."""
    tokens = [
        (kind, match.group(kind))
        for match in _TOKEN.finditer(source)
        if (kind := match.lastgroup or "other") not in ("comment", "raw", "char")
    ]
    found: list[tuple[str, str | None]] = []
    attribute: str | None = None  # a `#[path = "..."]` waiting for its `mod`
    for index, (_, text) in enumerate(tokens):
        following = tokens[index + 1 : index + 4]
        if text == "path" and [t for _, t in following][::2] == ["=", "]"]:
            if following[1][0] == "string":
                attribute = following[1][1]
        elif text == "mod" and len(following) >= 2 and following[0][0] == "word":
            if following[1][1] == ";":
                found.append((following[0][1], attribute))
            attribute = None
        elif text in (";", "}", "{"):
            attribute = None
    return found


class Rust:
    name = "Rust"
    sources = (".rs",)
    configs = (MANIFEST,)

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".rs")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        """The Cargo.toml files from the test's folder up, then, when the repository has at
        most `MANIFESTS_READ` of them, every Cargo.toml: the path dependencies are then
        known in the walk's first read, however deep they go."""
        near = _ancestor_manifests(test_file, tree)
        every = sorted(p for p in tree.files if p.rpartition("/")[2] == MANIFEST)
        if len(every) > MANIFESTS_READ:
            return near
        return [*near, *(path for path in every if path not in near)]

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """The Cargo.toml files from the test's folder up (its crate, the workspace) and
        those of the crates it depends on by path, as read; not the repository's other
        Cargo.toml files read with them."""
        near = [path for path in _ancestor_manifests(test_file, tree) if path in configs]
        if not near or near[0] != _ancestor_manifests(test_file, tree)[0]:
            return near
        workspace: dict[str, str] = {}
        for path in reversed(near):
            workspace.update(manifest_of(path, configs[path]).workspace)
        return list(dict.fromkeys([*near, *_dependencies(near[0], tree, configs, workspace)[1]]))

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`tests/common/mod` for `tests/common/mod.rs`: what a `mod` names; `a/Cargo` for
        `a/Cargo.toml`: what a crate's place in the test's build names (`RustResolver.named`).
        The crates' folders, in the footprint whole, hold the rest."""
        return [path.removesuffix(".rs").removesuffix(".toml")]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> RustResolver:
        near = _ancestor_manifests(test_file, tree)
        workspace: dict[str, str] = {}
        for path in reversed(near):  # the root's first, a nearer one overrides
            if path in configs:
                workspace.update(manifest_of(path, configs[path]).workspace)
        named = [join(folder, "Cargo") for folder in ancestors(test_file)]
        for path in near:
            if path in configs:
                named += _member_stems(manifest_of(path, configs[path]).members, tree)
        if not near or near[0] not in configs:
            return RustResolver(tree, tuple(workspace.items()), named=tuple(named))
        crate = near[0]
        manifest = manifest_of(crate, configs[crate], workspace)
        starts = [
            Start(target, f"the code of the test's crate ({crate})", not target.endswith("/"))
            for target in manifest.targets
            if _exists(target, tree)
        ]
        named += [t.removesuffix(".rs") for t in manifest.targets if not _exists(t, tree)]
        found, read = _dependencies(crate, tree, configs, workspace)
        starts += found
        named += [
            join(folder, "Cargo")
            for path in read
            for _, folder in manifest_of(path, configs[path], workspace).dependencies
        ]
        unique: dict[str, Start] = {}
        for start in starts:
            unique.setdefault(start.path, start)
        return RustResolver(
            tree,
            tuple(workspace.items()),
            tuple(unique.values()),
            tuple(dict.fromkeys(named)),
            test_file,
        )


def _ancestor_manifests(test_file: str, tree: Tree) -> list[str]:
    candidates = [join(folder, MANIFEST) for folder in ancestors(test_file)]
    return [path for path in candidates if path in tree.files]


def _dependencies(
    crate: str, tree: Tree, configs: Mapping[str, str], workspace: Mapping[str, str]
) -> tuple[list[Start], list[str]]:
    """The crates `crate` depends on by path, transitively through the Cargo.toml files
    already read; one not read yet is a Start the walk reads and follows. With the Cargo.toml
    files read on the way."""
    starts: list[Start] = []
    queue = deque([crate])
    seen = {parent(crate)}
    read: list[str] = []
    while queue:
        manifest = queue.popleft()
        read.append(manifest)
        for name, folder in manifest_of(manifest, configs[manifest], workspace).dependencies:
            if folder in seen or not _is_folder(folder, tree):
                continue
            seen.add(folder)
            why = f"a crate {manifest} depends on ({name})"
            starts += [Start(path, why, follow=False) for path in compiled(folder, tree)]
            theirs = join(folder, MANIFEST)
            if theirs in configs:
                queue.append(theirs)
            elif theirs in tree.files:
                starts.append(Start(theirs, why))
    return starts, read


@dataclass(frozen=True)
class RustResolver:
    tree: Tree
    workspace: tuple[tuple[str, str], ...]
    runs: tuple[Start, ...] = ()
    # The Cargo.toml files (and the crate's targets) that a removed file may have been at
    # the base commit to change the test's build (module doc), reported with the
    # test file.
    named: tuple[str, ...] = ()
    test_file: str = ""

    def starts(self) -> Sequence[Start]:
        return self.runs

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced]:
        if path.rpartition("/")[2] == MANIFEST:
            return self._dependencies(path, source)
        found: list[Target | Unplaced] = []
        if path == self.test_file and self.named:
            found.append(Unplaced(MANIFEST, self.named))
        for name, attribute in modules_of(source):
            candidates = _module_files(path, name, attribute)
            for candidate in candidates:
                if candidate in self.tree.files:
                    found.append(Target(candidate, f"mod {name}"))
                    break
            stems = tuple(candidate.removesuffix(".rs") for candidate in candidates)
            found.append(Unplaced(f"mod {name}", stems))
        return found

    def _dependencies(self, path: str, source: str) -> list[Target | Unplaced]:
        manifest = manifest_of(path, source, dict(self.workspace))
        found: list[Target | Unplaced] = []
        for name, folder in manifest.dependencies:
            if _is_folder(folder, self.tree):
                found += [Target(path, name, follow=False) for path in compiled(folder, self.tree)]
            if join(folder, MANIFEST) in self.tree.files:
                found.append(Target(join(folder, MANIFEST), name))
            found.append(Unplaced(name, (join(folder, "Cargo"),)))
        return found


def _member_stems(members: Sequence[str], tree: Tree) -> list[str]:
    """The Cargo.toml stems of a workspace's members: a member written out names its folder
    whether or not it is still there (cargo fails on a member without a Cargo.toml); a glob
    (`crates/*`) names the folders it matches at the head (one removed whole is no member)."""
    found: list[str] = []
    for member in members:
        if not _GLOB.search(member):
            found.append(join(member, "Cargo"))
            continue
        depth = member.count("/")
        found += [
            join(folder, "Cargo")
            for folder in tree.directories
            if folder.count("/") == depth and fnmatch.fnmatchcase(folder, member)
        ]
    return found


def _is_folder(folder: str, tree: Tree) -> bool:
    return folder in tree.directories or (folder == "" and bool(tree.files))


def compiled(folder: str, tree: Tree) -> list[str]:
    """What a crate compiles when another crate depends on it: its folder's entries (files,
    and sub-folders ending in "/") but its `tests/`, `benches/` and `examples/`, which cargo
    builds only for the crate's own `cargo test`/`bench`/`run --example`, and its Cargo.toml
    (read for the crate's own dependencies, apart)."""
    prefix = folder + "/" if folder else ""
    entries: set[str] = set()
    left_out = False
    for path in tree.files:
        if path.startswith(prefix):
            head, _, rest = path[len(prefix) :].partition("/")
            left_out = left_out or (head in _NOT_COMPILED and bool(rest))
            if (head not in _NOT_COMPILED or not rest) and head != MANIFEST:
                entries.add(prefix + head + "/" if rest else path)
    return sorted(entries) if left_out or not folder else [prefix]


def _module_files(path: str, name: str, attribute: str | None) -> list[str]:
    """Where `mod name;` in `path` lives: beside a crate root or `mod.rs`, else in the
    folder named after the file; `#[path]` is relative to the file's folder."""
    folder = parent(path)
    if attribute is not None:
        found = resolved(join(folder, attribute))
        return [found] if found else []
    file_name = path.rpartition("/")[2]
    is_root = file_name in _ROOT_FILES or folder.rpartition("/")[2] in _CRATE_ROOT_FOLDERS
    where = folder if is_root else join(folder, file_name.removesuffix(".rs"))
    return [join(where, name + ".rs"), join(where, name, "mod.rs")]


def _exists(path: str, tree: Tree) -> bool:
    return path[:-1] in tree.directories if path.endswith("/") else path in tree.files


RUST = Rust()
