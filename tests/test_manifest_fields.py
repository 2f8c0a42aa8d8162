"""go.mod, Cargo.toml, pyproject.toml and project files compared base against head
(`bot/triage/manifests/`): a dependency's version bump cannot change what a test's imports
find; a `replace`, a path dependency, pytest's settings or a `ProjectReference` can.

The real files are in tests/fixtures/manifests (PROVENANCE.md), before and after one commit;
the edge cases edit those files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.triage.imports import ImportWalk, Reached
from bot.triage.imports.python import tools_named
from bot.triage.imports.tools import TOOLS as TOOL_NAMES
from bot.triage.imports.tools import reads_assembly_metadata
from bot.triage.manifests import Walked, compared, holds_for, inert_change
from bot.triage.models import Confidence, Failure, ImportStep, Verdict
from bot.triage.risky import risky_changes
from bot.triage.verdict import decide

FIXTURES = Path(__file__).parent / "fixtures" / "manifests"
ZAP_IMPORTS = Walked(frozenset(), frozenset({"go.uber.org/zap/zapcore"}))
NONE_IMPORTED = Walked(frozenset(), frozenset())


def versions(folder: str, name: str) -> tuple[str, str]:
    return (
        (FIXTURES / folder / f"base.{name}").read_text(),
        (FIXTURES / folder / f"head.{name}").read_text(),
    )


@pytest.mark.parametrize(
    ("folder", "path", "walked", "said"),
    [
        ("go-toml-7dad877", "go.mod", NONE_IMPORTED, "its require directive"),
        # zap itself is imported, but `replace go.uber.org/zap => ../` holds for every version.
        ("zap-70f61bb", "exp/go.mod", ZAP_IMPORTS, "its require directive"),
        ("toml-813ce3d7", "crates/toml/Cargo.toml", None, "its dev-dependencies field"),
        (
            "marshmallow-d686cd8d",
            "pyproject.toml",
            None,
            "its project.optional-dependencies.docs field",
        ),
        ("marshmallow-3e26fa20", "pyproject.toml", None, "its tool.ruff field"),
        ("packaging-f300ebf0", "pyproject.toml", None, "its tool.ruff field"),
        (
            "serilog-1fcdf100",
            "test/Serilog.Tests/Serilog.Tests.csproj",
            None,
            "the Version of its PackageReference items",
        ),
    ],
)
def test_real_version_bumps_and_linter_settings_are_inert(
    folder: str, path: str, walked: Walked | None, said: str
) -> None:
    before, after = versions(folder, path.rpartition("/")[2])
    assert compared(path)
    assert inert_change(path, before, after, walked) == said


@pytest.mark.parametrize(
    ("folder", "path"),
    [
        ("zap-f95879b", "tools/go.mod"),  # Dependabot's bump raised the `go` directive too
        ("zap-b900128", "exp/go.mod"),  # a `replace` by a folder of the repository
        ("toml-912761bd", "crates/toml/Cargo.toml"),  # `version`, path dependencies
        ("marshmallow-5e71a040", "pyproject.toml"),  # `version`: importlib.metadata reads it
        ("packaging-9645290b", "pyproject.toml"),  # pytest's addopts
        ("packaging-15fdefcb", "pyproject.toml"),  # pytest's addopts with a dependency group
        ("serilog-1264c9b5", "test/Serilog.Tests/Serilog.Tests.csproj"),  # TargetFrameworks
    ],
)
def test_real_changes_that_can_steer_count(folder: str, path: str) -> None:
    before, after = versions(folder, path.rpartition("/")[2])
    assert inert_change(path, before, after, ZAP_IMPORTS) is None


# --- go.mod ---------------------------------------------------------------------------------

GO_TOML = versions("go-toml-7dad877", "go.mod")[0]  # `require github.com/stretchr/testify v1.8.4`


def test_a_require_counts_when_the_walk_imported_that_module_from_the_repository() -> None:
    """A module of the repository used at a version (no `replace`): the version says which of
    its files the test compiles with."""
    bumped = GO_TOML.replace("v1.8.4", "v1.9.0")
    walked = Walked(frozenset(), frozenset({"github.com/stretchr/testify/require"}))
    assert inert_change("go.mod", GO_TOML, bumped, walked) is None
    assert inert_change("go.mod", GO_TOML, bumped, None) is None  # what was imported: unknown
    assert inert_change("go.mod", GO_TOML, bumped, NONE_IMPORTED) == "its require directive"
    # A quoted path is the same path.
    path = "github.com/stretchr/testify"
    quoted = [text.replace(f"require {path}", f'require "{path}"') for text in (GO_TOML, bumped)]
    assert inert_change("go.mod", quoted[0], quoted[1], walked) is None


def test_a_require_counts_when_a_replace_names_its_version() -> None:
    """`replace M v1.8.4 => ../m` no longer applies once v1.9.0 is required."""
    pinned = GO_TOML + "\nreplace github.com/stretchr/testify v1.8.4 => ../testify\n"
    bumped = pinned.replace("require github.com/stretchr/testify v1.8.4", "require x v1")
    assert inert_change("go.mod", pinned, bumped, NONE_IMPORTED) is None


@pytest.mark.parametrize(
    ("head", "said"),
    [
        ("\ntoolchain go1.22.2\n", "its toolchain directive"),
        ("\nretract v2.0.0 // published by mistake\n", "its retract directive"),
        ("\nretract [v2.0.0, v2.0.5]\n", "its retract directive"),
        ("\n// A comment.\n", "its formatting"),
    ],
)
def test_toolchain_retract_and_comments_are_inert(head: str, said: str) -> None:
    assert inert_change("go.mod", GO_TOML, GO_TOML + head, NONE_IMPORTED) == said


@pytest.mark.parametrize(
    "head",
    [
        GO_TOML.replace("go 1.16", "go 1.22"),  # loop variables per iteration
        GO_TOML.replace("module github.com/pelletier/go-toml/v2", "module example.com/toml"),
        GO_TOML + "\nreplace github.com/stretchr/testify => ../testify\n",
        GO_TOML + "\ngodebug default=go1.21\n",
        GO_TOML + "\nexclude github.com/stretchr/testify v1.8.3\n",
        GO_TOML + "\ntool golang.org/x/tools/cmd/stringer\n",
        GO_TOML + "\nfuture directive\n",  # a directive this grammar does not know
        # `//` inside a word: part of the path, or a comment? Not told: counts.
        GO_TOML.replace("module github.com/pelletier/go-toml/v2", "module example.com/a//v2"),
        GO_TOML + "\nrequire (\n\tgithub.com/a/b v1.0.0\n",  # a block never closed
        GO_TOML + '\nrequire "unterminated v1\n',
    ],
)
def test_other_directives_and_what_does_not_parse_count(head: str) -> None:
    assert inert_change("go.mod", GO_TOML, head, NONE_IMPORTED) is None


def go_walk(*cut: str) -> ImportWalk:
    test = "exp/zapslog/handler_test.go"
    step = ImportStep(importer=test, module="go.uber.org/zap/zapcore", path="zapcore/level.go")
    return ImportWalk(
        test_file=test,
        language="Go",
        reached=(Reached("zapcore/level.go", (step,)),),
        read=(),
        wanted=(),
        cut=cut,
        configs=("exp/go.mod",),
    )


def test_walked_holds_the_import_paths_the_walks_followed_into_the_repository() -> None:
    walked = Walked.of([go_walk()])
    assert walked.files == {"exp/zapslog/handler_test.go", "zapcore/level.go"}
    assert walked.imports == frozenset({"go.uber.org/zap/zapcore"})


def test_a_walk_cut_short_leaves_what_was_imported_unknown() -> None:
    """What a partial walk did not follow may import the module whose version changed."""
    walked = Walked.of([go_walk(), go_walk("the file budget (2000 files)")])
    assert walked.imports is None
    bumped = GO_TOML.replace("v1.8.4", "v1.9.0")
    assert inert_change("go.mod", GO_TOML, bumped, walked) is None


# --- Cargo.toml -----------------------------------------------------------------------------

CARGO = versions("toml-813ce3d7", "Cargo.toml")[0]


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ('serde_json = "1.0.115"', 'serde_json = "1.0.116"', "its dev-dependencies field"),
        ('snapbox = "0.4.16"', 'snapbox = "0.4.16"\nsimilar = "2"', "its dev-dependencies field"),
        (
            'keywords = ["encoding", "toml"]',
            'keywords = ["encoding", "toml", "serde"]',
            "its package.keywords field",
        ),
    ],
)
def test_cargo_versions_and_publishing_fields_are_inert(before: str, after: str, said: str) -> None:
    assert before in CARGO
    assert inert_change("Cargo.toml", CARGO, CARGO.replace(before, after)) == said


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # A path dependency's version: the release bumped it with the crate it names.
        (
            'version = "0.6.5", path = "../toml_datetime"',
            'version = "0.6.6", path = "../toml_datetime"',
        ),
        ('serde_json = "1.0.115"', 'serde_json = { path = "../serde_json" }'),
        ('serde_json = "1.0.115"', "serde_json = { workspace = true }"),
        ('serde_json = "1.0.115"', 'serde_json = { git = "https://github.com/serde-rs/json" }'),
        # An optional dependency is a feature the crate's code tests with `cfg`.
        ('indexmap = { version = "2.0.0", optional = true }', 'indexmap = { version = "2.0.0" }'),
        ('serde = { version = "1.0.197", features = ["derive"] }', 'serde = "1.0.197"'),
        ('version = "0.8.12"', 'version = "0.8.13"'),  # env!("CARGO_PKG_VERSION")
        ('authors = ["Alex Crichton', 'authors = ["Alex C'),  # CARGO_PKG_AUTHORS
        ('preserve_order = ["indexmap"]', 'preserve_order = ["indexmap", "serde"]'),
        ('name = "decoder_compliance"', 'name = "decoder"'),  # a [[test]]
        ("[lints]\nworkspace = true", "[lints]\nworkspace = false"),
        ("[features]", "[features"),  # not TOML
    ],
)
def test_cargo_changes_that_can_steer_count(before: str, after: str) -> None:
    assert before in CARGO
    assert inert_change("crates/toml/Cargo.toml", CARGO, CARGO.replace(before, after)) is None


def test_cargo_target_and_workspace_dependency_tables_are_compared_too() -> None:
    base = (
        '[workspace.dependencies]\nserde = "1.0.1"\n'
        "[target.'cfg(unix)'.dependencies]\nlibc = \"0.2.1\"\n"
    )
    bumped = base.replace("1.0.1", "1.0.2").replace("0.2.1", "0.2.2")
    said = "its target.cfg(unix).dependencies and workspace.dependencies fields"
    assert inert_change("Cargo.toml", base, bumped) == said
    local = base.replace('serde = "1.0.1"', 'serde = { path = "serde" }')
    assert inert_change("Cargo.toml", base, local) is None


SEMVER = versions("semver-324ffce5", "Cargo.toml")
TESTED = Walked(frozenset({"tests/test_version.rs", "src/lib.rs"}), None)


def test_a_new_bench_target_is_inert_for_a_test_of_another_target() -> None:
    # The real commit: `cargo test` builds no bench unless it says `test = true`.
    said = "its bench and target.cfg(not(miri)).dev-dependencies fields"
    before, after = SEMVER
    assert inert_change("Cargo.toml", before, after, TESTED) == said
    # ... but counts when a bench or example is tested, or is what failed, or when what the
    # walks reached is not known.
    tested = after.replace("harness = false", "test = true")
    assert inert_change("Cargo.toml", before, tested, TESTED) is None
    in_bench = Walked(frozenset({"benches/parse.rs"}), None)
    assert inert_change("Cargo.toml", before, after, in_bench) is None
    assert inert_change("Cargo.toml", before, after) is None
    example = after.replace("[[bench]]", "[[example]]")
    assert inert_change("Cargo.toml", before, example, TESTED) == said.replace("bench", "example")


# --- pyproject.toml -------------------------------------------------------------------------

MARSHMALLOW = versions("marshmallow-d686cd8d", "pyproject.toml")[0]
POETRY = """[tool.poetry]
name = "app"
version = "1.0.0"
packages = [{ include = "app", from = "src" }]

