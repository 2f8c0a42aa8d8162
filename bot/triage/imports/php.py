r"""PHP: the classes and files a test uses, read with a small tokenizer (never run), found
where composer's autoloader would find them.

Classes are found by name, as composer does: PSR-4 and PSR-0 prefixes from the `autoload`
and `autoload-dev` sections of every `composer.json` from the test's folder up to the
repository root (paths relative to each file's folder). The names a file uses are its `use`
imports (grouped `use A\{B, C}` and aliases included), the names it writes fully qualified
(`\App\Models\User`), through an alias, or bare in its own namespace (a class of the
test's namespace needs no `use`, like Java's same package), and fully qualified names in
strings (a class instantiated by name). A class no autoload rule places is looked for by the
file's own place (`_beside`: a test suite its phpunit bootstrap autoloads keeps a class of
the test's namespace in the test's folder). A class the file loads (`extends`,
`implements`, `new`, `X::`, a trait's `use`) that is the repository's (`_ours`) and found
nowhere is `Unresolved`: the walk is partial. `require`/`include` (and their `_once` forms)
with a literal path, `__DIR__ . "/x.php"` or `dirname(__DIR__) . "/x.php"` are followed too;
a `__DIR__`-relative one that names no file of the tree (outside composer's `vendor/`) is
`Unresolved`.

A class named in a string inside a function declared outside any class (FastRoute's
`simpleDispatcher()` names its default dispatcher, `'FastRoute\Dispatcher\GroupCountBased'`)
is used only when the function runs: it waits until a file the test reaches names the
function (`Target.when`; `calls_of`: a call, a `use function`, a string holding its name; not
`function_exists('...')`, which calls nothing). A method's strings count always.

What runs for a test besides what it uses: phpunit's `bootstrap` file (the nearest
`phpunit.xml`, else `phpunit.xml.dist`) and composer's `autoload.files`. Not followed:
`classmap` autoloading (a class found there only by reading every file of the folders),
`use function`/`use const`, and names built at run time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.shared import Tree
from bot.triage.imports.language import ANYWHERE, Calls, Start, Target, Unplaced, Unresolved
from bot.triage.imports.paths import ancestors, join, parent, resolved

COMPOSER = "composer.json"
PHPUNIT = ("phpunit.xml", "phpunit.xml.dist")
_INCLUDES = frozenset({"require", "require_once", "include", "include_once"})
_NOT_CLASSES = frozenset({"namespace", "function", "const", "use", "as", "new", "class"})
_SELF = frozenset({"self", "parent", "static"})
_LOADS_NEXT = frozenset({"extends", "implements", "new"})  # the class named next is loaded
_DECLARES = frozenset({"class", "interface", "trait", "enum"})
_WORD = re.compile(r"[A-Za-z_]\w*")
_CLASS_STRING = re.compile(r"\\?[A-Za-z_]\w*(?:\\[A-Za-z_]\w*)+")

# Unclosed, a comment or heredoc runs to the end and a string to the end of its line (ruby.py
# says why: one pass over the file, whatever it holds).
_TOKEN = re.compile(
    r"(?P<heredoc><<<[ \t]*(?P<q>['\"]?)(?P<label>\w+)(?P=q)\n.*?(?:\n[ \t]*(?P=label)\b|\Z))"
    r"|(?P<comment>//[^\n]*|#(?!\[)[^\n]*|/\*.*?(?:\*/|\Z))"
    r"|'(?P<single>(?:[^'\\\n]|\\.)*+)(?:'|$|\\)"
    r'|"(?P<double>(?:[^"\\\n]|\\.)*+)(?:"|$|\\)'
    r"|(?P<variable>\$\w+)"
    r"|(?P<name>\\?[A-Za-z_]\w*(?:\\[A-Za-z_]\w*)*)"
    r"|(?P<arrow>->|::|\?->)"
    r"|(?P<other>\S)",
    re.DOTALL | re.MULTILINE,
)
_BOOTSTRAP = re.compile(
    r"<phpunit\b[^>]{0,4000}?\bbootstrap\s*=\s*([\"'])(?P<path>[^\"']+)\1", re.DOTALL
)


@dataclass(frozen=True)
class Autoload:
    """composer's autoload rules: (namespace prefix, folder) pairs, longest prefix first."""

    psr4: tuple[tuple[str, str], ...] = ()
    psr0: tuple[tuple[str, str], ...] = ()
    files: tuple[str, ...] = ()


