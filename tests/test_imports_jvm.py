"""Java/Kotlin/Scala/Groovy's import walk (bot/triage/imports/jvm.py, jvm_scan.py): the
scanner, classes by package in every source root, and a failure's class found in the tree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.imports import Source
from bot.triage.imports.jvm import JVM, jvm_class, locate_class
from bot.triage.imports.jvm_scan import KOTLIN_ANY, kotlin_declared, kotlin_uses, scan_jvm
from bot.triage.imports.language import Target
from bot.triage.imports.walk import WalkLimits
from bot.triage.models import Failure
from tests.test_imports_walk import LAYOUTS, depths, layout, tree_of, walked

FIXTURES = LAYOUTS.parent / "kotlin"  # single Kotlin files of real projects: INDEX.md


@pytest.mark.parametrize(
    ("source", "package", "imports"),
    [
        (
            "package a.b;\nimport static x.Y.z;\nimport c.D;\nimport e.*;\nclass T {}",
            "a.b",
            ["x.Y.z", "c.D", "e.*"],
        ),
        (
            "package a.b\n\nimport c.D as E\nimport f.g.*\nimport h.`in`.I\n",
            "a.b",
            ["c.D", "f.g.*", "h.in.I"],
        ),
        (
            "package a\npackage b\nimport c.{D, E => F, _}\nimport g._, h.I\n",
            "a.b",
            ["c.D", "c.E", "c.*", "g.*", "h.I"],
        ),
        ("package a\nimport c.{given, *}\nobject O { import d.E }\n", "a", ["c.*", "d.E"]),
        (
            'package a;\n// import no.One;\n/* import no.Two; */\nString s = "import no.Three;";\n',
            "a",
            [],
        ),
        (
            'package a\nval t = """\nimport no.Four\n"""\nval c = \'"\'\nimport yes.Five\n',
            "a",
            ["yes.Five"],
        ),
        (
            "package a\n/* outer /* inner */ import no.Six */\nimport yes.Seven\n",
            "a",
            ["yes.Seven"],
        ),
        ("import Top\nclass T", "", ["Top"]),
        ("package a;\nimport", "a", []),
    ],
)
def test_the_scanner_reads_package_and_imports_outside_comments_and_strings(
    source: str, package: str, imports: list[str]
) -> None:
    scanned = scan_jvm(source, nested_comments=True)
    assert (scanned.package, scanned.imports) == (package, imports)


def test_java_block_comments_do_not_nest() -> None:
    source = "package a;\n/* one /* two */\nimport yes.Java;\n"
    assert scan_jvm(source).imports == ["yes.Java"]
    assert scan_jvm(source, nested_comments=True).imports == []  # Kotlin: still inside


def test_names_are_identifiers_outside_comments_and_strings() -> None:
    scanned = scan_jvm('class T { Money m; // Invoice\n String s = "Ledger"; }')
    assert {"Money", "T", "class"} <= scanned.names
    assert not {"Invoice", "Ledger"} & scanned.names


PROJECT: dict[str, Source] = {
    "core/src/main/java/org/ex/orders/Money.java": "package org.ex.orders;\nclass Money {}",
    "core/src/main/java/org/ex/orders/Order.java": (
        "package org.ex.orders;\nimport org.ex.util.Strings;\nclass Order { Money m; }"
    ),
    "core/src/main/java/org/ex/orders/Unused.java": "package org.ex.orders;\nclass Unused {}",
    "core/src/main/java/org/ex/util/Strings.java": "package org.ex.util;\nclass Strings {}",
    "core/src/main/java/org/ex/util/Lists.java": "package org.ex.util;\nclass Lists {}",
    "core/src/main/kotlin/org/ex/fmt/Format.kt": "package org.ex.fmt\nfun money() = 1\n",
    "core/src/main/kotlin/org/ex/fmt/Other.kt": "package org.ex.fmt\nfun other() = 1\n",
    "core/src/test/java/org/ex/orders/OrderTest.java": (
        "package org.ex.orders;\n"
        "import static org.ex.util.Strings.pad;\n"
        "import org.ex.fmt.money;\n"
        "import org.junit.jupiter.api.Test;\n"
        "import java.util.List;\n"
        "class OrderTest { Order order; }\n"
    ),
    "api/src/test/java/org/ex/orders/OrderTest.java": "package org.ex.orders;\nclass OrderTest {}",
    "api/src/main/java/org/ex/wild/Any.java": "package org.ex.wild;\nclass Any {}",
}


def test_imports_same_package_names_and_other_modules_test_class() -> None:
    result = walked("core/src/test/java/org/ex/orders/OrderTest.java", PROJECT)
    assert depths(result) == {
        # The class's other file in a multi-module build runs too: which one ran is unknown.
        "api/src/test/java/org/ex/orders/OrderTest.java": 0,
        "core/src/main/java/org/ex/util/Strings.java": 1,  # static import of a member
        "core/src/main/kotlin/org/ex/fmt/Format.kt": 1,  # a top-level function: its package
        "core/src/main/kotlin/org/ex/fmt/Other.kt": 1,
        "core/src/main/java/org/ex/orders/Order.java": 1,  # same package, no import
        "core/src/main/java/org/ex/orders/Money.java": 2,
    }
    [money] = [r for r in result.reached if r.path.endswith("Money.java")]
    assert [s.module for s in money.chain] == ["org.ex.orders.Order", "org.ex.orders.Money"]
    assert not result.partial


def test_wildcards_name_a_package_or_a_class() -> None:
    files = {
        **PROJECT,
        "core/src/test/java/org/ex/orders/OrderTest.java": (
            "package org.ex.orders;\nimport org.ex.wild.*;\nimport static org.ex.util.Lists.*;\n"
        ),
    }
    found = depths(walked("core/src/test/java/org/ex/orders/OrderTest.java", files))
    assert found["api/src/main/java/org/ex/wild/Any.java"] == 1
    assert found["core/src/main/java/org/ex/util/Lists.java"] == 1
    assert "core/src/main/java/org/ex/util/Strings.java" not in found


@pytest.mark.parametrize(
    ("test_id", "framework", "expected"),
    [
        ("org.ex.orders.OrderTest#totals", "maven", "org.ex.orders.OrderTest"),
        ("org.ex.orders.OrderTest$WhenPaid#totals()", "gradle", "org.ex.orders.OrderTest"),
        ("org.ex.orders.OrderTest#rounds(double)[2] 0.005 €", "junit", "org.ex.orders.OrderTest"),
        ("OrderTest#totals", "gradle", "OrderTest"),
        ("org.ex.orders.OrderTest#totals", "pytest", None),
        ("tests/test_x.py::test_y", "junit", None),
        ("a b.C#d", "maven", None),
    ],
)
def test_jvm_class(test_id: str, framework: str, expected: str | None) -> None:
    failure = Failure(test_id=test_id, name=test_id, framework=framework)
    assert jvm_class(failure) == expected


@pytest.mark.parametrize(
    ("qualified", "expected"),
    [
        ("org.ex.orders.OrderTest", "api/src/test/java/org/ex/orders/OrderTest.java"),
        ("org.ex.fmt.Format", "core/src/main/kotlin/org/ex/fmt/Format.kt"),
        ("OrderTest", "api/src/test/java/org/ex/orders/OrderTest.java"),  # no package named
        ("org.other.OrderTest", None),
        ("orders.OrderTest", "api/src/test/java/org/ex/orders/OrderTest.java"),  # a path tail
    ],
)
def test_a_class_is_found_in_any_source_root(qualified: str, expected: str | None) -> None:
    assert locate_class(qualified, tree_of(PROJECT)) == expected


def test_a_real_multi_module_build_gson() -> None:
    """google/gson at a real commit: a test of the extras/ module importing classes of the
    gson/ module, and naming its own package's UtcDateTypeAdapter without an import."""
    tree, files = layout("gson")
    test = "extras/src/test/java/com/google/gson/typeadapters/UtcDateTypeAdapterTest.java"
    assert locate_class("com.google.gson.typeadapters.UtcDateTypeAdapterTest", tree) == test
    result = walked(test, files, tree=tree)
    assert {path for path, depth in depths(result).items() if depth == 1} == {
        "gson/src/main/java/com/google/gson/Gson.java",
        "gson/src/main/java/com/google/gson/GsonBuilder.java",
        "gson/src/main/java/com/google/gson/JsonParseException.java",
        "extras/src/main/java/com/google/gson/typeadapters/UtcDateTypeAdapter.java",
    }
    assert result.read[0] == test


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([*"ab.;*_{}=>,`'\"/\n ", "import", "package", "static", "as"])).map(
        "".join
    )
)
def test_the_scanner_never_fails(source: str) -> None:
    for nested in (False, True):
        scanned = scan_jvm(source, nested_comments=nested)
        assert all(isinstance(name, str) and name for name in scanned.imports)


