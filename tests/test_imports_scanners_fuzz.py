"""The Ruby, PHP, C# and Rust scanners read any text a pull request can put in a file:
whatever it holds, they answer (maybe nothing) and never raise."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.imports.csharp import references_of
from bot.triage.imports.csharp_scan import ALWAYS, scan_csharp
from bot.triage.imports.php import autoload_of, names_of
from bot.triage.imports.php import calls_of as php_calls
from bot.triage.imports.ruby import calls_of, loads_of, rspec_options
from bot.triage.imports.rust import manifest_of, modules_of

# Text built from the characters the scanners treat specially, so the odd cases are common.
SPECIAL = "'\"`\\#/*<>{}[]()=;:,.$?!\n\t rmoudsequireclaPIR_0~-AEdf"
TEXT = st.text(alphabet=st.sampled_from(SPECIAL), max_size=300) | st.text(max_size=300)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_the_scanners_answer_any_text(text: str) -> None:
    for load in loads_of(text):
        assert load.how in ("require", "relative", "file")
    calls_of(text)
    rspec_options(text)
    names_of(text, "tests/unit")
    php_calls(text)
    autoload_of("composer.json", text)
    references_of("tests/T/T.csproj", text)
    scan_csharp(text)
    manifest_of("crates/a/Cargo.toml", text)
    for name, _ in modules_of(text):
        assert name.isidentifier()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["src/", "../x", "A\\", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["autoload", "psr-4", "psr-0", "files", "A\\"]), inner)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(JSON)
def test_composer_json_of_any_shape_gives_rules_inside_the_repository(data: object) -> None:
    rules = autoload_of("packages/a/composer.json", json.dumps(data))
    folders = [folder for _, folder in rules.psr4 + rules.psr0] + list(rules.files)
    assert all(".." not in folder.split("/") for folder in folders)


RUBY_LINES = st.lists(
    st.sampled_from(
        [
            "def m",
            "  def self.n(a)",
            "def o; end",
            "end",
            "  end",
            "  rescue",
            "  x(<<~A, <<-'B')",
            "    x <<~A",
            "A",
            "  B",
            "    require 'a'",
            "require_relative 'b'",
            "  'str#{i}ng'",
            "# <<~A",
            "",
        ]
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(RUBY_LINES)
def test_a_heredocs_loads_wait_only_for_a_method_the_text_declares(lines: list[str]) -> None:
    text = "\n".join(lines)
    for load in loads_of(text):
        assert not load.when or f"def {load.when}" in text or f"def self.{load.when}" in text
    calls_of(text)


CSHARP_PIECES = st.lists(
    st.sampled_from(
        [
            "namespace A {", "namespace A;", "}", "{", "public static partial class P", "class C",
            "struct S<T> where T : class", "record R(int X);", "delegate T D<T>(T x);",
            "[assembly: X]", "[Test]", "public void M() {", "static int f = 1;", "int P { get; }",
            "operator >=(C a, C b)", "=> x;", '"{"', "@\"a\"\"b\"", '$"{x}"', "'\\''", "/* } */",
            "// {", "#if X", "#endif", "(", ")", ";", "=", "<", ">", "this", "extension(int i)",
        ]
    ),
    max_size=25,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(CSHARP_PIECES)
def test_the_csharp_scanner_answers_any_declarations(pieces: list[str]) -> None:
    """Whatever it holds, a C# file declares something or counts for every test: a parse
    that goes astray says ALWAYS rather than losing a declaration."""
    found = scan_csharp("\n".join(pieces))
    assert isinstance(found.keys, frozenset)
    if "class C" in pieces and "}" not in pieces and "{" in pieces:
        assert ALWAYS in found.keys or "C" in found.keys
