"""Untrusted XML parsed without entity expansion or external references."""

from __future__ import annotations

from xml.etree.ElementTree import Element, ParseError

# No stubs in the dev dependencies (types-defusedxml would supply them).
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring


def parse_xml(name: str, data: bytes) -> tuple[Element | None, list[str]]:
    """The document's root, or None and a problem naming the file and the position."""
    try:
        root: Element = fromstring(data)
        return root, []
    except DefusedXmlException:
        return None, [f"{name}: refused: XML entities are not allowed"]
    except ParseError as error:
        line, column = error.position  # expat counts columns from 0, editors from 1
        return None, [f"{name}: not well-formed XML (line {line}, column {column + 1})"]
    except (ValueError, LookupError) as error:
        # A declared encoding Python does not know, or bytes that do not decode under it.
        return None, [f"{name}: unreadable XML ({error.__class__.__name__})"]


def local_name(element: Element) -> str:
    """The tag without its namespace: TRX files put every element in one."""
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