def test_a_real_scala_cross_build_scopt() -> None:
    """scopt/scopt at a real commit: a relative import and a class named by its package."""
    tree, files = layout("scopt")
    test = "jvm_js/src/test/scala/scopttest/UriSpec.scala"
    result = walked(test, files, tree=tree)
    assert {(r.path, r.chain[0].module) for r in result.reached if r.depth == 1} == {
        ("shared/src/test/scala/scopttest/SpecUtil.scala", "SpecUtil.*"),
        ("shared/src/main/scala/scopt/OptionParser.scala", "scopt.OptionParser"),
    }


def test_relative_imports_and_qualified_names_in_code() -> None:
    files: dict[str, Source] = {
        "src/main/scala/a/b/C.scala": "package a.b\nclass C\n",
        "src/main/scala/x/y/Z.scala": "package x.y\nclass Z\n",
        "src/main/scala/x/y/Unused.scala": "package x.y\nclass Unused\n",
        "src/test/scala/a/T.scala": (
            "package a\nimport b.C\nclass T { val z = new x.y.Z(); val n = z.hashCode }\n"
        ),
    }
    assert set(depths(walked("src/test/scala/a/T.scala", files))) == {
        "src/main/scala/a/b/C.scala",
        "src/main/scala/x/y/Z.scala",
    }


