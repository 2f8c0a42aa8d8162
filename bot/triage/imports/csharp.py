r"""C#: what a test compiles with, read from its project files (never built), and of that,
the files whose declarations the test's code names.

The projects. A C# test's `using` names namespaces, not files, so the walk first finds the
test's projects: the test's project is the nearest folder up from the test file holding a
`.csproj`; everything under that folder is compiled with the test (the SDK's default
`Compile` glob). Each `<ProjectReference Include="..\Shop\Shop.csproj" />` of that project
adds the referenced project's folder, and so on transitively (references are transitive in
SDK-style projects). The project files are read with the test file, all of them when the
repository has at most `PROJECTS_READ`, so the references are known at once whatever their
depth; in a larger repository each referenced project file is read in turn, and the folder
of a project found that way counts whole (below). A `<Compile Include="..\Shared\Money.cs"
/>` adds the linked file (a wildcard: the folder before it). The .NET Core 1.0 tooling's
`project.json` (2016-2017, beside an `.xproj`) is a project file too: its folder is compiled
whole, and each name of its `dependencies` (top level and per framework) that is a project,
a folder of that name holding a `project.json` beside the project's folder or in a
`projects` folder of the nearest `global.json` up from the test, is referenced like a
`ProjectReference`. A dependency marked `"target": "project"` found nowhere, or a test with
no project file above it, leaves the walk partial: what compiles with the test is then
unknown.

The declarations. Of those projects' `.cs` files (`SOURCES_READ` at most), one counts only
when the closure names something it declares (`csharp_scan`: a type's name, a static class's
or a partial type's part's members, `ALWAYS` for what runs for every test of its assembly):
the test file "imports" every `.cs` file of its projects, each counted once read if it
declares a name the test file uses (`Target.declares`), and each file counted does the same
in turn, among the files its own projects can see (a library's file cannot name its tests'
classes). All of them are read in one round after the project files. A file that looks up
types at run time (`GetTypes()`, `Assembly.Load`, `Activator.CreateInstance`,
`Type.GetType(name)`) counts every file; one that reads a type's members by reflection
(`GetMethods()`, `GetProperties()`, ...) counts every part of every partial type. The
projects' folders stay in the footprint for their other files (resources, data, the key a
build signs with: `Start.except_suffixes`); a `.cs` file the pull request removed from them
may have declared anything, so it is never ruled out (`removed_stems`: every folder above
it), while one outside them is. More `.cs` files than `SOURCES_READ`, or one larger than the
walk reads, and the folders count whole, as before the declarations were read.

Not followed: `Directory.Build.props`/`.targets` (a build file: a caveat, as a change there
can break any test), `PackageReference`s (not the repository's), references spelled with
MSBuild properties (`$(SolutionDir)...`), `<Compile Remove>` (the folder's files all count:
more, never fewer), source generators and the code they write (not in the tree), and names
a program builds at run time other than by the reflection above (a type's name read from
configuration and passed to a DI container by string). A project file at the repository
root compiles every `.cs` file of the repository: they are read by declaration like the
others, or, when there are too many, the walk is partial.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.shared import Tree
from bot.triage.imports.csharp_scan import ALWAYS, METADATA, PARTIAL, declared, scan_csharp
from bot.triage.imports.jsscan import loads_jsonc
from bot.triage.imports.language import (
    EVERYTHING,
    Found,
    Runs,
    Start,
    Target,
    Unplaced,
    Unresolved,
)
from bot.triage.imports.paths import ancestors, join, parent, resolved
from bot.triage.imports.tools import ASSEMBLY_METADATA, reads_assembly_metadata

PROJECT_SUFFIXES = (".csproj", ".fsproj", ".vbproj", ".xproj")
PROJECT_JSON = "project.json"  # .NET Core 1.0 tooling (module doc)
GLOBAL_JSON = "global.json"
PROJECTS_READ = 40  # more project files than this: references are read project by project
# More `.cs` files than this in the test's projects, or one larger than the walk reads
# (`WalkLimits.file_bytes`' default), and the projects' folders count whole (module doc).
SOURCES_READ = 2_000
SOURCE_BYTES = 256_000
SOURCE = ".cs"
BUILD_FILES = ("Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # unclosed: to the end, in one pass
_ITEM_KINDS = ("ProjectReference", "Compile")
_INCLUDE = re.compile(r"\bInclude\s*=\s*(?P<q>[\"'])(?P<include>[^\"']*)(?P=q)")
_WILDCARD = re.compile(r"[*?]")


@dataclass(frozen=True)
class Reference:
    """A project (`kind` "ProjectReference") or source file ("Compile") a project file
    names, as written and as a repository path (a folder ends with "/")."""

    kind: str
    include: str
    path: str


def references_of(project: str, text: str) -> list[Reference]:
    """The repository paths a project file names (module doc), relative to its folder."""
    found: list[Reference] = []
    # Each element's text runs from its "<" to the next "<": one pass over the file.
    for element in _COMMENT.sub("", text).split("<"):
        tag = element.partition(">")[0]
        name = tag.split(None, 1)[0] if tag.strip() else ""
        include = _INCLUDE.search(tag) if name in _ITEM_KINDS else None
        if include is None:
            continue
        for one in include.group("include").split(";"):
            reference = _reference(project, name, one.strip())
            if reference is not None:
                found.append(reference)
    return found


def is_project(path: str) -> bool:
    return path.endswith(PROJECT_SUFFIXES) or path.rpartition("/")[2] == PROJECT_JSON


def json_references(
    project: str, text: str, search: Sequence[str], tree: Tree
) -> tuple[list[Reference], list[str]]:
    """A `project.json`'s dependencies that are projects of the tree (module doc), looked
    for beside the project's folder and in the `search` folders; with the names marked
    `"target": "project"` found nowhere."""
    data = loads_jsonc(text)
    sections = [data] if isinstance(data, dict) else []
    frameworks = sections[0].get("frameworks") if sections else None
    if isinstance(frameworks, dict):
        sections += [value for value in frameworks.values() if isinstance(value, dict)]
    found: list[Reference] = []
    missing: list[str] = []
    folders = [parent(parent(project)), *search]
    for section in sections:
        dependencies = section.get("dependencies")
        for name, value in dependencies.items() if isinstance(dependencies, dict) else ():
            paths = [join(folder, name, PROJECT_JSON) for folder in folders]
            path = next((path for path in paths if path in tree.files), None)
            if path is not None:
                found.append(Reference("ProjectReference", name, path))
            elif isinstance(value, dict) and value.get("target") == "project":
                missing.append(name)
    return found, missing


def search_folders(test_file: str, tree: Tree, configs: Mapping[str, str]) -> list[str]:
    """The `projects` folders of the nearest `global.json` up from the test."""
    for folder in ancestors(test_file):
        path = join(folder, GLOBAL_JSON)
        if path not in tree.files:
            continue
        data = loads_jsonc(configs.get(path, ""))
        listed = data.get("projects") if isinstance(data, dict) else None
        names = listed if isinstance(listed, list) else []
        return [
            p
            for name in names
            if isinstance(name, str) and (p := resolved(join(folder, name))) is not None
        ]
    return []


def _reference(project: str, kind: str, include: str) -> Reference | None:
    if not include or "$(" in include or "@(" in include:
        return None
    parts = include.replace("\\", "/").split("/")
    wild = next((i for i, part in enumerate(parts) if _WILDCARD.search(part)), None)
    if wild is not None:  # `..\Shared\**\*.cs`: everything under `..\Shared\`
        folder = resolved(join(parent(project), *parts[:wild]))
        return Reference(kind, include, folder + "/") if folder else None
    path = resolved(join(parent(project), *parts))
    return Reference(kind, include, path) if path else None


def project_folder(project: str) -> str | None:
    """The folder a project compiles, as a footprint folder; None at the repository root."""
    folder = parent(project)
    return folder + "/" if folder else None


class CSharp:
    name = "C#"
    sources = (".cs",)
    configs = (*PROJECT_SUFFIXES, PROJECT_JSON, GLOBAL_JSON)

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".cs")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        """The nearest `global.json` up from the test and the test's own project files, then,
        when the repository has at most `PROJECTS_READ` project files, all of them: its
        references are then known in the walk's first read, however deep they go."""
        projects = sorted(path for path in tree.files if is_project(path))
        own = [*_global_json(test_file, tree), *_own_projects(test_file, projects)]
        if len(projects) > PROJECTS_READ:
            return own
        return [*own, *(path for path in projects if path not in own)]

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """The test's project files and those they reference, transitively, as read, and the
        `global.json` that places `project.json` dependencies; not the repository's other
        project files read with them."""
        projects = sorted(path for path in tree.files if is_project(path))
        search = search_folders(test_file, tree, configs)
        read = _referenced(_own_projects(test_file, projects), tree, configs, search)[1]
        return [*(path for path in _global_json(test_file, tree) if path in configs), *read]

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """Every folder above `path` ("a/", "a/b/") and `path` itself: a `.cs` file may have
        declared anything, so a removed one is ruled out only outside the test's projects'
        folders and linked files (the walk's stems); None for a project file, a
        `global.json` or a `Directory.Build.*` file, whose removal may move what compiles."""
        name = path.rpartition("/")[2]
        if is_project(path) or name == GLOBAL_JSON or name in BUILD_FILES:
            return None
        return [*(folder + "/" for folder in ancestors(path) if folder), path]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> CSharpResolver:
        projects = sorted(path for path in tree.files if is_project(path))
        own = _own_projects(test_file, projects)
        search = search_folders(test_file, tree, configs)
        starts = [
            Start(folder, f"the test's project ({project})", follow=False)
            for project in own
            if (folder := project_folder(project)) is not None
        ]
        referenced, _, missing = _referenced(own, tree, configs, search)
        starts += referenced
        unique: dict[str, Start] = {}
        for start in starts:
            unique.setdefault(start.path, start)
        if not own:
            missing = [f"the project compiling {test_file} (no project file above it)"]
        graph = _graph(own, tree, configs, search)
        runs, sources = _by_declaration(tuple(unique.values()), graph, tree)
        if not sources and any(not parent(project) for project in graph):
            # Its folder, the whole repository, is no footprint folder (module doc).
            missing.append(f"the project at the repository root ({_root(graph)})")
        stems = _stems(runs) + ((EVERYTHING,) if any(not parent(p) for p in graph) else ())
        return CSharpResolver(tree, runs, test_file, tuple(missing), tuple(search), sources, stems)


