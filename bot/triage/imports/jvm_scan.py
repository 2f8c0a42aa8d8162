"""Read a Java, Kotlin, Scala or Groovy file's package, imports and names with a small
scanner (parsed, never compiled).

Comments (`//`, `/* */`, nested in Kotlin and Scala) and the contents of strings (Java
text blocks and Kotlin/Scala raw strings between triple quotes, character literals) never
count. What is read:

- the package: `package a.b` (Scala's chained `package a` / `package b` is `a.b`);
- every import, wherever it stands (Scala imports inside a body count too): Java's
  `import [static] a.b.C;` and `a.b.*;`, Kotlin's `import a.b.C` and `import a.b.C as D`,
  Scala's `import a.b.C`, `a.b._`, `a.b.*`, `a.b.{C, D => E}` and `import a.B, c.D`, each as
  a dotted name (a wildcard keeps "*" as its last part; Scala's selectors name one import
  each);
- the identifiers the file uses, to find the classes of its own package it names without
  importing them, and the dotted names it uses (`new scopt.OptionParser(...)`: a class
  named by its package, without an import).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

WILDCARD = "*"

# Unclosed, a string runs to the end of its line (ruby.py says why: one pass over the file,
# whatever it holds).
_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<line_comment>//[^\n]*)
    | (?P<open_comment>/\*)
    | (?P<text_block>\"\"\".*?\"\"\")
    | (?P<string>"(?:[^"\\\n]|\\.)*+"?)
    | (?P<char>'(?:[^'\\\n]|\\[^\n]{1,6})')
    | (?P<word>`[^`\n]+`|[^\W\d]\w*)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_COMMENT_EDGE = re.compile(r"/\*|\*/")


@dataclass
class JvmFile:
    package: str = ""
    imports: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    # Dotted names in the code starting with a lower-case part (`scopt.OptionParser`,
    # `order.total`): some are classes named by their package, most are member accesses.
    qualified: list[str] = field(default_factory=list)


def _skip_comment(source: str, position: int, nested: bool) -> int:
    """The position after the block comment opened just before `position` (the end of the
    text when it is never closed)."""
    depth = 1
    for edge in _COMMENT_EDGE.finditer(source, position):
        if edge.group() == "*/":
            depth -= 1
            if depth == 0:
                return edge.end()
        elif nested:
            depth += 1
    return len(source)


def _tokens(source: str, nested_comments: bool) -> Iterator[str]:
    """Identifiers (backquotes removed) and punctuation; comments, strings and numbers out."""
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None or match.lastgroup is None:  # pragma: no cover - `other` takes any char
            return
        position = match.end()
        kind = match.lastgroup
        if kind == "open_comment":
            position = _skip_comment(source, position, nested_comments)
        elif kind == "word":
            yield match.group().strip("`")
        elif kind == "other" and not match.group().isspace():
            yield match.group()


def scan_jvm(source: str, *, nested_comments: bool = False) -> JvmFile:
    """The file's package, imports and identifiers (module doc). A scanner that cannot
    fail: text it does not understand adds names, never removes an import."""
    found = JvmFile()
    tokens = list(_tokens(source, nested_comments))
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "package":
            name, index = _dotted(tokens, index + 1)
            found.package = ".".join(p for p in (found.package, name) if p)
            continue
        if token == "import":
            index = _import(tokens, index + 1, found.imports)
            continue
        if token[0].islower() and index + 2 < len(tokens) and tokens[index + 1] == ".":
            name, end = _dotted(tokens, index)
            if WILDCARD not in name:  # `a.b.C` named in code, without an import
                found.qualified.append(name)
                found.names.update(name.split("."))
                index = end
                continue
        if token[0].isalpha() or token[0] == "_":
            found.names.add(token)
        index += 1
    return found


def _dotted(tokens: list[str], index: int) -> tuple[str, int]:
    """A dotted name from `index` (a trailing `.*`/`._` is kept as "*"), and where it ends."""
    parts: list[str] = []
    while index < len(tokens) and _is_name(tokens[index]):
        parts.append(WILDCARD if tokens[index] in ("*", "_") else tokens[index])
        index += 1
        if parts[-1] == WILDCARD or index >= len(tokens) or tokens[index] != ".":
            break
        index += 1
    return ".".join(parts), index


def _is_name(token: str) -> bool:
    return token in ("*", "_") or token[0].isalpha() or token[0] == "_"


def _import(tokens: list[str], index: int, imports: list[str]) -> int:
    """Read one import statement's names into `imports`; returns where it ends."""
    while True:
        if index < len(tokens) and tokens[index] == "static":
            index += 1
        name, index = _dotted(tokens, index)
        selectors = index < len(tokens) and tokens[index] == "{" and name
        if selectors:
            index = _selectors(tokens, index + 1, name, imports)
        elif name:
            imports.append(name)
        if index < len(tokens) and tokens[index] == "as":
            index += 2  # Kotlin's alias names the same class
        if index < len(tokens) and tokens[index] == "," and (selectors or name):
            index += 1  # Scala: `import a.B, c.D`
            continue
        return index


def _selectors(tokens: list[str], index: int, prefix: str, imports: list[str]) -> int:
    """Scala's `{C, D => E, _}` after `prefix.`: one import per selector."""
    expect_name = True
    while index < len(tokens) and tokens[index] != "}":
        token = tokens[index]
        if token in ("=", ">") or token == ",":
            expect_name = token == ","
        elif expect_name and _is_name(token) and token != "given":
            imports.append(f"{prefix}.{WILDCARD if token in ('*', '_') else token}")
            expect_name = False
        index += 1
    return index + 1


_WORD = re.compile(r"[A-Za-z_]\w*")
_DECLARING = frozenset({"fun", "val", "var", "class", "object", "interface", "typealias"})
_HEAD_ENDS = frozenset({"(", ":", "=", "{", ";"})


def kotlin_words(source: str) -> frozenset[str]:
    """Every word of a Kotlin file, strings and comments included (a template names a
    function inside a string: `"${helper()}"`)."""
    return frozenset(_WORD.findall(source))


def kotlin_declared(source: str) -> frozenset[str]:
    """The names a Kotlin file may declare at its top level: the words after a declaring
    keyword outside braces, up to its parameters, type or body (an extension's receiver
    and type parameters too: more than it declares, never less). Braces that do not
    balance give every word of the file."""
    declared: set[str] = set()
    depth, head = 0, False
    for token in _tokens(source, nested_comments=True):
        if token in "{}":
            depth += 1 if token == "{" else -1
            if depth < 0:
                return kotlin_words(source)
        if depth or token in _HEAD_ENDS:
            head = False
        elif token in _DECLARING:
            head = True
        elif head and _is_name(token):
            declared.add(token)
    return frozenset(declared) if depth == 0 else kotlin_words(source)