def test_a_real_kotlin_multiplatform_actual_outside_its_package_folder_markdown() -> None:
    """JetBrains/markdown at a real commit: `actual fun isPunctuation` of the package
    `org.intellij.markdown.html` is in src/jvmMain/kotlin/CommonDefsImplJvm.kt, directly in
    the source root (Kotlin does not tie a file's folder to its package), and the compiler
    puts it in CommonDefsTest's classes (bench/replays/label_kotlin.py): the walk reaches it
    through the import, as it reaches the other platforms' `actual`s."""
    tree, files = layout("markdown")
    for test in ("CommonDefsTest", "URITest"):
        result = walked(f"src/commonTest/kotlin/org/intellij/markdown/{test}.kt", files, tree=tree)
        first = {path for path, depth in depths(result).items() if depth == 1}
        assert {
            "src/commonMain/kotlin/org/intellij/markdown/html/CommonDefs.kt",
            "src/jvmMain/kotlin/CommonDefsImplJvm.kt",
            "src/jsMain/kotlin/CommonDefsImplJs.kt",
            "src/wasmJsMain/kotlin/CommonDefsImplJs.kt",
        } <= first


@pytest.mark.parametrize(
    ("path", "reached"),
    [
        ("src/main/kotlin/Top.kt", True),  # in the source root: any package
        ("src/main/kotlin/c/Short.kt", True),  # the common root package `a.b` left out
        ("src/main/kotlin/b/c/Shorter.kt", True),
        ("src/main/kotlin/x/c/Other.kt", False),  # another package's folder
        ("src/main/kotlin/Top.java", False),  # Java keeps folders and packages together
        ("src/main/resources/Top.kt", False),  # no `kotlin` source root
    ],
)
def test_a_kotlin_package_may_sit_below_a_kotlin_root_without_its_common_prefix(
    path: str, reached: bool
) -> None:
    files: dict[str, Source] = {
        "src/test/kotlin/a/b/c/T.kt": "package a.b.c.test\nimport a.b.c.helper\nval x = helper()\n",
        path: "package a.b.c\nfun helper() = 1\n",
    }
    assert (path in depths(walked("src/test/kotlin/a/b/c/T.kt", files))) is reached


