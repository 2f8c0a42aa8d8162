"""Read what a C# file names and what it declares, with a small scanner (parsed, never
compiled), for the declaration-grained walk of `csharp.py`.

Comments, preprocessor lines (`#if`, `#region`: both branches of an `#if` are read) and the
text of strings never count as names; the code inside an interpolated string's holes does,
and so does a string that is a whole (dotted) identifier (`GetMethod("Batch")`,
`[TestCaseSource("Cases")]`: a name spelt in a string for reflection). `nameof` and `typeof`
are code.

What a file names (`uses`): every identifier of its code, and the names the compiler calls
for it without their being written: a query expression's `Select`, `Where`, `SelectMany`,
`Join`, `GroupJoin`, `GroupBy`, `OrderBy`, `ThenBy`, ... ; `foreach`'s `GetEnumerator`,
`MoveNext`, `Current`, `Dispose` (and their async forms); `using`'s `Dispose`/`DisposeAsync`;
`await`'s `GetAwaiter`, `IsCompleted`, `GetResult`, `OnCompleted`; a collection initialiser's
or collection expression's `Add`; a deconstruction's or positional pattern's `Deconstruct`;
`fixed`'s `GetPinnableReference`; an interpolated string's `AppendLiteral`/`AppendFormatted`.

What a file declares (`keys`), by which a file that names one of them counts it:

- a type that is not `partial` (class, struct, interface, enum, record, delegate, at any
  nesting): its name (and `X` for `XAttribute`, as attributes are written); a static class
  (or one with extension methods, or a C# 14 `extension` block): its members' names too,
  since extension methods are called without the class's name;
- a `partial` type's part: its members' names (methods, properties, fields, events, nested
  types); and the type's name when the part has anything that runs or binds without its
  members being named: a constructor, a static constructor, a finaliser, an operator or
  conversion, an indexer, an `override`, a field or property initialiser, a public member or
  an explicit interface implementation (an interface's member, called through the interface
  by framework code: `CompareTo`, `Dispose`, `GetEnumerator`), an attribute on the type or a
  member, a base list, a primary constructor, `record`. A partial type's part with a
  static constructor or a static field initialiser runs whenever any member of the type is
  first used, by an extension-method call that never names the type too: it counts with
  any part of its type that counts (`T::static initialiser`, which every part names); a
  `static partial` class's part with an attribute on the type counts for every test
  (`ALWAYS`).
- `ALWAYS`: what affects every test of its assembly without being named: `[assembly: ...]`
  and `[module: ...]` attributes (but those that only describe it: `METADATA`), a
  `global using`, NUnit's `[SetUpFixture]`, MSTest's
  `[AssemblyInitialize]`/`[AssemblyCleanup]`/`[GlobalTestInitialize]`, xUnit's
  `[CollectionDefinition]`/`[AssemblyFixture]`, TUnit's `[Before]`/`[After]` hooks,
  `[ModuleInitializer]`; and a file the scanner cannot read through (braces unbalanced, as
  an `#if` with different headers in its branches leaves them).
- `PARTIAL`: the file holds a part of a partial type, which reflection over a type's
  members (`GetMethods()`, `GetProperties()`, ...) sees whole; a `static` one's part
  declares `T::PARTIAL` instead: reflection reaches a static class only from code that
  names it in `typeof(T)` (it has no instance, and is no type argument; a name in a string
  is reflection over the assembly).
- `METADATA`: `[assembly: ...]` attributes that only describe the assembly
  (`AssemblyVersion`, `AssemblyTitle`, `AssemblyCopyright`, ...), which only code reading
  them runs with (`tools.reads_assembly_metadata`: the importer names `METADATA` then).
- top-level statements: `Program` (`WebApplicationFactory<Program>` names it).

Reflection a file uses: over an assembly's types or by a type's name built at run time
(`GetTypes()`, `GetExportedTypes()`, `Assembly.Load`, `Activator.CreateInstance`,
`Type.GetType(name)`: `assembly_reflection`), and over a type's members
(`member_reflection`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache

# Keys no identifier can be, shown as the module of what they count (`walk._shown`).
ALWAYS = "code that runs for every test of its assembly"  # every file names it
PARTIAL = "a part of a partial type, which reflection reads whole"
METADATA = "the assembly's metadata, which the code reads"
STATIC_INIT = "static initialiser"  # `T::static initialiser`: with every part of T
# Attributes that only describe an assembly (not `AssemblyCulture`, which makes it a
# satellite, nor `InternalsVisibleTo`, which lets another compile against it).
_METADATA_ATTRIBUTES = frozenset(
    {
        "AssemblyVersion", "AssemblyFileVersion", "AssemblyInformationalVersion",
        "AssemblyTitle", "AssemblyDescription", "AssemblyCompany", "AssemblyProduct",
        "AssemblyCopyright", "AssemblyTrademark", "AssemblyConfiguration",
    }
)  # fmt: skip

_QUERY = frozenset(
    {
        "Select", "SelectMany", "Where", "Join", "GroupJoin", "GroupBy", "OrderBy",
        "OrderByDescending", "ThenBy", "ThenByDescending", "Cast",
    }
)  # fmt: skip
_FOREACH = frozenset({"GetEnumerator", "MoveNext", "Current", "Dispose", "DisposeAsync"})
_AWAIT_FOREACH = frozenset({"GetAsyncEnumerator", "MoveNextAsync", "Current", "DisposeAsync"})
_USING = frozenset({"Dispose", "DisposeAsync"})
_AWAIT = frozenset({"GetAwaiter", "IsCompleted", "GetResult", "OnCompleted", "UnsafeOnCompleted"})
_INTERPOLATED = frozenset({"AppendLiteral", "AppendFormatted"})
_ALWAYS_ATTRIBUTES = frozenset(
    {
        "SetUpFixture", "ModuleInitializer", "AssemblyInitialize", "AssemblyCleanup",
        "GlobalTestInitialize", "GlobalTestCleanup", "CollectionDefinition",
        "AssemblyFixture", "Before", "After", "BeforeEvery", "AfterEvery",
    }
)  # fmt: skip
_ASSEMBLY_REFLECTION = frozenset(
    {
        "GetTypes", "GetExportedTypes", "GetAssemblies", "DefinedTypes", "ExportedTypes",
        "CreateInstance", "CreateInstanceFrom", "CreateInstanceAndUnwrap", "LoadFrom",
        "LoadFile", "LoadAssemblyFromPath", "GetReferencedAssemblies", "Activator",
    }
)  # fmt: skip
_MEMBER_REFLECTION = frozenset(
    {
        "GetMethods", "GetMethod", "GetProperties", "GetProperty", "GetFields", "GetField",
        "GetMembers", "GetMember", "GetEvents", "GetEvent", "GetNestedTypes",
        "GetNestedType", "GetConstructors", "GetConstructor", "InvokeMember",
        "GetRuntimeMethods", "GetRuntimeMethod", "GetRuntimeProperties",
        "GetRuntimeProperty", "GetRuntimeFields", "GetRuntimeField", "GetRuntimeEvents",
        "GetDeclaredMethods", "GetDeclaredMethod", "GetDeclaredProperty",
        "GetDeclaredField", "GetDeclaredNestedType", "DeclaredMethods",
        "DeclaredProperties", "DeclaredFields", "DeclaredMembers", "DeclaredNestedTypes",
        "DeclaredConstructors", "DeclaredEvents",
    }
)  # fmt: skip
_MODIFIERS = frozenset(
    {
        "public", "private", "protected", "internal", "static", "readonly", "const",
        "volatile", "virtual", "override", "abstract", "sealed", "extern", "unsafe", "new",
        "async", "partial", "required", "file", "fixed", "scoped",
    }
)  # fmt: skip
_TYPE_KEYWORDS = frozenset({"class", "struct", "interface", "enum", "record"})
_ACCESS = frozenset({"public", "internal", "protected"})
_LOADERS = ("Assembly", "AssemblyLoadContext")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
_COLLECTION_BEFORE = frozenset({"=", "(", ",", "return", "=>", "??", "?", ":", "in", "yield"})

_IDENTIFIER = re.compile(r"@?[^\W\d]\w*")
_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")
_NUMBER = re.compile(r"\d\w*(?:\.\d\w*)?")
_OPERATORS = ("=>", "==", "!=", "<=", "..", "::", "??", "?.", "&&", "||", "++", "--", "->")
_CHAR = re.compile(r"'(?:[^'\\\n]|\\[^\n]{1,9})'")
_STRING_START = re.compile(r'(\$+@?|@\$+|@)?("+)')


@dataclass(frozen=True)
class Token:
    kind: str  # "id", "str" (`"` and a string's text, or `'`), "num", "op"
    text: str


@dataclass(frozen=True)
class CSharpFile:
    uses: frozenset[str]
    keys: frozenset[str]
    assembly_reflection: bool = False
    member_reflection: bool = False
    typeof: frozenset[str] = frozenset()  # the types named by `typeof(...)`


@lru_cache(maxsize=4096)
def scan_csharp(source: str) -> CSharpFile:
    """What `source` names and declares (module doc)."""
    lexer = _Lexer(source)
    tokens = lexer.tokens()
    uses = _uses(tokens)
    if lexer.interpolated:
        uses |= _INTERPOLATED
    names = {t.text for t in tokens if t.kind == "id"}
    parser = _Parser(tokens)
    keys = parser.keys()
    # A partial type's private members are named only by its own parts (`T::member` keys),
    # and every part of it runs its static initialiser.
    uses |= {f"{owner}::{name}" for owner in parser.partial_types for name in names}
    uses |= {f"{owner}::{STATIC_INIT}" for owner in parser.partial_types}
    return CSharpFile(
        uses=frozenset(uses),
        keys=frozenset(keys),
        assembly_reflection=bool(names & _ASSEMBLY_REFLECTION) or _loads_types(tokens),
        member_reflection=bool(names & _MEMBER_REFLECTION),
        typeof=frozenset(_typeof_names(tokens)),
    )


def _typeof_names(tokens: list[Token]) -> set[str]:
    """`typeof(Ns.Outer.Name<T>)`: `Name` (a static class is reflected over only so)."""
    found: set[str] = set()
    for index, token in enumerate(tokens):
        if token.text != "typeof" or tokens[index + 1 : index + 2] == []:
            continue
        last = ""
        for inner in tokens[index + 2 :]:
            if inner.kind == "id":
                last = inner.text
            elif inner.text != ".":
                break
        if last:
            found.add(last)
    return found


def declared(source: str) -> frozenset[str]:
    """What a file declares (`Target.declared`)."""
    return scan_csharp(source).keys


class _Lexer:
    """Tokens of C# code: comments, preprocessor lines and strings' text left out (a
    string's text is kept as one "str" token), an interpolated string's holes lexed as code.
    Unclosed, a comment or string runs to the end of the text."""

    def __init__(self, source: str) -> None:
        self.text = source
        self.at = 0
        self.interpolated = False

    def tokens(self, hole: str = "") -> list[Token]:
        """Up to the end, or (`hole`: the braces that close it) to the end of a hole."""
        found: list[Token] = []
        text, depth = self.text, 0
        while self.at < len(text):
            char = text[self.at]
            if char.isspace() or char == "\ufeff":  # a byte order mark too
                self.at += 1
            elif text.startswith("//", self.at):
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                self.at = len(text) if end < 0 else end + 2
            elif char == "#" and self._line_start():
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif char == "'" and (match := _CHAR.match(text, self.at)):
                found.append(Token("str", "'"))
                self.at = match.end()
            elif (start := _STRING_START.match(text, self.at)) is not None:
                found += self._string(start)
            elif hole and char == "}" and depth == 0:
                if text.startswith(hole, self.at):
                    self.at += len(hole)
                    return found
                self.at += 1
            elif match := _IDENTIFIER.match(text, self.at):
                found.append(Token("id", match.group().removeprefix("@")))
                self.at = match.end()
            elif match := _NUMBER.match(text, self.at):
                found.append(Token("num", match.group()))
                self.at = match.end()
            else:
                two = text[self.at : self.at + 2]
                op = two if two in _OPERATORS else char
                depth += (op == "{") - (op == "}")
                found.append(Token("op", op))
                self.at += len(op)
        return found

    def _line_start(self) -> bool:
        line = self.text.rfind("\n", 0, self.at) + 1
        return not self.text[line : self.at].replace("\ufeff", "").strip()

    def _string(self, start: re.Match[str]) -> list[Token]:
        prefix, quotes = start.group(1) or "", start.group(2)
        dollars = prefix.count("$")
        verbatim = "@" in prefix
        if verbatim or len(quotes) == 1:  # `@"a""b"` opens with its first quote
            self.at = start.start(2) + 1
            raw = False
        elif len(quotes) == 2:  # an empty string
            self.at = start.end()
            return [Token("str", '"')]
        else:  # a raw string: as many quotes close it
            self.at = start.end()
            raw = True
        close = quotes if raw else '"'
        found: list[Token] = []
        text, pieces = self.text, []
        if dollars:
            self.interpolated = True
        opener = "{" * max(dollars, 1)
        while self.at < len(text):
            char = text[self.at]
            if not raw and not verbatim and char == "\\":
                pieces.append(text[self.at : self.at + 2])
                self.at += 2
            elif not raw and not verbatim and char == "\n":
                break  # an unclosed regular string ends with its line
            elif text.startswith(close, self.at):
                if verbatim and not raw and text.startswith('""', self.at):
                    pieces.append('"')
                    self.at += 2
                    continue
                self.at += len(close)
                break
            elif dollars and text.startswith(opener, self.at):
                if not raw and text.startswith("{{", self.at):
                    pieces.append("{")
                    self.at += 2
                    continue
                self.at += len(opener)
                while self.at < len(text) and text[self.at] == "{":  # raw: literal braces
                    self.at += 1
                found += self.tokens(hole="}" * max(dollars, 1) if raw else "}")
            else:
                pieces.append(char)
                self.at += 1
        return [Token("str", '"' + "".join(pieces)), *found]


def _uses(tokens: list[Token]) -> set[str]:
    """The names a file's code uses, and those the compiler calls for it (module doc)."""
    uses: set[str] = set()
    count = len(tokens)
    for index, token in enumerate(tokens):
        text = token.text
        after = tokens[index + 1].text if index + 1 < count else ""
        before = tokens[index - 1].text if index else ""
        if token.kind == "str":
            if _DOTTED.fullmatch(text[1:]):
                uses.update(text[1:].split("."))
            continue
        if token.kind == "id":
            uses.add(text)
            if text == "foreach":
                uses |= _AWAIT_FOREACH if before == "await" else _FOREACH
            elif text == "using" and (
                after in ("(", "var") or before == "await" or _typed(tokens, index)
            ):
                uses |= _USING
            elif text == "await":
                uses |= _AWAIT
            elif text == "from" and _query(tokens, index):
                uses |= _QUERY
            elif text == "new" and after != "{" and _collection_initialiser(tokens, index):
                uses.add("Add")
            elif text == "fixed":
                uses.add("GetPinnableReference")
            elif text in ("is", "case", "switch") or (text == "var" and after == "("):
                uses.add("Deconstruct")
        elif text == "[" and before in _COLLECTION_BEFORE:
            uses.add("Add")  # a collection expression (or an attribute of a parameter)
        elif text == "=" and after == "{":
            uses.add("Add")  # `Items = { 1, 2 }`, `int[] a = { 1 }`
        elif text == ")" and after == "=":
            uses.add("Deconstruct")  # `(a, b) = pair`
    return uses


