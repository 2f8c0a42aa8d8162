"""Layers import only downward: each part of `bot/` imports only the parts the rule lets it.

Every import counts, also one inside a function or under `if TYPE_CHECKING:`, since either
still ties the importer to the imported code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

BOT = Path(__file__).resolve().parent.parent / "bot"

# Which part of bot/ (a subpackage, or a module at its top) may import which, besides itself.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "bot": frozenset(),
    # Value types shared by parts that must not import each other.
    "bot.shared": frozenset(),
    # The pure core: it decides from plain data and knows nothing of who gathers or acts.
    "bot.triage": frozenset({"bot.shared"}),
    # Render and keep the core's values; neither knows the other.
    "bot.report": frozenset({"bot.triage", "bot.shared"}),
    "bot.store": frozenset({"bot.triage", "bot.shared"}),
    # GitHub's REST API: knows neither the store nor the core.
    "bot.github": frozenset({"bot.metrics", "bot.shared"}),
    # The simulator stands for GitHub: it knows nothing of the bot it talks to.
    "bot.sim": frozenset(),
    "bot.commands": frozenset(),
    "bot.events": frozenset(),
    "bot.logs": frozenset(),
    "bot.metrics": frozenset(),
    "bot.throttle": frozenset(),
    "bot.config": frozenset({"bot.triage"}),
    # Which settings files apply and how they merge: pure, on the config's model.
    "bot.repo_settings": frozenset({"bot.config"}),
    "bot.connections": frozenset({"bot.config", "bot.metrics"}),
    "bot.inbox": frozenset({"bot.config", "bot.github", "bot.logs", "bot.metrics", "bot.store"}),
    # The action layer: gathers with github/ and store/, decides with triage/, acts.
    "bot.handlers": frozenset(
        {
            "bot.commands",
            "bot.config",
            "bot.events",
            "bot.github",
            "bot.inbox",
            "bot.logs",
            "bot.metrics",
            "bot.report",
            "bot.repo_settings",
            "bot.store",
            "bot.triage",
            "bot.shared",
        }
    ),
    "bot.dashboard": frozenset({"bot.connections", "bot.report", "bot.store", "bot.throttle"}),
    "bot.web": frozenset(
        {"bot.connections", "bot.dashboard", "bot.inbox", "bot.logs", "bot.metrics", "bot.store"}
    ),
    # What puts the rest together.
    "bot.runtime": frozenset(
        {
            "bot.config",
            "bot.connections",
            "bot.dashboard",
            "bot.github",
            "bot.handlers",
            "bot.inbox",
            "bot.metrics",
            "bot.store",
            "bot.triage",
            "bot.web",
            "bot.webhook_proxy",
        }
    ),
    # WEBHOOK_PROXY_URL: a smee.io channel's deliveries relayed to the webhook path.
    "bot.webhook_proxy": frozenset(),
    "bot.demo": frozenset(
        {
            "bot.config",
            "bot.logs",
            "bot.report",
            "bot.runtime",
            "bot.sim",
            "bot.store",
            "bot.triage",
        }
    ),
    "bot.tryout": frozenset(
        {
            "bot.config",
            "bot.events",
            "bot.github",
            "bot.handlers",
            "bot.logs",
            "bot.metrics",
            "bot.report",
            "bot.store",
            "bot.triage",
        }
    ),
    # `flakybot config check|schema`: settings read as the bot reads them, with a token.
    "bot.config_check": frozenset(
        {
            "bot.config",
            "bot.handlers",
            "bot.logs",
            "bot.metrics",
            "bot.repo_settings",
            "bot.tryout",
        }
    ),
    # Job-log files on disk (a log, gh's output, a run's log archive) for `flakybot parse`.
    "bot.job_logs": frozenset({"bot.triage"}),
    # `flakybot setup`: the manifest flow and the page that drives it.
    "bot.registration": frozenset(),
    "bot.setup_page": frozenset({"bot.registration"}),
    "bot.cli": frozenset(
        {
            "bot.config",
            "bot.config_check",
            "bot.demo",
            "bot.job_logs",
            "bot.logs",
            "bot.registration",
            # text.reveal: what the commands print shows control characters written out.
            "bot.report",
            "bot.runtime",
            "bot.setup_page",
            "bot.store",
            "bot.triage",
            "bot.tryout",
        }
    ),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    """The rule's unit a module belongs to: `bot.store.models` is in `bot.store`."""
    return ".".join(module.split(".")[:2])


def imported(
    source: str, module: str, is_package: bool, known: set[str]
) -> Iterator[tuple[int, str, str]]:
    """(line, module, name) for every import in the source, wherever it stands.

    `from bot.x import y` imports the module `bot.x.y` when there is one, else `y` of `bot.x`;
    `import bot.x` has no name."""
    package = (module if is_package else module.rpartition(".")[0]).split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # `from .. import x`: one level is the package itself
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:
                    yield node.lineno, submodule, ""
                else:
                    yield node.lineno, base, alias.name


def bot_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(BOT.rglob("*.py"))}


def violations() -> list[str]:
    """One line per import statement that breaks the rule, naming what it imports."""
    modules = bot_modules()
    found: dict[tuple[str, int, str], list[str]] = {}
    for module, path in modules.items():
        own = part_of(module)
        allowed = MAY_IMPORT.get(own, frozenset()) | {own}
        source = path.read_text(encoding="utf-8")
        for line, target, name in imported(
            source, module, path.name == "__init__.py", set(modules)
        ):
            if target.split(".")[0] == "bot" and part_of(target) not in allowed:
                where = str(path.relative_to(BOT.parent))
                found.setdefault((where, line, target), []).extend([name] if name else [])
    return [
        f"{where}:{line} imports {target}" + (f" ({', '.join(names)})" if names else "")
        for (where, line, target), names in sorted(found.items())
    ]


def test_every_import_points_down() -> None:
    found = violations()
    assert not found, "imports against the layering rule:\n" + "\n".join(found)


def test_the_rule_places_every_part_of_bot_and_names_only_real_ones() -> None:
    parts = {part_of(module) for module in bot_modules()}
    named = set(MAY_IMPORT) | set().union(*MAY_IMPORT.values())
    assert parts - set(MAY_IMPORT) == set(), "parts of bot/ the rule does not place"
    assert named - parts == set(), "parts the rule names that bot/ does not have"


def test_imports_in_functions_type_checking_blocks_and_relative_ones_count() -> None:
    source = """
from typing import TYPE_CHECKING
import bot.logs
from . import models
from ..store import base

if TYPE_CHECKING:
    from bot.store.models import RunRecord

def late() -> None:
    from bot.handlers import checks
"""
    known = {"bot.logs", "bot.triage.models", "bot.store", "bot.store.base", "bot.handlers.checks"}
    found = list(imported(source, "bot.triage.history", False, known))
    assert found == [
        (2, "typing", "TYPE_CHECKING"),
        (3, "bot.logs", ""),
        (4, "bot.triage.models", ""),
        (5, "bot.store.base", ""),
        (8, "bot.store.models", "RunRecord"),
        (11, "bot.handlers.checks", ""),
    ]