@pytest.mark.parametrize(
    ("test", "named"),
    [
        # `EmptyStreamingMarkdownFile()`, a top-level function of the test's package
        (
            "src/commonTest/kotlin/org/intellij/markdown/parser/StreamingMarkdownConsistencyTest.kt",
            "src/commonMain/kotlin/org/intellij/markdown/parser/StreamingMarkdownFile.kt",
        ),
        # `TestCase()` and `readFromFile(...)`: an expect class and functions of
        # MarkdownTestUtil.kt, their actuals in MarkdownTestUtilJvm.kt
        (
            "src/fileBasedTest/kotlin/org/intellij/markdown/HtmlIndentTrimmerTest.kt",
            "src/fileBasedTest/kotlin/org/intellij/markdown/MarkdownTestUtil.kt",
        ),
        (
            "src/fileBasedTest/kotlin/org/intellij/markdown/HtmlIndentTrimmerTest.kt",
            "src/jvmTest/kotlin/org/intellij/markdown/MarkdownTestUtilJvm.kt",
        ),
    ],
)
def test_a_kotlin_file_reaches_its_package_s_kotlin_files_named_without_import(
    test: str, named: str
) -> None:
    """JetBrains/markdown: kotlinc puts these files in the tests' classes; no import and no
    file name says so: a Kotlin file of the test's package counts when it declares a name
    the test has (or cannot be read)."""
    tree, files = layout("markdown")
    assert depths(walked(test, files, tree=tree)).get(named) == 1


def test_a_kotlin_file_of_the_package_that_declares_no_name_the_test_has_is_left_out() -> None:
    """JetBrains/markdown: StreamingMarkdownConsistencyTest names nothing CancellationToken.kt
    declares (kotlinc leaves it out of the test's classes), and both files are read."""
    tree, files = layout("markdown")
    test = "src/commonTest/kotlin/org/intellij/markdown/parser/StreamingMarkdownConsistencyTest.kt"
    token = "src/commonMain/kotlin/org/intellij/markdown/parser/CancellationToken.kt"
    result = walked(test, files, tree=tree)
    assert token in result.read
    assert depths(result).get(token) != 1


@pytest.mark.parametrize(
    ("source", "declared"),
    [
        (
            "package a\nfun <T> List<T>.second(x: Int) = 1\nprivate const val K = 2\n"
            "enum class E { A }\nclass C(val notTop: Int) { fun member() {} }\n"
            "// fun commented()\nfun interface I { fun run() }\nval Foo.bar: Int get() = 1\n"
            "fun (() -> Unit).qux() = 1\nval anon = object : Runnable { override fun run() {} }\n"
            "val f = fun(x: Int) = x\ntypealias TA<T> = List<T>\nval k = Foo::class\n"
            "expect fun isPunctuation(c: Char): Boolean\nvar x by lazy { 1 }\n",
            {
                *("a.second", "a.K", "a.E", "a.C", "a.I", "a.bar", "a.qux", "a.anon", "a.f"),
                *("a.TA", "a.k", "a.isPunctuation", "a.x"),
            },
        ),
        # a top-level operator is called without its name: the package's `()`
        ("package m\noperator fun Money.plus(o: Money) = o\n", {"m.plus", "m.()"}),
        ('fun main() = "${b()}"\n', {".main"}),  # the default package
        # what cannot be read declares anything: unbalanced braces, a string never closed
        ('fun a() = "${b()}"\nobject O {', {KOTLIN_ANY}),
        ('val a = "${"\nfun b() = 1\n', {KOTLIN_ANY}),
    ],
)
def test_kotlin_declared_names_the_top_level_declarations(source: str, declared: set[str]) -> None:
    assert kotlin_declared(source) == declared


_MARKDOWN = "src/commonMain/kotlin/org/intellij/markdown/"
_RESULT = "kotlin-result/src/commonMain/kotlin/com/github/michaelbull/result/"


@pytest.mark.parametrize(
    ("layout_name", "path", "declared"),
    [
        # extension functions by their name, not their receiver or type parameter
        (
            "markdown",
            _MARKDOWN + "lexer/GeneratedLexer.kt",
            {"GeneratedLexer", "push", "pop"},
        ),
        ("markdown", _MARKDOWN + "lexer/Compat.kt", {"Compat", "Stack"}),  # not its members
        # opt-in markers gate compilation and never run
        ("markdown", _MARKDOWN + "ExperimentalApi.kt", set()),
        ("kotlin-result", _RESULT + "annotation/UnsafeResultErrorAccess.kt", set()),
        (
            "kotlin-result",
            _RESULT + "Binding.kt",
            {"binding", "BindingScope", "BindingScopeImpl", "BindingDsl", "BindingException"},
        ),
    ],
)
def test_kotlin_declared_on_real_files(layout_name: str, path: str, declared: set[str]) -> None:
    _, files = layout(layout_name)
    source = files[path]
    assert isinstance(source, str)
    package = scan_jvm(source).package
    assert kotlin_declared(source) == {f"{package}.{name}" for name in declared}


