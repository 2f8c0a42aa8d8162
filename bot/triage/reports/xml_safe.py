"""Untrusted XML parsed without entity expansion or external references, as it arrives."""

from __future__ import annotations

from collections.abc import Iterable
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

# No stubs in the dev dependencies (types-defusedxml would supply them).
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

# Elements one document may hold. The tree is what a parsed report costs (about 330 bytes an
# element with its attributes, 16 times the bytes of `<testcase name="t"/>`): this bounds it
# near 35 MiB, whatever a compressed file expands to. A report of tens of thousands of tests
# fits.
MAX_ELEMENTS = 100_000


class TooManyElements(Exception):
    """The document holds more than its cap of elements."""


class _CountingBuilder:
    """A TreeBuilder that stops the parse at the element past `limit`."""

    def __init__(self, limit: int) -> None:
        self._builder = TreeBuilder()
        self._limit = limit
        self.elements = 0

    def start(self, tag: str, attrs: dict[str, str]) -> Element:
        self.elements += 1
        if self.elements > self._limit:
            raise TooManyElements
        return self._builder.start(tag, attrs)

    def end(self, tag: str) -> Element:
        return self._builder.end(tag)

    def data(self, text: str) -> None:
        self._builder.data(text)

    def close(self) -> Element:
        return self._builder.close()


def parse_xml(
    name: str, chunks: Iterable[bytes], *, max_elements: int = MAX_ELEMENTS
) -> tuple[Element | None, list[str], int]:
    """The document's root, or None and a problem naming the file and the position; and the
    elements parsed (what the document cost, read or refused).

    The chunks are fed to the parser as they come, so the document's bytes are never held
    whole; exceptions the chunks raise pass through.
    """
    builder = _CountingBuilder(max_elements)
    parser = DefusedXMLParser(target=builder)
    try:
        for chunk in chunks:
            parser.feed(chunk)
        root: Element = parser.close()
        return root, [], builder.elements
    except TooManyElements:
        problem = f"{name}: refused: over {max_elements} XML elements"
    except DefusedXmlException:
        problem = f"{name}: refused: XML entities are not allowed"
    except ParseError as error:
        line, column = error.position  # expat counts columns from 0, editors from 1
        problem = f"{name}: not well-formed XML (line {line}, column {column + 1})"
    except (ValueError, LookupError) as error:
        # A declared encoding Python does not know, or bytes that do not decode under it.
        problem = f"{name}: unreadable XML ({error.__class__.__name__})"
    return None, [problem], builder.elements


def local_name(element: Element) -> str:
    """The tag without its namespace: TRX files put every element in one."""
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
