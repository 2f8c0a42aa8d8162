"""The C# walk by declaration: a `.cs` file of the test's projects counts only when the
closure names something it declares (bot/triage/imports/csharp.py, csharp_scan.py).

The files are real: MoreLINQ v2.3.0 and rickyah/ini-parser (tests/fixtures/csharp/INDEX.md
says which, at which commit, under which licence). The replay bench's labels (Mono's mcs,
bench/replays/label_csharp.py) are quoted where a test checks one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.triage.footprint import entry_contains, footprint, matches
from bot.triage.imports import Source, csharp
from bot.triage.imports.csharp import CSHARP
from bot.triage.imports.csharp_scan import ALWAYS, METADATA, PARTIAL, STATIC_INIT, scan_csharp
from bot.triage.imports.removed import could_be_named
from bot.triage.imports.walk import ImportWalk, walk_from_json, walk_to_json
from bot.triage.models import Failure, FootprintEntry
from tests.test_imports_ruby import walked

FIXTURES = Path(__file__).parent / "fixtures" / "csharp"
MORELINQ = "morelinq"
INI = "ini-parser"


def files_of(name: str) -> dict[str, Source]:
    folder = FIXTURES / name
    return {
        str(path.relative_to(folder)): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in ("COPYING.txt", "LICENSE")
    }


def scanned(name: str, path: str) -> tuple[frozenset[str], frozenset[str]]:
    found = scan_csharp((FIXTURES / name / path).read_text(encoding="utf-8"))
    return found.keys, found.uses


def reached(name: str, test: str) -> tuple[ImportWalk, dict[str, str]]:
    """The walk, and each file it reached with the names that counted it."""
    result = walked(test, files_of(name))
    assert not result.partial, result.cut
    return result, {r.path: r.chain[-1].module if r.chain else r.why for r in result.reached}


# What a file declares.


def test_a_part_of_a_static_partial_class_declares_its_members() -> None:
    """MoreEnumerable is one `static partial class` over ~100 files, each a few extension
    methods, called as `xs.Batch(3)`: never by the class's name."""
    keys, _ = scanned(MORELINQ, "MoreLinq/Batch.cs")
    # The private helper is named only by the class's own parts; reflection over members
    # reaches a static class's parts only from code that says `typeof(MoreEnumerable)`.
    reflected = f"MoreEnumerable::{PARTIAL}"
    assert keys == {"Batch", "MoreEnumerable::BatchImpl", reflected}
    # The part that only says `public static partial class MoreEnumerable { }` declares
    # nothing a test can use: the label says BatchTest.cs does not need it.
    keys, _ = scanned(MORELINQ, "MoreLinq/MoreEnumerable.cs")
    assert keys == {reflected}


def test_a_static_initialiser_in_a_part_runs_with_any_part_of_its_type() -> None:
    """AssertCount.cs: `private static readonly Func<...> defaultErrorSelector = ...` runs
    when any member of MoreEnumerable is first used, as an extension, unnamed: with every
    part of the class that counts, which each names its static initialiser."""
    keys, _ = scanned(MORELINQ, "MoreLinq/AssertCount.cs")
    assert {f"MoreEnumerable::{STATIC_INIT}", "AssertCount"} <= keys
    assert ALWAYS not in keys
    _, uses = scanned(MORELINQ, "MoreLinq/Batch.cs")
    assert f"MoreEnumerable::{STATIC_INIT}" in uses
    # A test that uses no part of MoreEnumerable does not run it; one that calls an
    # operator does.
    for body, runs in (("var n = 1;", False), ("new[] { 1 }.Batch(1);", True)):
        files = {
            **files_of(MORELINQ),
            "MoreLinq.Test/OtherTest.cs": f"class OtherTest {{ void T() {{ {body} }} }}\n",
        }
        result = walked("MoreLinq.Test/OtherTest.cs", files)
        assert not result.partial, result.cut
        assert ("MoreLinq/AssertCount.cs" in result.files) is runs, body