def test_a_kotlin_string_ends_past_its_templates_over_lines() -> None:
    """JetBrains/markdown at 49b16457: GeneratingProviders.kt writes
    `"class=\\"language-${` and closes the template two lines below; ending the string at
    its line's end left a `}` unbalanced, and the file declared anything."""
    source = (FIXTURES / "GeneratingProviders.kt").read_text()
    declared = kotlin_declared(source)
    assert "org.intellij.markdown.html.SimpleTagProvider" in declared
    assert "org.intellij.markdown.html.CodeFenceGeneratingProvider" in declared
    assert KOTLIN_ANY not in declared


def test_kotlin_uses_leave_out_declared_names_modifiers_and_imports() -> None:
    """A name right after its declaring keyword (Compat.kt's member `fun push(`), a
    modifier (kotlin-result's `public expect class BindingException`) and an import line
    (CommonDefsImplJvm.kt's `import org.intellij.markdown.lexer.Stack`, never used) name
    nothing; a word of a string may (a template)."""
    _, markdown = layout("markdown")
    _, result = layout("kotlin-result")
    compat = kotlin_uses(str(markdown[_MARKDOWN + "lexer/Compat.kt"]))
    assert "push" not in compat
    binding = kotlin_uses(str(result[_RESULT + "Binding.kt"]))
    assert "expect" not in binding
    assert "BindingException" in binding
    assert "Stack" not in kotlin_uses(str(markdown["src/jvmMain/kotlin/CommonDefsImplJvm.kt"]))
    assert "helper" in kotlin_uses('val s = "${helper()}"')
    # a receiver is a use; a word that ends the line before a declaration is not a modifier
    assert "Foo" in kotlin_uses("fun Foo.bar() = 1\n")
    assert "data" in kotlin_uses("val cache = data\nfun load() = cache\n")


def test_a_real_kotlin_walk_counts_what_the_code_names_markdown() -> None:
    """JetBrains/markdown's files (a tree of the fixture's files alone): CommonDefsTest names
    `isPunctuation`, declared by CommonDefs.kt (`expect`) and CommonDefsImplJvm.kt
    (`actual`), which kotlinc puts in its classes. Left out: Compat.kt, which
    CommonDefsImplJvm.kt imports (`Stack`) and never uses; SpecTestGenerator.kt, of the
    default package in buildSrc's `kotlin` root, which a folder lookup of `kotlin.test.*`
    finds; HtmlGenerator.kt, of the package, which declares nothing the test names."""
    _, files = layout("markdown")
    result = walked("src/commonTest/kotlin/org/intellij/markdown/CommonDefsTest.kt", files)
    assert depths(result) == {
        _MARKDOWN + "html/CommonDefs.kt": 1,
        "src/jvmMain/kotlin/CommonDefsImplJvm.kt": 1,
    }
    assert not result.cut
    assert "buildSrc/src/main/kotlin/SpecTestGenerator.kt" in result.read


def test_a_file_read_and_not_counted_is_counted_once_a_counted_file_names_it() -> None:
    """JetBrains/markdown: StreamingMarkdownConsistencyTest names nothing CancellationToken.kt
    declares, so the file is read and left out at depth 1; MarkdownParser.kt, which the
    test names, names `CancellationToken`: counted at depth 2, read once."""
    _, files = layout("markdown")
    test = "src/commonTest/kotlin/org/intellij/markdown/parser/StreamingMarkdownConsistencyTest.kt"
    result = walked(test, files)
    assert depths(result)[_MARKDOWN + "parser/CancellationToken.kt"] == 2
    assert depths(result)[_MARKDOWN + "parser/MarkdownParser.kt"] == 1
    assert result.read.count(_MARKDOWN + "parser/CancellationToken.kt") == 1


