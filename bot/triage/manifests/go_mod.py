"""go.mod, read as the go command's grammar has it: directives (`module`, `go`, `require`,
`replace`, ...) one a line, or in a `verb ( ... )` block of one entry a line; `//` comments
to the end of the line; arguments bare or quoted ("..." or `...`).

Inert: a `require` whose version changed, came or went (an `// indirect` mark is a
comment), `toolchain` (which go command builds: like a dependency's version, it can break
any test but not change which file an import finds) and `retract` (read by the module's
users, never by its own build). A `require` counts when the walk found an import of that
module in the repository (a module of the repository used at a version rather than from
its folder: the version says which of its files the test compiles with), or when a
`replace` names the module with a version on its left (a new required version may leave
it). Every other directive counts: `module`, `go` (the language version: loop variables
are per iteration from 1.22), `godebug`, `replace`, `exclude`, `tool`, `ignore`, and any
this grammar does not know.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from bot.triage.manifests.wording import its

_INERT = ("require", "retract", "toolchain")  # in the order the evidence names them
_TOKEN = re.compile(
    r"(?P<space>[ \t\r]+)"
    r"|(?P<comment>//[^\n]*)"
    r'|(?P<quoted>"(?:[^"\\\n]|\\.)*"|`[^`\n]*`)'
    r"|(?P<punct>=>|[()\[\],{}])"
    r"|(?P<word>(?:[^\s()\[\],{}\"`/=]|/(?!/)|=(?!>))+)"
    r"|(?P<other>.)"
)


@dataclass
class GoMod:
    """Each directive's entries, as argument tuples; `require` as module -> version."""

    requires: dict[str, str] = field(default_factory=dict)
    others: dict[str, Counter[tuple[str, ...]]] = field(default_factory=dict)

    def entries(self, verb: str) -> Counter[tuple[str, ...]]:
        return self.others.get(verb, Counter())

    def replaced(self) -> tuple[set[str], set[str]]:
        """The modules `replace`d whatever their version, and those replaced at a version."""
        every: set[str] = set()
        versioned: set[str] = set()
        for args in self.entries("replace"):
            arrow = args.index("=>")
            (versioned if arrow == 2 else every).add(args[0])
        return every, versioned


def parse(text: str) -> GoMod | None:
    """The directives of a go.mod; None when a line is not of the grammar's shape."""
    found = GoMod()
    block: str | None = None
    for line in text.split("\n"):
        tokens = _tokens(line)
        if tokens is None:
            return None
        if not tokens:
            continue
        if block is not None:
            if tokens == [")"]:
                block = None
            elif not _add(found, block, tokens):
                return None
        elif tokens[1:] == ["("]:
            block = tokens[0]
        elif tokens[1:] == ["(", ")"]:
            continue
        elif len(tokens) < 2 or not _add(found, tokens[0], tokens[1:]):
            return None
    return found if block is None else None


def _tokens(line: str) -> list[str] | None:
    """The line's tokens without its comment, quoted ones unquoted (`"a/b"` is `a/b`, as
    the go command reads it); None for a character the grammar does not allow where it is
    (a `//` inside a word may be part of it, not a comment)."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        if kind == "comment":
            glued = match.start() > 0 and not line[match.start() - 1].isspace()
            if glued and line[match.start() - 1] not in "()":
                return None
            break
        if kind == "other":
            return None
        if kind == "quoted":
            quoted = match.group()[1:-1]
            if "\\" in quoted:  # an escape: what it spells is not worth telling
                return None
            tokens.append(quoted)
        elif kind != "space":
            tokens.append(match.group())
    return tokens


def _add(found: GoMod, verb: str, args: list[str]) -> bool:
    if not verb[:1].isalpha() or any(arg == "(" or arg == ")" for arg in args):
        return False
    if verb == "require":
        if len(args) != 2 or args[0] in found.requires:
            return False
        found.requires[args[0]] = args[1]
        return True
    if verb == "replace" and ("=>" not in args or args.index("=>") not in (1, 2)):
        return False
    found.others.setdefault(verb, Counter())[tuple(args)] += 1
    return True


def inert(before: str, after: str, imports: Collection[str] | None) -> str | None:
    """The directives that changed ("its require directive") when none of them can change
    what the test compiles (module doc); None when one can, or a version does not parse.
    `imports`: the import paths the walks found in the repository; None (unknown): every
    changed `require` counts."""
    old, new = parse(before), parse(after)
    if old is None or new is None:
        return None
    verbs = old.others.keys() | new.others.keys()
    if any(old.entries(verb) != new.entries(verb) for verb in verbs if verb not in _INERT):
        return None
    every, versioned = old.replaced()
    modules = old.requires.keys() | new.requires.keys()
    for module in (m for m in modules if old.requires.get(m) != new.requires.get(m)):
        if module in versioned or (module not in every and _imported(module, imports)):
            return None
    changed = ["require"] if old.requires != new.requires else []
    changed += [verb for verb in _INERT[1:] if old.entries(verb) != new.entries(verb)]
    return its(changed, "directive")


def _imported(module: str, imports: Collection[str] | None) -> bool:
    if imports is None:
        return True
    return any(path == module or path.startswith(module + "/") for path in imports)