[tool.poetry.dependencies]
python = "^3.9"
requests = "^2.31.0"

[tool.poetry.group.dev.dependencies]
pytest = { version = "^8.0", allow-prereleases = true }
"""


@pytest.mark.parametrize(
    ("path", "base", "before", "after", "said"),
    [
        (
            "pyproject.toml",
            MARSHMALLOW,
            'dependencies = ["packaging>=17.0"]',
            'dependencies = ["packaging>=24.0", "typing-extensions; python_version < \'3.11\'"]',
            "its project.dependencies field",
        ),
        (
            "pyproject.toml",
            MARSHMALLOW,
            '"Programming Language :: Python :: 3.9",',
            "",
            "its project.classifiers field",
        ),
        (
            "pyproject.toml",
            MARSHMALLOW,
            "[tool.ruff.format]",
            "[tool.ruff.format]\nquote-style = 'single'",
            "its tool.ruff field",
        ),
        (
            "pyproject.toml",
            POETRY,
            'requests = "^2.31.0"',
            'requests = "^2.32.3"',
            "its tool.poetry.dependencies field",
        ),
        (
            "pyproject.toml",
            POETRY,
            'version = "^8.0"',
            'version = "^8.3"',
            "its tool.poetry.group.dev.dependencies field",
        ),
    ],
)
def test_pyproject_requirements_and_linters_are_inert(
    path: str, base: str, before: str, after: str, said: str
) -> None:
    assert before in base
    assert inert_change(path, base, base.replace(before, after)) == said


@pytest.mark.parametrize(
    ("base", "before", "after"),
    [
        # A direct reference or a path installs code from outside the index.
        (MARSHMALLOW, '"packaging>=17.0"', '"packaging @ file:///src/packaging"'),
        (MARSHMALLOW, '"packaging>=17.0"', '"packaging @ git+https://github.com/pypa/packaging"'),
        (MARSHMALLOW, '"packaging>=17.0"', '"./vendor/packaging"'),
        (POETRY, 'requests = "^2.31.0"', 'requests = { path = "../requests", develop = true }'),
        (
            POETRY,
            'packages = [{ include = "app", from = "src" }]',
            'packages = [{ include = "app" }]',
        ),
        # The project's scripts and entry points (pytest plugins are entry points).
        (
            MARSHMALLOW,
            "[project.urls]",
            '[project.entry-points.pytest11]\nm = "m.plugin"\n[project.urls]',
        ),
        (MARSHMALLOW, 'requires = ["flit_core<4"]', 'requires = ["flit_core<4", "setuptools"]'),
        (MARSHMALLOW, "[tool.mypy]", "[tool.coverage.report]\nfail_under = 100\n[tool.mypy]"),
        (MARSHMALLOW, "[tool.mypy]", '[tool.pytest.ini_options]\naddopts = "-x"\n[tool.mypy]'),
        (
            MARSHMALLOW,
            "[tool.mypy]",
            '[tool.setuptools.packages.find]\nwhere = ["src"]\n[tool.mypy]',
        ),
        (MARSHMALLOW, 'name = "marshmallow"', 'name = "marshmallow3"'),
    ],
)
def test_pyproject_changes_that_can_steer_count(base: str, before: str, after: str) -> None:
    assert before in base
    assert inert_change("pyproject.toml", base, base.replace(before, after)) is None


# --- project files --------------------------------------------------------------------------

SERILOG = versions("serilog-1fcdf100", "Serilog.Tests.csproj")[0]
SERILOG_PATH = "test/Serilog.Tests/Serilog.Tests.csproj"


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (
            '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" />',
            '<PackageReference Include="Newtonsoft.Json">\n'
            "      <Version>13.0.2</Version>\n"
            "    </PackageReference>",
            "the Version of its PackageReference items",
        ),
        ("<ItemGroup>", "<ItemGroup><!-- packages -->", "its formatting"),
    ],
)
def test_a_package_version_as_an_element_and_comments_are_inert(
    before: str, after: str, said: str
) -> None:
    assert before in SERILOG
    assert inert_change(SERILOG_PATH, SERILOG, SERILOG.replace(before, after, 1)) == said


SPRACHE = versions("sprache-6912da76", "Sprache.csproj")
SPRACHE_PATH = "src/Sprache/Sprache.csproj"
# The failed tests' complete walks: no code that reads the assembly's metadata, or some.
NO_METADATA = Walked(frozenset(), frozenset(), frozenset())
METADATA = Walked(frozenset(), frozenset(), frozenset({"assembly metadata"}))


def test_a_version_bump_is_inert_unless_the_tests_code_may_read_the_assembly_version() -> None:
    """sprache 6912da76 "Dev version bump": `VersionPrefix` is compiled into the assembly,
    which only reflection reads (`GetName().Version`, `GetCustomAttribute`)."""
    before, after = SPRACHE
    said = "its VersionPrefix property"
    assert inert_change(SPRACHE_PATH, before, after, NO_METADATA) == said
    assert inert_change(SPRACHE_PATH, before, after, METADATA) is None
    assert inert_change(SPRACHE_PATH, before, after, None) is None  # a walk could not tell
    # Properties only packing reads are inert whatever the code reads.
    notes = after.replace(
        "<Authors>", "<PackageReleaseNotes>Fixes #162</PackageReleaseNotes>\n    <Authors>", 1
    )
    assert notes != after
    assert inert_change(SPRACHE_PATH, after, notes, METADATA) == "its PackageReleaseNotes property"
    # NeutralLanguage steers resource lookup; AssemblyName is the assembly's identity.
    for steering in ("<NeutralLanguage>en</NeutralLanguage>", "<AssemblyName>S</AssemblyName>"):
        edited = after.replace("<Authors>", steering + "\n    <Authors>", 1)
        assert inert_change(SPRACHE_PATH, after, edited, NO_METADATA) is None, steering


def test_a_project_json_description_is_inert_unless_the_tests_code_may_read_it() -> None:
    """MoreLINQ 0ade8d77 "Add Unfold": project.json's `description` (an assembly attribute)
    and `packOptions.releaseNotes` (NuGet's) name the new operator."""
    before, after = versions("morelinq-0ade8d77", "project.json")
    path = "MoreLinq/project.json"
    assert compared(path)
    said = "its description and packOptions fields"
    assert inert_change(path, before, after, NO_METADATA) == said
    assert inert_change(path, before, after, METADATA) is None
    assert inert_change(path, before, after, None) is None
    framework = after.replace('"frameworks": {', '"frameworks": {\n    "net46": {},', 1)
    assert framework != after
    assert inert_change(path, after, framework, NO_METADATA) is None


def test_what_csharp_code_reads_of_its_assembly() -> None:
    assert reads_assembly_metadata("var v = typeof(Parse).Assembly.GetName().Version;")
    assert reads_assembly_metadata("a.GetCustomAttribute<AssemblyInformationalVersionAttribute>()")
    assert reads_assembly_metadata("FileVersionInfo.GetVersionInfo(path)")
    # Writing the attributes is not reading them (MoreLINQ's Properties/AssemblyInfo.cs).
    assert not reads_assembly_metadata('[assembly: AssemblyTitle("MoreLINQ")]')


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            '<ProjectReference Include="..\\..\\src\\Serilog\\Serilog.csproj" />',
            '<ProjectReference Include="..\\..\\src\\Serilog.Core\\Serilog.Core.csproj" />',
        ),
        (
            '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" />',
            '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" Aliases="NJ" />',
        ),
        (
            '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" />',
            '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" />'
            '<PackageReference Include="Shouldly" Version="4.1.0" />',
        ),
        ("<GenerateRuntimeConfigurationFiles>true", "<GenerateRuntimeConfigurationFiles>false"),
        ("</Project>", '<Compile Include="..\\Shared\\*.cs" /></Project>'),
        ("</Project>", "</Projec>"),
    ],
)
def test_project_file_changes_that_can_steer_count(before: str, after: str) -> None:
    assert before in SERILOG
    assert inert_change(SERILOG_PATH, SERILOG, SERILOG.replace(before, after, 1)) is None