def test_a_real_kotlin_walk_of_top_level_functions_kotlin_result() -> None:
    """michaelbull/kotlin-result (a tree of the fixture's files alone): AndTest names `and`
    and `andThen` (And.kt) and `Ok`/`Err` (Result.kt), all top-level declarations of its
    package, named without an import; Result.kt's getters name `get` (Get.kt). Map.kt,
    Unwrap.kt, Binding.kt and the JVM's BindingException.kt declare nothing it names, and
    Result.kt's opt-in markers (annotation/*.kt) run nothing."""
    _, files = layout("kotlin-result")
    test = "kotlin-result/src/commonTest/kotlin/com/github/michaelbull/result/AndTest.kt"
    result = walked(test, files)
    assert depths(result) == {
        _RESULT + "And.kt": 1,
        _RESULT + "Result.kt": 1,
        _RESULT + "Get.kt": 2,
    }
    assert not result.cut


def test_a_kotlin_main_source_set_never_reaches_a_test_one() -> None:
    """JetBrains/markdown: MarkdownParser.kt (commonMain) shares its package with tests of
    commonTest; Gradle compiles main without them."""
    tree, files = layout("markdown")
    resolver = JVM.resolver(
        "src/commonTest/kotlin/org/intellij/markdown/CommonDefsTest.kt", tree, {}
    )
    path = _MARKDOWN + "parser/MarkdownParser.kt"
    found = resolver.imports(path, str(files[path]))
    assert found is not None
    targets = {t.path for t in found if isinstance(t, Target)}
    assert _MARKDOWN + "parser/CancellationToken.kt" in targets
    assert not [t for t in targets if "Test/" in t]


@pytest.mark.parametrize(
    ("importer", "reached"),
    [
        # `+` calls `plus`: a top-level operator counts for every file that sees its package
        ("package m\nval total = Money(1) + Money(2)\n", True),
        ("package x\nimport m.*\nval total = Money(1) + Money(2)\n", True),
        ("package x\nimport m.plus\nval total = a + b\n", True),  # an operator's name
        ("package x\nimport m.Money\nval total = 1\n", False),  # an import never used
        ("package x\nval total = m.Money(1)\n", True),  # a qualified name, no import
        # reflection names classes in strings: the package counts whatever it declares
        ('package m\nval c = Class.forName("m.Anything")\n', True),
    ],
)
def test_kotlin_names_without_writing_them(importer: str, reached: bool) -> None:
    money = "src/main/kotlin/m/Money.kt"
    files: dict[str, Source] = {
        "src/test/kotlin/m/T.kt": importer,
        money: "package m\nclass Money(val cents: Long)\noperator fun Money.plus(o: Money) = o\n",
        "src/main/kotlin/m/Other.kt": "package m\nfun unrelated() = 1\n",
    }
    assert (money in depths(walked("src/test/kotlin/m/T.kt", files))) is reached


def test_an_object_s_member_import_counts_the_file_of_the_object() -> None:
    files: dict[str, Source] = {
        "src/test/kotlin/t/T.kt": "package t\nimport a.b.Registry.register\nval r = register()\n",
        "src/main/kotlin/a/b/Registries.kt": (
            "package a.b\nobject Registry { fun register() = 1 }\n"
        ),
    }
    assert "src/main/kotlin/a/b/Registries.kt" in depths(walked("src/test/kotlin/t/T.kt", files))


def test_a_kotlin_candidate_over_the_byte_limit_counts_and_cuts_the_walk() -> None:
    """Which names a file too large to read declares is not known: it counts, unread, and
    the walk says why it is partial (JetBrains/markdown's 363 KB generated _SFMLexer.kt)."""
    files: dict[str, Source] = {
        "src/test/kotlin/a/T.kt": "package a\nval x = helper()\n",
        "src/main/kotlin/a/Big.kt": "package a\nfun helper() = 1\n" + "// filler\n" * 40,
    }
    result = walked("src/test/kotlin/a/T.kt", files, limits=WalkLimits(file_bytes=100))
    assert "src/main/kotlin/a/Big.kt" in depths(result)
    assert result.cut == ("src/main/kotlin/a/Big.kt not read (larger than 100 bytes)",)


