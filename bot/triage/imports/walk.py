"""Follow a failed test's imports through the repository's files: no I/O here.

The walk is asked again after each read: given the test file, the commit's file list and
the contents read so far, it says which files to read next (`wanted`, within the limits)
and what it found: every repository file the test reaches, each with its import chain.
What a language's test runs and how its imports resolve is the language's own
(`languages.py`); the walk is the same for all: the test file and the files that run for it
(`Start`), then, transitively, what they import, to the end of the closure: there is no
depth limit, only budgets of files and bytes read, sized for real projects (`WalkLimits`).
An import that runs only when a function runs (`Target.when`: a Ruby heredoc's `require`, a
class a PHP function names in a string) is followed once a file the walk reads names that
function (`Calls`), whichever round reads it.
It also names the configuration files that steer how the test's imports resolve (`configs`:
the language's `steering`, and a package's manifest read for its entries), but not one the
program loads as data (`import pkg from './package.json'`): that one is reached, like any
import.

The walk is partial, and says why, when it could not see everything: GitHub truncated the
file list, a file was unreadable (binary, not UTF-8, not parseable, too large), an import of
the repository's named no file of the tree (`Unresolved`), or the files or bytes budget cut
it. Imports taken for the standard library's or an installed package's leave the walk
complete; what each could have named in a tree with more files is kept (`unplaced`), so a
file the pull request removed can be ruled out when none of them could have named it
(`removed.py`). Which files to read in each round (what the walk wants, and the likeliest
next ones to fill the round's queries) is `plan.plan_reads`.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.shared import Source, Tree, Unreadable
from bot.triage.imports.jsscan import loads_jsonc
from bot.triage.imports.language import (
    BuiltOn,
    Calls,
    Found,
    Language,
    Resolver,
    Runs,
    RunsWithout,
    Start,
    Target,
    Unplaced,
    Unresolved,
)
from bot.triage.imports.languages import LANGUAGES, language_of
from bot.triage.imports.routed import routed_by
from bot.triage.imports.values import loads_toml
from bot.triage.models import ImportStep

PARTIAL_NAMED = 3  # reasons named before "and N more"
# The largest closure measured on real repositories (bench/walk_calls.py: flask, sphinx,
# nova, babel) read 509 files and 5.6 MB; the budgets leave about six times that.
DEFAULT_FILES = 3_000
DEFAULT_BYTES = 30_000_000
# A larger file is not read: generated lexers and large modules (JetBrains/markdown's
# _SFMLexer.kt, 363 KB) are read; a hostile file of this size holds the interpreter for
# at most about a second while it is parsed (bench/parser_scaling.py).
DEFAULT_FILE_BYTES = 512_000
# Bump when what a resolver finds changes: walks kept under an older version (bot/store)
# are then read again rather than trusted. Adding a language changes the key by itself.
WALK_VERSION = 14  # C#: an assembly's metadata, static initialisers, reflection over static classes


@dataclass(frozen=True)
class WalkLimits:
    """A walk's budgets (bench/walk_calls.py measured them on real repositories). Files 0:
    the walk is off."""

    files: int = DEFAULT_FILES  # files read per test
    bytes: int = DEFAULT_BYTES  # bytes read per test
    file_bytes: int = DEFAULT_FILE_BYTES  # a larger file is not read

    def within(self, files: int | None, bytes_: int | None) -> WalkLimits:
        """These limits narrowed by a repository's budgets (None: not set), never above."""
        return replace(
            self,
            files=self.files if files is None else min(files, self.files),
            bytes=self.bytes if bytes_ is None else min(bytes_, self.bytes),
        )


@dataclass(frozen=True)
class Reached:
    """A repository file that runs for the test: one that runs with it (empty chain; `why`
    says how: "a conftest.py") or one reached by imports (the chain's last step names it)."""

    path: str
    chain: tuple[ImportStep, ...]
    why: str = ""
    # A folder's files that are not part of it (`Start.except_suffixes`).
    except_suffixes: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        return len(self.chain)


