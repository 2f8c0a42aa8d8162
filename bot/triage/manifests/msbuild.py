"""MSBuild project files (.csproj, .fsproj, .vbproj): the document, element by element.

Inert: the `Version` (or `VersionOverride`, as an attribute or a child element) of a
`PackageReference`: which release of a package from the feed the project builds with, like
a lockfile's change it can break any test but not change which of the repository's files
the project compiles. Everything else counts: a `ProjectReference`, a `Compile` item, a
property (`TargetFramework`, `LangVersion`, `Nullable`, `DefineConstants`, `Version`, which
the assembly carries), a package that came or went, an import, a target; and a file that is
not well-formed XML or declares entities (`xml_safe`). Comments and the layout between
elements are not compared.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from bot.triage.reports.xml_safe import XmlStream, local_name

SUFFIXES = (".csproj", ".fsproj", ".vbproj")
_PACKAGE_ITEMS = frozenset({"PackageReference"})
_VERSIONS = frozenset({"version", "versionoverride"})  # metadata names: any case

Canonical = tuple[object, ...]


def inert(before: str, after: str) -> str | None:
    """ "the Version of its PackageReference items" when only that changed, "its formatting"
    when nothing compared did; None when anything else did, or a version does not parse."""
    old, new = _root(before), _root(after)
    if old is None or new is None:
        return None
    try:
        if _canonical(old, True) != _canonical(new, True):
            return None
        same = _canonical(old, False) == _canonical(new, False)
    except RecursionError:  # nested deeper than any project file is
        return None
    return "its formatting" if same else "the Version of its PackageReference items"


def _root(text: str) -> Element | None:
    stream = XmlStream("project file", [text.encode()])
    for _ in stream.events():
        pass
    return stream.root if stream.problem is None else None


def _canonical(element: Element, versionless: bool) -> Canonical:
    """The element as compared: its tag, attributes, text and children with their tails
    (text that is only layout is none); without packages' versions when `versionless`."""
    attributes = dict(element.attrib)
    children = list(element)
    if versionless and local_name(element) in _PACKAGE_ITEMS:
        attributes = {k: v for k, v in attributes.items() if k.lower() not in _VERSIONS}
        children = [c for c in children if local_name(c).lower() not in _VERSIONS]
    return (
        element.tag,
        tuple(sorted(attributes.items())),
        _text(element.text),
        tuple((_canonical(child, versionless), _text(child.tail)) for child in children),
    )


def _text(text: str | None) -> str:
    return "" if text is None or not text.strip() else text