# What each project of the test's set whose file was read compiles (its folder as "a/",
# "" at the repository root, and its linked files and folders) and the project files it
# references.
_Graph = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]


def _graph(
    own: Sequence[str], tree: Tree, configs: Mapping[str, str], search: Sequence[str]
) -> _Graph:
    graph: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    queue = deque(own)
    seen = set(own)
    while queue:
        project = queue.popleft()
        folder = parent(project)
        compiles = [folder + "/" if folder else ""]
        referenced: list[str] = []
        for reference in _references(project, configs.get(project, ""), search, tree)[0]:
            if not _exists(reference.path, tree):
                continue
            if reference.kind == "Compile":
                compiles.append(reference.path)
                continue
            referenced.append(reference.path)
            if reference.path in configs and reference.path not in seen:
                seen.add(reference.path)
                queue.append(reference.path)
        graph[project] = (tuple(compiles), tuple(referenced))
    return graph


def _root(graph: _Graph) -> str:
    return next(project for project in graph if not parent(project))


def _by_declaration(
    starts: tuple[Start, ...], graph: _Graph, tree: Tree
) -> tuple[tuple[Start, ...], dict[str, tuple[str, ...]]]:
    """The starts with each compiled folder's `.cs` files left to count one by one; and
    each of those files (the linked ones too) with the files it can name: those of the
    projects that compile it and of the projects they reference, transitively (a library
    cannot name its tests). The starts as they are, and no file, when there are more than
    `SOURCES_READ` or one is too large to read (module doc)."""
    compiled: dict[str, list[str]] = {}  # each project's .cs files
    for project, (compiles, _) in graph.items():
        folders = tuple(entry for entry in compiles if not entry.endswith(SOURCE))
        compiled[project] = sorted(
            {p for p in tree.files if p.endswith(SOURCE) and p.startswith(folders)}
            | {entry for entry in compiles if entry.endswith(SOURCE)}
        )
    sources = sorted({path for paths in compiled.values() for path in paths})
    if len(sources) > SOURCES_READ or any(tree.files[p].size > SOURCE_BYTES for p in sources):
        return starts, {}
    visible: dict[str, tuple[str, ...]] = {}
    by_projects: dict[frozenset[str], tuple[str, ...]] = {}
    for path in sources:
        projects = frozenset(p for p, files in compiled.items() if path in files)
        if projects not in by_projects:
            reach = _closure(projects, graph)
            by_projects[projects] = tuple(sorted({f for p in reach for f in compiled[p]}))
        visible[path] = by_projects[projects]
    runs = tuple(
        replace(start, except_suffixes=(SOURCE,)) if start.path.endswith("/") else start
        for start in starts
        if not start.path.endswith(SOURCE)
    )
    return runs, visible