@dataclass(frozen=True)
class ImportWalk:
    test_file: str
    language: str
    reached: tuple[Reached, ...]
    read: tuple[str, ...]  # files read (parsed, or found unreadable), configuration included
    wanted: tuple[str, ...]  # to read next; empty when the walk is done
    cut: tuple[str, ...]  # why it is partial; empty when complete
    # How the test file was found when the failure did not name it ("found from the class
    # a.b.CTest"), and why its imports were not followed when they were not (the file was
    # only located: nothing the PR changes could be imported).
    found_by: str = ""
    skipped: str = ""
    # The configuration files that steer how the test's imports resolve (a tsconfig and
    # what it extends, package.json files, go.mod, pyproject.toml, ...): module doc.
    configs: tuple[str, ...] = ()
    # The files reached only through imports the test's runner leaves out (`RunsWithout`:
    # type-only imports vitest erases, a package's `browser` entry node does not read),
    # which never run for the test: not in `reached` nor `files`; each `why` says what
    # left it out ("type imports, which vitest erases"). When the runner is not known to
    # leave them out, those imports are followed like any other.
    not_run: tuple[Reached, ...] = ()
    # What the closure's imports that name no file of the tree could have named (the stems
    # of `Unplaced`, sorted); None when the language does not report them.
    unplaced: tuple[str, ...] | None = None
    # The files read that some runners' builds leave out (`BuiltOn`), by path.
    built_on: tuple[tuple[str, BuiltOn], ...] = ()
    # The tools the files read may run (`Runs`: `tools.py`), sorted; None when the language
    # does not report them.
    tools: tuple[str, ...] | None = None

    def on(self, runner: str | None) -> ImportWalk:
        """The walk as a job on `runner` ("Linux"; None: not known) ran it: the files it
        reached that no build on that runner includes are moved to `not_run`, with why."""
        if runner is None:
            return self
        left_out = {path: built for path, built in self.built_on if runner not in built.systems}
        if not left_out:
            return self
        why = {path: _built_only(built, runner) for path, built in left_out.items()}
        return replace(
            self,
            reached=tuple(r for r in self.reached if r.path not in left_out),
            not_run=(
                *self.not_run,
                *(replace(r, why=why[r.path]) for r in self.reached if r.path in left_out),
            ),
        )

    @property
    def partial(self) -> bool:
        return bool(self.cut)

    @property
    def files(self) -> frozenset[str]:
        """The test file and every repository file it reaches."""
        return frozenset((self.test_file, *(r.path for r in self.reached)))

    @property
    def depth(self) -> int:
        return max((r.depth for r in self.reached), default=0)

    def describe(self) -> str:
        """One line for the evidence: what was followed, how far, and what cut it."""
        test_file = f"{self.test_file} ({self.found_by})" if self.found_by else self.test_file
        if self.skipped:
            return f"the imports of {test_file} were not followed: {self.skipped}"
        found = _count(len(self.reached), "repository file")
        text = (
            f"followed the imports of {test_file}: {found} found to depth {self.depth}, "
            f"{_count(len(self.read), 'file')} read"
        )
        for why, count in Counter(r.why for r in self.not_run).items():
            text += f" ({_count(count, 'more file')} {why})"
        if not self.cut:
            return text + "; complete"
        named = "; ".join(self.cut[:PARTIAL_NAMED])
        more = len(self.cut) - PARTIAL_NAMED
        return f"{text}; partial: {named}" + (f"; and {more:,} more" if more > 0 else "")


# What a resolver found in a file, by test file, the configuration files it was given and the
# file: a walk asked again after each round parses each file once (`walk`'s `memo`).
ImportsMemo = MutableMapping[tuple[str, tuple[str, ...], str], Sequence[Found] | None]


@dataclass
class _Walker:
    test_file: str
    tree: Tree
    sources: Mapping[str, Source]
    limits: WalkLimits
    language: Language
    reached: list[Reached] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    spent_files: int = 0  # read or wanted, configuration included
    spent_bytes: int = 0
    memo: ImportsMemo = field(default_factory=dict)
    # Files read or wanted for what they declare (`Target.declares`), already counted
    # against the budgets: whether the budgets allowed them.
    checked: dict[str, bool] = field(default_factory=dict)
    declared: dict[str, frozenset[str]] = field(default_factory=dict)  # each file's, once
    config_names: tuple[str, ...] = ()  # the configuration the resolver was given
    steering: list[str] = field(default_factory=list)  # read for how imports resolve
    loaded: set[str] = field(default_factory=set)  # run or imported by the program
    not_run: list[Reached] = field(default_factory=list)  # what the runner leaves out
    without: RunsWithout | None = None  # what the test's runner leaves out
    unplaced: set[str] = field(default_factory=set)  # stems of the imports left out
    built_on: dict[str, BuiltOn] = field(default_factory=dict)  # files some runners leave out
    tools: set[str] | None = None  # what the files read may run (`Runs`), once reported


