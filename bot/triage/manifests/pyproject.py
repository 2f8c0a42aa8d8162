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
A type checker's table also counts when a walk could not tell (partial, or none). Typing
suites run type checkers on cases that are not Python tests (pytest-mypy-plugins'
`typesafety/test_x.yml::case`) under ids that do not name them: such a case has no walk,
and the verdict never clears it by names (anything but prose it could be checked against
stays open, pyproject.toml included: `verdict._open_paths`).
Everything else counts: `[build-system]`; `[project]`'s `name`, `version` and its other
metadata (a package reads them at run time through `importlib.metadata`), `scripts` and
`entry-points` (pytest plugins are entry points); `[tool.pytest.ini_options]`,
`[tool.coverage]` (`fail_under` fails the run); the package discovery of
`[tool.setuptools]`, `[tool.hatch]`, Poetry's `packages`; `[tool.uv]`'s sources and
workspace.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.triage.imports.tools import TOOLS, TYPE_CHECKERS
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
    return toml_rules.inert(RULES, before, after, may_run(tools))


def may_run(tools: frozenset[str] | None) -> Callable[[str], bool]:
    """Whether a failed test may run a tool with these settings: when a walk found code
    that names it, and a type checker also when a walk could not tell (`tools` None)."""

    def runs(tool: str) -> bool:
        if tools is not None and tool in tools:
            return True
        return tool in TYPE_CHECKERS and tools is None

    return runs


def reads_tool_settings(test_id: str) -> bool:
    """Whether a failed test may run one of those tools with the repository's settings: its
    id names one, whatever the case. A pytest plugin's lint item (`src/app.py::mypy`,
    `::ruff::format`, `::PYLINT`) does; so may a test named after the tool
    (`tests/test_mypy_plugin.py` running `mypy.api`). A name that only looks like one
    (`test_blacklist`) costs a caveat, never a false "unrelated"."""
    lowered = test_id.lower()
    return any(name in lowered for name in (*TOOLS, *_LINT_ITEMS))