def test_a_project_file_declaring_entities_is_refused() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaa">]><Project>&a;</Project>'
    assert inert_change("a.csproj", bomb, bomb) is None


def test_fsproj_and_vbproj_are_compared_not_other_files() -> None:
    assert compared("src/App/App.fsproj") and compared("src/App/App.vbproj")
    assert not compared("setup.cfg") and not compared("Directory.Packages.props")


# --- the verdict ----------------------------------------------------------------------------

TEST = "tests/test_schema.py"


def python_walk(test: str) -> ImportWalk:
    step = ImportStep(importer=test, module="marshmallow", path="src/marshmallow/__init__.py")
    return ImportWalk(
        test_file=test,
        language="Python",
        reached=(Reached(step.path, (step,)),),
        read=(test, "pyproject.toml"),
        wanted=(),
        cut=(),
        configs=("pyproject.toml",),
    )


def test_a_linter_setting_is_a_caveat_for_a_test_but_related_for_one_running_the_linter() -> None:
    """pytest-ruff makes `path.py::ruff` items that run ruff with pyproject's `[tool.ruff]`;
    a test named after ruff may run it too. Neither changes a go.mod bump's caveat."""
    inert = {"pyproject.toml": "its tool.ruff field"}
    test = Failure(test_id=f"{TEST}::test_load", name="test_load", file=TEST, framework="pytest")
    lint = Failure(test_id=f"{TEST}::ruff", name="ruff", file=TEST, framework="pytest")
    plugin = "tests/test_ruff_plugin.py"
    runs = Failure(
        test_id=f"{plugin}::test_types", name="test_types", file=plugin, framework="pytest"
    )
    walks = {TEST: python_walk(TEST), plugin: python_walk(plugin)}
    flaky, related, running = decide(
        [test, lint, runs], ["pyproject.toml"], imports=walks, passed_on_rerun=True, inert=inert
    )
    assert flaky.verdict is Verdict.FLAKY
    assert flaky.confidence is Confidence.MEDIUM
    assert flaky.caveats == [
        "this PR changes pyproject.toml, which configures how the test's imports resolve, "
        "but only its tool.ruff field, which cannot change that"
    ]
    assert related.verdict is Verdict.RELATED
    assert running.verdict is Verdict.RELATED
    assert holds_for("go.mod", f"{TEST}::ruff")