def test_a_java_file_does_not_reach_its_package_s_kotlin_files_by_package_alone() -> None:
    files: dict[str, Source] = {
        "src/test/java/a/T.java": "package a;\nclass T {}\n",
        "src/main/kotlin/a/Helpers.kt": "package a\nfun helper() = 1\n",
    }
    assert "src/main/kotlin/a/Helpers.kt" not in depths(walked("src/test/java/a/T.java", files))


def test_a_kotlin_import_of_a_package_member_counts_the_files_that_declare_it() -> None:
    """JetBrains/markdown: `import org.intellij.markdown.html.isPunctuation` is declared by
    CommonDefs.kt (`expect fun`) and CommonDefsImplJvm.kt (`actual fun`), the files kotlinc
    puts in CommonDefsTest's classes; HtmlGenerator.kt, of the same package, is read and
    left out (it reaches most of the parser)."""
    tree, files = layout("markdown")
    result = walked(
        "src/commonTest/kotlin/org/intellij/markdown/CommonDefsTest.kt", files, tree=tree
    )
    first = {path for path, depth in depths(result).items() if depth == 1}
    assert {
        "src/commonMain/kotlin/org/intellij/markdown/html/CommonDefs.kt",
        "src/jvmMain/kotlin/CommonDefsImplJvm.kt",
    } <= first
    generator = "src/commonMain/kotlin/org/intellij/markdown/html/HtmlGenerator.kt"
    assert result.read.count(generator) == 1  # read once, counted once against the budgets
    assert generator not in depths(result)


@pytest.mark.parametrize(
    ("java", "reached"),
    [
        ("package a;\nclass T { int x = MoneyKt.cents(); }\n", True),  # the file's class
        ("package a;\nimport static a.MoneyKt.cents;\nclass T { int x = cents(); }\n", True),
        ("package a;\nclass T { Purse p = new Purse(); }\n", True),  # a class of Money.kt
        ("package a;\nclass T { int x = Cash.total(); }\n", True),  # `@file:JvmName("Cash")`
        ("package a;\nclass T { int x = 1; }\n", False),
    ],
)
def test_java_reaches_the_kotlin_files_of_its_package_by_what_they_declare(
    java: str, reached: bool
) -> None:
    money = "src/main/kotlin/a/Money.kt"
    files: dict[str, Source] = {
        "src/test/java/a/T.java": java,
        money: "package a\nfun cents() = 1\nclass Purse\n",
        "src/main/kotlin/a/Totals.kt": '@file:JvmName("Cash")\npackage a\nfun total() = 2\n',
    }
    found = depths(walked("src/test/java/a/T.java", files))
    assert (money in found or "src/main/kotlin/a/Totals.kt" in found) is reached


def test_classes_a_services_file_lists_run_without_being_named() -> None:
    """JUnit loads the extensions `META-INF/services/org.junit.jupiter.api.extension.Extension`
    lists for every test (auto-detection), and `ServiceLoader.load` any listed class: their
    files run, though no import names them (a Kotlin class in a file of another name too)."""
    files: dict[str, Source] = {
        "src/test/kotlin/a/T.kt": "package a\nclass T\n",
        "src/test/resources/META-INF/services/org.junit.jupiter.api.extension.Extension": (
            "# auto-detected\nx.Timing\n"
        ),
        "src/test/kotlin/x/Extensions.kt": "package x\nclass Timing\n",
        "src/main/resources/META-INF/services/p.Plugin": "p.impl.Csv\n",
        "src/main/java/p/impl/Csv.java": "package p.impl;\npublic class Csv {}\n",
        "src/main/kotlin/p/Plugins.kt": (
            "package p\nfun plugins() = ServiceLoader.load(Plugin::class.java).toList()\n"
        ),
        "src/test/kotlin/a/U.kt": "package a\nimport p.plugins\nval all = plugins()\n",
    }
    assert "src/test/kotlin/x/Extensions.kt" in depths(walked("src/test/kotlin/a/T.kt", files))
    assert "src/main/java/p/impl/Csv.java" not in depths(walked("src/test/kotlin/a/T.kt", files))
    assert depths(walked("src/test/kotlin/a/U.kt", files))["src/main/java/p/impl/Csv.java"] == 2