def autoload_of(path: str, text: str) -> Autoload:
    """The rules of one `composer.json` at `path`; none when it does not parse."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return Autoload()
    base = parent(path)
    psr4: list[tuple[str, str]] = []
    psr0: list[tuple[str, str]] = []
    files: list[str] = []
    for section in ("autoload", "autoload-dev"):
        rules = data.get(section) if isinstance(data, dict) else None
        if not isinstance(rules, dict):
            continue
        psr4 += _prefixes(rules.get("psr-4"), base)
        psr0 += _prefixes(rules.get("psr-0"), base)
        listed = rules.get("files")
        files += [
            found
            for name in (listed if isinstance(listed, list) else [])
            if isinstance(name, str) and (found := resolved(join(base, name))) is not None
        ]
    return Autoload(tuple(psr4), tuple(psr0), tuple(files))


def _prefixes(rules: object, base: str) -> list[tuple[str, str]]:
    if not isinstance(rules, dict):
        return []
    found: list[tuple[str, str]] = []
    for prefix, folders in rules.items():
        for folder in folders if isinstance(folders, list) else [folders]:
            where = resolved(join(base, folder)) if isinstance(folder, str) else None
            if isinstance(prefix, str) and where is not None:
                found.append((prefix.lstrip("\\"), where))
    return found


@dataclass
class Names:
    """What one PHP file names: its namespace, its `use` aliases (lower-cased alias to
    the full name), every class name it writes, and its includes (folder, path). Of the
    names written, `loaded` are those whose class PHP loads when the line runs (`extends`,
    `implements`, `new`, `X::`, a trait's `use`); `declared` the classes the file itself
    declares; `strings` the fully qualified class names it writes in string literals
    (`'App\\Dispatcher\\GroupCountBased'`, instantiated by name at run time)."""

    namespace: str = ""
    aliases: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    includes: list[tuple[str | None, str]] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)
    strings: list[tuple[str, str]] = field(default_factory=list)


def _tokens(source: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "other"
        if kind in ("comment", "heredoc"):
            continue
        if kind in ("single", "double"):
            found.append(("string", match.group(kind)))
        else:
            found.append((kind, match.group(kind)))
    return found


def names_of(source: str, folder: str) -> Names:
    """The names and includes of a PHP file in `folder` (module doc)."""
    tokens = _tokens(source)
    names = Names()
    index, depth, listing = 0, 0, False
    outside = 0  # the brace depth outside classes: 1 inside `namespace X { ... }`
    scopes = _Scopes()
    while index < len(tokens):
        kind, text = tokens[index]
        previous = tokens[index - 1] if index else ("other", ";")
        word = text.lower()
        if kind == "name" and word == "namespace" and _next(tokens, index, "name"):
            names.namespace = tokens[index + 1][1].lstrip("\\")
            outside = depth + 1 if tokens[index + 2 : index + 3] == [("other", "{")] else depth
            index += 2
            continue
        if kind == "name" and word == "use" and _next(tokens, index, "name"):
            index = _use(tokens, index + 1, names, in_class=depth > outside)
            continue
        if kind == "name" and word in _INCLUDES:
            include = _include(tokens[index + 1 : index + 12], folder)
            if include is not None:
                names.includes.append(include)
        elif kind == "name" and previous[0] != "arrow" and word not in _NOT_CLASSES:
            names.written.append(text)
            _classify(names, text, previous[1].lower(), listing, tokens[index + 1 : index + 2])
        elif kind == "string" and _CLASS_STRING.fullmatch(unescaped := text.replace("\\\\", "\\")):
            names.strings.append(("\\" + unescaped.lstrip("\\"), scopes.function))
        scopes.see(kind, word, previous, tokens[index + 1 : index + 2], depth)
        listing = word in ("extends", "implements") or (listing and text not in ("{", ";"))
        depth += (text == "{") - (text == "}") if kind == "other" else 0
        index += 1
    return names


@dataclass
class _Scopes:
    """Which function declared outside any class (`function simpleDispatcher() {`) the
    scanner is in: a string there is used only when the function runs. A method, or a
    function declared inside one, is not told apart (its strings count always)."""

    classes: list[int] = field(default_factory=list)  # the depth each class body opens at
    declaring: str = ""  # a declaration read up to its body: "class" or the function's name
    function: str = ""
    body: int = -1  # the depth the function's body opens at

    def see(
        self,
        kind: str,
        word: str,
        previous: tuple[str, str],
        after: list[tuple[str, str]],
        depth: int,
    ) -> None:
        """Take in one token, at the brace depth before it."""
        if kind == "name" and word in _DECLARES and previous[0] != "arrow":
            self.declaring = "class"
        elif kind == "name" and word == "function" and not self.classes and not self.function:
            named = after[:1] if after[:1] and after[0][0] == "name" else []
            self.declaring = named[0][1].lower() if named else ""
        elif word == ";":
            self.declaring = ""
        elif word == "{" and self.declaring:
            if self.declaring == "class":
                self.classes.append(depth + 1)
            else:
                self.function, self.body = self.declaring, depth + 1
            self.declaring = ""
        elif word == "}":
            if self.classes and depth == self.classes[-1]:
                self.classes.pop()
            if self.function and depth == self.body:
                self.function, self.body = "", -1


def calls_of(source: str) -> Calls:
    """The functions a PHP file names, lower-cased as PHP compares them: every name written
    (its last part), but the one a `function` declares, and every word of its strings and
    heredocs (a callable named by a string, `'FastRoute\\simpleDispatcher'`), but the
    string `function_exists` checks, which calls nothing."""
    found: set[str] = set()
    before: list[str] = ["", ""]  # the two significant tokens before, lower-cased
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup or "other"
        text = match.group(kind)
        if kind == "name" and before[-1] != "function":
            found.add(text.rpartition("\\")[2].lower())
        elif kind in ("single", "double", "heredoc") and before != ["function_exists", "("]:
            found.update(word.lower() for word in _WORD.findall(text))
        if kind != "comment":
            before = [before[-1], text.lower()]
    return Calls(frozenset(found))


def _classify(
    names: Names, text: str, before: str, listing: bool, after: list[tuple[str, str]]
) -> None:
    """Whether the name written is a class the line loads, or one the file declares."""
    if before in _DECLARES:
        names.declared.add(text.lower())
    elif text.lower() in _SELF or text.lower() in _LOADS_NEXT:
        return
    elif before in _LOADS_NEXT or listing or (after and after[0][1] == "::"):
        names.loaded.append(text)


def _next(tokens: list[tuple[str, str]], index: int, kind: str) -> bool:
    return index + 1 < len(tokens) and tokens[index + 1][0] == kind


def _use(tokens: list[tuple[str, str]], index: int, names: Names, in_class: bool) -> int:
    """Read one `use` statement from its first name (`in_class`: a trait's, which loads
    it); the index after it."""
    if tokens[index][1].lower() in ("function", "const"):
        while index < len(tokens) and tokens[index][1] != ";":
            index += 1
        return index
    prefix = ""
    while index < len(tokens) and tokens[index][1] not in (";", "{"):
        kind, text = tokens[index]
        if kind == "name" and _group_opens(tokens, index):
            prefix = text.lstrip("\\") + "\\"
            index += 3  # the name, "\" and "{"
            continue
        if kind == "name" and text.lower() != "as":
            full = prefix + text.lstrip("\\")
            alias = full.rpartition("\\")[2]
            if index + 2 < len(tokens) and tokens[index + 1][1].lower() == "as":
                alias = tokens[index + 2][1]
                index += 2
            # `use Helpers;` inside a class is a trait of the file's namespace, or a global one:
            # loaded, and no alias.
            names.written.append(full if "\\" not in full else "\\" + full)
            if in_class:
                names.loaded.append(names.written[-1])
            else:
                names.aliases[alias.lower()] = full
        elif text == "}":
            prefix = ""
        index += 1
    return index


def _group_opens(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the name starts a group: `A\\B\\{` tokenizes as the name, "\\", "{"."""
    following = [text for _, text in tokens[index + 1 : index + 3]]
    return following == ["\\", "{"]


def _include(after: list[tuple[str, str]], folder: str) -> tuple[str | None, str] | None:
    """The (folder it is relative to, path) an include names; None when it is not a
    literal: `'x.php'` (folder None: looked up beside the file, then at the project's
    root), `__DIR__ . '/x.php'`, `dirname(__DIR__, 2) . '/x.php'`."""
    base: str | None = None
    path = ""
    index = 0
    while index < len(after):
        kind, text = after[index]
        if text in (";", ")") or (kind == "other" and text == "?"):
            break
        if kind == "string":
            path += text
        elif text in ("__DIR__", "__FILE__"):
            base = folder
        elif text.lower() == "dirname":
            levels, index = _dirname(after, index)
            if levels is None:
                return None
            base = folder
            for _ in range(levels - 1):
                base = parent(base)
            continue
        elif text not in (".", "("):
            return None
        index += 1
    return (base, path.lstrip("/") if base is not None else path) if path else None


def _dirname(after: list[tuple[str, str]], index: int) -> tuple[int | None, int]:
    """`dirname(__DIR__)` is one level up from the file's folder, `dirname(__FILE__)` the
    folder itself, `dirname(__DIR__, 2)` two levels; the index after the call."""
    words = [text for _, text in after[index : index + 7]]
    if len(words) >= 4 and words[1] == "(" and words[2] in ("__DIR__", "__FILE__"):
        levels = 1 if words[2] == "__DIR__" else 0
        if words[3] == ")":
            return levels + 1, index + 4
        if words[3] == "," and len(words) >= 6 and words[4].isdigit() and words[5] == ")":
            return levels + int(words[4]), index + 6
    return None, index


class Php:
    name = "PHP"
    sources = (".php",)
    configs = (COMPOSER, *PHPUNIT)

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".php")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        names = (COMPOSER, *PHPUNIT)
        candidates = [join(folder, name) for folder in ancestors(test_file) for name in names]
        return [path for path in candidates if path in tree.files]

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """The composer.json (autoload) and phpunit.xml (bootstrap) files from the test's
        folder up."""
        return [path for path in self.config_files(test_file, tree) if path in configs]

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`src/Models/User` for `src/Models/User.php`; None for composer.json and
        phpunit.xml."""
        return None if path.endswith(self.configs) else [path.removesuffix(".php")]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> PhpResolver:
        psr4: list[tuple[str, str]] = []
        psr0: list[tuple[str, str]] = []
        starts: list[Start] = []
        for path in self.config_files(test_file, tree):
            if path in configs and path.endswith(COMPOSER):
                rules = autoload_of(path, configs[path])
                psr4 += rules.psr4
                psr0 += rules.psr0
                starts += [Start(f, f"a file {path} autoloads") for f in rules.files]
        starts[:0] = _bootstrap(test_file, tree, configs)
        roots = [parent(path) for path in configs if path.endswith(COMPOSER)]
        return PhpResolver(
            tree,
            tuple(sorted(psr4, key=lambda rule: -len(rule[0]))),
            tuple(sorted(psr0, key=lambda rule: -len(rule[0]))),
            tuple(dict.fromkeys(roots)),
            tuple(start for start in starts if start.path in tree.files),
            tuple(s.path.removesuffix(".php") for s in starts if s.path not in tree.files),
        )


def _bootstrap(test_file: str, tree: Tree, configs: Mapping[str, str]) -> list[Start]:
    """phpunit's bootstrap: from the nearest folder with a phpunit.xml(.dist), preferring
    phpunit.xml as phpunit does."""
    for folder in ancestors(test_file):
        for name in PHPUNIT:
            path = join(folder, name)
            if path in configs:
                found = _BOOTSTRAP.search(configs[path])
                where = resolved(join(folder, found.group("path"))) if found else None
                return [Start(where, f"phpunit's bootstrap file ({path})")] if where else []
    return []


@dataclass(frozen=True)
class PhpResolver:
    tree: Tree
    psr4: tuple[tuple[str, str], ...]
    psr0: tuple[tuple[str, str], ...]
    roots: tuple[str, ...]  # the folders of the composer.json files: where a run starts
    runs: tuple[Start, ...] = ()
    missing: tuple[str, ...] = ()  # the stems of what would run for the test, not in the tree

    def starts(self) -> Sequence[Start]:
        return self.runs

    def imports(self, path: str, source: str) -> Sequence[Target | Unresolved | Unplaced | Calls]:
        names = names_of(source, parent(path))
        found: list[Target | Unresolved | Unplaced | Calls] = [calls_of(source)]
        placed: set[str] = set()  # the names written that name a class of the tree
        always = [name for name, function in names.strings if not function]
        for written in dict.fromkeys([*names.written, *always]):
            known, first = self._placed(path, written, names)
            if known:
                placed.add(written)
            if first is not None:
                found.append(first)
            if not known:
                found.append(Unplaced(written, _short_names(written)))
        for written, function in names.strings:
            if not function:
                continue
            known, target = self._placed(path, written, names)
            if target is not None and written not in placed:
                found.append(replace(target, when=function))
            if not known:
                found.append(Unplaced(written, _short_names(written)))
        for written in dict.fromkeys(names.loaded):
            meant = _candidates(written, names)[0]
            if written not in placed and self._ours(meant, names):
                found.append(Unresolved(meant))
        for base, included in names.includes:
            file = self._included(path, base, included)
            if file is not None:
                found.append(Target(file, included))
            elif base is not None and "vendor" not in included.split("/"):
                # `__DIR__ . '/x.php'` names a file of the repository (composer's vendor/
                # is installed, not committed); a bare 'x.php' may be on the include_path.
                found.append(Unresolved(included))
            else:
                parts = [p for p in included.split("/") if p not in ("", ".", "..")]
                stem = "/".join(parts).removesuffix(".php")
                found.append(Unplaced(included, (ANYWHERE + stem,) if stem else ()))
        if self.missing:  # kept once per walk: the stems are a set
            found.append(Unplaced("what runs for the test", self.missing))
        return list(dict.fromkeys(found))

    def _placed(self, path: str, written: str, names: Names) -> tuple[bool, Target | None]:
        """Whether a class the written name may mean (`_candidates`) is in the tree, and the
        first such class's file other than `path` itself."""
        known = False
        for full in _candidates(written, names):
            target = self.class_file(full) or _beside(path, names.namespace, full, self.tree)
            known = known or target is not None
            if target is not None and target != path:
                return True, Target(target, full)
        return known, None

    def _ours(self, full: str, names: Names) -> bool:
        """Whether a class the file loads is the repository's: under a namespace prefix
        its autoload rules name, or in the file's own top namespace; not one the file
        declares itself."""
        if "\\" not in full and full.lower() in names.declared:
            return False
        namespace, _, short = full.rpartition("\\")
        if namespace == names.namespace and short.lower() in names.declared:
            return False
        prefixes = [prefix for prefix, _ in (*self.psr4, *self.psr0) if prefix]
        top = names.namespace.partition("\\")[0]
        return full.startswith(tuple(prefixes)) or (bool(top) and full.startswith(top + "\\"))

    def class_file(self, full: str) -> str | None:
        """The file composer autoloads the class `full` from, if it is in the tree."""
        for prefix, folder in self.psr4:
            if full.startswith(prefix):
                path = join(folder, full[len(prefix) :].replace("\\", "/") + ".php")
                if path in self.tree.files:
                    return path
        namespace, _, short = full.rpartition("\\")
        relative = join(namespace.replace("\\", "/"), short.replace("_", "/")) + ".php"
        for prefix, folder in self.psr0:
            if full.startswith(prefix) and join(folder, relative) in self.tree.files:
                return join(folder, relative)
        return None

    def _included(self, path: str, base: str | None, included: str) -> str | None:
        if included.startswith("/"):
            return None
        folders: Iterable[str] = [base] if base is not None else [parent(path), *self.roots]
        for folder in folders:
            found = resolved(join(folder, included))
            if found is not None and found in self.tree.files:
                return found
        return None


