"""Ruby: what a spec or test file loads, read with a small tokenizer (never run), and where
each loaded file is in the repository.

Followed: `require_relative "x"` (beside the requiring file), `require "x"` and `load "x.rb"`
looked up under the load path rake and rspec give a test (`lib/`, `spec/` and `test/` of the
test's folder and of each folder above it, nearest first, then the `-I` folders `.rspec`
names), `autoload :Name, "x"` like a require once a file the test reaches names `Name` (Ruby
loads it when the constant is first used: rack's lib/rack.rb autoloads every middleware, a
test runs a few), and the idioms `require
File.expand_path("../x", __dir__)` (or `__FILE__`) and `File.join(File.dirname(__FILE__),
"x")`. A file found nowhere is a gem's or the standard library's and is left out.

What runs for a test besides what it requires: the files `.rspec` loads (`--require
spec_helper`), and the conventional helpers (`spec_helper.rb`, `rails_helper.rb`,
`test_helper.rb`) of the test's `spec/` or `test/` folder: rspec and rake load every test
file of a run into one process, so a helper one test requires configures all of them.

Rails' autoloading (Zeitwerk) is followed by its naming rule: in an application (a folder
above the test holding `app/`), a constant the file names (`Checkout::Payment`) is the file
`checkout/payment.rb` (and the namespace's own `checkout.rb`) under one of `app/`'s folders
(`app/models/`, `app/services/`, ...) or `lib/`. A load built at run time is followed when
its path is written: a string naming a `.rb` file or a feature (a path with a folder,
`"builder/app"`) on the load path (`@loader = "..."; load @loader`, rack's
`Builder.parse_file 'builder/an_underscore_app'`), and the literal parts of a `File.join`
after the last one built at run time (`load File.join(@rake_lib, "rake/phony.rb")`). Not
followed: custom inflections, requires whose path is nowhere written, and `$LOAD_PATH`
changes made in code.

A heredoc is a string: what it requires runs only when the program evaluates it or writes it
out for another Ruby to run (rake's functional tests write Rakefiles, `require
"rake/testtask"`, and run rake on them), and it does that when the code around it runs. So
the loads of a heredoc inside a method (`def rakefile_test_task`) count only once a file
the test reaches names the method (`Target.when`): called, passed as a symbol or a string,
or a piece of a name built with `#{}` (`send("rakefile_#{kind}")`). Counted always: a
heredoc outside a method (`class_eval <<~RUBY` in a class body runs when the file loads),
one in the test file itself (its methods are the tests), one in a method Ruby or a test
framework calls by itself (`setup`, `test_*`, `initialize`, `to_s`, ...), and one whose method
the indentation does not show plainly (its `def` and `end` at one indentation, everything
between deeper). A file that calls a method by a name built wholly at run time
(`send("#{kind}")`), looks up a constant by a name held in a variable (`const_get(name)`,
`constantize`) or eager-loads (`eager_load!`) meets every such condition (`Calls.dynamic`):
the name may be any. Not seen: a name read from data and passed on (`send(config[:hook])`),
which cannot be told from forwarding a name a caller wrote (`method_missing`).

What a file the pull request removed could have been (`removed.py`): a relative load's file,
a load path's `require` at any depth (whether or not a root holds it now: at the base commit
a nearer root may have), the files of the constants Zeitwerk would load, and the helpers and
`.rspec` requires that run for the test.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.shared import Tree
from bot.triage.imports import heredocs
from bot.triage.imports.language import ANYWHERE, Calls, Start, Target, Unplaced
from bot.triage.imports.paths import ancestors, join, parent, resolved

RSPEC = ".rspec"
HELPERS = ("spec_helper.rb", "rails_helper.rb", "test_helper.rb")
TEST_ROOTS = ("spec", "test")
LOAD_ROOTS = ("lib", "spec", "test")
_LOADERS = frozenset({"require", "require_relative", "load", "autoload"})

# A word, a quoted string, a comment, or any other character. A string ends at its quote or,
# unclosed, at the end of its line (a later line of a multi-line string is read as code: an
# over-count); an unclosed embedded document runs to the end. So every token is found in
# one pass, never by scanning to the end of the file again for each quote.
_TOKEN = re.compile(
    r"(?P<word>[A-Za-z_$][\w$]*[?!]?)"
    r"|'(?P<single>(?:[^'\\\n]|\\.)*+)(?:'|$|\\)"
    r'|"(?P<double>(?:[^"\\#\n]|\\.|#\{[^}\n]*\}|#)*+)(?:"|$|\\)'
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<other>\S)",
    re.DOTALL | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z_]\w*[?!]?")
# A path of a Ruby file written as a string, loaded by a `load` or `require` built at run
# time (`load File.join(@rake_lib, "rake/phony.rb")`, `@loader = "..."; load @loader`), or
# a feature's name a method requires (rack's `Builder.parse_file 'builder/an_underscore_app'`).
_RUBY_FILE = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.rb|\.{0,2}/?[\w-]+(?:/[\w.-]+)+")
_FILE_DOT = [("word", "File"), ("other", ".")]
# A string that may be a method's name built at run time ("rakefile_#{kind}"), and the
# interpolations its pieces are between.
_BUILT = re.compile(r"\w*(?:#\{[^}]*\}\w*)+[?!=]?")
_INTERPOLATION = re.compile(r"#\{[^}]*\}")
# Calls by a name built at run time, lookups of constants by a name held in a variable, and
# eager loading of every autoload (`_dispatched`).
_SENDS = frozenset({"send", "public_send", "__send__"})
_LOOKUPS = frozenset({"const_get", "const_source_location"})
_EAGER = frozenset({"eager_load!", "eager_load_all", "constantize", "safe_constantize"})
_EMBEDDED_DOC = re.compile(r"^=begin\b.*?(?:^=end\b[^\n]*|\Z)", re.DOTALL | re.MULTILINE)
_ARGUMENT_TOKENS = 16  # how far past `require` an argument's path is looked for


@dataclass(frozen=True)
class Load:
    """One file a Ruby file loads: `how` is "require" (looked up on the load path),
    "relative" (beside the loading file) or "file" (relative to the loading file's own
    path, as `File.expand_path("../x", __FILE__)` is); `written` as the source spells it."""

    how: str
    path: str
    written: str
    when: str = ""  # in a heredoc of this method: loaded when it runs (module doc)


def _tokens(source: str, bodies: bool = True) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind "word", "string", "other" or, with `bodies`, "heredoc:NAME"
    (the text its body, NAME the method holding it, empty when none: `heredocs.py`; without,
    a body is read as code); comments dropped."""
    text = _EMBEDDED_DOC.sub("", source)
    return [
        ("string" if kind in ("single", "double") else kind, value)
        for kind, value in heredocs.tokens(text, _TOKEN, bodies)
        if kind != "comment"
    ]


