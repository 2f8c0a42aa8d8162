"""The tools whose settings a manifest holds and that a test may run: no I/O here. Python:
those of pyproject.toml's `[tool.<name>]` tables (`manifests/pyproject.py`); JavaScript:
TypeScript, whose settings are tsconfig.json's (`manifests/tsconfig.py`).

A test runs one through a pytest plugin's item, whose id names it (`src/app.py::mypy`,
`::ruff::format`), or through code of its closure that imports the tool's module
(`mypy.api.run`, `from pyright import ...`) or names it in a string or a name
(`subprocess.run(["mypy", "src"])`, `"-m", "pyright"`, `pytest.mark.mypy_testing`): the
Python walk records which tools each file so names (`python.tools_named`).
"""

from __future__ import annotations

import re

# Tools that check or format code, or write changelogs and release numbers.
LINTERS = frozenset(
    {
        "autopep8", "bandit", "black", "bumpversion", "check-manifest", "codespell",
        "commitizen", "doc8", "docformatter", "flake8", "interrogate", "isort", "mdformat",
        "pydocstyle", "pylint", "pyproject-fmt", "rstcheck", "ruff", "sqlfluff", "towncrier",
        "typos", "vulture", "yapf",
    }
)  # fmt: skip
# Type checkers: typing test suites run them on cases that are not Python tests
# (pytest-mypy-plugins' `typesafety/test_x.yml::case`), or from a test's code.
TYPE_CHECKERS = frozenset({"basedpyright", "mypy", "pyrefly", "pyright", "pytype", "ty"})
TOOLS = LINTERS | TYPE_CHECKERS
# A tool's name as a word of a string or an identifier: not inside a longer word, with `_`,
# `-` and `.` as separators ("pytest_mypy_plugins", "python -m mypy", "mypy.ini").
_NAMED = re.compile(
    r"(?<![A-Za-z0-9])("
    + "|".join(sorted((re.escape(name) for name in TOOLS), key=len, reverse=True))
    + r")(?![A-Za-z0-9])",
    re.IGNORECASE,
)


# Runners of a project's tasks, hooks or environments, which may run any of those tools with
# the project's settings (`subprocess.run(["pre-commit", "run"])`, `["make", "lint"]`):
# named as a word, or (a word of English too) as a whole string, a command's first word.
_TASK_RUNNERS = re.compile(r"(?<![A-Za-z0-9])(?:pre-commit|prek|tox|nox|poethepoet)(?![A-Za-z0-9])")
_TASK_COMMANDS = frozenset({"make", "invoke", "just", "poe", "hatch", "pdm", "task"})


def runs_tasks(string: str) -> bool:
    """Whether a whole string is a command that runs a project's tasks (`"make"`)."""
    return string.strip() in _TASK_COMMANDS


def named_in(text: str) -> frozenset[str]:
    """The tools `text` names as a word (case aside); a module's name spells `-` as `_`
    (`check_manifest`). A runner of tasks names them all."""
    spelled = text.replace("_", "-")
    if _TASK_RUNNERS.search(spelled.lower()):
        return TOOLS
    return frozenset(match.group(1).lower() for match in _NAMED.finditer(spelled))


# A JavaScript or TypeScript test runs TypeScript when its runner compiles it with TypeScript
# (`jsrunner.goes_through_typescript`), or when code it reaches names, in a string, a module
# that compiles with TypeScript or reads tsconfig.json (`require("typescript")`,
# `"ts-node/register"`), or one of their commands or that file as a word (`execSync("npx
# tsc")`, `readFileSync("tsconfig.json")`): then tsconfig.json's settings are the test's.
TYPESCRIPT = "typescript"
_TYPESCRIPT_MODULES = re.compile(
    r"(?:typescript|ts-node|tsx|ts-jest|tsd|tstyche|vue-tsc|ts-patch|ttypescript|tsconfig-paths"
    r"|vite-tsconfig-paths|@swc-node/register|esbuild-register)(?:/.*)?",
    re.DOTALL,
)
_TYPESCRIPT_WORDS = re.compile(
    r"(?<![A-Za-z0-9])(?:tsc|tsconfig|ts-node|tsx|tstyche|tsd|vue-tsc)(?![A-Za-z0-9])"
)


def names_typescript(text: str) -> bool:
    """Whether a string of a script names TypeScript (above): the whole string a module's
    name, or a command's or tsconfig as a word. "please typescript" in a test's title does
    not."""
    return bool(_TYPESCRIPT_MODULES.fullmatch(text.strip()) or _TYPESCRIPT_WORDS.search(text))


# A .NET project's metadata properties (`Version`, `Description`, `Authors`, ...) are compiled
# into the assembly as attributes, which code reads only through reflection on the assembly
# (`GetCustomAttribute<AssemblyDescriptionAttribute>()`, `GetName().Version`,
# `FileVersionInfo`) or a generated `ThisAssembly` class: a C# file naming one of these may
# read them (`manifests/msbuild.py`).
ASSEMBLY_METADATA = "assembly metadata"
# (Writing them, `[assembly: AssemblyTitle("...")]`, is not reading them.)
_ASSEMBLY_METADATA = re.compile(
    r"\b(?:GetCustomAttributes?|CustomAttributes|GetName|FileVersionInfo|ThisAssembly)\b"
)


def reads_assembly_metadata(text: str) -> bool:
    """Whether C# code may read its assembly's metadata (above)."""
    return _ASSEMBLY_METADATA.search(text) is not None