def _closure(projects: frozenset[str], graph: _Graph) -> set[str]:
    """The projects and those they reference, transitively, of those read."""
    found = set(projects)
    queue = deque(projects)
    while queue:
        for referenced in graph[queue.popleft()][1]:
            if referenced in graph and referenced not in found:
                found.add(referenced)
                queue.append(referenced)
    return found


def _stems(starts: Sequence[Start]) -> tuple[str, ...]:
    """What a removed `.cs` file could have been part of: the compiled folders and the
    linked files (`removed_stems`)."""
    return tuple(s.path for s in starts if s.path.endswith("/") or s.path.endswith(SOURCE))


def _global_json(test_file: str, tree: Tree) -> list[str]:
    """The nearest `global.json` up from the test, when some project is a `project.json`
    (only that tooling reads its `projects`; an SDK's pins no project's place)."""
    if not any(is_project(path) and path.endswith(PROJECT_JSON) for path in tree.files):
        return []
    for folder in ancestors(test_file):
        if (path := join(folder, GLOBAL_JSON)) in tree.files:
            return [path]
    return []


def _own_projects(test_file: str, projects: Sequence[str]) -> list[str]:
    """The project files of the nearest folder up from the test that has any."""
    for folder in ancestors(test_file):
        found = [path for path in projects if parent(path) == folder]
        if found:
            return found
    return []


