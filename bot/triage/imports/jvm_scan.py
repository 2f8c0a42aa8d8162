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

A Kotlin file is read further (`jvm.py` says why): what it declares at its top level, each
name with its package (`kotlin_declared`), the words its code may name something by
(`kotlin_uses`) and its import aliases (`kotlin_aliases`); there a string ends where
Kotlin ends it, past its `${...}` templates, which may hold strings, braces and lines.
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


def _tokens(
    source: str,
    nested_comments: bool,
    strings: bool = False,
    kotlin: bool = False,
    lines: bool = False,
) -> Iterator[str]:
    """Identifiers (backquotes removed) and punctuation; comments, numbers and (unless
    `strings`: then each whole, quotes included) strings out. `kotlin`: a string ends where
    Kotlin ends it, past its templates (`"${f("}")}"`, over lines); one whose end is not
    found (the file does not compile) yields `UNCLOSED` after it. `lines`: a "\\n" for
    each stretch of space that ends a line."""
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None or match.lastgroup is None:  # pragma: no cover - `other` takes any char
            return
        position = match.end()
        kind = match.lastgroup
        if kotlin and kind in ("string", "text_block"):
            position, closed = _kotlin_string_end(source, match.start())
            if strings:
                yield source[match.start() : position]
            if not closed:
                yield UNCLOSED
        elif kind == "open_comment":
            position = _skip_comment(source, position, nested_comments)
        elif lines and kind == "space" and "\n" in match.group():
            yield "\n"
        elif kind == "word":
            yield match.group().strip("`")
        elif (strings and kind in ("string", "text_block")) or (
            kind == "other" and not match.group().isspace()
        ):
            yield match.group()


UNCLOSED = "\0"
_JVM_NAME = re.compile(r'@file\s*:\s*(?:kotlin\.jvm\.)?JvmName\s*\(\s*"(\w+)"')
_CHAR = re.compile(r"'(?:[^'\\\n]|\\[^\n]{1,6})'")


def _kotlin_string_end(source: str, start: int) -> tuple[int, bool]:
    """Where the Kotlin string opening at `start` ends, and whether it closed: a raw
    `\"\"\"` string at its last quote, an escaped one at its quote or (unclosed) its line's
    end, each past the `${...}` templates in it, themselves code with braces, strings,
    characters and comments. One pass, no recursion (a stack of what is open)."""
    end = len(source)
    raw = source.startswith('"""', start)
    stack: list[tuple[bool, bool, int]] = [(True, raw, 0)]  # (string?, raw?, braces open)
    at = start + (3 if raw else 1)
    while at < end and stack:
        string, raw, braces = stack[-1]
        char = source[at]
        if string:
            if raw and source.startswith('"""', at):
                at += 3
                while at < end and source[at] == '"':
                    at += 1
                stack.pop()
            elif not raw and char in '"\n':
                stack.pop()
                at += char == '"'
                if char == "\n" and not stack:
                    return at, False
            elif not raw and char == "\\":
                at += 2
            elif source.startswith("${", at):
                stack.append((False, False, 1))
                at += 2
            else:
                at += 1
        elif char == '"':
            raw = source.startswith('"""', at)
            stack.append((True, raw, 0))
            at += 3 if raw else 1
        elif char == "'" and (literal := _CHAR.match(source, at)):
            at = literal.end()
        elif source.startswith("//", at):
            newline = source.find("\n", at)
            at = end if newline < 0 else newline
        elif source.startswith("/*", at):
            at = _skip_comment(source, at + 2, nested=True)
        else:
            if char in "{}":
                braces += 1 if char == "{" else -1
                if braces == 0:
                    stack.pop()
                else:
                    stack[-1] = (False, False, braces)
            at += 1
    return min(at, end), not stack


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
_OPEN, _CLOSE = "{([", "})]"
# What a Kotlin file's code may name without writing the name: a top-level `operator fun`
# (`a + b` calls `plus`, `by` calls `getValue`, `for` calls `iterator`, ...). A file that
# declares one declares `PACKAGE.()` too, and every file that sees its package names it.
KOTLIN_IMPLICIT = "()"
# What a Kotlin file declares when its declarations cannot be read (braces or parentheses
# that do not balance): any name of any package. Every importer names it.
KOTLIN_ANY = "*"
# The names Kotlin calls by convention, without writing them: an explicit import of one is
# used even when the name is nowhere else in the file.
_OPERATOR_NAMES = (
    "plus minus times div rem mod rangeTo rangeUntil unaryPlus unaryMinus not inc dec get set"
    " invoke contains iterator next hasNext compareTo equals getValue setValue provideDelegate"
    " plusAssign minusAssign timesAssign divAssign remAssign modAssign"
)
KOTLIN_OPERATORS = frozenset(
    [*_OPERATOR_NAMES.split(" "), *(f"component{n}" for n in range(1, 33))]
)


