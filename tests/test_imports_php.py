"""The PHP import walk: composer's autoload rules, `use`, same-namespace names, includes."""

from __future__ import annotations

import pytest

from bot.triage.imports import Source, WalkLimits
from bot.triage.imports.php import Autoload, autoload_of, calls_of, names_of
from tests.test_imports_ruby import walked
from tests.test_imports_walk import depths, layout
from tests.test_imports_walk import walked as walked_to

COMPOSER = """{
  "autoload": {"psr-4": {"App\\\\": "src/", "Legacy\\\\": ["lib/", "old/"]},
               "psr-0": {"Twig_": "twig/"}, "files": ["src/helpers.php"]},
  "autoload-dev": {"psr-4": {"App\\\\Tests\\\\": "tests/"}}
}"""


def test_autoload_rules_are_relative_to_the_composer_json() -> None:
    assert autoload_of("packages/shop/composer.json", COMPOSER) == Autoload(
        psr4=(
            ("App\\", "packages/shop/src"),
            ("Legacy\\", "packages/shop/lib"),
            ("Legacy\\", "packages/shop/old"),
            ("App\\Tests\\", "packages/shop/tests"),
        ),
        psr0=(("Twig_", "packages/shop/twig"),),
        files=("packages/shop/src/helpers.php",),
    )
    assert autoload_of("composer.json", "{not json") == Autoload()
    assert autoload_of("composer.json", '{"autoload": {"psr-4": {"A\\\\": "../x"}}}') == Autoload()


@pytest.mark.parametrize(
    ("source", "aliases", "written"),
    [
        ("<?php\nuse App\\Cart;\n", {"cart": "App\\Cart"}, ["\\App\\Cart"]),
        ("<?php\nuse App\\Cart as C, App\\Tax;\n", {"c": "App\\Cart", "tax": "App\\Tax"}, None),
        (
            "<?php\nuse App\\{Cart, Money\\Tax as T};\n",
            {"cart": "App\\Cart", "t": "App\\Money\\Tax"},
            None,
        ),
        ("<?php\nuse function App\\helper;\nuse const App\\X;\n", {}, []),
        # Comments, strings and heredocs name nothing.
        ("<?php\n// use App\\A;\n# use App\\B;\n/* use App\\C; */\n", {}, []),
        ("<?php\n$x = 'App\\\\Cart';\n$y = \"new Cart\";\n", {}, []),
        ("<?php\n$s = <<<EOT\nnew Cart\nEOT;\n", {}, []),
        # A method name is not a class; an attribute is.
        ("<?php\n$this->Cart(); Tax::rate();\n#[Covers]\n", {}, ["Tax", "Covers"]),
        # A bracketed namespace's `use` is an import, not a trait's.
        ("<?php\nnamespace App {\nuse App\\M\\Cart;\n}\n", {"cart": "App\\M\\Cart"}, None),
    ],
)
def test_names_of(source: str, aliases: dict[str, str], written: list[str] | None) -> None:
    names = names_of(source, "tests")
    assert names.aliases == aliases
    if written is not None:
        assert [w for w in names.written if w.lower() != "php"] == written


@pytest.mark.parametrize(
    ("source", "includes"),
    [
        ("<?php require 'config.php';", [(None, "config.php")]),
        ("<?php require_once __DIR__ . '/../bootstrap.php';", [("tests/unit", "../bootstrap.php")]),
        ("<?php include(dirname(__DIR__) . '/x.php');", [("tests", "x.php")]),
        ("<?php include dirname(__DIR__, 2) . '/x.php';", [("", "x.php")]),
        ("<?php include dirname(__FILE__) . '/x.php';", [("tests/unit", "x.php")]),
        ("<?php require $path . '/x.php';", []),
        ("<?php require getenv('X');", []),
    ],
)
def test_includes(source: str, includes: list[tuple[str | None, str]]) -> None:
    assert names_of(source, "tests/unit").includes == includes


