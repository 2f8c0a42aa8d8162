"""The languages whose imports the walk reads, in one place (see `language.py` for how to
add one). A test file no language here reads keeps the name-and-folder rules of
`bot/triage/footprint.py`."""

from __future__ import annotations

from bot.triage.imports.csharp import CSHARP
from bot.triage.imports.golang import GO
from bot.triage.imports.javascript import JAVASCRIPT, TYPESCRIPT
from bot.triage.imports.jvm import JVM
from bot.triage.imports.language import Language
from bot.triage.imports.php import PHP
from bot.triage.imports.python import PYTHON
from bot.triage.imports.ruby import RUBY
from bot.triage.imports.rust import RUST

LANGUAGES: tuple[Language, ...] = (PYTHON, GO, JVM, JAVASCRIPT, TYPESCRIPT, RUBY, PHP, CSHARP, RUST)


def language_of(test_file: str) -> Language | None:
    """The language that reads `test_file`'s imports, if any."""
    return next((language for language in LANGUAGES if language.tests(test_file)), None)
