"""Which changed paths a failed test could import at all (bot/triage/importable.py)."""

from __future__ import annotations

import pytest

from bot.triage.importable import (
    could_import,
    is_documentation,
    sibling_test,
)

PY_TEST = "tests/test_invoice.py"
TS_TEST = "web/src/__tests__/cart.test.ts"


@pytest.mark.parametrize(
    ("test_file", "changed", "expected"),
    [
        # documentation and pictures: no test imports them
        (PY_TEST, "README.md", False),
        (PY_TEST, "docs/guide/install.rst", False),
        (PY_TEST, "docs/conf.py", False),
        (PY_TEST, "CHANGELOG", False),
        (PY_TEST, "LICENSE.txt", False),
        (PY_TEST, "notes/design.txt", False),
        (PY_TEST, "assets/logo.png", False),
        # ...but requirements and CMake files build or install
        (PY_TEST, "requirements-dev.txt", True),
        (PY_TEST, "CMakeLists.txt", True),
        # another language's source
        (PY_TEST, "cmd/server/main.go", False),
        (PY_TEST, "web/src/cart.ts", False),
        (PY_TEST, "app/models/user.rb", False),
        (PY_TEST, "src/main/java/org/acme/Order.java", False),
        (TS_TEST, "src/billing/tax.py", False),
        # the same language, or its family
        (PY_TEST, "src/billing/tax.py", True),
        (PY_TEST, "src/billing/tax.pyi", True),
        (TS_TEST, "web/src/cart.js", True),
        (TS_TEST, "web/src/cart.tsx", True),
        ("src/test/kotlin/OrderTest.kt", "src/main/java/org/acme/Order.java", True),
        # native code builds extensions any test can load
        (PY_TEST, "src/_speedups.c", True),
        (PY_TEST, "src/lib.rs", True),
        (PY_TEST, "src/fast.pyx", True),
        (TS_TEST, "native/addon.cc", True),
        # files of no known kind: unsure means "could"
        (PY_TEST, "tests/data/invoice.json", True),
        (PY_TEST, "config/settings.yaml", True),
        (TS_TEST, "web/src/Cart.vue", True),
        # a test file of no known language
        ("tests/run.sh", "src/main.go", True),
    ],
)
def test_could_import_by_kind_and_language(test_file: str, changed: str, expected: bool) -> None:
    assert could_import(test_file, changed) is expected


def test_code_of_another_project_of_the_repository_can_be_imported() -> None:
    """Projects import their siblings by package name (workspaces, editable installs, path
    dependencies): another project's code is never ruled out by where it lives."""
    test_file = "services/api/tests/test_app.py"
    assert could_import(test_file, "services/worker/src/worker/jobs.py") is True
    assert could_import("packages/app/src/cart.test.ts", "packages/utils/src/round.ts") is True


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.rst", True),
        ("docs/index.md", True),
        ("doc/api/Makefile", True),
        ("src/docs.py", False),
        ("src/docs/handler.py", False),  # only a top-level docs folder is prose
        ("requirements.txt", False),
        ("constraints-ci.txt", False),
        ("tests/snapshots/page.svg", True),
        ("Security.md", True),
    ],
)
def test_is_documentation(path: str, expected: bool) -> None:
    assert is_documentation(path) is expected


@pytest.mark.parametrize(
    ("test_file", "changed", "expected"),
    [
        ("tests/test_invoice.py", "tests/test_cart.py", True),
        ("tests/test_invoice.py", "tests/cart_test.py", True),
        ("tests/test_invoice.py", "tests/helpers.py", False),  # not a test file
        ("tests/test_invoice.py", "tests/conftest.py", False),  # runs for it
        ("tests/test_invoice.py", "tests/unit/test_cart.py", False),  # another folder
        ("tests/test_invoice.py", "tests/test_invoice.py", False),  # itself
        ("web/a.test.ts", "web/b.spec.js", True),
        ("web/a.test.ts", "web/b.ts", False),
        ("web/a.test.ts", "web/test_b.py", False),  # another language
        ("pkg/a_test.go", "pkg/b_test.go", False),  # Go tests of a package share it
    ],
)
def test_sibling_test_files(test_file: str, changed: str, expected: bool) -> None:
    assert sibling_test(test_file, changed) is expected
