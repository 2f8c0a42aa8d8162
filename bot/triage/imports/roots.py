"""Where a Python test's imports are looked up: the roots pytest and the packaging put on
`sys.path`, read from the repository's own configuration (parsed, never run)."""

from __future__ import annotations

import configparser
from collections.abc import Iterable, Mapping

from bot.triage.imports import values

PYPROJECT = "pyproject.toml"
SETUP_CFG = "setup.cfg"
PYTEST_INI = "pytest.ini"
CONFIG_FILES = (PYPROJECT, SETUP_CFG, PYTEST_INI)
SRC = "src"


def configured_roots(configs: Mapping[str, str]) -> list[str]:
    """The directories the repo's configuration puts on `sys.path`, in its order: pytest's
    `pythonpath` (pyproject's `[tool.pytest]` or `[tool.pytest.ini_options]`,
    `pytest.ini`'s `[pytest]`, setup.cfg's `[tool:pytest]`), then the package directories
    of the packaging (setuptools `package-dir`/`packages.find.where`, setup.cfg's `package_dir` and
    `[options.packages.find] where`, poetry's `packages.from`, hatch's wheel `packages`).
    `configs` maps the config file's name to its text; a file that does not parse adds
    nothing."""
    roots: list[str] = []
    if PYPROJECT in configs:
        roots += _pyproject(configs[PYPROJECT])
    for name, section in ((PYTEST_INI, "pytest"), (SETUP_CFG, "tool:pytest")):
        if name in configs:
            roots += _ini_pythonpath(configs[name], section)
    if SETUP_CFG in configs:
        roots += _setup_cfg_packages(configs[SETUP_CFG])
    return _unique(_clean(root) for root in roots if not root.startswith(("/", "\\")))


def _pyproject(text: str) -> list[str]:
    data = values.loads_toml(text)
    if data is None:
        return []
    tool = values.table(data.get("tool"))
    # pytest 9 reads `[tool.pytest]` natively; earlier versions `[tool.pytest.ini_options]`.
    roots = values.strings(values.at(tool, "pytest", "pythonpath"))
    roots += values.strings(values.at(tool, "pytest", "ini_options", "pythonpath"))
    package_dir = values.table(values.at(tool, "setuptools", "package-dir"))
    roots += [where for key, where in package_dir.items() if key == "" and isinstance(where, str)]
    roots += values.strings(values.at(tool, "setuptools", "packages", "find", "where"))
    for package in values.items(values.at(tool, "poetry", "packages")):
        origin = values.table(package).get("from")
        if isinstance(origin, str):
            roots.append(origin)
    wheel = values.strings(values.at(tool, "hatch", "build", "targets", "wheel", "packages"))
    roots += [path.rpartition("/")[0] for path in wheel if "/" in path]
    return roots


def _ini_pythonpath(text: str, section: str) -> list[str]:
    parser = _ini(text)
    if parser is None or not parser.has_option(section, "pythonpath"):
        return []
    return parser.get(section, "pythonpath").split()


def _setup_cfg_packages(text: str) -> list[str]:
    parser = _ini(text)
    if parser is None:
        return []
    roots: list[str] = []
    if parser.has_option("options", "package_dir"):
        for line in parser.get("options", "package_dir").splitlines():
            key, separator, where = line.partition("=")
            if separator and not key.strip():
                roots.append(where.strip())
    if parser.has_option("options.packages.find", "where"):
        roots += parser.get("options.packages.find", "where").split()
    return roots


def _ini(text: str) -> configparser.ConfigParser | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except (configparser.Error, UnicodeError):
        return None
    return parser


def _clean(root: str) -> str:
    """A root as a repo path: "." and "" are the repo itself; "./src/" is "src"."""
    parts = [part for part in root.replace("\\", "/").split("/") if part not in ("", ".")]
    return "/".join(parts)


def _unique(roots: Iterable[str]) -> list[str]:
    # A root that climbs out of the repo (`..`) names nothing we can read.
    seen: list[str] = []
    for root in roots:
        if ".." not in root.split("/") and root not in seen:
            seen.append(root)
    return seen