def _references(
    project: str, text: str, search: Sequence[str], tree: Tree
) -> tuple[list[Reference], list[str]]:
    """What a project file references, with the projects it names that are nowhere."""
    if project.rpartition("/")[2] == PROJECT_JSON:
        return json_references(project, text, search, tree)
    return references_of(project, text), []


def _referenced(
    own: Sequence[str], tree: Tree, configs: Mapping[str, str], search: Sequence[str]
) -> tuple[list[Start], list[str], list[str]]:
    """What the test's projects reference, transitively through the project files already
    read; a referenced project file not read yet is a Start the walk reads and follows. With
    the project files read on the way, and the projects named that are nowhere."""
    starts: list[Start] = []
    queue = deque(own)
    seen = set(own)
    read: list[str] = []
    missing: list[str] = []
    while queue:
        project = queue.popleft()
        if project in configs:
            read.append(project)
        references, absent = _references(project, configs.get(project, ""), search, tree)
        missing += absent
        for reference in references:
            if reference.path in seen or not _exists(reference.path, tree):
                continue
            seen.add(reference.path)
            if reference.kind == "Compile":
                starts.append(Start(reference.path, f"a source file {project} compiles", False))
                continue
            why = f"a project {project} references"
            folder = project_folder(reference.path)
            if folder is not None and _exists(folder, tree):
                starts.append(Start(folder, why, follow=False))
            if reference.path in configs:
                queue.append(reference.path)
            else:
                starts.append(Start(reference.path, why))
    return starts, read, missing


@dataclass(frozen=True)
class CSharpResolver:
    tree: Tree
    runs: tuple[Start, ...]
    test_file: str = ""
    # Projects the test's projects need that are nowhere (module doc): the walk is partial.
    missing: tuple[str, ...] = ()
    search: tuple[str, ...] = ()
    # The `.cs` files of the test's projects, each counted by what it declares (module
    # doc), each with the files it can name; empty: the projects' folders count whole.
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    stems: tuple[str, ...] = ()  # the compiled folders and linked files (`removed_stems`)

    def starts(self) -> Sequence[Start]:
        return self.runs

    def imports(self, path: str, source: str) -> Sequence[Found]:
        """A project file's references (the folder and the project file of each project it
        references); a C# file's `using`s name namespaces, not files: each `.cs` file of the
        test's projects that declares a name it uses (module doc). The test file carries the
        projects found nowhere, and what a removed file could have been part of."""
        found: list[Found] = []
        if path == self.test_file:
            found += [Unresolved(name) for name in self.missing]
            found.append(Unplaced("the test's projects", self.stems))
        if path.endswith(SOURCE):
            metadata = reads_assembly_metadata(source)
            found.append(Runs(frozenset({ASSEMBLY_METADATA}) if metadata else frozenset()))
            if self.sources:
                found += self._declaring(path, source, metadata)
        if path == self.test_file or not is_project(path):
            return found
        references, absent = _references(path, source, self.search, self.tree)
        found += [Unresolved(name) for name in absent]
        for reference in references:
            if reference.kind == "ProjectReference":
                folder = project_folder(reference.path)
                if folder is not None and folder[:-1] in self.tree.directories:
                    found.append(Target(folder, reference.include))
            if _exists(reference.path, self.tree):
                found.append(Target(reference.path, reference.include))
        return list(dict.fromkeys(found))

    def _declaring(self, path: str, source: str, metadata: bool) -> list[Found]:
        """Every other `.cs` file of the test's projects, counted once read if it declares
        a name `path` uses; all of them, when `path` looks types up at run time."""
        scanned = scan_csharp(source)
        others = [other for other in self.sources.get(path, ()) if other != path]
        if scanned.assembly_reflection:
            return [Target(other, "reflection over the assembly's types") for other in others]
        names = scanned.uses | {ALWAYS}
        if scanned.member_reflection:
            names |= {PARTIAL} | {f"{name}::{PARTIAL}" for name in scanned.typeof}
        if metadata:  # it may read the assembly's metadata
            names |= {METADATA}
        return [Target(other, "", declares=names, declared=declared) for other in others]


def _exists(path: str, tree: Tree) -> bool:
    return path[:-1] in tree.directories if path.endswith("/") else path in tree.files


CSHARP = CSharp()