TOOLS = FIXTURES / "tools"


def told(tools: set[str] | None = None) -> Walked:
    """Complete walks that import no module of the repository and name these tools."""
    return Walked(frozenset(), frozenset(), frozenset(tools or ()))


def test_a_dependency_group_that_includes_another_is_a_requirement_list_like_any() -> None:
    before, after = versions("attrs-b1dc8f67", "pyproject.toml")
    said = "its dependency-groups.pyrefly, dependency-groups.ty and tool.ruff fields"
    assert inert_change("pyproject.toml", before, after, told()) == said
    # A direct reference among them still counts.
    local = after.replace('ty = ["ty",', 'ty = ["ty @ file:///src/ty",', 1)
    assert local != after
    assert inert_change("pyproject.toml", before, local, told()) is None


def test_a_type_checker_setting_counts_only_for_tests_that_may_run_the_checker() -> None:
    """pypa/packaging e808c8aa ("remove dead tasks/check.py") drops two modules from
    `[[tool.mypy.overrides]]` and a ruff per-file-ignore: inert for tests whose complete
    walks name neither tool, so its 7 drawn pairs are cleared; it counts when a walk could
    not tell and when a walk names the tool. A pytest plugin of the checker configured
    here changes nothing for a walked test: its cases are `.yml` files, never cleared by
    names (test_imports_locate.py), and pytest-mypy's items name mypy in their ids."""
    before, after = versions("packaging-e808c8aa", "pyproject.toml")
    said = "its tool.mypy and tool.ruff fields"
    assert inert_change("pyproject.toml", before, after, told()) == said
    assert inert_change("pyproject.toml", before, after, NONE_IMPORTED) is None
    assert inert_change("pyproject.toml", before, after, None) is None
    for tools in ({"mypy"}, {"ruff"}):
        walked = told(tools)
        assert inert_change("pyproject.toml", before, after, walked) is None, tools
    plugin = after.replace('"pretend",', '"pretend",\n    "pytest-mypy-plugins",', 1)
    assert plugin != after
    with_plugin = inert_change("pyproject.toml", before, plugin, told())
    assert with_plugin == "its dependency-groups.test, tool.mypy and tool.ruff fields"
    assert not holds_for("pyproject.toml", "src/packaging/version.py::mypy")


