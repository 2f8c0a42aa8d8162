"""Whether a change to a manifest can change how a test's imports resolve, or what its code
reads at run time: no I/O here.

A manifest that steers a test's imports (a package.json's `exports`, composer.json's
`autoload`, go.mod's `module` and `replace`s, a Cargo.toml's path dependencies, pyproject's
package roots, a .csproj's `ProjectReference`s) is strong evidence for the test
(`footprint.py`). A change to the parts of it that cannot steer them, a dependency's version
above all, is not a strong hit but a caveat (`verdict.py`), or every Dependabot pull request
would be called related to every failure. Like a lockfile's change, a new version can break
any test: the caveat says the file changed and lowers the confidence, as a risky path does
(`risky.py`); it does not change which of the repository's files an import finds.

The comparison is of the two versions, base against head, as parsed: each format's module
lists what cannot steer (json_fields.py: package.json and composer.json; go_mod.py;
cargo.py; pyproject.py; msbuild.py: .csproj, .fsproj, .vbproj; tsconfig.py: tsconfig.json
and its variants). The answer is "only parts that cannot steer changed" only when both
versions parse and every part that differs is one of those; anything else (a file not read
at base, a file that does not parse, a part not listed, a file of another name) counts as a
change that matters. Some parts are inert only for tests that do not run the tool that
reads them (`toml_rules.Tool`): a pyproject.toml's `[tool.mypy]`, a tsconfig's `strict`;
the walks say which tools the failed tests' code may run (`Walked.tools`).

Not compared, so any change counts: jsconfig.json, setup.cfg and pytest.ini (pytest's and
setuptools' settings).
go.work, Directory.Build.props and Directory.Packages.props are not read by the walks: a
change to them is a caveat (`risky.py`), never a hit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.shared import Source
from bot.triage.imports import ImportWalk
from bot.triage.manifests import (
    cargo,
    go_mod,
    json_fields,
    msbuild,
    pyproject,
    toml_rules,
    tsconfig,
)

__all__ = ["Walked", "compared", "holds_for", "inert_change"]

_NAMES = json_fields.NAMES | {"go.mod", "Cargo.toml", "pyproject.toml"}


@dataclass(frozen=True)
class Walked:
    """What the failed tests' walks reached: their files and every repository file reached
    (`files`), and the import paths that found a repository file (`imports`: a Go
    package's; None when a walk was cut short, so that what it did not follow is not taken
    for what the test does not import); the tools their code may run (`tools`: the Python
    walk's; None when a walk was cut short or does not report them)."""

    files: frozenset[str]
    imports: frozenset[str] | None
    tools: frozenset[str] | None = None

    @classmethod
    def of(cls, walks: Iterable[ImportWalk]) -> Walked:
        walks = list(walks)
        imports = frozenset(
            step.module for walk in walks for found in walk.reached for step in found.chain
        )
        partial = any(walk.partial for walk in walks)
        told = not partial and all(walk.tools is not None for walk in walks)
        return cls(
            files=frozenset(path for walk in walks for path in walk.files),
            imports=None if partial else imports,
            tools=frozenset(tool for walk in walks for tool in walk.tools or ()) if told else None,
        )


def compared(path: str) -> bool:
    """Whether `path` is a manifest whose versions `inert_change` compares."""
    name = path.rpartition("/")[2]
    return name in _NAMES or name.endswith(msbuild.SUFFIXES) or tsconfig.compared(path)


def inert_change(
    path: str, before: Source | None, after: Source | None, walked: Walked | None = None
) -> str | None:
    """What changed, as the evidence names it ("its scripts and version fields", "its
    require directive"; "its formatting" when nothing compared did), when none of it can
    steer resolution; None when some can, or when that cannot be told (module doc).
    `walked`: what the walks reached, for the changes that matter only to a test that
    reaches a part of the repository (a package.json's new `workspaces` entry, a go.mod's
    `require` of a module of the repository; a pyproject.toml's type checker settings and a
    tsconfig's TypeScript-only options, for tests whose code does not run the tool);
    unknown (None), such a change counts."""
    if not isinstance(before, str) or not isinstance(after, str) or not compared(path):
        return None
    name = path.rpartition("/")[2]
    if name in json_fields.NAMES:
        return json_fields.inert(
            path,
            before,
            after,
            walked.files if walked else None,
            walked.tools if walked else None,
        )
    if name == "go.mod":
        return go_mod.inert(before, after, walked.imports if walked else None)
    if name == "Cargo.toml":
        return toml_rules.inert(cargo.rules_for(walked.files if walked else None), before, after)
    if name == "pyproject.toml":
        return pyproject.inert(before, after, walked.tools if walked else None)
    if tsconfig.compared(path):
        return tsconfig.inert(before, after, walked.tools if walked else None)
    return msbuild.inert(before, after, walked.tools if walked else None)


def holds_for(path: str, test_id: str) -> bool:
    """Whether what `inert_change` found inert in `path` is so for this failed test: not a
    pyproject.toml's for a test whose id names a linter or a type checker
    (`pyproject.reads_tool_settings`)."""
    if path.rpartition("/")[2] != "pyproject.toml":
        return True
    return not pyproject.reads_tool_settings(test_id)
