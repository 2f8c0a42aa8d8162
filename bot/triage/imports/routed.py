"""Tests whose code under test is chosen by configuration, not by imports: no I/O here.

A Django test's client reaches views through the `ROOT_URLCONF` setting, a Laravel feature
test through the routes file, a Rails request spec through `config/routes.rb`, a Spring Boot
test through component scanning. None of that code is imported by the test, so a walk of its
imports, however complete, cannot rule it out: such a test's walk is marked partial and the
verdict never calls its failure unrelated on a change the walk could not see.

The markers are read in the test file and the files that run for it (conftest.py,
spec_helper.rb, ...): a framework's test base class, client or annotation, as each
framework's own documentation writes a test. A marker that over-matches costs a
"cannot rule out"; one that is missed, a false "unrelated".
"""

from __future__ import annotations

import re

# language name -> (marker, what routes the test's requests). Spaces within a line only after
# `^`: a `\s*` would run over every following blank line, from each line start.
_MARKERS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "Python": (
        (
            re.compile(
                r"^[ \t]*(?:from|import)[ \t]+(?:django\.test|rest_framework\.test)\b", re.M
            ),
            "Django's URL configuration",
        ),
        (re.compile(r"^[ \t]*(?:from|import)[ \t]+channels\.testing\b", re.M), "Channels' routing"),
        (
            re.compile(r"^[ \t]*(?:from|import)[ \t]+pytest_django\b|\bdjango_db\b", re.M),
            "Django's URL configuration",
        ),
    ),
    "PHP": (
        (
            re.compile(r"Illuminate\\Foundation\\Testing|\buse\s+Tests\\TestCase\b"),
            "Laravel's routes",
        ),
        (re.compile(r"Symfony\\Bundle\\FrameworkBundle\\Test\\"), "Symfony's routing"),
    ),
    "Ruby": (
        (
            re.compile(
                r"ActionDispatch::IntegrationTest|ActionController::TestCase|"
                r"ApplicationSystemTestCase|\btype:\s*:(?:request|controller|system|feature)\b"
            ),
            "Rails' routes",
        ),
    ),
    "Java/Kotlin/Scala": (
        (
            re.compile(
                r"@(?:SpringBootTest|WebMvcTest|WebFluxTest|DataJpaTest|QuarkusTest|MicronautTest)"
                r"\b|\bMockMvc\b"
            ),
            "the framework's component scanning",
        ),
    ),
    "C#": ((re.compile(r"\bWebApplicationFactory\b"), "ASP.NET Core's routing"),),
}


def routed_by(language: str, source: str) -> str | None:
    """What chooses the code this file's test runs, when configuration rather than
    imports does: "Django's URL configuration"; None otherwise."""
    for marker, router in _MARKERS.get(language, ()):
        if marker.search(source):
            return router
    return None
