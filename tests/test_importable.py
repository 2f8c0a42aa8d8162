"""Which changed paths a failed test could import at all (bot/triage/importable.py)."""

from __future__ import annotations

import pytest

from bot.triage.importable import (
    could_import,
    is_documentation,
    is_prose,
    other_test_file,
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
    ("test_file", "path"),
    [
        (PY_TEST, "src/shop/history.py"),
        (PY_TEST, "src/authors.c"),
        (TS_TEST, "web/src/security.ts"),
        ("spec/models/user_spec.rb", "lib/acme/changes.rb"),
        ("pkg/a_test.go", "cmd/notice.go"),
        ("src/test/java/a/OrderTest.java", "src/main/java/a/License.java"),
    ],
)
def test_code_named_like_a_page_of_prose_is_code(test_file: str, path: str) -> None:
    """`history.py` is a module, not a HISTORY file: a partial walk must not rule it out."""
    assert is_documentation(path) is False
    assert could_import(test_file, path) is True


@pytest.mark.parametrize(
    ("test_file", "changed", "expected"),
    [
        ("tests/test_invoice.py", "tests/test_cart.py", True),
        ("tests/test_invoice.py", "tests/cart_test.py", True),
        ("tests/test_invoice.py", "tests/unit/test_cart.py", True),  # another folder
        ("tests/test_invoice.py", "services/api/tests/test_app.py", True),  # another project
        ("tests/test_invoice.py", "tests/helpers.py", False),  # not a test file
        ("tests/test_invoice.py", "tests/conftest.py", False),  # runs for it
        ("tests/test_invoice.py", "tests/test_invoice.py", False),  # itself
        ("tests/test_invoice.py", "scripts/release.py", False),  # not a test file
        ("web/a.test.ts", "web/b.spec.js", True),
        ("web/a.test.ts", "web/b.ts", False),
        ("web/a.test.ts", "web/test_b.py", False),  # another language
        ("web/a.test.ts", "web/jest.setup.ts", False),  # setup, not a test
        ("spec/models/user_spec.rb", "spec/requests/orders_spec.rb", True),
        ("spec/models/user_spec.rb", "spec/spec_helper.rb", False),  # runs for every spec
        ("test/user_test.rb", "test/test_helper.rb", False),
        ("src/test/java/a/OrderTest.java", "src/test/kotlin/b/CartTest.kt", True),
        ("tests/Unit/OrderTest.php", "tests/Feature/CartTest.php", True),
        ("pkg/a_test.go", "pkg/b_test.go", False),  # Go tests of a package share it
        ("pkg/a_test.go", "cmd/b_test.go", True),
        # Type tests, checked on their own by tsd, vitest's typecheck or TSTyche (pinojs/pino
        # d981288b renames its test/types/*.test-d.ts to *.tst.ts).
        ("test/basic.test.js", "test/types/pino.test-d.ts", True),
        ("test/basic.test.js", "test/types/pino-import.tst.cts", True),
        ("test/types/pino.tst.ts", "test/basic.test.js", True),
        ("test/basic.test.js", "test/types/pino.ts", False),  # not a test file
    ],
)
def test_other_test_files_of_the_same_runner(test_file: str, changed: str, expected: bool) -> None:
    assert other_test_file(test_file, changed) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/README.md", True),
        ("tests/api/CHANGELOG.rst", True),
        ("packages/ui/LICENSE", True),
        ("docs/guide.md", True),
        ("tests/fixtures/README.md", False),  # test data a test may read
        ("tests/testdata/table.md", False),
        ("src/__snapshots__/page.md", False),
        ("tests/expected/output.txt", False),  # expected output, read at run time
        ("tests/images/logo.png", False),
        ("src/shop/history.py", False),
    ],
)
def test_is_prose(path: str, expected: bool) -> None:
    assert is_prose(path) is expected