def test_what_a_python_file_names_of_the_tools() -> None:
    """A comment is not code (packaging's metadata.py "makes mypy happy"); a string is
    (mypy's own command-line test runs `python -m mypy`), and so is an import of the
    tool's module or a name (pytest-mypy-testing's marker)."""
    assert tools_named(ast.parse((TOOLS / "packaging-metadata.py.txt").read_text())) == set()
    assert tools_named(ast.parse((TOOLS / "mypy-testcmdline.py.txt").read_text())) == {"mypy"}
    assert tools_named(ast.parse("import mypy.api")) == {"mypy"}
    assert tools_named(ast.parse("@pytest.mark.mypy_testing\ndef f(): pass")) == {"mypy"}
    assert tools_named(ast.parse("x = 'copyright'\nimport mypy_extensions")) == set()
    # A runner of the project's tasks may run any tool; "make" in a sentence does not.
    for code in ("run(['pre-commit', 'run', '--all-files'])", "run(['make', 'lint'])", "'tox -e'"):
        assert tools_named(ast.parse(code)) == TOOL_NAMES, code
    assert tools_named(ast.parse("'make sure the version parses'")) == set()


def test_a_type_checker_setting_counts_for_a_test_whose_id_names_it() -> None:
    """pytest-mypy's items (`src/app.py::mypy`) run mypy with `[tool.mypy]`."""
    inert = {"pyproject.toml": "its tool.mypy.overrides field"}
    test = Failure(test_id=f"{TEST}::test_load", name="test_load", file=TEST, framework="pytest")
    lint = Failure(test_id=f"{TEST}::mypy", name="mypy", file=TEST, framework="pytest")
    flaky, related = decide(
        [test, lint],
        ["pyproject.toml"],
        imports={TEST: python_walk(TEST)},
        passed_on_rerun=True,
        inert=inert,
    )
    assert flaky.verdict is Verdict.FLAKY
    assert related.verdict is Verdict.RELATED