def walk(
    test_file: str,
    tree: Tree,
    sources: Mapping[str, Source],
    limits: WalkLimits | None = None,
    memo: ImportsMemo | None = None,
) -> ImportWalk:
    """What the test reaches so far, and what to read next (module doc). `memo`: kept by
    the caller across the rounds of one tree's walks, so each file is parsed once."""
    language = language_of(test_file)
    if language is None:
        raise ValueError(f"no language reads the imports of {test_file}")
    state = _Walker(test_file, tree, sources, limits or WalkLimits(), language)
    if memo is not None:
        state.memo = memo
    if tree.truncated:
        state.cut.append("GitHub truncated the file list")
    if test_file not in tree.files:
        state.cut.append(f"{test_file} is not in the commit's file list")
    configs = _configs(state)
    state.config_names = tuple(sorted(configs))
    resolver = language.resolver(test_file, tree, configs)
    state.steering += language.steering(test_file, tree, configs)
    _follow(state, resolver, [Start(test_file, "the test file"), *resolver.starts()])
    return ImportWalk(
        test_file=test_file,
        language=language.name,
        reached=tuple(state.reached),
        read=tuple(state.read),
        wanted=tuple(dict.fromkeys(state.wanted)),
        cut=tuple(dict.fromkeys(state.cut)),
        configs=tuple(p for p in dict.fromkeys(state.steering) if p not in state.loaded),
        not_run=tuple(state.not_run),
        built_on=tuple(sorted(state.built_on.items())),
        # A language that does not report what its imports leave out has no stems at all.
        unplaced=tuple(sorted(state.unplaced))
        if language.removed_stems(test_file) is not None
        else None,
        tools=None if state.tools is None else tuple(sorted(state.tools)),
    )


def _configs(state: _Walker) -> dict[str, str]:
    configs: dict[str, str] = {}
    for name in state.language.config_files(state.test_file, state.tree):
        if name not in state.tree.files:
            continue
        source = state.sources.get(name)
        # The configuration is counted, never cut: the resolver needs it.
        state.spent_files += 1
        state.spent_bytes += state.tree.files[name].size
        if source is None:
            state.wanted.append(name)
            continue
        state.read.append(name)
        if isinstance(source, Unreadable):
            state.cut.append(f"{name} not read ({source.reason})")
        elif (problem := _unparsed(name, source)) is not None:
            # Ignored, it would leave the resolver's answers wrong while the walk looked
            # complete: a change it cannot see must not be ruled out.
            state.cut.append(f"{name} not read ({problem})")
        else:
            configs[name] = source
    return configs


def _unparsed(name: str, text: str) -> str | None:
    """Why a configuration file of a format the walk knows cannot be read, if it cannot."""
    if name.endswith(".json") and loads_jsonc(text) is None:
        return "not valid JSON"
    if name.endswith(".toml") and loads_toml(text) is None:
        return "not valid TOML"
    return None


# A file to visit: its path, its import chain, the start it was reached from, and, for one
# reached only through imports the runner leaves out, why it does not run (else "").
_Visit = tuple[str, tuple[ImportStep, ...], Start, str]


def _follow(state: _Walker, resolver: Resolver, starts: list[Start]) -> None:
    """Breadth first from the starts. An import the test's runner leaves out waits until
    everything else is reached: what it alone reaches is `not_run`."""
    queue: deque[_Visit] = deque((start.path, (), start, "") for start in starts)
    seen = {start.path for start in starts}
    state.loaded.update(seen)
    named: list[Calls] = []  # what the files read so far call
    waiting: list[tuple[_Visit, Target]] = []  # `when` not met yet
    left_out: list[tuple[_Visit, Target, str]] = []  # imports the runner leaves out, and why
    while queue or left_out:
        if not queue:
            for visit, target, why in left_out:
                _enqueue(state, queue, seen, visit, target, why)
            left_out = []
            continue
        visit = queue.popleft()
        path, chain, start, why = visit
        if path != state.test_file:
            how = f"reached only through {why}" if why else (start.why if not chain else "")
            but = start.except_suffixes if not chain else ()
            found_by = Reached(path, chain, how, but)
            (state.not_run if why else state.reached).append(found_by)
        if not start.follow:
            continue
        found = _imports_to_follow(state, resolver, path, not chain, bool(why))
        calls = [item for item in found if isinstance(item, Calls)]
        named += calls
        met: list[tuple[_Visit, Target]] = []
        if calls and waiting:  # what the new names meet, of what waited
            met = [item for item in waiting if _met(item[1], named)]
            waiting = [item for item in waiting if not _met(item[1], named)]
        for item in found:
            if isinstance(item, Target):
                (met if _met(item, named) else waiting).append((visit, item))
        for importer, target in met:
            if target.declares and target.path not in seen:
                # Known already (read, and not counted for an earlier importer), or asked.
                known = state.declared.get(target.path)
                names = _declares(state, target) if known is None else target.declares & known
                if not names:
                    continue
                if not target.module:
                    target = replace(target, module=_shown(names))
            left = state.without.leaves_out(target) if state.without else ""
            if left and not importer[3]:
                left_out.append((importer, target, left))
            else:
                _enqueue(state, queue, seen, importer, target, importer[3])


