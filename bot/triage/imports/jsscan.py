"""A small JavaScript/TypeScript scanner: the module specifiers a file loads, and the string
literals configuration files give to a key. Read, never run.

The scanner splits the text into tokens (names, string literals, punctuation), skipping
comments, template literals with their `${...}` substitutions, and regular-expression
literals, so an `import` written inside a string or a comment is not an import. It cannot
tell a regular expression from a division everywhere (no scanner can without a parser): it
guesses from the token before the `/`, and strings and regular expressions end at a line
break, so a wrong guess (or an apostrophe in JSX text) costs at most the rest of its line.
An unterminated block comment or template literal makes the file unreadable (None): what
follows it could not be told from the comment. In TypeScript it also tells the imports that
are type-only (`types_only`), which compilers erase.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

# In code: whitespace and comments skipped, then one token: a block comment that never
# ends, a string, a name, a number, a backtick, a slash, anything else, or the end.
_CODE = re.compile(
    r"""
    (?:\s+|//[^\n]*|<!--[^\n]*|\#![^\n]*|/\*.*?\*/)*
    (?:
      (?P<open>/\*)
    | (?P<string>'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?)
    | (?P<name>[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*)
    | (?P<number>\.?\d[\w.]*)
    | (?P<tick>`)
    | (?P<slash>/)
    | (?P<punct>.)
    | (?P<end>\Z)
    )
    """,
    re.VERBOSE | re.DOTALL,
)
# What a path built in a template literal is given after its head: no file's name.
BUILT = "${…}"
# Inside a template literal, up to its closing backtick or the next `${`.
_TEMPLATE = re.compile(r"(?:\\.|[^`\\$]|\$(?!\{))*", re.DOTALL)
_REGEX = re.compile(r"/(?:\\.|\[(?:\\.|[^\]\\\n])*\]?|[^/\\\n\[])*/?[A-Za-z]*")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# After these names a `/` starts a regular expression; after any other name it divides.
_BEFORE_EXPRESSION = frozenset(
    [
        "return",
        "typeof",
        "instanceof",
        "in",
        "of",
        "new",
        "delete",
        "void",
        "throw",
        "case",
        "do",
        "else",
        "yield",
        "await",
    ]
)
_AFTER_OPERAND = frozenset(")]}")
_PLAIN = frozenset({"name", "punct", "number"})
# `jest.mock('x')`, `vi.importActual('x')`: the test framework loads the module.
_MOCKERS = frozenset({"jest", "vi"})
_MOCK_CALLS = frozenset(
    [
        "mock",
        "doMock",
        "unmock",
        "setMock",
        "requireActual",
        "requireMock",
        "importActual",
        "importMock",
        "createMockFromModule",
    ]
)


class Token(NamedTuple):
    kind: str  # "name", "string" (a literal: its value), "template" (not a literal), "punct"
    text: str


@functools.lru_cache(maxsize=512)
def tokens(source: str) -> tuple[Token, ...] | None:
    """The file's tokens without comments; None when a comment or template never ends."""
    found: list[Token] = []
    braces: list[bool] = []  # per open brace: True when it opened a template's `${`
    append, match_at, pos = found.append, _CODE.match, 0
    while True:  # the common tokens first: this loop is the walk's hot spot
        match = match_at(source, pos)
        assert match is not None  # `.` with DOTALL, or the end, always matches
        kind, pos = match.lastgroup or "end", match.end()
        if kind in _PLAIN:
            text = match.group(kind)
            if text == "{":
                braces.append(False)
            elif text == "}" and braces and braces.pop():
                # the end of a template's `${...}`: the template goes on
                pos = _template(source, pos, False, found, braces)
                if pos < 0:
                    return None
                continue
            append(_token(kind, text))
        elif kind == "string":
            append(_token(kind, _string_value(match.group(kind))))
        elif kind == "slash":
            if not _starts_regex(found):
                append(_token("punct", "/"))
                continue
            regex = _REGEX.match(source, match.start(kind))
            assert regex is not None
            append(_token("regex", regex.group()))
            pos = regex.end()
        elif kind == "tick":
            pos = _template(source, pos, True, found, braces)
            if pos < 0:
                return None
        else:  # the end, or a block comment that never ends
            return tuple(found) if kind == "end" else None


def _token(kind: str, text: str) -> Token:
    return tuple.__new__(Token, (kind, text))  # as Token(kind, text), without its Python __new__


def _string_value(text: str) -> str:
    """A string literal's value: quotes off (a literal cut by a line break has no closing
    quote), escapes undone."""
    inner = text[1:-1] if len(text) > 1 and text[-1] == text[0] else text[1:]
    return _ESCAPE.sub(r"\1", inner) if "\\" in inner else inner


def _template(source: str, pos: int, head: bool, found: list[Token], braces: list[bool]) -> int:
    """Scan a template literal's text from `pos`; the position after it, -1 if it never
    ends. A whole template without substitutions is a string literal."""
    match = _TEMPLATE.match(source, pos)
    assert match is not None
    stop = match.end()
    if stop >= len(source):
        return -1
    if source[stop] == "`":
        found.append(Token("string", match.group()) if head else Token("template", ""))
        return stop + 1
    braces.append(True)  # `${`: code until its closing brace
    found.append(Token("template", match.group() if head else ""))  # the head: `./locale/`
    return stop + 2


def _starts_regex(found: Sequence[Token]) -> bool:
    if not found:
        return True
    kind, text = found[-1]
    if kind == "name":
        return text in _BEFORE_EXPRESSION
    if kind == "punct":
        return text not in _AFTER_OPERAND and text != "<"  # `</div>` closes a JSX tag
    return False


class Specifier(NamedTuple):
    """A module specifier a file loads; `types`: every import of it is type-only (module
    doc of `types_only`), so a compiler that erases types loads nothing for it."""

    module: str
    types: bool = False


def specifiers(source: str, typescript: bool = False) -> list[Specifier] | None:
    """The module specifiers the file loads, in order, each once: `import ... from 'x'`,
    `export ... from 'x'`, `import 'x'`, `import('x')` and `require('x')` (and
    `require.resolve`), `jest.mock('x')` and its kin; None when the text cannot be read.
    A path built at run time (`import(`./locale/${lang}`)`) is its head and `BUILT`
    (`./locale/${…}`), which names no file. In `typescript`, a specifier is type-only when
    each of its imports is (`types_only`), and the triple-slash references are read, as
    type-only specifiers."""
    found = tokens(source)
    if found is None:
        return None
    typed = types_only(found) if typescript else frozenset()
    names: dict[str, bool] = {}
    for index, (kind, text) in enumerate(found):
        if kind != "name" or (index and found[index - 1].text == "."):
            continue
        after = found[index + 1 : index + 5]
        name, types = None, False
        if text in ("import", "from") and _is(after, 0, "string"):
            name, types = after[0].text, index in typed
        elif text in ("import", "require") and _call(after, 0):
            name, types = after[1].text, index in typed
        elif text in ("import", "require") and _path_built(after):
            name = after[1].text + BUILT
        elif (text == "require" and _is(after, 0, "punct", ".") and _call(after, 2)) or (
            text in _MOCKERS and _is(after, 0, "punct", ".") and _mock_call(after)
        ):
            name = after[3].text
        if name is not None:
            names[name] = names.get(name, True) and types
    for reference in _REFERENCE.finditer(source) if typescript else ():
        module = reference["module"]
        if reference["kind"] == "path" and not module.startswith(("./", "../", "/")):
            module = "./" + module  # a path, relative to the file, even without `./`
        names.setdefault(module, True)
    return [Specifier(module, types) for module, types in names.items()]


# `/// <reference path="./globals.d.ts" />` and `/// <reference types="node" />`: files
# TypeScript adds to the program it checks; nothing of them runs.
_REFERENCE = re.compile(
    r"^[ \t]*///[ \t]*<reference[ \t]+(?P<kind>path|types)[ \t]*=[ \t]*"
    r"(?P<quote>[\"'])(?P<module>[^\"'\n]+)(?P=quote)",
    re.MULTILINE,
)
# After `import type`, the tokens that start a type-only clause (`{`, `*`, or a name other
# than `from` and `=`: `import type from './x'` imports a default export named `type`).
_NOT_A_CLAUSE = frozenset({"from", "=", ","})
# Names that start a statement: never inside an import clause's braces.
_STATEMENTS = frozenset({"import", "export"})
# What a promise's `import('./x')` is followed by at run time, never a type's name.
_PROMISE_METHODS = frozenset({"then", "catch", "finally"})


def types_only(found: Sequence[Token]) -> frozenset[int]:
    """The indices of the `from` (or `import` of `import('x')`) tokens whose specifier is
    imported for its types alone, as TypeScript writes it: `import type X from`,
    `import type {X} from`, `import type * as X from`, `export type {X} from`,
    `export type * from`; `import('./x').T` where a type is named (a property that is not
    called, nor a promise's `then`), and `typeof import('./x')`. Every compiler erases
    these. Not `import {type X} from`: under `verbatimModuleSyntax` it stays as
    `import {} from`, which runs the module, and which tsconfig applies is the importing
    file's own."""
    typed: set[int] = set()
    for index, (kind, text) in enumerate(found):
        if kind != "name" or (index and found[index - 1].text == "."):
            continue
        if text in ("import", "export") and _is(found, index + 1, "name", "type"):
            at = _type_clause_end(found, index + 2)
            if at is not None and _is(found, at, "name", "from") and _is(found, at + 1, "string"):
                typed.add(at)
        elif text == "import" and _type_query(found, index):
            typed.add(index)
    return frozenset(typed)


def _type_clause_end(found: Sequence[Token], at: int) -> int | None:
    """Where the clause after `import type` / `export type` ends (the index of what follows
    it), or None when what follows `type` is no type-only clause."""
    if at >= len(found):
        return None
    kind, text = found[at]
    if (kind, text) == ("punct", "{"):
        # Names, `as` and commas up to the `}`; anything else ends a clause that is not one
        # (each token is then read by one clause at most: linear on `import type {` repeated).
        at += 1
        while at < len(found) and found[at] != ("punct", "}"):
            if found[at] != ("punct", ",") and (
                found[at].kind not in ("name", "string") or found[at].text in _STATEMENTS
            ):
                return None
            at += 1
        return at + 1
    if (kind, text) == ("punct", "*"):
        return at + 3 if _is(found, at + 1, "name", "as") else at + 1
    if kind == "name" and text not in _NOT_A_CLAUSE:
        if _is(found, at + 1, "name", "from") and _is(found, at + 2, "string"):
            return at + 1
        return None
    return None


def _type_query(found: Sequence[Token], index: int) -> bool:
    """`typeof import('./x')`, or `import('./x').T` naming a type, at `index`."""
    if not (_call(found, index + 1) and _is(found, index + 3, "punct", ")")):
        return False
    return (index > 0 and found[index - 1] == ("name", "typeof")) or _names_a_type(found, index + 4)


def _names_a_type(found: Sequence[Token], at: int) -> bool:
    """`.Name` after `import('./x')`, not called and not a promise's method: a type."""
    return (
        _is(found, at, "punct", ".")
        and _is(found, at + 1, "name")
        and found[at + 1].text not in _PROMISE_METHODS
        and not _is(found, at + 2, "punct", "(")
    )


def _path_built(window: Sequence[Token]) -> bool:
    """`(` then a template literal whose text before its first `${` is a path
    (`require(`./locale/${lang}`)`): a repository file no literal names."""
    return (
        _is(window, 0, "punct", "(")
        and _is(window, 1, "template")
        and window[1].text.startswith(("./", "../", "/"))
    )


def _mock_call(window: Sequence[Token]) -> bool:
    """`.mock('x'` after `jest` or `vi`."""
    return len(window) > 1 and window[1].text in _MOCK_CALLS and _call(window, 2)


def _is(window: Sequence[Token], at: int, kind: str, text: str | None = None) -> bool:
    return len(window) > at and window[at].kind == kind and text in (None, window[at].text)


def _call(window: Sequence[Token], at: int) -> bool:
    """`(` then a string literal at `at` in the window."""
    return _is(window, at, "punct", "(") and _is(window, at + 1, "string")


def key_strings(source: str, keys: Iterable[str]) -> dict[str, list[str]]:
    """The string literals given to each key (`key: 'a'`, `key: ['a', 'b']`,
    `"key": path.join(__dirname, 'a')`) anywhere in a configuration file: every literal in
    the value up to the `,` or closing bracket that ends it. Over-counts on purpose."""
    wanted = frozenset(keys)
    found: dict[str, list[str]] = {}
    read_to: dict[str, int] = {}  # per key, where the value read last ends
    toks = tokens(source) or ()
    for index, (kind, text) in enumerate(toks):
        if kind in ("name", "string") and text in wanted and _is(toks, index + 1, "punct", ":"):
            # A key inside that value's literals is read with them: read again, a file of
            # `key: [key: [key: [...` would cost the square of its length.
            if index < read_to.get(text, 0):
                continue
            strings, read_to[text] = _value(toks, index + 2)
            found.setdefault(text, []).extend(strings)
    return found


def key_values(source: str, key: str) -> list[tuple[Token, ...]]:
    """The tokens of each value given to `key` (`key: {enabled: true}`) anywhere in a
    configuration file, up to the `,` or closing bracket that ends it."""
    toks = tokens(source) or ()
    found: list[tuple[Token, ...]] = []
    read_to = 0  # a key inside a value read is part of it (`key_strings`: linear time)
    for index, (kind, text) in enumerate(toks):
        if kind in ("name", "string") and text == key and _is(toks, index + 1, "punct", ":"):
            if index < read_to:
                continue
            read_to = _value(toks, index + 2)[1]
            found.append(tuple(toks[index + 2 : read_to]))
    return found


def _value(toks: Sequence[Token], start: int) -> tuple[list[str], int]:
    """The string literals of the value from `start`, and where it ends: the index of the
    `,` or closing bracket after it."""
    depth, index = 0, start
    values: list[str] = []
    for index in range(start, len(toks)):
        kind, text = toks[index]
        if kind == "punct" and text in "([{":
            depth += 1
        elif kind == "punct" and text in ")]}":
            depth -= 1
            if depth < 0:
                return values, index
        elif kind == "punct" and text == "," and depth == 0:
            return values, index
        elif kind == "string":
            values.append(text)
    return values, len(toks)


def key_entries(source: str, key: str) -> list[tuple[str, list[str]]]:
    """The entries of an object given to `key`, each with the string literals of its value:
    `key: {'@': path.resolve(__dirname, 'src')}` gives ('@', ['src']); for an array of
    objects, `key: [{find: '@', replacement: 'src'}]`, each object's `find` (a string
    literal; a regular expression is skipped) with its `replacement`'s literals."""
    toks = tokens(source) or ()
    found: list[tuple[str, list[str]]] = []
    read_to = 0  # where the value read last ends: a key inside it is one of its entries
    for index, (kind, text) in enumerate(toks):
        if kind not in ("name", "string") or text != key or not _is(toks, index + 1, "punct", ":"):
            continue
        if index < read_to:
            continue
        if _is(toks, index + 2, "punct", "{"):
            entries, read_to = _entries(toks, index + 2)
            found += entries
        elif _is(toks, index + 2, "punct", "["):
            entries, read_to = _find_replacements(toks, index + 3)
            found += entries
    return found


def _entries(toks: Sequence[Token], start: int) -> tuple[list[tuple[str, list[str]]], int]:
    """The entries of the object whose `{` is at `start`, and the index after its `}`."""
    entries: list[tuple[str, list[str]]] = []
    index = start + 1
    while index < len(toks) and toks[index] != Token("punct", "}"):
        before = index
        if toks[index].kind in ("name", "string") and _is(toks, index + 1, "punct", ":"):
            strings, index = _value(toks, index + 2)
            entries.append((toks[before].text, strings))
        else:  # a spread or a shorthand property: no literal key
            index = _value(toks, index)[1]
        if _is(toks, index, "punct", ","):
            index += 1
        if index == before:  # a stray closing bracket: stop rather than loop
            break
    return entries, index + 1


def _find_replacements(
    toks: Sequence[Token], start: int
) -> tuple[list[tuple[str, list[str]]], int]:
    """The `find`/`replacement` pairs of the array of objects from `start`, and where the
    objects end."""
    found: list[tuple[str, list[str]]] = []
    index = start
    while _is(toks, index, "punct", "{"):
        entries, index = _entries(toks, index)
        fields = dict(entries)
        if len(fields.get("find", [])) == 1 and "replacement" in fields:
            found.append((fields["find"][0], fields["replacement"]))
        if _is(toks, index, "punct", ","):
            index += 1
    return found, index


# A string unclosed at the end of its line, or a comment at the end of the text, is taken
# whole (the JSON reader then refuses it): tried again from each later quote or `/*`, it
# would read the rest of the line or text once per quote (a 48 KB tsconfig of `/*`: 6 s).
_JSONC_STRING = r'("(?:\\.|[^"\\\n])*+"?)'
_JSONC_COMMENTS = re.compile(_JSONC_STRING + r"|//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_JSONC_COMMAS = re.compile(_JSONC_STRING + r"|,(?=\s*+[}\]])")


def loads_jsonc(text: str) -> object | None:
    """JSON as tsconfig.json allows it (comments, trailing commas); None when not valid."""
    text = _JSONC_COMMENTS.sub(lambda m: m.group(1) or " ", text.lstrip("\ufeff"))
    text = _JSONC_COMMAS.sub(lambda m: m.group(1) or "", text)
    try:
        data: object = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data
