"""A test whose code under test is chosen by configuration (a framework's routing) is never
walked "complete": its imports cannot rule a change out."""

from __future__ import annotations

import pytest

from bot.shared import Tree, TreeFile
from bot.triage.imports import walk
from bot.triage.imports.routed import routed_by

DJANGO_TEST = """\
from django.test import TestCase
from django.urls import reverse


class InvoiceViewTests(TestCase):
    def test_index(self):
        response = self.client.get(reverse("invoices:index"))
        self.assertEqual(response.status_code, 200)
"""


@pytest.mark.parametrize(
    ("language", "source", "router"),
    [
        ("Python", DJANGO_TEST, "Django's URL configuration"),
        ("Python", "from rest_framework.test import APIClient\n", "Django's URL configuration"),
        (
            "Python",
            "@pytest.mark.django_db\ndef test_x(client): ...\n",
            "Django's URL configuration",
        ),
        ("Python", "from billing.tax import vat_for\n", None),
        ("Python", "# from django.test import TestCase\nx = 1\n", None),
        (
            "PHP",
            "<?php\nnamespace Tests\\Feature;\n\nuse Tests\\TestCase;\n\nclass ExampleTest extends "
            "TestCase {\n    public function test_home() { $this->get('/')->assertOk(); }\n}\n",
            "Laravel's routes",
        ),
        ("PHP", "<?php\nuse PHPUnit\\Framework\\TestCase;\n", None),
        (
            "Ruby",
            'require "rails_helper"\n\nRSpec.describe "Carts", type: :request do\nend\n',
            ("Rails' routes"),
        ),
        (
            "Ruby",
            "class CartsTest < ActionDispatch::IntegrationTest\nend\n",
            ("Rails' routes"),
        ),
        # A model spec names its model: Zeitwerk's rule finds it (imports/ruby.py).
        ("Ruby", 'require "rails_helper"\n\nRSpec.describe Checkout::Payment do\nend\n', None),
        ("Ruby", 'require_relative "../lib/cart"\n', None),
        (
            "Java/Kotlin/Scala",
            "@SpringBootTest\nclass OrdersApplicationTests {}\n",
            "the framework's component scanning",
        ),
        (
            "C#",
            "public class Api : IClassFixture<WebApplicationFactory<Program>> {}",
            ("ASP.NET Core's routing"),
        ),
        ("Go", 'import "net/http/httptest"\n', None),
    ],
)
def test_the_frameworks_that_route_by_configuration_are_recognised(
    language: str, source: str, router: str | None
) -> None:
    assert routed_by(language, source) == router


def test_a_django_test_is_walked_but_never_complete() -> None:
    files = {
        "shop/tests/test_views.py": DJANGO_TEST,
        "shop/__init__.py": "",
        "shop/tests/__init__.py": "",
        "shop/views.py": "def index(request): ...\n",
    }
    tree = Tree(
        {
            path: TreeFile(sha=f"{n:040x}", size=len(text))
            for n, (path, text) in enumerate(files.items())
        }
    )

    found = walk("shop/tests/test_views.py", tree, files)

    assert found.partial
    assert found.cut == (
        "shop/tests/test_views.py reaches code through Django's URL configuration, which no "
        "import names",
    )
    assert "shop/views.py" not in {reached.path for reached in found.reached}