def _enqueue(
    state: _Walker,
    queue: deque[_Visit],
    seen: set[str],
    importer: _Visit,
    target: Target,
    why: str,
) -> None:
    path, steps, leaf, _ = importer
    if not why:
        if target.configures:
            state.steering.append(target.path)
        else:
            state.loaded.add(target.path)
    if target.path not in seen:
        seen.add(target.path)
        step = ImportStep(importer=path, module=target.module, path=target.path)
        then = leaf if target.follow else replace(leaf, follow=False)
        queue.append((target.path, (*steps, step), then, why))


def _declares(state: _Walker, target: Target) -> frozenset[str]:
    """The names its importer uses that a file counted for its declarations declares (one
    that cannot be read counts, with the names it was looked for by, as does one the
    budgets leave unread: the walk is cut, and a change to it is related); empty when none,
    or when it is not read yet: then it is wanted, and not counted this round. Each importer
    asks on its own, so a file read earlier and not counted is counted once a file counted
    later names what it declares."""
    if target.path not in state.tree.files:
        return frozenset()
    source = state.sources.get(target.path)
    if isinstance(source, Unreadable) or (source is not None and target.declared is None):
        return target.declares
    if source is not None and target.declared is not None:
        if target.path not in state.declared:
            state.declared[target.path] = target.declared(source)
        if found := target.declares & state.declared[target.path]:
            return found
    if target.path not in state.checked:
        state.checked[target.path] = allowed = _affordable(state, target.path)
        if allowed:
            (state.read if source is not None else state.wanted).append(target.path)
    return frozenset() if state.checked[target.path] else target.declares


def _shown(names: frozenset[str]) -> str:
    """The names a file was counted by, as its import's module: identifiers first, then a
    language's phrases (C#'s "code that runs for every test of its assembly"), three at most."""
    ordered = sorted(names, key=lambda name: (" " in name, name))
    return ", ".join(ordered[:3]) + (", ..." if len(ordered) > 3 else "")


def _met(target: Target, named: list[Calls]) -> bool:
    """Whether the target runs: always, or once a file read names its `when`."""
    return not target.when or any(names.meets(target.when) for names in named)


def _imports_to_follow(
    state: _Walker, resolver: Resolver, path: str, first: bool, not_run: bool
) -> Sequence[Target | Calls]:
    """What `path` imports and names, or nothing when it is not (yet) read. A file reached
    only through erased imports never runs: what cuts its reading hides nothing the test
    runs, so it is not a cut."""
    mark = len(state.cut)
    found = _read_imports(state, resolver, path, first)
    if not_run:
        del state.cut[mark:]
    return found


def _read_imports(
    state: _Walker, resolver: Resolver, path: str, first: bool
) -> Sequence[Target | Calls]:
    if path not in state.tree.files:
        return []
    counted = path in state.checked  # read or wanted already, for what it declares
    if not (state.checked[path] if counted else _affordable(state, path)):
        return []
    source = state.sources.get(path)
    if source is None:
        if not counted:
            state.wanted.append(path)
        return []
    if not counted:
        state.read.append(path)
    if isinstance(source, Unreadable):
        state.cut.append(f"{path} not read ({source.reason})")
        return []
    key = (state.test_file, state.config_names, path)
    if key not in state.memo:
        state.memo[key] = resolver.imports(path, source)
    targets = state.memo[key]
    if targets is None:
        state.cut.append(f"{path} not read (not valid {state.language.name})")
        return []
    if path == state.test_file:
        state.without = next((t for t in targets if isinstance(t, RunsWithout)), None)
    router = routed_by(state.language.name, source) if first else None
    if router is not None:
        state.cut.append(f"{path} reaches code through {router}, which no import names")
    state.cut += [
        f"could not resolve '{t.module}' from {path}"
        for t in targets
        if isinstance(t, Unresolved) and not (t.types and state.without and state.without.types)
    ]
    state.unplaced.update(stem for t in targets if isinstance(t, Unplaced) for stem in t.stems)
    state.built_on.update((path, t) for t in targets if isinstance(t, BuiltOn))
    for runs in (t for t in targets if isinstance(t, Runs)):
        state.tools = (state.tools or set()) | runs.tools
    return [item for item in targets if isinstance(item, Target | Calls)]