def loads_of(source: str) -> list[Load]:
    """Every file the source loads with a literal path (module doc), in order."""
    return _loads(_tokens(source))


def _loads(tokens: list[tuple[str, str]]) -> list[Load]:
    found: list[Load] = []
    argument = -1  # the index of the last loader's literal argument
    for index, (kind, text) in enumerate(tokens):
        if kind == "word" and text in _LOADERS:
            after = tokens[index + 1 : index + 1 + _ARGUMENT_TOKENS]
            load = _argument(text, after)
            if load is not None:
                found.append(load)
            argument = index + 1 + next((n for n, t in enumerate(after) if t[0] == "string"), 0)
        elif kind == "word" and text == "join" and tokens[index - 2 : index] == _FILE_DOT:
            found += _joined(tokens[index + 1 : index + 1 + _ARGUMENT_TOKENS])
        elif kind == "string" and index != argument and _RUBY_FILE.fullmatch(text):
            found.append(Load("require", text, text))
        elif kind.startswith("heredoc:"):
            method = kind.partition(":")[2]
            found += [replace(load, when=method) for load in _loads(_tokens(text, False))]
    return list(dict.fromkeys(found))


def _joined(after: list[tuple[str, str]]) -> list[Load]:
    """`File.join(@rake_lib, "rake", "phony.rb")`: the literal parts after the last part
    built at run time, a path under some folder of the load path when it names a .rb file."""
    parts: list[str] = []
    previous = ""
    for kind, text in after[1:] if after[:1] == [("other", "(")] else after:
        if text == ")" or (kind != "string" and text != "," and previous == "string"):
            break  # the call's end, or the next statement after its last argument
        if kind == "string":
            parts.append(text)
        elif text != ",":
            parts = []
        previous = kind
    path = "/".join(part.strip("/") for part in parts)
    return [Load("require", path, path)] if _RUBY_FILE.fullmatch(path) else []


