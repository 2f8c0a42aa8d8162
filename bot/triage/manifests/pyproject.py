"""pyproject.toml: which of its parts cannot change what a test imports or reads
(`toml_rules`).

Inert: a requirement that came or went in `[project]`'s `dependencies` and
`optional-dependencies`, `[dependency-groups]`, uv's and PDM's development dependencies,
Poetry's dependency tables (a version change), unless it is a direct reference (`name @
file:///...`, `name @ git+...`) or a local path (Poetry's `path`, `develop`); `[project]`'s
`classifiers`, `keywords` and `urls`; the sections of linters, formatters and release
tools (`[tool.ruff]`, `[tool.mypy]`, `[tool.towncrier]`, ...), which no test reads (a
pytest plugin's lint item, `path.py::mypy`, does: `lint_item`). Everything else counts:
`[build-system]`; `[project]`'s `name`, `version` and its other metadata (a package reads
them at run time through `importlib.metadata`), `scripts` and `entry-points` (pytest
plugins are entry points); `[tool.pytest.ini_options]`, `[tool.coverage]` (`fail_under`
fails the run); the package discovery of `[tool.setuptools]`, `[tool.hatch]`, Poetry's
`packages`; `[tool.uv]`'s sources and workspace.
"""

from __future__ import annotations

from bot.triage.manifests.toml_rules import INERT, Dependencies, Requirements, Table

# Tools that check or format code, or write changelogs and release numbers: never run by a
# test (but by a pytest plugin's lint item, `LINT_ITEMS`).
LINTERS = frozenset(
    {
        "autopep8", "bandit", "basedpyright", "black", "bumpversion", "check-manifest",
        "codespell", "commitizen", "doc8", "docformatter", "flake8", "interrogate", "isort",
        "mdformat", "mypy", "pydocstyle", "pylint", "pyproject-fmt", "pyright", "rstcheck",
        "ruff", "sqlfluff", "towncrier", "typos", "vulture", "yapf",
    }
)  # fmt: skip
# The items pytest plugins make of a file to lint it (`src/app.py::mypy`, pytest-ruff's
# `::ruff::format`, pytest-flake8's `::flake-8::FLAKE8`): they read the linters' sections.
LINT_ITEMS = frozenset(
    {
        "mypy", "mypy-status", "ruff", "black", "isort", "flake-8", "flake8", "pylint",
        "pycodestyle", "pydocstyle", "codespell", "bandit",
    }
)  # fmt: skip
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


def lint_item(test_id: str) -> bool:
    """Whether a failed test is a pytest plugin's lint item: a part after the file's `::`
    is one (`LINT_ITEMS`), whatever its case (pytest-pylint's `::PYLINT`)."""
    return any(part.lower() in LINT_ITEMS for part in test_id.split("::")[1:])