def test_a_part_without_static_keeps_its_static_members_by_name() -> None:
    """TagFirstLast.cs writes `partial class MoreEnumerable` (no `static`); its public
    members are static, so none binds unnamed (an interface's member, a property a
    serialiser reads)."""
    keys, _ = scanned(MORELINQ, "MoreLinq/TagFirstLast.cs")
    assert keys == {"TagFirstLast", "MoreEnumerable::TagFirsLastImpl", PARTIAL}


def test_a_partial_test_class_with_an_attribute_counts_by_its_name() -> None:
    """ParserTestsReadFile.cs: `[TestFixture] public partial class ParserTests`: an
    attribute on the type applies to the whole fixture, so the part counts whenever the
    type is named, although mcs compiles ParserTests.cs without it."""
    keys, _ = scanned(INI, "src/IniParser.Tests/Unit/Parser/ParserTestsReadFile.cs")
    assert {"ParserTests", "check_parses_real_file"} <= keys
    keys, _ = scanned(INI, "src/IniParser.Tests/Unit/Parser/ParserTests.cs")
    assert "ParserTests::iniFileStr" in keys  # a private field: not `iniFileStr`
    assert "iniFileStr" not in keys


def test_a_static_class_declares_its_extension_methods() -> None:
    keys, _ = scanned(MORELINQ, "MoreLinq.Test/TestExtensions.cs")
    assert keys == {
        "TestExtensions",
        "AssertSequenceEqual",
        "InsertBetween",
        "GenerateSplits",
        "Add",
    }


def test_assembly_attributes_count_for_every_test() -> None:
    keys, _ = scanned(MORELINQ, "MoreLinq/Properties/AssemblyInfo.cs")
    assert keys == {ALWAYS}


def test_attributes_that_only_describe_the_assembly_count_for_code_that_reads_them() -> None:
    """Sprache's src/Version.cs holds `[assembly: AssemblyVersion("2.0.0.0")]` alone: only
    code reading the assembly's metadata runs with it (`GetName().Version`)."""
    keys, _ = scanned("sprache", "src/Version.cs")
    assert keys == {METADATA}
    version = (FIXTURES / "sprache" / "src" / "Version.cs").read_text(encoding="utf-8")
    project = '<Project Sdk="Microsoft.NET.Sdk"></Project>'
    test = "class VersionTest {{ void Shows() {{ {} }} }}\n"
    for body, counted in (
        ("var v = typeof(VersionTest).Assembly.GetName().Version;", True),
        ("var v = 1;", False),
    ):
        files: dict[str, Source] = {
            "src/App/App.csproj": project,
            "src/App/Version.cs": version,
            "src/App/VersionTest.cs": test.format(body),
        }
        result = walked("src/App/VersionTest.cs", files)
        assert not result.partial, result.cut
        assert ("src/App/Version.cs" in result.files) is counted, body


def test_nested_types_of_a_type_that_is_not_partial_are_reached_through_it() -> None:
    """NullArgumentTest.cs nests `Enumerable`, `EqualityComparer`, ...: names the BCL has
    too; another file reaches them only as `NullArgumentTest.X`."""
    found = scan_csharp((FIXTURES / MORELINQ / "MoreLinq.Test/NullArgumentTest.cs").read_text())
    assert found.keys == {"NullArgumentTest"}
    assert found.assembly_reflection  # Activator.CreateInstance
    assert found.member_reflection  # typeof(MoreEnumerable).GetMethods(flags)


def test_what_a_file_names_leaves_comments_out_and_keeps_strings_that_are_names() -> None:
    _, uses = scanned(MORELINQ, "MoreLinq.Test/BatchTest.cs")
    assert {"Batch", "AssertSequenceEqual", "Read", "MoreEnumerable"} <= uses
    assert "source" in uses  # Assert.ThrowsArgumentNullException("source", ...)
    assert "Apache" not in uses  # the licence header
    # `using (var reader = result.Read())` calls Dispose; `foreach` nothing here.
    assert "Dispose" in uses