def _affordable(state: _Walker, path: str) -> bool:
    """Whether the budgets allow reading `path` (or using it, when it was read ahead of the
    walk): each file the walk reads or wants is counted once, in the order the walk meets
    it; what a budget cuts is named."""
    limits, size = state.limits, state.tree.files[path].size
    if size > limits.file_bytes:
        state.cut.append(f"{path} not read (larger than {limits.file_bytes:,} bytes)")
        return False
    if state.spent_files + 1 > limits.files:
        state.cut.append(f"the budget of {limits.files:,} files read was spent")
        return False
    if state.spent_bytes + size > limits.bytes:
        state.cut.append(f"the budget of {limits.bytes:,} bytes read was spent")
        return False
    state.spent_files += 1
    state.spent_bytes += size
    return True


def _built_only(built: BuiltOn, runner: str) -> str:
    """ "built only on Windows (`//go:build windows`), not on this job's Linux runner"."""
    if not built.systems:
        return f"built on no runner GitHub offers ({built.constraint})"
    systems = " or ".join(sorted(built.systems))
    return f"built only on {systems} ({built.constraint}), not on this job's {runner} runner"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def cache_key(limits: WalkLimits) -> str:
    """What a kept walk must match to be reused: this walk's version and languages, and
    the budgets it ran under."""
    languages = ",".join(sorted(language.name for language in LANGUAGES))
    sizes = f"{limits.files}:{limits.bytes}:{limits.file_bytes}"
    return f"v{WALK_VERSION}:{languages}:{sizes}"


def walk_to_json(found: ImportWalk) -> str:
    """A finished walk (nothing left to read) as JSON, for the store."""
    return json.dumps(
        {
            "test_file": found.test_file,
            "language": found.language,
            "reached": _reached_to_json(found.reached),
            "read": list(found.read),
            "cut": list(found.cut),
            "configs": list(found.configs),
            "not_run": _reached_to_json(found.not_run),
            "unplaced": None if found.unplaced is None else list(found.unplaced),
            "built_on": [
                [path, sorted(built.systems), built.constraint] for path, built in found.built_on
            ],
            "tools": None if found.tools is None else list(found.tools),
        }
    )


def walk_from_json(text: str) -> ImportWalk | None:
    """The walk `walk_to_json` wrote; None when the text is not one (then it is walked
    again)."""
    try:
        data = json.loads(text)
        return ImportWalk(
            test_file=str(data["test_file"]),
            language=str(data["language"]),
            reached=_reached_from_json(data["reached"]),
            read=tuple(str(path) for path in data["read"]),
            wanted=(),
            cut=tuple(str(reason) for reason in data["cut"]),
            configs=tuple(str(path) for path in data["configs"]),
            not_run=_reached_from_json(data["not_run"]),
            unplaced=None
            if data["unplaced"] is None
            else tuple(str(stem) for stem in data["unplaced"]),
            built_on=tuple(
                (str(path), BuiltOn(frozenset(map(str, systems)), str(constraint)))
                for path, systems, constraint in data["built_on"]
            ),
            tools=None if data["tools"] is None else tuple(str(tool) for tool in data["tools"]),
        )
    except (ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
        return None


def _reached_to_json(reached: Sequence[Reached]) -> list[dict[str, object]]:
    return [
        {
            "path": r.path,
            "why": r.why,
            "chain": [step.model_dump() for step in r.chain],
            **({"except_suffixes": list(r.except_suffixes)} if r.except_suffixes else {}),
        }
        for r in reached
    ]


def _reached_from_json(items: Any) -> tuple[Reached, ...]:
    return tuple(
        Reached(
            path=str(r["path"]),
            chain=tuple(ImportStep.model_validate(step) for step in r["chain"]),
            why=str(r["why"]),
            except_suffixes=tuple(str(s) for s in r.get("except_suffixes", ())),
        )
        for r in items
    )