def _beside(path: str, namespace: str, full: str, tree: Tree) -> str | None:
    """Where a class no autoload rule places is, by the file's own place: a class of the
    file's namespace in its folder (`ClassName.php`), one of a namespace above or beside
    it under the folder that many levels up (`test/Dispatcher/` holds `FastRoute\\Dispatcher`,
    so `FastRoute\\RouteParser\\StdTest` is `test/RouteParser/StdTest.php`)."""
    spaces = namespace.split("\\") if namespace else []
    folders = parent(path).split("/") if parent(path) else []
    shared = 0
    while shared < min(len(spaces), len(folders)) and spaces[-1 - shared] == folders[-1 - shared]:
        shared += 1
    for level in range(shared + 1):
        prefix = "\\".join(spaces[: len(spaces) - level])
        if prefix and not full.startswith(prefix + "\\"):
            continue
        relative = full[len(prefix) :].lstrip("\\").replace("\\", "/") + ".php"
        candidate = join("/".join(folders[: len(folders) - level]), relative)
        if candidate in tree.files:
            return candidate
    return None


def _short_names(written: str) -> tuple[str, ...]:
    """The files a class name no rule places could have been, at any depth: its short name
    (PSR-4 maps a namespace prefix to any folder), and PSR-0's last `_` part."""
    short = written.rpartition("\\")[2]
    return tuple(
        dict.fromkeys(ANYWHERE + name for name in (short, short.rpartition("_")[2]) if name)
    )


def _candidates(written: str, names: Names) -> list[str]:
    """The full class names a written name may mean: fully qualified, through an alias,
    or in the file's namespace."""
    if written.startswith("\\"):
        return [written[1:]]
    head, _, rest = written.partition("\\")
    aliased = names.aliases.get(head.lower())
    # A trait's `use` inside a class reads like an import: its name may be the namespace's.
    found = [join_namespace(aliased, rest)] if aliased is not None else []
    return [*found, join_namespace(names.namespace, written)]


def join_namespace(namespace: str, name: str) -> str:
    return "\\".join(part for part in (namespace, name) if part)


PHP = Php()
