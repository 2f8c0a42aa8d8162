"""Untrusted XML parsed without entity expansion or external references, as it arrives.

`XmlStream` yields the document's start and end events while its chunks are fed in, so a
reader that clears what it has read (JUnit) holds one test case at a time, and one that
needs the whole tree (TRX) keeps it. Either way the elements are counted and capped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

# No stubs in the dev dependencies (types-defusedxml would supply them).
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

# Elements one document may hold. A tree kept whole is what a parsed report costs (about 330
# bytes an element with its attributes, 16 times the bytes of `<testcase name="t"/>`): this
# bounds it near 35 MiB, whatever a compressed file expands to. A JUnit file is read case by
# case and costs no such memory, but parsing costs CPU by the element (about 100,000 a
# second with the reading), so the cap holds for it too. A report of tens of thousands of
# tests fits.
MAX_ELEMENTS = 100_000
_COUNT = re.compile(r"[0-9]{1,9}")


class TooManyElements(Exception):
    """The document holds more than its cap of elements."""


class _ChunkFile:
    """The chunks as the file-like object `iterparse` reads; the chunks' exceptions pass."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)

    def read(self, _size: int = -1) -> bytes:
        # A chunk longer than asked for is fed whole: the parser takes any length.
        for chunk in self._chunks:
            if chunk:
                return chunk
        return b""


@dataclass
class XmlStream:
    """The events of document `name` read from `chunks`; after iterating, `problem` says why
    it was not read to its end (None when it was) and `elements` what it cost."""

    name: str
    chunks: Iterable[bytes]
    max_elements: int = MAX_ELEMENTS
    elements: int = 0
    problem: str | None = None
    root: Element | None = field(default=None, init=False)

    def events(self) -> Iterator[tuple[str, Element]]:
        """("start"|"end", element) pairs; stops early, with `problem` set, on a refusal."""
        try:
            for event, element in iterparse(_ChunkFile(self.chunks), events=("start", "end")):
                if event == "start":
                    self.elements += 1
                    if self.elements > self.max_elements:
                        raise TooManyElements
                    if self.root is None:
                        self.root = element
                yield event, element
            return
        except TooManyElements:
            self.problem = f"{self.name}: refused: over {self.max_elements} XML elements"
        except DefusedXmlException:
            self.problem = f"{self.name}: refused: XML entities are not allowed"
        except ParseError as error:
            line, column = error.position  # expat counts columns from 0, editors from 1
            self.problem = f"{self.name}: not well-formed XML (line {line}, column {column + 1})"
        except (ValueError, LookupError) as error:
            # A declared encoding Python does not know, or bytes that do not decode under it.
            self.problem = f"{self.name}: unreadable XML ({error.__class__.__name__})"


def local_name(element: Element) -> str:
    """The tag without its namespace: TRX files put every element in one."""
    tag = element.tag
    return _local(tag) if isinstance(tag, str) else ""


@functools.lru_cache(maxsize=1024)
def _local(tag: str) -> str:
    # A document has a handful of tags, met once an element: kept, not split again.
    return tag.rsplit("}", 1)[-1]


def counter(element: Element, *names: str) -> int | None:
    """The sum of `element`'s integer attributes `names`, None when it has none of them."""
    values = [element.get(name) for name in names]
    if all(value is None for value in values):
        return None
    # ASCII digits, nine at most: `isdigit` takes `²`, and `int` refuses 4,300 digits.
    return sum(int(v) for v in values if v is not None and _COUNT.fullmatch(v.strip()))
