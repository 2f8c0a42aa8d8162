"""pyproject.toml: which of its parts cannot change what a test imports or reads
(`toml_rules`).

Inert: a requirement that came or went in `[project]`'s `dependencies` and
`optional-dependencies`, `[dependency-groups]`, uv's and PDM's development dependencies,
Poetry's dependency tables (a version change), unless it is a direct reference (`name @
file:///...`, `name @ git+...`) or a local path (Poetry's `path`, `develop`); `[project]`'s
`classifiers`, `keywords` and `urls`; the tables of linters, formatters, release tools and
type checkers (`[tool.ruff]`, `[tool.black]`, `[tool.towncrier]`, `[tool.mypy]`, ...:
`imports/tools.py`), which no test reads but one that runs the tool. A test runs one
through a pytest plugin's item, whose id names the tool (`path.py::ruff`, `path.py::mypy`:
`reads_tool_settings`, per test), or through its closure's code, which imports the tool's
module or names it in a string or a name (`subprocess.run(["mypy", ...])`, `mypy.api`,
`pytest.mark.mypy_testing`; a runner of the project's tasks, `pre-commit`, `tox`, `make`,
names them all: the Python walk's `tools`, for the failed tests together).
A type checker's table also counts when a walk could not tell (partial, or none), and when
pyproject.toml configures a pytest plugin of it (a requirement on `pytest-mypy-plugins`,
`--mypy` in pytest's `addopts`): typing suites run type checkers on cases that are not Python
tests (`typesafety/test_x.yml::case`) under ids that do not name them. Such a case has no
walk, so pyproject.toml is not in its footprint at all: whatever it is, a pyproject.toml
change cannot clear it (`footprint.py`). A plugin only a requirements file installs, whose
items' ids do not name the tool, on a Python file whose code does not either, is not seen.
Everything else counts: `[build-system]`; `[project]`'s `name`, `version` and its other
metadata (a package reads them at run time through `importlib.metadata`), `scripts` and
`entry-points` (pytest plugins are entry points); `[tool.pytest.ini_options]`,
`[tool.coverage]` (`fail_under` fails the run); the package discovery of
`[tool.setuptools]`, `[tool.hatch]`, Poetry's `packages`; `[tool.uv]`'s sources and
workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.triage.imports import values
from bot.triage.imports.tools import TOOLS, TYPE_CHECKERS, named_in
from bot.triage.manifests import toml_rules
from bot.triage.manifests.toml_rules import INERT, Dependencies, Requirements, Table, Tool

# Names pytest plugins give the items that lint a file with such a tool (pytest-flake8's
# `::flake-8::FLAKE8`, pytest-pycodestyle's `::PYCODESTYLE`), besides the tools' own.
_LINT_ITEMS = ("flake-8", "pycodestyle")
_REQUIREMENTS = Requirements()
_POETRY = Dependencies(local=frozenset({"path", "git", "url", "file", "develop"}))
_POETRY_ABOUT = ("classifiers", "keywords", "homepage", "repository", "documentation", "urls")
RULES = Table(
    {
        "project": Table(
            {
                "dependencies": _REQUIREMENTS,
                "optional-dependencies": Table(other=_REQUIREMENTS),
                "classifiers": INERT,
                "keywords": INERT,
                "urls": INERT,
            }
        ),
        "dependency-groups": Table(other=_REQUIREMENTS),
        "tool": Table(
            {
                **{name: Tool(name) for name in TOOLS},
                "poetry": Table(
                    {
                        "dependencies": _POETRY,
                        "dev-dependencies": _POETRY,
                        "group": Table(other=Table({"dependencies": _POETRY})),
                        **{key: INERT for key in _POETRY_ABOUT},
                    }
                ),
                "uv": Table(
                    {
                        "dev-dependencies": _REQUIREMENTS,
                        "constraint-dependencies": _REQUIREMENTS,
                        "override-dependencies": _REQUIREMENTS,
                    }
                ),
                "pdm": Table({"dev-dependencies": Table(other=_REQUIREMENTS)}),
            }
        ),
    }
)


def inert(before: str, after: str, tools: frozenset[str] | None) -> str | None:
    """`toml_rules.inert` with RULES, a tool's table inert unless a failed test may run the
    tool (`may_run`). `tools`: what the failed tests' complete walks may run (the Python
    walk's `Runs`), None when a walk could not tell."""
    return toml_rules.inert(RULES, before, after, may_run(before, after, tools))


def may_run(before: str, after: str, tools: frozenset[str] | None) -> Callable[[str], bool]:
    """Whether a failed test may run a tool with these settings: a linter, when a walk
    found code that names it; a type checker, also when a walk could not tell (`tools`
    None), or when pyproject.toml configures a pytest plugin of it (module doc)."""
    plugins = _pytest_plugins(before) | _pytest_plugins(after)

    def runs(tool: str) -> bool:
        if tools is not None and tool in tools:
            return True
        return tool in TYPE_CHECKERS and (tools is None or tool in plugins)

    return runs


def _pytest_plugins(text: str) -> frozenset[str]:
    """The type checkers a pytest plugin configured here runs: named under
    `[tool.pytest...]` (`addopts = "--mypy"`), or in a string naming pytest too (a
    requirement on `pytest-mypy`, `pytest-mypy-plugins`, `pytest-pyright`)."""
    document = values.loads_toml(text)
    if document is None:
        return TYPE_CHECKERS
    tool = document.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    found = set(named_in("\n".join(_words(pytest))))
    for word in _words(document):
        if "pytest" in word.lower():
            found |= named_in(word)
    return frozenset(found) & TYPE_CHECKERS


def _words(value: Any) -> list[str]:
    """Every key and string of a TOML value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [word for key, item in value.items() for word in [key, *_words(item)]]
    if isinstance(value, list):
        return [word for item in value for word in _words(item)]
    return []


def reads_tool_settings(test_id: str) -> bool:
    """Whether a failed test may run one of those tools with the repository's settings: its
    id names one, whatever the case. A pytest plugin's lint item (`src/app.py::mypy`,
    `::ruff::format`, `::PYLINT`) does; so may a test named after the tool
    (`tests/test_mypy_plugin.py` running `mypy.api`). A name that only looks like one
    (`test_blacklist`) costs a caveat, never a false "unrelated"."""
    lowered = test_id.lower()
    return any(name in lowered for name in (*TOOLS, *_LINT_ITEMS))