def kotlin_uses(source: str) -> frozenset[str]:
    """The words a Kotlin file's code may name something by: its identifiers and every word
    of its strings (templates: `"${helper()}"`), not its comments, its `package` and
    `import` lines (what an import names is used only if the rest of the file names it),
    nor the name a declaration declares right after its keyword (`fun push(`, but not the
    receiver of `fun Foo.bar()`), nor a modifier (`expect` of `expect class B`, on the
    keyword's line: a statement may end in a property named `data` before a `fun`)."""
    words: set[str] = set()
    tokens = list(_tokens(source, nested_comments=True, strings=True, kotlin=True, lines=True))
    modifiers = _modifiers(tokens)
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "package":
            index = _dotted(tokens, index + 1)[1]
            continue
        if token == "import":
            index = _import(tokens, index + 1, [])
            continue
        if token.startswith('"'):
            words.update(_WORD.findall(token))
        elif _is_word(token) and not _declared_here(tokens, index) and not modifiers[index]:
            words.add(token)
        index += 1
    return frozenset(words)


_MODIFIER_NAMES = (
    "expect actual data value inline infix operator override open abstract sealed internal"
    " private public protected const lateinit suspend tailrec external annotation enum"
    " companion inner final"
)
_MODIFIERS = frozenset(_MODIFIER_NAMES.split(" "))


def _declared_here(tokens: list[str], index: int) -> bool:
    """Whether the word at `index` is the name its declaring keyword declares (`fun push(`),
    not a receiver or a generic type (`fun Foo.bar`, `val List<T>.x`)."""
    after = tokens[index + 1] if index + 1 < len(tokens) else ""
    return index > 0 and tokens[index - 1] in _DECLARING and after not in (".", "<", "?")


def _modifiers(tokens: list[str]) -> list[bool]:
    """Whether each word is a modifier (`expect` of `expect class B`): one of a run of
    them followed by a declaring keyword (`expect` and `data` are names too). One pass from
    the end."""
    found = [False] * (len(tokens) + 1)
    declaring = False  # the token after this one declares, or is a modifier that does
    for index in range(len(tokens) - 1, -1, -1):
        token = tokens[index]
        found[index] = token in _MODIFIERS and declaring
        declaring = token in _DECLARING or token == "constructor" or found[index]
    return found


def kotlin_aliases(source: str) -> dict[str, str]:
    """Kotlin's `import a.b.C as D`: the name the file uses (`D`) by import."""
    aliases: dict[str, str] = {}
    tokens = list(_tokens(source, nested_comments=True))
    for index, token in enumerate(tokens):
        if token == "import":
            name, end = _dotted(tokens, index + 1)
            if end + 1 < len(tokens) and tokens[end] == "as" and _is_name(tokens[end + 1]):
                aliases[name] = tokens[end + 1]
    return aliases