@pytest.mark.parametrize(
    ("code", "implied"),
    [
        ("var q = from x in xs where x > 1 select x;", {"Select", "Where", "SelectMany"}),
        ("foreach (var x in xs) { }", {"GetEnumerator", "MoveNext", "Current"}),
        ("await foreach (var x in xs) { }", {"GetAsyncEnumerator", "MoveNextAsync"}),
        ("await Task.Delay(1);", {"GetAwaiter", "GetResult"}),
        ("var (a, b) = pair;", {"Deconstruct"}),
        ("var l = new Bag { 1, 2 };", {"Add"}),
        ('var s = $"{Format(x)} and {{literal}}";', {"Format", "AppendFormatted"}),
    ],
)
def test_names_the_compiler_calls_unwritten(code: str, implied: set[str]) -> None:
    found = scan_csharp(f"class C {{ void M() {{ {code} }} }}")
    assert implied <= found.uses
    assert "literal" not in found.uses


def test_an_anonymous_type_is_no_collection_initialiser() -> None:
    """TagFirstLast.cs: `new { a.Prev, a.Curr, Next = b.Curr }` calls no `Add` (it once
    counted TestExtensions.cs's `Add` for every MoreLINQ test)."""
    _, uses = scanned(MORELINQ, "MoreLinq/TagFirstLast.cs")
    assert "Add" not in uses


def test_a_file_the_scanner_cannot_follow_counts_for_every_test() -> None:
    broken = "namespace A {\n#if X\nclass B {\n#else\nclass B : C {\n#endif\n}\n}\n"
    assert scan_csharp(broken).keys == {ALWAYS}


# The walk.


def test_batch_test_reaches_what_it_names_and_not_the_other_operators() -> None:
    """mcs needs Batch.cs, TestExtensions.cs, Assert.cs, SequenceReader.cs for BatchTest.cs
    (the bench's label) and not MinBy.cs nor MoreEnumerable.cs ("unrelated" pairs)."""
    result, found = reached(MORELINQ, "MoreLinq.Test/BatchTest.cs")
    assert found["MoreLinq/Batch.cs"] == "Batch"
    assert {"MoreLinq.Test/TestExtensions.cs", "MoreLinq.Test/Assert.cs"} <= set(found)
    assert found["MoreLinq.Test/SequenceReader.cs"] == "Read"
    # Counted for every test of their projects: an assembly attribute; and with any part of
    # MoreEnumerable, its static initialiser.
    assert found["MoreLinq/Properties/AssemblyInfo.cs"] == ALWAYS
    assert found["MoreLinq/AssertCount.cs"] == f"MoreEnumerable::{STATIC_INIT}"
    left = {"MoreLinq/MinBy.cs", "MoreLinq/MoreEnumerable.cs", "MoreLinq/Pairwise.cs"}
    assert not left & set(found)
    assert "MoreLinq.Test/NullArgumentTest.cs" not in found
    # The projects' folders stay in the footprint for their other files.
    assert found["MoreLinq/"] == "a project MoreLinq.Test/project.json references"
    [folder] = [r for r in result.reached if r.path == "MoreLinq/"]
    assert folder.except_suffixes == (".cs",)


def test_a_file_read_first_and_not_counted_is_counted_once_a_counted_file_names_it() -> None:
    """TagFirstLastTest.cs names TagFirstLast, not Pairwise; TagFirstLast.cs calls
    `.Pairwise(...)`: Pairwise.cs, read with the others in one round and not counted for the
    test file, is counted for TagFirstLast.cs, one step further."""
    result, found = reached(MORELINQ, "MoreLinq.Test/TagFirstLastTest.cs")
    [pairwise] = [r for r in result.reached if r.path == "MoreLinq/Pairwise.cs"]
    assert [(s.importer, s.module) for s in pairwise.chain] == [
        ("MoreLinq.Test/TagFirstLastTest.cs", "TagFirstLast"),
        ("MoreLinq/TagFirstLast.cs", "Pairwise"),
    ]
    assert "MoreLinq/MinBy.cs" not in found