SHOP: dict[str, Source] = {
    "composer.json": COMPOSER,
    "phpunit.xml.dist": '<?xml version="1.0"?>\n<phpunit bootstrap="tests/bootstrap.php">\n',
    "tests/bootstrap.php": "<?php require __DIR__ . '/../vendor/autoload.php';\n",
    "src/helpers.php": "<?php\n",
    "src/Cart.php": "<?php\nnamespace App;\nclass Cart { function t() { return new Tax; } }\n",
    "src/Tax.php": "<?php\nnamespace App;\nuse App\\Money\\Rate;\nclass Tax {}\n",
    "src/Money/Rate.php": "<?php\n",
    "src/Unused.php": "<?php\n",
    "tests/Support/Fixtures.php": "<?php\n",
    "tests/CartTest.php": (
        "<?php\nnamespace App\\Tests;\nuse App\\Cart;\nuse PHPUnit\\Framework\\TestCase;\n"
        "final class CartTest extends TestCase {\n"
        "  public function testTotal(): void { $f = new Support\\Fixtures(); new Cart(); }\n}\n"
    ),
    "twig/Twig/Environment.php": "<?php\n",
    "tests/LegacyTest.php": (
        "<?php\nuse Legacy\\Old as O;\nclass LegacyTest { function t() { new Twig_Environment; "
        "new \\Legacy\\Thing; O::x(); } }\n"
    ),
    "old/Old.php": "<?php\n",
    "lib/Thing.php": "<?php\n",
}


def test_a_test_reaches_its_class_through_psr4_and_the_class_its_namespace_names() -> None:
    result = walked("tests/CartTest.php", SHOP)
    assert depths(result) == {
        "tests/bootstrap.php": 0,
        "src/helpers.php": 0,
        "src/Cart.php": 1,
        "tests/Support/Fixtures.php": 1,  # App\Tests\Support\Fixtures, namespace-relative
        "src/Tax.php": 2,  # same namespace as Cart, no `use` needed
        "src/Money/Rate.php": 3,  # Tax's `use`: the walk has no depth limit
    }
    starts = {r.path: r.why for r in result.reached if not r.chain}
    assert starts == {
        "tests/bootstrap.php": "phpunit's bootstrap file (phpunit.xml.dist)",
        "src/helpers.php": "a file composer.json autoloads",
    }


def test_psr4_with_several_folders_psr0_and_fully_qualified_names() -> None:
    result = walked("tests/LegacyTest.php", SHOP)
    found = depths(result)
    assert found["twig/Twig/Environment.php"] == 1  # PSR-0: Twig_Environment
    assert found["lib/Thing.php"] == 1  # \Legacy\Thing, PSR-4's first folder
    assert found["old/Old.php"] == 1  # the alias O, PSR-4's second folder


def test_a_trait_used_inside_a_class_is_looked_up_in_the_namespace() -> None:
    files: dict[str, Source] = {
        "composer.json": '{"autoload-dev": {"psr-4": {"Tests\\\\": "tests/"}}}',
        "tests/Unit/Helpers.php": "<?php\nnamespace Tests\\Unit;\ntrait Helpers {}\n",
        "tests/Unit/CartTest.php": (
            "<?php\nnamespace Tests\\Unit;\nclass CartTest {\n    use Helpers;\n}\n"
        ),
    }
    assert depths(walked("tests/Unit/CartTest.php", files)) == {"tests/Unit/Helpers.php": 1}


def test_phpunit_xml_wins_over_the_dist_file() -> None:
    files = dict(SHOP)
    files["phpunit.xml"] = '<phpunit colors="true"\n  bootstrap="tests/Support/Fixtures.php">'
    result = walked("tests/CartTest.php", files)
    starts = {r.path for r in result.reached if not r.chain}
    assert starts == {"tests/Support/Fixtures.php", "src/helpers.php"}


def test_a_real_psr4_suite_slim() -> None:
    tree, files = layout("slim")
    result = walked("tests/Middleware/RoutingMiddlewareTest.php", files, tree=tree)
    found = depths(result)
    assert found["tests/bootstrap.php"] == 0  # phpunit.xml.dist's bootstrap
    assert found["Slim/Middleware/RoutingMiddleware.php"] == 1  # use Slim\Middleware\...
    assert found["tests/TestCase.php"] == 1  # use Slim\Tests\TestCase (autoload-dev)
    assert found["Slim/Routing/RouteGroup.php"] == 2  # RouteCollector's own namespace
    assert "Slim/App.php" not in found


