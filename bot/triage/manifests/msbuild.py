"""MSBuild project files (.csproj, .fsproj, .vbproj): the document, element by element.

Inert: the `Version` (or `VersionOverride`, as an attribute or a child element) of a
`PackageReference`: which release of a package from the feed the project builds with, like
a lockfile's change it can break any test but not change which of the repository's files
the project compiles; the properties only NuGet's packing reads (`PackageReleaseNotes`,
`PackageTags`, `RepositoryUrl`, `Authors`, ...); and the metadata compiled into the assembly
as attributes (`Version`, `Description`, `Copyright`, `Title`, ...) when the failed tests'
complete walks found no C# code that may read it (reflection on the assembly's attributes,
`GetName().Version`, `FileVersionInfo`, `ThisAssembly`: `tools.reads_assembly_metadata`).
Everything else counts: a `ProjectReference`, a `Compile` item, another property
(`TargetFramework`, `LangVersion`, `Nullable`, `DefineConstants`, `NeutralLanguage`, which
steers resource lookup), a package that came or went, an import, a target; and a file that
is not well-formed XML or declares entities (`xml_safe`). Comments and the layout between
elements are not compared.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from bot.triage.imports.tools import ASSEMBLY_METADATA
from bot.triage.manifests.wording import its
from bot.triage.reports.xml_safe import XmlStream, local_name

SUFFIXES = (".csproj", ".fsproj", ".vbproj")
_PACKAGE_ITEMS = frozenset({"PackageReference"})
_VERSIONS = frozenset({"version", "versionoverride"})  # metadata names: any case

# Properties only NuGet's packing reads (names compared in any case).
PACKAGE_ONLY = frozenset(
    {
        "authors", "generatepackageonbuild", "includesymbols", "ispackable", "packageicon",
        "packageiconurl", "packageid", "packagelicenseexpression", "packagelicensefile",
        "packagelicenseurl", "packageoutputpath", "packagereadmefile", "packagereleasenotes",
        "packagerequirelicenseacceptance", "packagetags", "packageprojecturl", "packageversion",
        "publishrepositoryurl", "repositorybranch", "repositorycommit", "repositorytype",
        "repositoryurl", "symbolpackageformat",
    }
)  # fmt: skip
# Properties compiled into the assembly as attributes that only reflection reads
# (`tools.ASSEMBLY_METADATA`); not `NeutralLanguage`, which steers resource lookup.
ASSEMBLY_ATTRIBUTES = frozenset(
    {
        "assemblytitle", "assemblyversion", "company", "copyright", "description", "fileversion",
        "informationalversion", "product", "title", "trademark", "version", "versionprefix",
        "versionsuffix",
    }
)  # fmt: skip
_PROPERTY_GROUP = "PropertyGroup"

Canonical = tuple[object, ...]


def inert(before: str, after: str, tools: frozenset[str] | None = None) -> str | None:
    """What changed ("the Version of its PackageReference items", "its Description and
    PackageReleaseNotes properties") when nothing else did, "its formatting" when nothing
    compared did; None when anything else did, or a version does not parse. `tools`: what
    the failed tests' walks may read (`imports/tools.py`); the assembly's metadata
    properties are inert only when known not to be read."""
    old, new = _root(before), _root(after)
    if old is None or new is None:
        return None
    metadata = ASSEMBLY_METADATA not in tools if tools is not None else False
    dropped = PACKAGE_ONLY | (ASSEMBLY_ATTRIBUTES if metadata else frozenset())
    try:
        if _canonical(old, True, dropped) != _canonical(new, True, dropped):
            return None
        versions = _canonical(old, False, dropped) != _canonical(new, False, dropped)
        properties = _changed_properties(old, new, dropped)
    except RecursionError:  # nested deeper than any project file is
        return None
    said = ["the Version of its PackageReference items"] if versions else []
    if properties:
        said.append(its(properties, "property", "properties"))
    return "its formatting" if not said else " and ".join(said)


def _changed_properties(old: Element, new: Element, names: frozenset[str]) -> list[str]:
    """Of the properties `names` (any case), those whose values differ, as written."""
    before, spelled = _property_values(old, names)
    after, also = _property_values(new, names)
    spelled = {**also, **spelled}
    changed = [key for key in before.keys() | after.keys() if before.get(key) != after.get(key)]
    return sorted(spelled[key] for key in changed)


def _property_values(
    root: Element, names: frozenset[str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    values: dict[str, list[str]] = {}
    spelled: dict[str, str] = {}
    groups = (group for group in root.iter() if local_name(group) == _PROPERTY_GROUP)
    for element in (child for group in groups for child in group):
        name = local_name(element)
        if name.lower() in names:
            values.setdefault(name.lower(), []).append((element.text or "").strip())
            spelled.setdefault(name.lower(), name)
    return values, spelled


def _root(text: str) -> Element | None:
    stream = XmlStream("project file", [text.encode()])
    for _ in stream.events():
        pass
    return stream.root if stream.problem is None else None


def _canonical(element: Element, versionless: bool, dropped: frozenset[str]) -> Canonical:
    """The element as compared: its tag, attributes, text and children with their tails
    (text that is only layout is none); without packages' versions when `versionless`, and
    without the properties `dropped` (any case)."""
    attributes = dict(element.attrib)
    children = list(element)
    if versionless and local_name(element) in _PACKAGE_ITEMS:
        attributes = {k: v for k, v in attributes.items() if k.lower() not in _VERSIONS}
        children = [c for c in children if local_name(c).lower() not in _VERSIONS]
    if local_name(element) == _PROPERTY_GROUP:
        children = [c for c in children if local_name(c).lower() not in dropped]
    return (
        element.tag,
        tuple(sorted(attributes.items())),
        _text(element.text),
        tuple((_canonical(c, versionless, dropped), _text(c.tail)) for c in children),
    )


def _text(text: str | None) -> str:
    return "" if text is None or not text.strip() else text