def test_a_library_does_not_name_its_tests() -> None:
    """TagFirstLast.cs names `KeyValuePair` (the BCL's struct); MoreLinq.Test/KeyValuePair.cs
    declares a class of that name, which MoreLinq (the library) cannot see: it is counted
    for the test project's TestExtensions.cs, which can."""
    result, _ = reached(MORELINQ, "MoreLinq.Test/TagFirstLastTest.cs")
    assert "KeyValuePair" in scan_csharp(files_of(MORELINQ)["MoreLinq/TagFirstLast.cs"]).uses
    [pair] = [r for r in result.reached if r.path == "MoreLinq.Test/KeyValuePair.cs"]
    assert [s.importer for s in pair.chain] == [
        "MoreLinq.Test/TagFirstLastTest.cs",
        "MoreLinq.Test/TestExtensions.cs",
    ]


def test_reflection_over_members_counts_every_part_of_partial_types_it_can_reach() -> None:
    """ToDataTable.cs reads a type's members by reflection (`typeof(T)`): every part of a
    partial type it can reach counts, since it reads them whole; a static class's parts only
    from a `typeof` naming it (a static class has no instance and is no type argument), so
    MinBy.cs and MoreEnumerable.cs do not (mcs's label: unrelated). TagFirstLast.cs's part
    omits `static`, which only the other parts say: it counts."""
    _, found = reached(MORELINQ, "MoreLinq.Test/ToDataTableTest.cs")
    assert found["MoreLinq/TagFirstLast.cs"] == PARTIAL
    assert not {"MoreLinq/MinBy.cs", "MoreLinq/MoreEnumerable.cs"} & set(found)
    assert "MoreLinq.Test/NullArgumentTest.cs" not in found
    named = scan_csharp("class T { void F() { typeof(MoreLinq.MoreEnumerable).GetMethods(); } }")
    assert named.member_reflection and named.typeof == {"MoreEnumerable"}


def test_reflection_over_the_assembly_counts_every_file() -> None:
    _, found = reached(MORELINQ, "MoreLinq.Test/NullArgumentTest.cs")
    sources = {p for p in files_of(MORELINQ) if p.endswith(".cs")}
    assert sources - {"MoreLinq.Test/NullArgumentTest.cs"} <= set(found)


def test_ini_parser_a_test_not_naming_a_class_does_not_reach_it() -> None:
    """SectionTests.cs: mcs needs Property.cs and PropertyCollection.cs, not
    IniDataCaseInsensitive.cs nor the test project's MergeIniFiles.cs (the labels)."""
    _, found = reached(INI, "src/IniParser.Tests/Unit/Model/SectionTests.cs")
    assert {"src/IniParser/Model/Property.cs", "src/IniParser/Model/PropertyCollection.cs"} <= set(
        found
    )
    assert "src/IniParser/Model/IniDataCaseInsensitive.cs" not in found
    assert "src/IniParser.Tests/Unit/Model/MergeIniFiles.cs" not in found


def test_ini_parser_a_private_field_of_a_partial_class_is_its_own() -> None:
    """ConfigurationTests.cs has a field `iniFileStr`, and so has the partial class
    ParserTests: another class cannot name a private member, so ParserTests.cs is not
    counted for it."""
    _, found = reached(INI, "src/IniParser.Tests/Unit/Configuration/ConfigurationTests.cs")
    assert "src/IniParser.Tests/Unit/Parser/ParserTests.cs" not in found
    _, found = reached(INI, "src/IniParser.Tests/Unit/Parser/ParserTests.cs")
    assert found["src/IniParser.Tests/Unit/Parser/ParserTestsReadFile.cs"] == "ParserTests"


