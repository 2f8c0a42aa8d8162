r"""C#: what a test compiles with, read from its project files (never built).

A C# test's `using` names namespaces, not files, so the walk works per project: the test's
project is the nearest folder up from the test file holding a `.csproj`; everything under
that folder is compiled with the test (the SDK's default `Compile` glob), so the folder runs
for it. Each `<ProjectReference Include="..\Shop\Shop.csproj" />` of that project adds the
referenced project's folder, and the referenced project files are read in turn (references
are transitive in SDK-style projects) as far as the depth limit allows. A `<Compile
Include="..\Shared\Money.cs" />` adds the linked file (a wildcard: the folder before it).

Not followed: `Directory.Build.props`/`.targets` (a build file: a caveat, as a change there
can break any test), `PackageReference`s (not the repository's), references spelled with
MSBuild properties (`$(SolutionDir)...`), and a project file at the repository root (its
folder would be the whole repository).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.shared import Tree
from bot.triage.imports.language import Start, Target
from bot.triage.imports.paths import ancestors, join, parent, resolved

PROJECT_SUFFIXES = (".csproj", ".fsproj", ".vbproj")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ITEM = re.compile(
    r"<(?P<kind>ProjectReference|Compile)\b[^>]*?\bInclude\s*=\s*(?P<q>[\"'])(?P<include>.*?)(?P=q)",
    re.DOTALL,
)
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
    for item in _ITEM.finditer(_COMMENT.sub("", text)):
        include = item.group("include").strip()
        for one in include.split(";"):
            reference = _reference(project, item.group("kind"), one.strip())
            if reference is not None:
                found.append(reference)
    return found


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

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".cs")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        """The test's own project files: those of the nearest folder up that has one."""
        projects = [path for path in tree.files if path.endswith(PROJECT_SUFFIXES)]
        for folder in ancestors(test_file):
            found = sorted(path for path in projects if parent(path) == folder)
            if found:
                return found
        return []

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> CSharpResolver:
        starts: list[Start] = []
        for project in self.config_files(test_file, tree):
            folder = project_folder(project)
            if folder is not None:
                starts.append(Start(folder, f"the test's project ({project})", follow=False))
            for reference in references_of(project, configs.get(project, "")):
                starts += _reference_starts(reference, project, tree)
        unique: dict[str, Start] = {}
        for start in starts:
            unique.setdefault(start.path, start)
        return CSharpResolver(tree, tuple(unique.values()))


def _reference_starts(reference: Reference, project: str, tree: Tree) -> list[Start]:
    """A referenced project: its folder, and its project file, read for its own references."""
    if reference.kind == "Compile":
        why = f"a source file {project} compiles"
        return [Start(reference.path, why, follow=False)] if _exists(reference.path, tree) else []
    why = f"a project {project} references"
    folder = project_folder(reference.path)
    starts = [Start(folder, why, follow=False)] if folder and _exists(folder, tree) else []
    if reference.path in tree.files:
        starts.append(Start(reference.path, why))
    return starts


@dataclass(frozen=True)
class CSharpResolver:
    tree: Tree
    runs: tuple[Start, ...]

    def starts(self) -> Sequence[Start]:
        return self.runs

    def imports(self, path: str, source: str) -> Sequence[Target]:
        """A project file's references (the folder and the project file of each project it
        references); a C# file's `using`s name namespaces, not files: none."""
        if not path.endswith(PROJECT_SUFFIXES):
            return []
        found: list[Target] = []
        for reference in references_of(path, source):
            if reference.kind == "ProjectReference":
                folder = project_folder(reference.path)
                if folder is not None and folder[:-1] in self.tree.directories:
                    found.append(Target(folder, reference.include))
            if _exists(reference.path, self.tree):
                found.append(Target(reference.path, reference.include))
        return list(dict.fromkeys(found))


def _exists(path: str, tree: Tree) -> bool:
    return path[:-1] in tree.directories if path.endswith("/") else path in tree.files


CSHARP = CSharp()
