"""pyproject.toml: which of its parts cannot change what a test imports or reads
(`toml_rules`).

Inert: a requirement that came or went in `[project]`'s `dependencies` and
`optional-dependencies`, `[dependency-groups]`, uv's and PDM's development dependencies,
Poetry's dependency tables (a version change), unless it is a direct reference (`name @
file:///...`, `name @ git+...`) or a local path (Poetry's `path`, `develop`); `[project]`'s
`classifiers`, `keywords` and `urls`; the sections of linters, formatters and release tools
(`[tool.ruff]`, `[tool.black]`, `[tool.towncrier]`, ...; not the type checkers'), which no
test reads but one that runs the tool (a pytest plugin's lint item, `path.py::ruff`:
`reads_tool_settings`).
Everything else counts: `[build-system]`; `[project]`'s `name`, `version` and its other
metadata (a package reads them at run time through `importlib.metadata`), `scripts` and
`entry-points` (pytest plugins are entry points); `[tool.pytest.ini_options]`,
`[tool.coverage]` (`fail_under` fails the run); the package discovery of
`[tool.setuptools]`, `[tool.hatch]`, Poetry's `packages`; `[tool.uv]`'s sources and
workspace.
"""

from __future__ import annotations

from bot.triage.manifests.toml_rules import INERT, Dependencies, Requirements, Table

# Tools that check or format code, or write changelogs and release numbers: never run by a
# test, but by one named after the tool (`reads_tool_settings`). Not the type checkers
# (mypy, pyright): typing test suites run them on every case (pytest-mypy-plugins'
# `typesafety/test_x.yml::case`) under names that do not say so, so their sections count.
LINTERS = frozenset(
    {
        "autopep8", "bandit", "black", "bumpversion", "check-manifest", "codespell",
        "commitizen", "doc8", "docformatter", "flake8", "interrogate", "isort", "mdformat",
        "pydocstyle", "pylint", "pyproject-fmt", "rstcheck", "ruff", "sqlfluff", "towncrier",
        "typos", "vulture", "yapf",
    }
)  # fmt: skip
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
                **{name: INERT for name in LINTERS},
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


def reads_tool_settings(test_id: str) -> bool:
    """Whether a failed test may run one of those tools with the repository's settings: its
    id names one, whatever the case. A pytest plugin's lint item (`src/app.py::mypy`,
    `::ruff::format`, `::PYLINT`) does; so may a test named after the tool
    (`tests/test_mypy_plugin.py` running `mypy.api`). A name that only looks like one
    (`test_blacklist`) costs a caveat, never a false "unrelated"."""
    lowered = test_id.lower()
    return any(name in lowered for name in (*LINTERS, *_LINT_ITEMS))