def test_central_package_versions_and_other_project_files_are_risky_caveats() -> None:
    """Not read by the walks, so never a hit; a version bump there is not silent either."""
    changed = ["Directory.Packages.props", "src/App/App.fsproj", "Directory.Build.targets"]
    assert risky_changes(changed) == [(path, "build manifest") for path in changed]


def test_a_tsconfig_option_only_typescript_reads_is_inert_where_typescript_does_not_run() -> None:
    """pinojs/pino d981288b narrows tsconfig.json's `exclude` (which files `tsc` checks):
    its node tests, JavaScript that TypeScript neither compiles nor checks, are cleared of
    it (7 drawn pairs); a test that TypeScript may check, or a walk that could not tell,
    keeps it. What bun, tsx or vite read for JavaScript always counts."""
    before, after = versions("pino-d981288b", "tsconfig.json")
    assert compared("tsconfig.json") and compared("packages/a/tsconfig.build.json")
    assert not compared("jsconfig.json")
    assert inert_change("tsconfig.json", before, after, told()) == "its exclude field"
    assert inert_change("tsconfig.json", before, after, told({"typescript"})) is None
    assert inert_change("tsconfig.json", before, after, NONE_IMPORTED) is None
    unused = after.replace('"strict": true', '"strict": true, "noUnusedLocals": true')
    assert unused != after
    said = "its compilerOptions.noUnusedLocals field"
    assert inert_change("tsconfig.json", after, unused, told()) == said
    # `strict` implies `alwaysStrict`, which esbuild and bun emit with.
    loose = after.replace('"strict": true', '"strict": false')
    assert inert_change("tsconfig.json", after, loose, told()) is None
    for option in ('"baseUrl": "."', '"paths": {"@/*": ["./lib/*"]}', '"jsx": "react"'):
        edited = after.replace('"noEmit": true', f'"noEmit": true, {option}')
        assert edited != after
        assert inert_change("tsconfig.json", after, edited, told()) is None, option
    # With `baseUrl` set, the files a tsconfig includes are where vite-tsconfig-paths uses it.
    based_before, based_after = (
        text.replace('"noEmit": true', '"noEmit": true, "baseUrl": "."') for text in (before, after)
    )
    assert inert_change("tsconfig.json", based_before, based_after, told()) is None