def calls_of(source: str) -> Calls:
    """The methods the source names (module doc): its words but the names its `def`s
    declare, the words of its strings, and the pieces of names its strings build."""
    return _names(_tokens(source))


def _names(tokens: list[tuple[str, str]]) -> Calls:
    names: set[str] = set()
    fragments: set[str] = set()
    dynamic = False
    for index, (kind, text) in enumerate(tokens):
        if kind == "word" and not _declared(tokens, index):
            names.add(text)
            dynamic = dynamic or _dispatched(tokens, index)
        elif kind == "string":
            names.update(_WORD.findall(text))
            if _BUILT.fullmatch(text):
                fragments.update(piece for piece in _INTERPOLATION.split(text) if piece)
        elif kind.startswith("heredoc:"):
            inner = _names(_tokens(text, False))
            names |= inner.names
            fragments |= inner.fragments
            dynamic = dynamic or inner.dynamic
    return Calls(frozenset(names), frozenset(fragments), dynamic)


def _dispatched(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the word calls a method whose whole name is built at run time
    (`send("#{kind}")`), looks up a constant by a name held in a variable (`const_get(name)`,
    `name.constantize`) or eager-loads everything autoloaded. Not `send(name)` passing on a
    name its caller wrote (`method_missing` forwarding): that name is read where written."""
    word = tokens[index][1]
    if word in _EAGER:
        return True
    after = tokens[index + 1 : index + 3]
    if after[:1] == [("other", "(")]:
        after = after[1:]
    if not after:
        return False
    if word in _SENDS:
        kind, text = after[0]
        return kind == "string" and not _INTERPOLATION.sub("", text).strip("_")
    return word in _LOOKUPS and (after[0][0] == "word" or after[0] == ("other", "@"))


def _declared(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the word is the name a `def` declares (`def x`, `def self.x`) or an
    `autoload` (`autoload :Builder, ...`, `autoload(:Builder, ...)`)."""
    before = [text for _, text in tokens[max(index - 3, 0) : index]]
    return (
        before[-1:] == ["def"]
        or before == ["def", "self", "."]
        or before[-2:] == ["autoload", ":"]
        or before == ["autoload", "(", ":"]
    )


def _argument(loader: str, after: list[tuple[str, str]]) -> Load | None:
    if loader == "autoload":  # autoload :Name, "path": loaded when Name is first used
        strings = [text for kind, text in after[:5] if kind == "string"]
        names = [text for kind, text in after[:3] if kind == "word"]
        constant = names[0] if names and _CONSTANT_PART.match(names[0]) else ""
        return Load("require", strings[0], strings[0], constant) if strings else None
    words = _words_before_string(after)
    if words is None:
        return None
    leading, path = words
    if not leading:
        how = "relative" if loader == "require_relative" else "require"
        return Load(how, path, path)
    if "expand_path" in leading:
        rest = [text for kind, text in after if kind == "word"]
        anchor = next((word for word in rest if word in ("__dir__", "__FILE__")), None)
        if anchor is None:
            return None
        return Load("relative" if anchor == "__dir__" else "file", path, path)
    if "dirname" in leading and "__FILE__" in leading:
        return Load("relative", path.lstrip("/"), path)
    return None


def _words_before_string(after: list[tuple[str, str]]) -> tuple[list[str], str] | None:
    """The words between the loader and its first string, and that string."""
    words: list[str] = []
    for kind, text in after:
        if kind == "string":
            return words, text
        if kind == "word":
            words.append(text)
        elif text not in "().,+":
            return None
    return None


def rspec_options(text: str) -> tuple[list[str], list[str]]:
    """The files `.rspec` requires and the folders it adds to the load path."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    required: list[str] = []
    included: list[str] = []
    for option, value in _options(words):
        if option in ("-r", "--require"):
            required.append(value)
        elif option in ("-I", "--include"):
            included += value.split(":")
    return required, included


def _options(words: list[str]) -> Iterator[tuple[str, str]]:
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if equals and option.startswith("--"):
            yield option, value
        elif word.startswith("-I") and len(word) > 2:
            yield "-I", word[2:]
        elif index + 1 < len(words):
            yield word, words[index + 1]


class Ruby:
    name = "Ruby"
    sources = (".rb",)
    configs = (RSPEC,)

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".rb")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        candidates = [join(folder, RSPEC) for folder in ancestors(test_file)]
        return [path for path in candidates if path in tree.files]

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """The .rspec files from the test's folder up (`--require`, `-I`)."""
        return [path for path in self.config_files(test_file, tree) if path in configs]

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`lib/a/b` for `lib/a/b.rb`; None for an `.rspec`."""
        return None if path.rpartition("/")[2] == RSPEC else [path.removesuffix(".rb")]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> RubyResolver:
        roots: list[str | None] = [
            join(folder, root)
            for folder in ancestors(test_file)
            for root in LOAD_ROOTS
            if join(folder, root) in tree.directories
        ]
        required: list[tuple[str, str]] = []  # (.rspec's path, the file it requires)
        for path, text in configs.items():
            names, included = rspec_options(text)
            roots += [resolved(join(parent(path), folder)) for folder in included]
            required += [(path, name) for name in names]
        kept = tuple(dict.fromkeys(root for root in roots if root is not None))
        autoload = _autoload_roots(test_file, tree)
        folders = tuple(ancestors(test_file))
        resolver = RubyResolver(tree, kept, folders, autoload=autoload, test_file=test_file)
        starts = [
            Start(found, f"a file {rspec} requires")
            for rspec, name in required
            if (found := resolver.on_load_path(name)) is not None
        ]
        starts += [Start(path, "a test helper") for path in _helpers(test_file, tree)]
        helpers = [
            join(folder, name.removesuffix(".rb"))
            for folder in ancestors(test_file)
            if folder.rpartition("/")[2] in TEST_ROOTS
            for name in HELPERS
        ]
        expected = (*helpers, *(_anywhere(name) for _, name in required))
        unique: dict[str, Start] = {}
        for start in starts:
            unique.setdefault(start.path, start)  # the first reason wins
        return replace(resolver, helpers=tuple(unique.values()), expected=expected)


@dataclass(frozen=True)
class RubyResolver:
    tree: Tree
    roots: tuple[str, ...]  # the load path
    folders: tuple[str, ...]  # where the run may have started: the test's folders, nearest first
    helpers: tuple[Start, ...] = ()
    autoload: tuple[str, ...] = ()  # Zeitwerk's root folders of the test's application
    expected: tuple[str, ...] = ()  # the stems of the helpers and `.rspec` requires
    test_file: str = ""

    def starts(self) -> Sequence[Start]:
        return self.helpers

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced | Calls]:
        found: list[Target | Unplaced | Calls] = [calls_of(source)]
        for load in loads_of(source):
            if load.how in ("relative", "file"):
                named = resolved(join(parent(path) if load.how == "relative" else path, load.path))
                target = _in_tree(named, self.tree)
                stems = () if named is None else (named.removesuffix(".rb"),)
            else:
                target = self.on_load_path(load.path)
                stems = (_anywhere(load.path),)
            if target is not None:
                waits = load.when and path != self.test_file and not _called_by_ruby(load.when)
                found.append(Target(target, load.written, when=load.when if waits else ""))
            found.append(Unplaced(load.written, stems))
        if self.autoload:
            found += self.autoloaded(source)
        if self.expected:  # kept once per walk: the stems are a set
            found.append(Unplaced("what runs for the test", self.expected))
        return list(dict.fromkeys(found))

    def autoloaded(self, source: str) -> list[Target | Unplaced]:
        """The files Zeitwerk loads for the constants the source names (module doc)."""
        found: list[Target | Unplaced] = []
        for constant in constants_of(source):
            parts = constant.split("::")
            for depth in range(1, len(parts) + 1):
                stem = "/".join(_underscore(part) for part in parts[:depth]) + ".rb"
                for root in self.autoload:
                    if join(root, stem) in self.tree.files:
                        found.append(Target(join(root, stem), "::".join(parts[:depth])))
            stems = (
                "/".join(_underscore(part) for part in parts[: depth + 1])
                for depth in range(len(parts))
            )
            found.append(Unplaced(constant, tuple(ANYWHERE + stem for stem in stems)))
        return found

    def on_load_path(self, name: str) -> str | None:
        """The repository file `require name` loads: the first load path root holding it."""
        if name.startswith("/"):
            return None
        # "./x" is found from the working folder, which is one of the test's folders.
        roots = self.folders if name.startswith(("./", "../")) else self.roots
        for root in roots:
            found = _in_tree(resolved(join(root, name)), self.tree)
            if found is not None:
                return found
        return None


# Methods Ruby or a test framework calls without their name being written (minitest's and
# test-unit's hooks, rspec's, conversions and protocols); a name ending in "=" is a setter.
_CALLED_BY_RUBY = frozenset(
    {
        *("setup", "teardown", "before_setup", "after_setup", "before_teardown"),
        *("after_teardown", "startup", "shutdown", "cleanup", "run", "initialize"),
        *("initialize_copy", "method_missing", "respond_to_missing?", "respond_to?"),
        *("included", "extended", "inherited", "prepended", "method_added", "const_missing"),
        *("each", "call", "inspect", "hash", "eql?", "coerce", "<=>", "==", "===", "=~"),
        *("marshal_dump", "marshal_load", "_dump", "encode_with", "init_with"),
    }
)


def _called_by_ruby(method: str) -> bool:
    return (
        method in _CALLED_BY_RUBY
        or method.startswith(("test", "to_"))
        or method.endswith("=")
        or not method.isidentifier()
    )


_CONSTANT_PART = re.compile(r"^[A-Z]\w*$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def constants_of(source: str) -> list[str]:
    """The constant paths the code names (`Checkout::Payment`, `::Shop::Cart`), outside
    strings and comments (a heredoc's body read as code), in order, each once."""
    tokens = _tokens(source, bodies=False)
    found: list[str] = []
    index = 0
    while index < len(tokens):
        kind, text = tokens[index]
        if kind != "word" or not _CONSTANT_PART.match(text):
            index += 1
            continue
        parts = [text]
        index += 1
        while (
            index + 2 < len(tokens)
            and tokens[index] == ("other", ":")
            and tokens[index + 1] == ("other", ":")
            and tokens[index + 2][0] == "word"
            and _CONSTANT_PART.match(tokens[index + 2][1])
        ):
            parts.append(tokens[index + 2][1])
            index += 3
        found.append("::".join(parts))
    return list(dict.fromkeys(found))


def _anywhere(name: str) -> str:
    """A load path's `require name` at any depth: `**/a/b` for "a/b", "./a/b.rb"."""
    return ANYWHERE + "/".join(
        p for p in name.removesuffix(".rb").split("/") if p not in ("", ".", "..")
    )


def _underscore(name: str) -> str:
    """Zeitwerk's file name of a constant: `HTMLParser` -> `html_parser`."""
    return _CAMEL.sub("_", name).lower()


def _autoload_roots(test_file: str, tree: Tree) -> tuple[str, ...]:
    """The folders Zeitwerk autoloads from in the nearest application above the test: each
    folder of its `app/` (`app/models`, `app/controllers`, ...) and its `lib/`."""
    for folder in ancestors(test_file):
        app = join(folder, "app")
        if app in tree.directories:
            roots = sorted(d for d in tree.directories if parent(d) == app)
            lib = join(folder, "lib")
            return (*roots, *([lib] if lib in tree.directories else []))
    return ()


def _helpers(test_file: str, tree: Tree) -> list[str]:
    """The helpers of the nearest `spec/` or `test/` folder holding the test."""
    for folder in ancestors(test_file):
        if folder.rpartition("/")[2] in TEST_ROOTS:
            return [join(folder, name) for name in HELPERS if join(folder, name) in tree.files]
    return []


def _in_tree(path: str | None, tree: Tree) -> str | None:
    """The file a load names: as written, or with `.rb` added as Ruby does."""
    if path is None:
        return None
    for candidate in (path + ".rb", path) if not path.endswith(".rb") else (path,):
        if candidate in tree.files:
            return candidate
    return None


RUBY = Ruby()