def _typed(tokens: list[Token], index: int) -> bool:
    """`using Lock l = ...`: a using declaration with its type (not a directive)."""
    rest = tokens[index + 1 : index + 3]
    return len(rest) == 2 and rest[0].kind == "id" and rest[1].kind == "id"


def _query(tokens: list[Token], index: int) -> bool:
    """`from x in` or `from T x in`: a query expression."""
    following = [t.text for t in tokens[index + 1 : index + 8]]
    return "in" in following[1:]


def _collection_initialiser(tokens: list[Token], index: int) -> bool:
    """`new T(...) { a, b }` or `new T { {k, v} }`, not an object initialiser (`{ P = 1 }`),
    an array's (`new[] { }`) nor an anonymous type's."""
    at, count, array = index + 1, len(tokens), False
    depth = 0
    while at < count:
        text = tokens[at].text
        if text in ("<", "(", "["):
            array = array or (text == "[" and depth == 0)
            depth += 1
        elif text in (">", ")", "]"):
            depth -= 1
        elif depth == 0 and not (tokens[at].kind == "id" or text in (".", "::", "?")):
            break
        at += 1
    if at >= count or tokens[at].text != "{" or array:
        return False
    first = tokens[at + 1 : at + 3]
    if not first or first[0].text == "}":
        return False
    return not (len(first) == 2 and first[0].kind == "id" and first[1].text == "=")


