"""Python: what a test file imports, read with `ast` (parsed, never run), and where each
import is found in the repository.

What runs for a test: the test file; every `conftest.py` from the test's folder up to the
repository root; and, transitively, what those import. `import a.b` runs `a/__init__.py`,
`a/b/__init__.py` or `a/b.py`; `from a.b import c` also runs `a/b/c.py` when `c` is a
submodule; relative imports resolve against the importing file's package. Modules are
looked up, in this order, under: the test's and conftests' base directories (the first
folder up without an `__init__.py`, which pytest's default import mode puts on
`sys.path`), the roots the repo's configuration names (`roots.configured_roots`), `src/`
when present, and the repository root. A module found nowhere is not the repository's
(the standard library, an installed package) and is left out.

What a file the pull request removed could have been (`removed.py`): every module an
absolute import names, and each package above it, at any depth (`**/a/b` for `import a.b`:
its file may be under a root the head commit no longer has, once an `__init__.py` or `src/`
is gone); a relative import's modules under the importing package; and the `conftest.py`
of each folder above the test.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.shared import Tree
from bot.triage.imports.language import ANYWHERE, Runs, Start, Target, Unplaced
from bot.triage.imports.paths import ancestors, join, parent
from bot.triage.imports.roots import CONFIG_FILES, SRC, configured_roots
from bot.triage.imports.tools import TOOLS, named_in, runs_tasks

CONFTEST = "conftest.py"
INIT = "__init__.py"
# CPython's parser holds the interpreter while it runs, and some shapes cost it far more than
# their length: time growing with the square of an import's dotted parts (250 KB of
# `import a.a.a...`: 83 s) and about 30 µs per f-string substitution (`{a}` 80,000 times in
# one f-string: 9 s). A file past these bounds is not parsed (bench/parser_scaling.py).
_LONG_DOTTED = re.compile(r"(?<![\w.])(?:\w++[ \t]*+\.[ \t]*+){64}")
_MAX_BRACES = 10_000


@dataclass(frozen=True)
class ImportRef:
    """One imported name: `import a.b` is ImportRef("a.b"); `from ..a import b, c` is
    ImportRef("a", level=2, names=("b", "c")), whose names may be submodules."""

    module: str
    level: int = 0
    names: tuple[str, ...] = ()

    def written(self) -> str:
        """The module as the source spells it: `a.b`, `.a`, `..`."""
        return "." * self.level + self.module


def imports_of(source: str) -> list[ImportRef] | None:
    """Every import statement in the file, at any nesting (inside functions, `try`, `if
    TYPE_CHECKING`: over-counting costs a wider footprint, missing one a false "unrelated");
    None when the file is not valid Python, or too costly to parse."""
    tree = _parse(source)
    return None if tree is None else _imports(tree)


def _parse(source: str) -> ast.Module | None:
    if source.count("{") > _MAX_BRACES or _LONG_DOTTED.search(source):
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _imports(tree: ast.Module) -> list[ImportRef]:
    found: list[ImportRef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(ImportRef(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            found.append(ImportRef(node.module or "", level=node.level, names=names))
    return found


def tools_named(tree: ast.Module) -> frozenset[str]:
    """The tools (`tools.TOOLS`) the file may run: a module it imports, or a part of one,
    is the tool's (`mypy.api`; not `mypy_extensions`, a library of types for the program);
    or the tool's name is a word of a string (`["mypy", "src"]`, `"-m pyright"`, a
    docstring too), a name or an attribute (`pytest.mark.mypy_testing`); not of a comment,
    which `ast` drops. A runner of the project's tasks (`["pre-commit", "run"]`, `"tox"`,
    `["make", "lint"]`) may run any of them."""
    modules: set[str] = set()
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(part for alias in node.names for part in alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            modules.update((node.module or "").split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
    if any(runs_tasks(word) for word in words):
        return TOOLS
    imported = {name for name in TOOLS if name.replace("-", "_") in modules}
    return named_in("\n".join(words)) | imported


class Python:
    name = "Python"
    sources = (".py", ".pyi")
    configs = CONFIG_FILES

    def tests(self, test_file: str) -> bool:
        return test_file.endswith(".py")

    def config_files(self, test_file: str, tree: Tree) -> Sequence[str]:
        return [name for name in CONFIG_FILES if name in tree.files]

    def resolver(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> PythonResolver:
        conftests = _conftests(test_file, tree)
        roots = [_base_directory(path, tree) for path in [test_file, *conftests]]
        roots += configured_roots(configs)
        if SRC in tree.directories:
            roots.append(SRC)
        roots.append("")
        return PythonResolver(tree, tuple(dict.fromkeys(roots)), tuple(conftests), test_file)

    def removed_stems(self, path: str) -> Sequence[str] | None:
        """`a/b` for `a/b.py`, `a/b.pyi` and `a/b/__init__.py`; None for the configuration
        that names the roots."""
        if path in CONFIG_FILES:
            return None
        stem = path.removesuffix(".pyi").removesuffix(".py")
        return [stem.removesuffix("/__init__") if stem.endswith("/__init__") else stem]

    def steering(self, test_file: str, tree: Tree, configs: Mapping[str, str]) -> Sequence[str]:
        """pyproject.toml, setup.cfg, pytest.ini: pytest's settings and the roots on
        `sys.path` for every test."""
        return [name for name in CONFIG_FILES if name in configs]


@dataclass(frozen=True)
class PythonResolver:
    tree: Tree
    roots: tuple[str, ...]
    conftests: tuple[str, ...]
    test_file: str = ""

    def starts(self) -> Sequence[Start]:
        return [Start(path, "a conftest.py") for path in self.conftests]

    def imports(self, path: str, source: str) -> Sequence[Target | Unplaced | Runs] | None:
        tree = _parse(source)
        if tree is None:
            return None
        refs = _imports(tree)
        found: list[Target | Unplaced | Runs] = [
            target for ref in refs for target in self._resolve(ref, path)
        ]
        found += [Unplaced(ref.written(), stems) for ref in refs if (stems := _stems(ref, path))]
        if path == self.test_file:
            stems = tuple(join(folder, CONFTEST.removesuffix(".py")) for folder in ancestors(path))
            found.append(Unplaced(CONFTEST, stems))
        found.append(Runs(tools_named(tree)))
        return list(dict.fromkeys(found))

    def _resolve(self, ref: ImportRef, importer: str) -> list[Target]:
        """The files an import runs, each with the module name it runs as."""
        parts = ref.module.split(".") if ref.module else []
        if ref.level:
            base = parent(importer)
            for _ in range(ref.level - 1):
                if not base:
                    return []  # climbs out of the repository: not ours
                base = parent(base)
            bases = [base]
        else:
            bases = [root for root in self.roots if _holds(root, parts[0], self.tree)]
        if not bases:
            return []
        prefix = "." * ref.level
        found = _module_files(parts, bases[0], prefix, self.tree)
        for name in ref.names:
            found += _module_files([*parts, name], bases[0], prefix, self.tree)
        return found


def _stems(ref: ImportRef, importer: str) -> tuple[str, ...]:
    """The modules an import names and the packages above them (module doc): under the
    importing package for a relative import, at any depth for an absolute one."""
    parts = ref.module.split(".") if ref.module else []
    modules = [parts[:index] for index in range(1, len(parts) + 1)]
    modules += [[*parts, name] for name in ref.names]
    if not ref.level:
        return tuple(ANYWHERE + "/".join(module) for module in modules)
    base = parent(importer)
    for _ in range(ref.level - 1):
        if not base:
            return ()  # climbs out of the repository: not ours
        base = parent(base)
    return (*([base] if base else []), *(join(base, *module) for module in modules))


def _conftests(test_file: str, tree: Tree) -> list[str]:
    """The conftest.py files that run for the test, the repository root's first."""
    folders = test_file.split("/")[:-1]
    candidates = ["/".join([*folders[:depth], CONFTEST]) for depth in range(len(folders) + 1)]
    return [path for path in candidates if path in tree.files]


def _base_directory(path: str, tree: Tree) -> str:
    """The first folder up from the file without an `__init__.py` (pytest's rootdir
    insertion in its default `prepend` import mode)."""
    folder = parent(path)
    while folder and join(folder, INIT) in tree.files:
        folder = parent(folder)
    return folder


def _holds(root: str, top: str, tree: Tree) -> bool:
    stem = join(root, top)
    return stem in tree.directories or stem + ".py" in tree.files


def _module_files(parts: list[str], base: str, prefix: str, tree: Tree) -> list[Target]:
    """`base/__init__.py` for `from . import x`, then each package's `__init__.py` down
    to the module's own file; stops where a name is an attribute rather than a module."""
    found: list[Target] = []
    if prefix and join(base, INIT) in tree.files:
        found.append(Target(join(base, INIT), prefix))
    for index in range(1, len(parts) + 1):
        stem = join(base, *parts[:index])
        module = prefix + ".".join(parts[:index])
        if join(stem, INIT) in tree.files:
            found.append(Target(join(stem, INIT), module))
        elif stem + ".py" in tree.files:
            found.append(Target(stem + ".py", module))
            break
        elif stem not in tree.directories:  # a namespace package continues, anything else ends
            break
    return found


PYTHON = Python()
