"""Follow a Python test's imports through the repository's files: no I/O here.

The walk is asked again after each read: given the test file, the commit's file list and
the contents read so far, it says which files to read next (`wanted`, within the limits)
and what it found: every repository file the test reaches, each with its import chain.

What runs for a test: the test file; every `conftest.py` from the test's folder up to the
repository root; and, transitively, what those import. `import a.b` runs `a/__init__.py`,
`a/b/__init__.py` or `a/b.py`; `from a.b import c` also runs `a/b/c.py` when `c` is a
submodule; relative imports resolve against the importing file's package. Modules are
looked up, in this order, under: the test's and conftests' base directories (the first
folder up without an `__init__.py`, which pytest's default import mode puts on
`sys.path`), the roots the repo's configuration names (`roots.configured_roots`), `src/`
when present, and the repository root. A module found nowhere is not the repository's
(the standard library, an installed package) and is left out.

The walk is partial, and says why, when it could not see everything: GitHub truncated the
file list, a file was unreadable (binary, not UTF-8, not valid Python, too large), or the
depth, files or bytes limit cut it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.shared import Source, Tree, Unreadable
from bot.triage.imports.python import ImportRef, imports_of
from bot.triage.imports.roots import CONFIG_FILES, SRC, configured_roots
from bot.triage.models import ImportStep

CONFTEST = "conftest.py"
INIT = "__init__.py"
PARTIAL_NAMED = 3  # reasons named before "and N more"


@dataclass(frozen=True)
class WalkLimits:
    depth: int = 2  # import hops followed from the test file (and its conftest.py files)
    files: int = 100  # files read per test
    bytes: int = 1_000_000  # bytes read per test
    file_bytes: int = 256_000  # a larger file is not read


@dataclass(frozen=True)
class Reached:
    """A repository file that runs for the test: a conftest.py (empty chain) or a file
    reached by imports (the chain's last step names it)."""

    path: str
    chain: tuple[ImportStep, ...]

    @property
    def depth(self) -> int:
        return len(self.chain)


@dataclass(frozen=True)
class ImportWalk:
    test_file: str
    reached: tuple[Reached, ...]
    read: tuple[str, ...]  # files read (parsed, or found unreadable), configuration included
    wanted: tuple[str, ...]  # to read next; empty when the walk is done
    cut: tuple[str, ...]  # why it is partial; empty when complete

    @property
    def partial(self) -> bool:
        return bool(self.cut)

    @property
    def depth(self) -> int:
        return max((r.depth for r in self.reached), default=0)

    def describe(self) -> str:
        """One line for the evidence: what was followed, how far, and what cut it."""
        found = _count(len(self.reached), "repository file")
        text = (
            f"followed the imports of {self.test_file}: {found} found to depth {self.depth}, "
            f"{_count(len(self.read), 'file')} read"
        )
        if not self.cut:
            return text + "; complete"
        named = "; ".join(self.cut[:PARTIAL_NAMED])
        more = len(self.cut) - PARTIAL_NAMED
        return f"{text}; partial: {named}" + (f"; and {more:,} more" if more > 0 else "")


@dataclass
class _Walker:
    test_file: str
    tree: Tree
    sources: Mapping[str, Source]
    limits: WalkLimits
    roots: list[str] = field(default_factory=list)
    reached: list[Reached] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    beyond_depth: bool = False


def walk(
    test_file: str, tree: Tree, sources: Mapping[str, Source], limits: WalkLimits | None = None
) -> ImportWalk:
    """What the test reaches so far, and what to read next (module doc)."""
    state = _Walker(test_file, tree, sources, limits or WalkLimits())
    if tree.truncated:
        state.cut.append("GitHub truncated the file list")
    if test_file not in tree.files:
        state.cut.append(f"{test_file} is not in the commit's file list")
    configs = _configs(state)
    conftests = _conftests(test_file, tree)
    state.roots = _roots(tree, [test_file, *conftests], configs)
    _follow(state, [(test_file, ()), *((path, ()) for path in conftests)])
    if state.beyond_depth:
        state.cut.append(f"imports deeper than {state.limits.depth} not followed")
    wanted = _within_limits(state)  # names what the limits cut: before `cut` is read
    return ImportWalk(
        test_file=test_file,
        reached=tuple(state.reached),
        read=tuple(state.read),
        wanted=tuple(wanted),
        cut=tuple(dict.fromkeys(state.cut)),
    )


def _configs(state: _Walker) -> dict[str, str]:
    configs: dict[str, str] = {}
    for name in CONFIG_FILES:
        if name not in state.tree.files:
            continue
        source = state.sources.get(name)
        if source is None:
            state.wanted.append(name)
            continue
        state.read.append(name)
        if isinstance(source, Unreadable):
            state.cut.append(f"{name} not read ({source.reason})")
        else:
            configs[name] = source
    return configs


def _conftests(test_file: str, tree: Tree) -> list[str]:
    """The conftest.py files that run for the test, the repository root's first."""
    folders = test_file.split("/")[:-1]
    candidates = ["/".join([*folders[:depth], CONFTEST]) for depth in range(len(folders) + 1)]
    return [path for path in candidates if path in tree.files]


def _roots(tree: Tree, starts: list[str], configs: Mapping[str, str]) -> list[str]:
    roots = [_base_directory(path, tree) for path in starts]
    roots += configured_roots(configs)
    if SRC in tree.directories:
        roots.append(SRC)
    roots.append("")
    return list(dict.fromkeys(roots))


def _base_directory(path: str, tree: Tree) -> str:
    """The first folder up from the file without an `__init__.py` (pytest's rootdir
    insertion in its default `prepend` import mode)."""
    folder = _parent(path)
    while folder and _join(folder, INIT) in tree.files:
        folder = _parent(folder)
    return folder


def _follow(state: _Walker, starts: list[tuple[str, tuple[ImportStep, ...]]]) -> None:
    queue = deque(starts)
    seen = {path for path, _ in starts}
    while queue:
        path, chain = queue.popleft()
        if path != state.test_file:
            state.reached.append(Reached(path, chain))
        for target, module in _imports_to_follow(state, path, len(chain)):
            if target not in seen:
                seen.add(target)
                queue.append(
                    (target, (*chain, ImportStep(importer=path, module=module, path=target)))
                )


def _imports_to_follow(state: _Walker, path: str, depth: int) -> list[tuple[str, str]]:
    """The repository files `path` imports, or none when it is not (yet) read."""
    if path not in state.tree.files:
        return []
    if depth >= state.limits.depth:
        state.beyond_depth = True
        return []
    source = state.sources.get(path)
    if source is None:
        state.wanted.append(path)
        return []
    state.read.append(path)
    if isinstance(source, Unreadable):
        state.cut.append(f"{path} not read ({source.reason})")
        return []
    refs = imports_of(source)
    if refs is None:
        state.cut.append(f"{path} not read (not valid Python)")
        return []
    return [target for ref in refs for target in _resolve(ref, path, state)]


def _resolve(ref: ImportRef, importer: str, state: _Walker) -> list[tuple[str, str]]:
    """The files an import runs, each with the module name it runs as."""
    parts = ref.module.split(".") if ref.module else []
    if ref.level:
        base = _parent(importer)
        for _ in range(ref.level - 1):
            if not base:
                return []  # climbs out of the repository: not ours
            base = _parent(base)
        bases = [base]
    else:
        bases = [root for root in state.roots if _holds(root, parts[0], state.tree)]
    if not bases:
        return []
    prefix = "." * ref.level
    found = _module_files(parts, bases[0], prefix, state.tree)
    for name in ref.names:
        found += _module_files([*parts, name], bases[0], prefix, state.tree)
    return list(dict.fromkeys(found))


def _holds(root: str, top: str, tree: Tree) -> bool:
    stem = _join(root, top)
    return stem in tree.directories or stem + ".py" in tree.files


def _module_files(parts: list[str], base: str, prefix: str, tree: Tree) -> list[tuple[str, str]]:
    """`base/__init__.py` for `from . import x`, then each package's `__init__.py` down
    to the module's own file; stops where a name is an attribute rather than a module."""
    found: list[tuple[str, str]] = []
    if prefix and _join(base, INIT) in tree.files:
        found.append((_join(base, INIT), prefix))
    for index in range(1, len(parts) + 1):
        stem = _join(base, *parts[:index])
        module = prefix + ".".join(parts[:index])
        if _join(stem, INIT) in tree.files:
            found.append((_join(stem, INIT), module))
        elif stem + ".py" in tree.files:
            found.append((stem + ".py", module))
            break
        elif stem not in tree.directories:  # a namespace package continues, anything else ends
            break
    return found


def _within_limits(state: _Walker) -> list[str]:
    """The wanted files the limits allow, in the order found; the rest is named as cut."""
    limits, files = state.limits, state.tree.files
    spent_files = len(state.read)
    spent_bytes = sum(files[path].size for path in state.read if path in files)
    allowed: list[str] = []
    for path in dict.fromkeys(state.wanted):
        size = files[path].size
        if size > limits.file_bytes:
            state.cut.append(f"{path} not read (larger than {limits.file_bytes:,} bytes)")
        elif spent_files + 1 > limits.files:
            state.cut.append(f"the limit of {limits.files:,} files read was reached")
        elif spent_bytes + size > limits.bytes:
            state.cut.append(f"the limit of {limits.bytes:,} bytes read was reached")
        else:
            allowed.append(path)
            spent_files += 1
            spent_bytes += size
    return allowed


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _join(*parts: str) -> str:
    return "/".join(part for part in parts if part)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"