def _loads_types(tokens: list[Token]) -> bool:
    """`Type.GetType(name)`, `assembly.GetType(name)`, `Assembly.Load(...)`: a type found by
    a name built at run time (`obj.GetType()` is not)."""
    for index, token in enumerate(tokens[:-2]):
        after = tokens[index + 1].text, tokens[index + 2].text
        if token.text == "GetType" and after[0] == "(" and after[1] != ")":
            return True
        loader = tokens[index - 2].text if index >= 2 else ""
        if token.text == "Load" and tokens[index - 1].text == "." and loader in _LOADERS:
            return True
    return False


@dataclass
class _Type:
    name: str
    kind: str
    partial: bool
    static: bool
    implicit: bool = False  # runs or binds without a member being named (module doc)
    runs_unnamed: bool = False  # a static part's initialiser, static ctor or attribute
    # A static constructor or static initialiser: runs when any member is first used, an
    # extension method too, whether or not this part says `static`.
    static_init: bool = False
    extension: bool = False  # has extension methods
    attributed: bool = False  # an attribute on the type
    members: set[str] = field(default_factory=set)
    hidden: set[str] = field(default_factory=set)  # private members: only the type's code
    private: bool = False  # a nested type with no access modifier
    # Inside a type that is not partial (at any depth): reachable from other files only
    # through that type's name (`Outer.Inner`, a base list, `using static`).
    enclosed: bool = False


