"""A file the pull request removed, judged against what the closure's imports could have
named (bot/triage/imports/removed.py): per language, one the imports name is kept and one
they do not name is ruled out; what cannot be told is kept."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from bot.shared import Source, Tree
from bot.store import Store
from bot.triage.imports import ImportWalk
from bot.triage.imports.languages import language_of
from bot.triage.imports.removed import could_be_named
from bot.triage.imports.walk import walk_from_json, walk_to_json
from tests.test_imports_walk import layout, walked


def named(test: str, head: Mapping[str, Source], removed: str, *gone: str) -> bool:
    """Whether the walk of `test` at the head (`removed` no longer in it) keeps `removed`."""
    assert removed not in head
    language = language_of(test)
    assert language is not None
    found = walked(test, head)
    assert not found.partial, found.cut
    return could_be_named(found, language, removed, [removed, *gone])


PYPROJECT = '[project]\nname = "billing"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n'
PYTHON: dict[str, Source] = {
    "pyproject.toml": PYPROJECT,
    "src/billing/__init__.py": "",
    "src/billing/tax.py": (
        "import decimal\ntry:\n    from billing.rates import RATES\nexcept ImportError:\n"
        "    RATES = {}\n"
    ),
    "src/billing/ledger.py": "from . import audit\n",
    "tests/__init__.py": "",
    "tests/test_tax.py": "import json\nfrom billing import tax, ledger\nfrom . import helpers\n",
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("src/billing/rates.py", True),  # `from billing.rates import RATES` behind a fallback
        ("src/billing/rates/__init__.py", True),  # the same module as a package
        ("src/billing/audit.py", True),  # `from . import audit` in the package
        ("tests/helpers.py", True),  # `from . import helpers` in the test's package
        ("tests/conftest.py", True),  # pytest runs it for the test, no import names it
        ("conftest.py", True),
        ("lib/json.py", True),  # `import json` may have been it: any folder may be a root
        ("src/billing/legacy.py", False),
        ("src/reports/rates.py", False),  # `rates`, but not in the package `billing`
        ("tools/release.py", False),
        ("tests/unit/conftest.py", False),  # below the test's folder: does not run for it
    ],
)
def test_python(removed: str, kept: bool) -> None:
    assert named("tests/test_tax.py", PYTHON, removed) is kept


def test_python_a_package_init_gone_with_the_package_left_as_a_namespace() -> None:
    head = {path: text for path, text in PYTHON.items() if path != "src/billing/__init__.py"}
    assert named("tests/test_tax.py", head, "src/billing/__init__.py")


def test_python_a_removed_root_configuration_keeps_every_removed_file() -> None:
    """A gone pyproject.toml may have put other roots on the path at the base commit."""
    assert named("tests/test_tax.py", PYTHON, "tools/release.py", "setup.cfg")
    assert not named("tests/test_tax.py", PYTHON, "tools/release.py", "docs/setup.md")


GO: dict[str, Source] = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "tax/tax.go": 'package tax\n\nimport (\n\t"fmt"\n\t"example.com/shop/rates"\n)\n',
    "tax/tax_test.go": 'package tax\n\nimport "testing"\n',
    "rates/rates.go": "package rates\n",
    "ledger/ledger.go": "package ledger\n",
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("rates/eu.go", True),  # built with the package the test imports
        ("tax/vat.go", True),  # the test's own package
        ("vendor/example.com/shop/rates/rates.go", True),
        ("geo/geo.go", True),  # an imported package emptied whole: `example.com/shop/geo`
        ("ledger/journal.go", False),  # a package nothing imports
        ("rates/internal/cache.go", False),  # a sub-folder is another package
        ("fmt/print.go", False),
    ],
)
def test_go(removed: str, kept: bool) -> None:
    head = {**GO, "tax/geo.go": 'package tax\n\nimport "example.com/shop/geo"\n'}
    assert named("tax/tax_test.go", head, removed) is kept


def test_go_a_removed_go_mod_keeps_every_removed_file() -> None:
    assert named("tax/tax_test.go", GO, "ledger/journal.go", "ledger/go.mod")


JAVASCRIPT: dict[str, Source] = {
    "package.json": '{"name": "shop"}',
    "tsconfig.json": '{"compilerOptions": {"paths": {"@lib/*": ["./src/lib/*"]}}}',
    "src/cart.js": "const util = require('./util')\n",
    "src/util.js": "module.exports = {}\n",
    "src/lib/format.ts": "export const f = 1\n",
    "test/cart.test.js": (
        "const cart = require('../src/cart')\nconst { test } = require('node:test')\n"
        "const money = require('@lib/money')\nconst fmt = require('@lib/format')\n"
        "const react = require('react')\n"
    ),
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("src/util.ts", True),  # `./util` found util.js; the TypeScript file came first
        ("src/util/index.js", True),
        ("src/lib/money.ts", True),  # tsconfig `paths`: `@lib/money`
        ("src/lib/money/index.ts", True),
        ("src/ledger.js", False),
        ("src/lib/currency.ts", False),
        ("node_modules/react/index.js", False),  # installed, not the repository's
    ],
)
def test_javascript(removed: str, kept: bool) -> None:
    assert named("test/cart.test.js", JAVASCRIPT, removed) is kept


def test_javascript_a_workspace_package_s_subpath() -> None:
    """`@acme/utils/money` in packages/utils (no `exports`): `money` under its folder, `src/`
    or `lib/`, whichever held it at the base commit. (Had none of them held it at the head,
    the walk would be partial: the import names no file.)"""
    head: dict[str, Source] = {
        "package.json": '{"name": "root", "workspaces": ["packages/*"]}',
        "packages/utils/package.json": '{"name": "@acme/utils", "main": "src/index.js"}',
        "packages/utils/src/index.js": "module.exports = {}\n",
        "packages/utils/src/money.js": "module.exports = {}\n",
        "packages/web/test/a.test.js": "require('@acme/utils/money')\nrequire('@acme/utils')\n",
    }
    test = "packages/web/test/a.test.js"
    assert named(test, head, "packages/utils/money.js")
    assert named(test, head, "packages/utils/lib/index.js")
    assert not named(test, head, "packages/utils/src/dates.js")


@pytest.mark.parametrize(
    "config", ["package.json", "packages/old/package.json", "tsconfig.base.json"]
)
def test_javascript_removed_configuration_keeps_every_removed_file(config: str) -> None:
    """A workspace package removed whole takes its package.json with it: any bare specifier
    may have named it."""
    assert named("test/cart.test.js", JAVASCRIPT, "src/ledger.js", config)


JVM: dict[str, Source] = {
    "src/main/java/com/acme/shop/Cart.java": (
        "package com.acme.shop;\n\nimport com.acme.shop.rates.VatRates;\n"
        "import com.acme.util.*;\n\npublic class Cart {}\n"
    ),
    "src/main/java/com/acme/util/Strings.java": "package com.acme.util;\npublic class Strings {}\n",
    "src/main/java/com/acme/billing/Invoice.java": "package com.acme.billing;\nclass Invoice {}\n",
    "src/test/java/com/acme/shop/CartTest.java": (
        "package com.acme.shop;\n\nimport org.junit.jupiter.api.Test;\n\n"
        "class CartTest { @Test void total() { new Cart(); } }\n"
    ),
    "src/test/kotlin/com/acme/shop/TotalsTest.kt": (
        "package com.acme.shop\n\nimport com.acme.format.vatText\n\nclass TotalsTest\n"
    ),
    "src/main/kotlin/com/acme/format/Money.kt": "package com.acme.format\n\nfun money() = 1\n",
}


@pytest.mark.parametrize(
    ("test", "removed", "kept"),
    [
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/shop/rates/VatRates.java",
            True,
        ),
        # A class of the test's package is named unimported, by its file's name: one that
        # no file of the package read names is not what the test compiles with.
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/shop/Totals.java",
            False,
        ),
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/util/Dates.java",
            True,
        ),
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/billing/Tax.java",
            False,
        ),
        # An import that names no class may name a member of its package (`MoneyKt`, a
        # Kotlin file's functions; a static import): any file of the package is kept.
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/shop/rates/Eu.java",
            True,
        ),
        (
            "src/test/java/com/acme/shop/CartTest.java",
            "src/main/java/com/acme/shop/rates/eu/Zones.java",
            False,
        ),
        # A Kotlin top-level function is named by its package: any file of it may hold it.
        (
            "src/test/kotlin/com/acme/shop/TotalsTest.kt",
            "src/main/kotlin/com/acme/format/Vat.kt",
            True,
        ),
        (
            "src/test/kotlin/com/acme/shop/TotalsTest.kt",
            "src/main/java/com/acme/billing/Tax.java",
            False,
        ),
        # A Kotlin file's folder need not be its package's: a multiplatform `actual` in the
        # source root (JetBrains/markdown's src/jvmMain/kotlin/CommonDefsImplJvm.kt), the
        # common root package left out below it.
        ("src/test/kotlin/com/acme/shop/TotalsTest.kt", "src/jvmMain/kotlin/VatJvm.kt", True),
        ("src/test/kotlin/com/acme/shop/TotalsTest.kt", "src/main/kotlin/format/Vat.kt", True),
        ("src/test/kotlin/com/acme/shop/TotalsTest.kt", "src/main/kotlin/billing/Tax.kt", False),
    ],
)
def test_java_and_kotlin(test: str, removed: str, kept: bool) -> None:
    assert named(test, JVM, removed) is kept


def test_java_a_removed_class_of_the_test_s_package_that_nothing_names() -> None:
    """jhy/jsoup 1edd1431 ("Remove previously deprecated methods") removes
    org/jsoup/helper/ChangeNotifyingArrayList.java, of ValidateTest's own package: neither
    ValidateTest nor the package's files it names (Validate, ValidationException; the
    excerpt in tests/fixtures/layouts/jsoup-helper) name that class, so it is ruled out;
    ValidationException, which ValidateTest names, would be kept."""
    tree, files = layout("jsoup-helper")
    test = "src/test/java/org/jsoup/helper/ValidateTest.java"
    found = walked(test, files, tree=tree)
    assert not found.partial, found.cut
    java = language_of(test)
    assert java is not None
    removed = "src/main/java/org/jsoup/helper/ChangeNotifyingArrayList.java"
    assert not could_be_named(found, java, removed, [removed])
    named_class = "src/main/java/org/jsoup/helper/ValidationException.java"
    listed = {path: entry for path, entry in tree.files.items() if path != named_class}
    files.pop(named_class)
    head = walked(test, files, tree=Tree(listed))
    assert could_be_named(head, java, named_class, [named_class])


def test_java_a_class_of_the_package_the_test_names() -> None:
    """`new Cart()` in CartTest, without an import: Cart.java, gone, is kept."""
    head = {path: text for path, text in JVM.items() if not path.endswith("/Cart.java")}
    test = "src/test/java/com/acme/shop/CartTest.java"
    assert named(test, head, "src/main/java/com/acme/shop/Cart.java")
    assert not named(test, head, "src/main/java/com/acme/shop/Carts.java")


RUBY: dict[str, Source] = {
    "lib/shop.rb": 'require "shop/cart"\nrequire "json"\n',
    "lib/shop/cart.rb": 'require_relative "rates"\n',
    "test/test_helper.rb": 'require "minitest/autorun"\n',
    "test/test_cart.rb": 'require "test_helper"\nrequire "shop"\n',
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("lib/shop/rates.rb", True),  # `require_relative "rates"`
        ("lib/shop/cart.rb", True),  # a nearer root may have held it at the base commit
        ("test/shop/cart.rb", True),
        ("lib/json.rb", True),  # `require "json"` may have been it
        ("test/test_helper.rb", True),
        ("lib/shop/legacy.rb", False),
        ("lib/shop/rates/eu.rb", False),
    ],
)
def test_ruby(removed: str, kept: bool) -> None:
    head = {p: t for p, t in RUBY.items() if p != removed}
    assert named("test/test_cart.rb", head, removed) is kept


PHP: dict[str, Source] = {
    "composer.json": '{"autoload": {"psr-4": {"Shop\\\\": "src/"}}}',
    "src/Cart.php": (
        "<?php\nnamespace Shop;\n\nclass Cart {\n"
        "    private $rates = 'Shop\\\\Rates\\\\EuRates';\n}\n"
    ),
    "tests/CartTest.php": "<?php\nnamespace Shop\\Tests;\n\nuse Shop\\Cart;\n\nnew Cart();\n",
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("src/Rates/EuRates.php", True),  # a class named in a string, its file gone
        ("src/Rates/UsRates.php", False),
        ("src/Ledger.php", False),
    ],
)
def test_php(removed: str, kept: bool) -> None:
    assert named("tests/CartTest.php", PHP, removed) is kept


RUST: dict[str, Source] = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub fn total() -> u32 { 1 }\n",
    "tests/cart.rs": "mod common;\nmod fixtures;\n",
    "tests/common/mod.rs": "pub fn setup() {}\n",
}


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        ("tests/fixtures.rs", True),  # `mod fixtures;` names no file at the head
        ("tests/fixtures/mod.rs", True),
        ("tests/support/mod.rs", False),
    ],
)
def test_rust(removed: str, kept: bool) -> None:
    assert named("tests/cart.rs", RUST, removed) is kept


TOML_TEST = "crates/toml_datetime/tests/parse.rs"
# toml-rs/toml 716f4da8 "Rename toml_parse to toml_parser": renamed away, among 174 paths.
TOML_RENAMED = ("crates/toml_parse/Cargo.toml", "crates/toml_parse/src/lib.rs")


@pytest.mark.parametrize(
    ("removed", "kept"),
    [
        # Renamed whole: no manifest of the test's build names it, and the workspace's
        # `members = ["crates/*"]` matches no folder of that name at the head.
        (TOML_RENAMED, False),
        # The test's own crate and the workspace root: the build itself.
        (("crates/toml_datetime/Cargo.toml", *TOML_RENAMED), True),
        (("Cargo.toml", *TOML_RENAMED), True),
        # A member folder still there without its Cargo.toml: cargo fails to load the
        # workspace.
        (("crates/toml_parser/Cargo.toml", *TOML_RENAMED), True),
    ],
)
def test_rust_a_removed_cargo_toml_counts_where_the_build_names_it(
    removed: tuple[str, ...], kept: bool
) -> None:
    """toml-rs/toml at 716f4da8 (tests/fixtures/layouts/toml-rs): toml_datetime's
    tests/parse.rs depends on no other crate of the workspace."""
    tree, files = layout("toml-rs")
    for path in removed:
        files.pop(path, None)
    listed = {path: entry for path, entry in tree.files.items() if path not in removed}
    found = walked(TOML_TEST, files, tree=Tree(listed))
    assert not found.partial, found.cut
    rust = language_of(TOML_TEST)
    assert rust is not None
    gone = list(removed)
    assert could_be_named(found, rust, "crates/toml_parse/src/lib.rs", gone) is kept
    assert could_be_named(found, rust, removed[0], gone) is kept


def test_rust_a_path_dependency_or_an_explicit_member_names_its_cargo_toml() -> None:
    """A crate the test's crate depends on by path, or a member written out, is named
    whether or not its folder is still there: cargo fails on either without its manifest."""
    manifest = RUST["Cargo.toml"]
    assert isinstance(manifest, str)
    head: dict[str, Source] = {
        **RUST,
        "Cargo.toml": manifest
        + '[workspace]\nmembers = ["tools/gen"]\n[dependencies]\nmoney = { path = "money" }\n',
    }
    for removed in ("money/Cargo.toml", "tools/gen/Cargo.toml"):
        assert named("tests/cart.rs", head, removed), removed
        assert named("tests/cart.rs", head, "money/src/lib.rs", removed), removed
    assert not named("tests/cart.rs", head, "other/Cargo.toml")


def test_csharp_rules_out_a_removed_file_outside_the_test_projects_only() -> None:
    """A .cs file of the test's projects may have declared anything the closure names; one
    elsewhere was compiled into nothing the test runs (test_imports_csharp_declarations.py
    has the real case)."""
    head: dict[str, Source] = {
        "src/Shop/Shop.csproj": "<Project Sdk='Microsoft.NET.Sdk'></Project>",
        "tests/Shop.Tests/Shop.Tests.csproj": "<Project Sdk='Microsoft.NET.Sdk'></Project>",
        "tests/Shop.Tests/CartTests.cs": "namespace Shop.Tests;\npublic class CartTests {}\n",
    }
    found = walked("tests/Shop.Tests/CartTests.cs", head)
    assert found.unplaced == ("tests/Shop.Tests/",)
    assert not named("tests/Shop.Tests/CartTests.cs", head, "tools/Gen/Gen.cs")
    assert named("tests/Shop.Tests/CartTests.cs", head, "tests/Shop.Tests/Old/Gone.cs")


def test_a_partial_walk_rules_nothing_out() -> None:
    found = walked("tests/test_tax.py", PYTHON)
    language = language_of("tests/test_tax.py")
    assert language is not None
    legacy = "src/billing/legacy.py"
    assert not could_be_named(found, language, legacy, [legacy])
    cut = replace(found, cut=("src/billing/tax.py not read (not valid Python)",))
    assert could_be_named(cut, language, legacy, [legacy])


def test_a_real_layout_keeps_what_its_imports_name() -> None:
    """pypa/sampleproject (tests/fixtures/layouts): `from sample.simple import add_one`."""
    tree, files = layout("sampleproject")
    found = walked("tests/test_simple.py", files, tree=tree)
    python = language_of("tests/test_simple.py")
    assert python is not None and not found.partial
    assert could_be_named(found, python, "src/sample/simple.py", ["src/sample/simple.py"])
    assert could_be_named(found, python, "src/sample/__init__.py", ["src/sample/__init__.py"])
    assert not could_be_named(found, python, "src/sample/extra.py", ["src/sample/extra.py"])


async def test_the_stems_are_kept_in_the_store(store: Store) -> None:
    found = walked("tests/test_tax.py", PYTHON)
    assert found.unplaced and "**/billing/rates" in found.unplaced
    assert walk_from_json(walk_to_json(found)) == found
    await store.save_import_walk("acme/shop", "a" * 40, "k", found, 1.0)
    assert await store.import_walk("acme/shop", "a" * 40, "tests/test_tax.py", "k") == found
    unreported = ImportWalk("t.cs", "C#", (), ("t.cs",), (), ())
    assert walk_from_json(walk_to_json(unreported)) == unreported