def kotlin_declared(source: str) -> frozenset[str]:
    """What a Kotlin file declares at its top level, each name with its package
    (`a.b.isPunctuation`; the default package's `.main`): classes, objects, interfaces,
    type aliases, functions and properties (an extension's name, not its receiver;
    `expect` and `actual` ones alike; not an opt-in marker annotation, which gates
    compilation and never runs), the class `@file:JvmName("X")` names (for Java), and
    `a.b.()` when one is an `operator fun` (module constants). A head it cannot read gives
    all of its words (more than it declares, never less); braces or parentheses that do not
    balance, or a string that does not end, give `KOTLIN_ANY`."""
    tokens = list(_tokens(source, nested_comments=True, kotlin=True))
    if UNCLOSED in tokens:
        return frozenset({KOTLIN_ANY})
    package, names, implicit = "", set(), False
    annotations: set[str] = set()  # those of the declaration being read
    depth, index = 0, 0
    while index < len(tokens):
        token = tokens[index]
        if token in _OPEN:
            depth += 1
        elif token in _CLOSE:
            depth -= 1
            if depth < 0:
                return frozenset({KOTLIN_ANY})
        elif depth == 0 and token == "package":
            package, index = _dotted(tokens, index + 1)
            continue
        elif depth == 0 and token == "import":
            index = _import(tokens, index + 1, [])
            continue
        elif depth == 0 and token == "operator":
            implicit = True
        elif depth == 0 and token == "@":
            annotations.add(_dotted(tokens, index + 1)[0].rpartition(".")[2])
        elif depth == 0 and token in _DECLARING and tokens[index - 1 : index] != [":"]:
            # `Foo::class` declares nothing; an opt-in marker (`@RequiresOptIn annotation
            # class ExperimentalApi`) nothing that runs: it only gates compilation
            marker = tokens[index - 1 : index] == ["annotation"] and "RequiresOptIn" in annotations
            if not marker:
                names.update(_declared_names(tokens, index))
            annotations = set()
        index += 1
    if depth:
        return frozenset({KOTLIN_ANY})
    names.update(_JVM_NAME.findall(source))  # the class Java calls its functions through
    found = {f"{package}.{name}" for name in names}
    return frozenset(found | {f"{package}.{KOTLIN_IMPLICIT}"} if implicit else found)


def _declared_names(tokens: list[str], index: int) -> list[str]:
    """The name the declaration at `index` (its keyword) declares: `class C`, `fun interface
    I`, `fun <T> List<T>.second(...)`, `val Foo.bar: Int`, `fun (A.() -> Unit).run()`; none
    for an anonymous `object : T` or `fun (x: Int) = x`. Every word of its head, up to its
    parameters, type or body, when it is of no shape known here."""
    kind, at = tokens[index], index + 1
    if kind == "fun" and at < len(tokens) and tokens[at] == "interface":
        kind, at = "interface", at + 1
    if kind not in ("fun", "val", "var"):
        if at < len(tokens) and _is_word(tokens[at]) and tokens[at] not in _DECLARING:
            return [tokens[at]]
        return [] if at < len(tokens) and tokens[at] in (":", "{") else _head(tokens, at)
    at = _skip(tokens, at, "<", ">")
    while at < len(tokens):
        if tokens[at] == "(":  # a receiver of a function type, or an anonymous function
            at = _skip(tokens, at, "(", ")")
            if at < len(tokens) and tokens[at] == ".":
                at += 1
                continue
            anonymous = kind == "fun" and tokens[index - 1 : index] == ["="]  # `= fun(x) ...`
            return [] if anonymous else _head(tokens, index + 1)
        if not _is_word(tokens[at]):
            break
        name, at = tokens[at], _skip(tokens, at + 1, "<", ">")
        while at < len(tokens) and tokens[at] == "?":
            at += 1
        if at < len(tokens) and tokens[at] == ".":
            at += 1
            continue
        return [name]
    return _head(tokens, index + 1)


def _head(tokens: list[str], index: int) -> list[str]:
    """Every word from `index` to the end of a declaration's head (or the next one's
    keyword: each token is read by one head at most)."""
    words = []
    while index < len(tokens):  # by index: no copy of the rest of the file
        token = tokens[index]
        if token in _HEAD_ENDS or token in _OPEN or token in _DECLARING:
            break
        if _is_word(token):
            words.append(token)
        index += 1
    return words


def _skip(tokens: list[str], index: int, opening: str, closing: str) -> int:
    """Past the balanced `opening`...`closing` group at `index` (`<` ... `>`, the `>` of a
    function type's `->` left out), or `index` when none opens there."""
    if index >= len(tokens) or tokens[index] != opening:
        return index
    depth = 0
    for at in range(index, len(tokens)):
        token = tokens[at]
        if token == opening:
            depth += 1
        elif token == closing and not (closing == ">" and tokens[at - 1] == "-"):
            depth -= 1
            if depth == 0:
                return at + 1
        elif token in "{};" or token in _DECLARING:
            return at  # not a group after all: its head ends here
    return len(tokens)


def _is_word(token: str) -> bool:
    return token[0].isalpha() or token[0] == "_"