def test_the_walk_reads_the_projects_in_one_round_more() -> None:
    files = files_of(INI)
    result = walked("src/IniParser.Tests/Unit/Model/SectionTests.cs", files)
    sources = {p for p in files if p.endswith(".cs")}
    assert sources <= set(result.read)  # every file of the projects, to know what it declares


# The footprint and removed files.


def test_the_project_folder_covers_its_other_files_not_its_sources() -> None:
    result, _ = reached(MORELINQ, "MoreLinq.Test/BatchTest.cs")
    failure = Failure(
        test_id="MoreLinq.Test.BatchTest.BatchZeroSize",
        name="BatchZeroSize",
        framework="nunit",
        file="MoreLinq.Test/BatchTest.cs",
    )
    found = footprint(failure, None, result)
    changed = ["MoreLinq/MinBy.cs", "MoreLinq/Batch.cs", "MoreLinq/key.snk"]
    assert {path for path, _ in matches(found, changed)} == {
        "MoreLinq/Batch.cs",
        "MoreLinq/key.snk",  # a file the build reads, under the project's folder
    }
    entry = FootprintEntry(path="MoreLinq/", reason="runs", except_suffixes=[".cs"])
    assert entry_contains(entry, "MoreLinq/gone.resx")
    assert not entry_contains(entry, "MoreLinq/Gone.cs")
    assert walk_from_json(walk_to_json(result)) == result


def test_a_removed_source_file_is_ruled_out_only_outside_the_test_projects() -> None:
    """A `.cs` file gone at the head may have declared anything the closure names."""
    result, _ = reached(MORELINQ, "MoreLinq.Test/BatchTest.cs")
    assert could_be_named(result, CSHARP, "MoreLinq/Gone.cs", ["MoreLinq/Gone.cs"])
    assert could_be_named(
        result, CSHARP, "MoreLinq.Test/Sub/Gone.cs", ["MoreLinq.Test/Sub/Gone.cs"]
    )
    assert not could_be_named(result, CSHARP, "Tools/Gen/Gen.cs", ["Tools/Gen/Gen.cs"])
    # A project file gone too: what compiled at the base is not known.
    gone = ["Tools/Gen/Gen.cs", "MoreLinq/project.json"]
    assert could_be_named(result, CSHARP, "Tools/Gen/Gen.cs", gone)


ROOT_PROJECT: dict[str, Source] = {
    "Shop.csproj": "<Project Sdk='Microsoft.NET.Sdk'></Project>",
    "Cart.cs": "namespace Shop { public sealed class Cart { } }\n",
    "Admin/Users.cs": "namespace Shop.Admin { public sealed class Users { } }\n",
    "Tests/CartTests.cs": "namespace Shop.Tests { class CartTests { Cart cart; } }\n",
}


def test_a_project_at_the_repository_root_compiles_every_file_by_declaration() -> None:
    result = walked("Tests/CartTests.cs", ROOT_PROJECT)
    assert not result.partial
    assert {r.path for r in result.reached} == {"Cart.cs"}
    # Any removed .cs file may have been compiled with the test.
    assert could_be_named(result, CSHARP, "Gone.cs", ["Gone.cs"])


def test_too_many_sources_count_the_folders_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csharp, "SOURCES_READ", 2)
    result = walked("Tests/CartTests.cs", ROOT_PROJECT)
    assert result.partial  # the root folder cannot be a footprint folder
    files = files_of(MORELINQ)
    many = walked("MoreLinq.Test/BatchTest.cs", files)
    assert not many.partial
    assert {r.path: r.except_suffixes for r in many.reached} == {
        "MoreLinq.Test/": (),
        "MoreLinq/": (),
    }