def test_unclosed_comments_and_heredocs_run_to_the_end_in_one_pass() -> None:
    assert names_of("<?php\nuse A\\B;\n" + "/* " * 30_000 + "\nuse C\\D;", "").aliases == {
        "b": "A\\B"
    }
    assert names_of("<?php\n" + "<<<X\n" * 20_000 + "use C\\D;", "").aliases == {}
    strings = "'\\" * 30_000 + "x\nuse A\\B;\n"
    assert names_of("<?php\n" + strings, "").aliases == {"b": "A\\B"}


def test_a_parent_class_no_autoload_rule_places_is_found_beside_the_test_fastroute() -> None:
    """FastRoute v1.3.0: composer.json maps `FastRoute\\` to src/ only (test/bootstrap.php
    autoloads the tests); `GroupCountBasedTest extends DispatcherTest`, both in
    test/Dispatcher/, and names the class it tests in a string."""
    tree, files = layout("fastroute")
    test = "test/Dispatcher/GroupCountBasedTest.php"
    result = walked_to(test, files, WalkLimits(), tree=tree)
    found = depths(result)
    assert found["test/Dispatcher/DispatcherTest.php"] == 1  # same namespace, same folder
    assert found["src/Dispatcher/GroupCountBased.php"] == 1  # 'FastRoute\\Dispatcher\\...'
    assert found["src/DataGenerator/GroupCountBased.php"] == 1
    # The excerpt holds the files one import away: the walk goes on past them unread, and
    # every import it read resolved.
    assert all(cut.endswith("(not in the fixture's excerpt)") for cut in result.cut)


def test_a_class_beside_the_test_in_a_namespace_above_it() -> None:
    files: dict[str, Source] = {
        "composer.json": '{"autoload": {"psr-4": {"App\\\\": "src/"}}}',
        "test/Unit/Cart/CartTest.php": (
            "<?php\nnamespace App\\Unit\\Cart;\nclass CartTest extends \\App\\Unit\\Base {}\n"
        ),
        "test/Unit/Base.php": "<?php\nnamespace App\\Unit;\nabstract class Base {}\n",
    }
    assert depths(walked("test/Unit/Cart/CartTest.php", files)) == {"test/Unit/Base.php": 1}


@pytest.mark.parametrize(
    ("source", "cut"),
    [
        ("class ATest extends Base {}", "could not resolve 'App\\Tests\\Base' from"),
        ("class ATest extends T implements Gone {}", "could not resolve 'App\\Tests\\Gone' from"),
        ("class ATest extends T { function f() { new \\App\\Gone(); } }", "'App\\Gone' from"),
        (
            "use App\\Models\\Gone;\nclass ATest extends T { function f() { Gone::make(); } }",
            "'App\\Models\\Gone' from",
        ),
        ("class ATest extends T { use Gone; }", "could not resolve 'App\\Tests\\Gone' from"),
        ("require __DIR__ . '/fixtures/gone.php';", "could not resolve 'fixtures/gone.php'"),
    ],
)
def test_a_class_of_the_repository_that_no_file_holds_makes_the_walk_partial(
    source: str, cut: str
) -> None:
    files: dict[str, Source] = {
        "composer.json": '{"autoload": {"psr-4": {"App\\\\": "src/"}}}',
        "tests/T.php": "<?php\nnamespace App\\Tests;\nclass T {}\n",
        "tests/ATest.php": "<?php\nnamespace App\\Tests;\n" + source + "\n",
    }
    [reason] = walked("tests/ATest.php", files).cut
    assert cut in reason and reason.endswith(" from tests/ATest.php")


def test_classes_of_other_projects_and_of_the_file_itself_make_no_cut() -> None:
    source = (
        "<?php\nnamespace App\\Tests;\nuse PHPUnit\\Framework\\TestCase as T;\n"
        "final class Helper {}\nclass ATest extends Base {\n"
        "  function f() { new Helper(); new \\DateTime(); self::g(); static::g();"
        " parent::setUp(); \\Vendor\\Lib::x(); T::assertTrue(true); }\n}\n"
        "require_once __DIR__ . '/../vendor/autoload.php';\nrequire 'Some/OnIncludePath.php';\n"
    )
    files: dict[str, Source] = {
        "composer.json": '{"autoload": {"psr-4": {"App\\\\": "src/"}}}',
        "tests/ATest.php": source,
        "tests/Base.php": "<?php\nnamespace App\\Tests;\nabstract class Base {}\n",
    }
    result = walked("tests/ATest.php", files)
    assert (depths(result), result.cut) == ({"tests/Base.php": 1}, ())