def _declarations(tokens: list[Token]) -> int:
    """How many type declarations the tokens show: a type keyword before a name (not
    `where T : class, new()`), `record class X`, and `delegate T X(` (not an anonymous
    method's `delegate (` or `delegate {`)."""
    count = 0
    for index, token in enumerate(tokens[:-1]):
        after = tokens[index + 1]
        if token.kind != "id" or after.kind != "id":
            if token.text == "delegate" and after.text not in ("(", "{"):
                count += 1
            continue
        recorded = token.text in ("class", "struct") and tokens[index - 1].text == "record"
        if (token.text in _TYPE_KEYWORDS and not (index and recorded)) or token.text == "delegate":
            count += 1
    return count


def _parameters(header: list[Token]) -> int | None:
    """The index of a method's parameter list in its header: the first `(` outside
    brackets that follows a name or type parameters (a tuple return type's does not)."""
    depth = 0
    for index, token in enumerate(header):
        if token.kind != "op":
            continue
        named = index and (header[index - 1].kind == "id" or header[index - 1].text == ">")
        if token.text == "(" and depth == 0 and named:
            return index
        if token.text in ("(", "[", "<"):
            depth += 1
        elif token.text in (")", "]", ">"):
            depth = max(depth - 1, 0)
    return None


class _Unreadable(Exception):
    """The braces do not balance: what the file declares is not known."""


