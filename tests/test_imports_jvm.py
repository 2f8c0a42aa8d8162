"""Java/Kotlin/Scala/Groovy's import walk (bot/triage/imports/jvm.py, jvm_scan.py): the
scanner, classes by package in every source root, and a failure's class found in the tree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.imports import Source
from bot.triage.imports.jvm import jvm_class, locate_class
from bot.triage.imports.jvm_scan import kotlin_declared, scan_jvm
from bot.triage.models import Failure
from tests.test_imports_walk import depths, layout, tree_of, walked


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
            "enum class E { A }\nclass C { fun member() {} }\n// fun commented()\n",
            {"T", "List", "second", "K", "E", "C"},
        ),
        ('fun a() = "${b()}"\nobject O {', {"fun", "a", "b", "object", "O"}),  # unbalanced: all
    ],
)
def test_kotlin_declared_names_the_top_level_declarations(source: str, declared: set[str]) -> None:
    assert kotlin_declared(source) == declared


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