def test_class_names_in_a_functions_strings_wait_for_the_function_fastroute() -> None:
    """FastRoute v1.3.0's src/functions.php (composer's `autoload.files`: loaded for every
    test) names the default parser, generator, dispatcher and collector in the options of
    `simpleDispatcher()` and `cachedDispatcher()`, inside `if (!function_exists(...))`."""
    _, files = layout("fastroute")
    functions = str(files["src/functions.php"])
    strings = names_of(functions, "src").strings
    assert ("\\FastRoute\\Dispatcher\\GroupCountBased", "simpledispatcher") in strings
    assert ("\\FastRoute\\Dispatcher\\GroupCountBased", "cacheddispatcher") in strings
    assert {function for _, function in strings} == {"", "simpledispatcher", "cacheddispatcher"}
    assert [name for name, function in strings if not function] == ["\\FastRoute\\simpleDispatcher"]
    # Declaring a function and checking that it exists call nothing.
    assert not {"simpledispatcher", "cacheddispatcher"} & calls_of(functions).names
    assert "simpledispatcher" in calls_of(str(files["test/Dispatcher/DispatcherTest.php"])).names
    # A method's strings (the test's getDispatcherClass()) count always.
    test = names_of(str(files["test/Dispatcher/GroupCountBasedTest.php"]), "test/Dispatcher")
    assert ("\\FastRoute\\Dispatcher\\GroupCountBased", "") in test.strings


def test_a_test_that_calls_no_function_of_functions_php_does_not_reach_its_defaults() -> None:
    """FastRoute v1.3.0: RouteCollectorTest uses RouteCollector, Std and a DataGenerator it
    mocks, and calls neither function: the default dispatchers are not its code (PHPUnit's
    get_included_files() agrees). GroupCountBasedTest's parent calls
    `\\FastRoute\\simpleDispatcher()`: the defaults are."""
    tree, files = layout("fastroute")
    collector = walked_to("test/RouteCollectorTest.php", files, WalkLimits(), tree=tree)
    assert not collector.partial
    assert "src/functions.php" in collector.files
    assert "src/RouteCollector.php" in collector.files
    assert not {"src/Dispatcher/GroupCountBased.php", "src/Dispatcher.php"} & collector.files

    test = "test/Dispatcher/GroupCountBasedTest.php"
    dispatcher = walked_to(test, files, WalkLimits(), tree=tree)
    assert not dispatcher.partial
    chains = {r.path: [step.importer for step in r.chain] for r in dispatcher.reached}
    assert chains["src/RouteParser/Std.php"] == ["src/functions.php"]  # only a default option


@pytest.mark.parametrize(
    ("source", "functions"),
    [
        # A function in a bracketed namespace; a closure inside it is still inside it.
        ("namespace A {\nfunction make() { $f = function () { return 'A\\\\B'; }; }\n}", ["make"]),
        # A method's strings, and a function declared inside a method, count always.
        ("class C { function make() { return 'A\\\\B'; } }", [""]),
        ("class C { function f() { function g() { return 'A\\\\B'; } } }", [""]),
        ("function f() { $o = new class { function g() { return 'A\\\\B'; } }; }", ["f"]),
        # After the function's body, and by reference (not told apart).
        ("function f() { if (1) { x(); } }\n$d = 'A\\\\B';", [""]),
        ("function &f() { return 'A\\\\B'; }", [""]),
    ],
)
def test_the_function_holding_a_class_string(source: str, functions: list[str]) -> None:
    assert [function for _, function in names_of("<?php\n" + source, "src").strings] == functions


def test_the_functions_a_php_file_calls() -> None:
    source = (
        "<?php\nnamespace N;\nfunction declared() {}\nif (!function_exists('N\\\\guarded')) {}\n"
        "\\N\\Called();\narray_map('N\\\\byString', $x);\n$h = <<<EOT\nheredocName\nEOT;\n"
        "// commented()\n"
    )
    names = calls_of(source).names
    assert {"called", "bystring", "heredocname", "array_map"} <= names
    assert not {"declared", "guarded", "commented"} & names