class _Parser:
    """The declarations of a file: namespaces, types and their members (bodies skipped)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.found: set[str] = set()
        self.always = False
        self.metadata = False  # `[assembly: ...]` attributes that only describe it
        self.partial = False
        self.types = 0  # type declarations parsed
        self.partial_types: set[str] = set()  # the names of the partial types it holds

    def keys(self) -> set[str]:
        """What the file declares; `ALWAYS` alone when the parse went astray: the braces do
        not balance, or it did not meet every type declaration the tokens show (each
        `class X`, `enum X`, `delegate T X(` ...: no type is declared inside a body)."""
        try:
            self._scope(None)
            if self.at < len(self.tokens) or self.types != _declarations(self.tokens):
                raise _Unreadable
        except (_Unreadable, IndexError):
            return {ALWAYS}
        return (
            self.found
            | ({ALWAYS} if self.always else set())
            | ({PARTIAL} if self.partial else set())
            | ({METADATA} if self.metadata and not self.always else set())
        )

    def _text(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.tokens[at].text if at < len(self.tokens) else ""

    def _kind(self, offset: int = 0) -> str:
        at = self.at + offset
        return self.tokens[at].kind if at < len(self.tokens) else ""

    def _scope(self, owner: _Type | None, namespace: bool = False) -> None:
        """Declarations up to the `}` closing the scope (left for the caller) or the end;
        `namespace`: inside a namespace's braces, where no statement stands."""
        while self.at < len(self.tokens):
            text = self._text()
            if text == "}" and self._kind() == "op":
                return
            if text == ";":
                self.at += 1
                continue
            start = self.at
            self._declaration(owner, namespace)
            if self.at == start:  # nothing consumed: never loop
                self.at += 1

    def _attributes(self) -> bool:
        """Skip `[...]` groups; whether there was one. `[assembly: ...]` and the attributes
        that run for every test (module doc) make the file count always."""
        had = False
        while self._text() == "[" and self._kind() == "op":
            end = self._matching(self.at)
            inside = self.tokens[self.at + 1 : end]
            targets = [t.text for t in inside[:2]]
            names = {t.text.removesuffix("Attribute") for t in inside if t.kind == "id"}
            if targets in (["assembly", ":"], ["module", ":"]):
                described = names - {"assembly", "module"} <= _METADATA_ATTRIBUTES
                if described and targets[0] == "assembly":
                    self.metadata = True
                else:
                    self.always = True
            if names & _ALWAYS_ATTRIBUTES:
                self.always = True
            self.at = end + 1
            had = True
        return had

    def _declaration(self, owner: _Type | None, namespace: bool = False) -> None:
        attributed = self._attributes()
        modifiers: set[str] = set()
        while self._kind() == "id" and self._text() in _MODIFIERS and self._text(1) != "(":
            modifiers.add(self._text())
            self.at += 1
        head = self._text()
        if owner is None and head in ("using", "extern", "global"):
            if head == "global" and self._text(1) == "using":
                self.always = True
            self._skip_statement()
            return
        if head == "namespace":
            while self._text() not in ("{", ";", ""):
                self.at += 1
            if self._text() == "{":
                self.at += 1
                self._scope(None, namespace=True)
                self._close()
            else:
                self.at += 1
            return
        kind = head
        if head == "record" and self._text(1) in ("class", "struct"):
            self.at += 1
            kind = "record"
        if kind in _TYPE_KEYWORDS and self._kind(1) == "id" and self._kind() == "id":
            self._type(kind, modifiers, attributed, owner)
            return
        if head == "delegate" and self._text(1) not in ("(", "{"):
            self.at += 1
            self.types += 1
            name = self._name_before_paren()
            if not name:
                raise _Unreadable
            self.found.add(name)
            self._skip_statement()
            return
        if owner is None:
            if attributed and not modifiers and head in ("", "}"):
                return  # `[assembly: X]` alone
            if namespace:
                raise _Unreadable  # no statement stands in a namespace
            self.found.add("Program")  # top-level statements
            self._skip_statement()
            return
        self._member(owner, modifiers, attributed)

    def _type(self, kind: str, modifiers: set[str], attributed: bool, owner: _Type | None) -> None:
        self.at += 1
        self.types += 1
        info = _Type(
            name=self._text(),
            kind=kind,
            partial="partial" in modifiers,
            static="static" in modifiers,
            implicit=attributed or kind == "record",
            enclosed=owner is not None and (not owner.partial or owner.enclosed),
            private=not modifiers & _ACCESS,
        )
        info.runs_unnamed = info.attributed = attributed
        self.at += 1
        depth, constrained = 0, False
        while self._text() not in ("{", ";") or depth:
            text = self._text()
            if text == "":
                raise _Unreadable
            if text in ("(", "["):
                if depth == 0 and text == "(":
                    info.implicit = True  # a primary constructor
                depth += 1
            elif text in (")", "]"):
                depth -= 1
            elif text == "where":
                constrained = True
            elif text == ":" and depth == 0 and not constrained:
                info.implicit = True  # a base list
            self.at += 1
        if kind == "enum":
            self.found.add(info.name)
            self._skip_block_or_statement()
            return
        if self._text() == "{":
            self.at += 1
            self._scope(info)
            self._close()
        else:
            self.at += 1
        self._finish(info, owner)

    def _finish(self, info: _Type, owner: _Type | None) -> None:
        name = info.name
        names = {name, name.removesuffix("Attribute")} if name != "Attribute" else {name}
        if owner is not None and owner.partial:
            (owner.hidden if info.private else owner.members).add(name)
        if info.partial:
            # Reflection over members reaches an instance's type (`GetType()`, `typeof(T)`);
            # a static class has no instance nor can it be a type argument: only code that
            # names it reflects over it.
            if info.static:
                self.found.add(f"{name}::{PARTIAL}")
            else:
                self.partial = True
            self.partial_types.add(name)
        if info.enclosed:
            return  # the enclosing type's name counts the file
        if not info.partial:
            self.found |= names
            if info.static or info.extension:
                self.found |= info.members
            return
        self.found |= info.members
        self.found |= {f"{name}::{member}" for member in info.hidden}
        unexplained = info.runs_unnamed and not info.static_init
        if (info.static or info.extension) and (info.attributed or unexplained):
            self.always = True  # an attribute on the type: runs however its members are used
        if info.static_init:
            # The type's static initialiser runs when any member of it is first used, by an
            # extension-method call that never names the type too: with any part counted.
            self.found.add(f"{name}::{STATIC_INIT}")
        if info.implicit and not info.static:
            self.found |= names

    def _member(self, owner: _Type, modifiers: set[str], attributed: bool) -> None:
        # A public instance member may implement an interface another part lists, and
        # library code reads public instance members by reflection (serialisers,
        # equivalence assertions): the type's name counts it.
        public = "public" in modifiers and "static" not in modifiers and "const" not in modifiers
        if attributed or "override" in modifiers or public:
            owner.implicit = True
        if owner.kind == "interface":
            owner.implicit = True
        if self._text() == "extension" and self._text(1) == "(":
            # A C# 14 extension block: its members are the class's extension members.
            self.at = self._matching(self.at + 1) + 1
            while self._text() not in ("{", ""):
                self.at += 1
            self.at += 1
            block = _Type(owner.name, owner.kind, partial=True, static=True)
            self._scope(block)
            self._close()
            owner.members |= block.members | block.hidden
            owner.extension = True
            return
        header: list[Token] = []
        depth, operator = 0, False
        while True:
            token = self.tokens[self.at]
            text, op = token.text, token.kind == "op"
            if operator:  # `operator <(`, `operator >=(`: to its parameters
                operator = not (op and text == "(")
                depth += not operator
            elif op and depth == 0 and text in ("{", ";", "=>", "="):
                break
            elif text == "operator" and not op:
                operator = True
            elif op and text in ("(", "[", "<"):
                depth += 1
            elif op and text in (")", "]", ">"):
                depth = max(depth - 1, 0)
            elif op and text == "}":
                raise _Unreadable
            header.append(token)
            self.at += 1
        terminator = self._text()
        words = [t.text for t in header]
        if (
            "operator" in words
            or words[:1] == ["~"]
            or words[:2] == [owner.name, "("]
            or any(pair == ("this", "[") for pair in itertools.pairwise(words))
        ):
            owner.implicit = True
            owner.runs_unnamed = owner.runs_unnamed or "static" in modifiers
            owner.static_init = owner.static_init or (
                "static" in modifiers and words[:2] == [owner.name, "("]
            )
        parameters = _parameters(header)
        if parameters is not None and words[parameters + 1 : parameters + 2] == ["this"]:
            owner.extension = True
        names = self._member_names(header)
        if any(self._explicit(header, name) for name in names):
            owner.implicit = True
        hidden = not modifiers & _ACCESS and owner.kind != "interface"
        (owner.hidden if hidden else owner.members).update(names)
        if terminator == "=" and "const" not in modifiers:
            owner.implicit = True
            owner.runs_unnamed = True
            owner.static_init = owner.static_init or "static" in modifiers
        if terminator == "{":
            self._skip_block()
            if self._text() == "=":  # a property's initialiser
                owner.implicit = True
                owner.runs_unnamed = True
                owner.static_init = owner.static_init or "static" in modifiers
                (owner.hidden if hidden else owner.members).update(self._skip_initialiser())
            elif self._text() == ";":
                self.at += 1
        elif terminator in ("=>", "="):
            (owner.hidden if hidden else owner.members).update(self._skip_initialiser())
        else:
            self.at += 1

    def _member_names(self, header: list[Token]) -> set[str]:
        """A method's name (before its parameters and type parameters), or each declarator of
        a field, property or event."""
        words = [t.text for t in header]
        end = _parameters(header)
        if end is not None:
            if end and words[end - 1] == ">":
                depth = 0
                for back in range(end - 1, -1, -1):
                    depth += (words[back] == ">") - (words[back] == "<")
                    if depth == 0:
                        end = back
                        break
            return {words[end - 1]} if end and header[end - 1].kind == "id" else set()
        names: set[str] = set()
        depth = 0
        last = ""
        for token in header:
            if token.text in ("<", "[", "("):
                depth += 1
            elif token.text in (">", "]", ")"):
                depth -= 1
            elif token.text == "," and depth == 0 and last:
                names.add(last)
            elif token.kind == "id" and depth == 0:
                last = token.text
        if last:
            names.add(last)
        return names

    def _explicit(self, header: list[Token], name: str) -> bool:
        """`IComparable<T>.CompareTo(...)`: an explicit interface implementation."""
        for index, token in enumerate(header):
            if token.text == name and index and header[index - 1].text == ".":
                return True
        return False

    def _skip_initialiser(self) -> set[str]:
        """Past `= value;` or `=> body;`: the names of further declarators (`a = 1, b = 2`)."""
        names: set[str] = set()
        depth = 0
        while True:
            text = self._text()
            if text == "":
                raise _Unreadable
            if text in _OPEN and self._kind() == "op":
                depth += 1
            elif text in _CLOSE and self._kind() == "op":
                depth -= 1
                if depth < 0:
                    raise _Unreadable
            elif text == ";" and depth == 0:
                self.at += 1
                return names
            elif text == "," and depth == 0 and self._kind(1) == "id":
                names.add(self._text(1))
            self.at += 1

    def _skip_block(self) -> None:
        self.at = self._matching(self.at) + 1

    def _skip_block_or_statement(self) -> None:
        if self._text() == "{":
            self._skip_block()
            if self._text() == ";":
                self.at += 1
        else:
            self._skip_statement()

    def _skip_statement(self) -> None:
        """Past the next `;` or balanced block at this level."""
        depth = 0
        while self.at < len(self.tokens):
            text, kind = self._text(), self._kind()
            if kind == "op" and text in _OPEN:
                depth += 1
            elif kind == "op" and text in _CLOSE:
                depth -= 1
                if depth < 0:
                    return  # the enclosing scope's `}`
                if depth == 0 and text == "}":
                    self.at += 1
                    return
            elif text == ";" and depth == 0:
                self.at += 1
                return
            self.at += 1

    def _close(self) -> None:
        if self._text() != "}":
            raise _Unreadable
        self.at += 1

    def _matching(self, at: int) -> int:
        """The index of the bracket closing the one at `at`."""
        depth = 0
        for index in range(at, len(self.tokens)):
            token = self.tokens[index]
            if token.kind != "op":
                continue
            if token.text in _OPEN:
                depth += 1
            elif token.text in _CLOSE:
                depth -= 1
                if depth == 0:
                    return index
        raise _Unreadable

    def _name_before_paren(self) -> str:
        """A delegate's name: before its parameters and type parameters (`delegate
        IResult<T> Parser<T>(IInput input)` is `Parser`)."""
        header: list[Token] = []
        at = self.at
        while at < len(self.tokens) and self.tokens[at].text != ";":
            header.append(self.tokens[at])
            at += 1
        names = self._member_names(header)
        return next(iter(names)) if len(names) == 1 else ""
