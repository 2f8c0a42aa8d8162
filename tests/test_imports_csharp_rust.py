"""The C# and Rust walks: the test's project or crate, and the projects or crates it uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.shared import Tree
from bot.sim import Simulator
from bot.sim.scenario import load_scenario
from bot.triage.imports import Source, csharp, rust
from bot.triage.imports.csharp import Reference, references_of
from bot.triage.imports.rust import Manifest, manifest_of, modules_of
from tests.test_imports_ruby import walked
from tests.test_imports_walk import depths, layout
from tests.test_tryout import flakybot

SCENARIOS = Path(__file__).parent / "scenarios"

CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <ItemGroup>
    <ProjectReference Include="..\\..\\src\\Shop\\Shop.csproj" />
    <ProjectReference Condition="'$(X)'=='y'" Include='../Data/Data.csproj;..\\Util\\Util.csproj'/>
    <!-- <ProjectReference Include="..\\Old\\Old.csproj" /> -->
    <ProjectReference Include="$(SolutionDir)src\\Gen\\Gen.csproj" />
    <PackageReference Include="xunit" Version="2.9.2" />
    <Compile Include="..\\..\\shared\\Money.cs" Link="Money.cs" />
    <Compile Include="..\\..\\shared\\Generated\\**\\*.cs" />
  </ItemGroup>
</Project>
"""


def test_references_of_a_project_file() -> None:
    assert references_of("tests/Shop.Tests/Shop.Tests.csproj", CSPROJ) == [
        Reference("ProjectReference", "..\\..\\src\\Shop\\Shop.csproj", "src/Shop/Shop.csproj"),
        Reference("ProjectReference", "../Data/Data.csproj", "tests/Data/Data.csproj"),
        Reference("ProjectReference", "..\\Util\\Util.csproj", "tests/Util/Util.csproj"),
        Reference("Compile", "..\\..\\shared\\Money.cs", "shared/Money.cs"),
        Reference("Compile", "..\\..\\shared\\Generated\\**\\*.cs", "shared/Generated/"),
    ]
    assert references_of("A.csproj", '<ProjectReference Include="..\\Out.csproj"/>') == []


SOLUTION: dict[str, Source] = {
    "Shop.sln": "",
    "src/Shop/Shop.csproj": '<ProjectReference Include="..\\Core\\Core.csproj" />',
    "src/Shop/Cart.cs": "",
    "src/Core/Core.csproj": "<Project />",
    "src/Core/Money.cs": "",
    "src/Admin/Admin.csproj": '<ProjectReference Include="..\\Core\\Core.csproj" />',
    "src/Admin/Users.cs": "",
    "tests/Shop.Tests/Shop.Tests.csproj": CSPROJ,
    "tests/Shop.Tests/Cart/CartTests.cs": "using Shop;\nnamespace Shop.Tests;\n",
    "shared/Money.cs": "",
}


def test_a_csharp_test_runs_its_project_and_what_it_references_transitively() -> None:
    result = walked("tests/Shop.Tests/Cart/CartTests.cs", SOLUTION)
    runs = {r.path: r.why for r in result.reached if not r.chain}
    assert runs == {
        "tests/Shop.Tests/": "the test's project (tests/Shop.Tests/Shop.Tests.csproj)",
        "src/Shop/": "a project tests/Shop.Tests/Shop.Tests.csproj references",
        "src/Core/": "a project src/Shop/Shop.csproj references",  # read with the test file
    }
    # Their .cs files count one by one, by what they declare (test_imports_csharp_
    # declarations.py): these are empty. shared/Money.cs, a linked file, is one of them.
    assert {r.except_suffixes for r in result.reached} == {(".cs",)}
    assert len(result.reached) == len(runs)  # src/Admin/ is referenced by nothing it runs
    assert not result.partial
    # Every project file is read with the test file, in the walk's first round; then the
    # .cs files of the test's projects (not src/Admin/Users.cs).
    projects = {path for path in SOLUTION if path.endswith(".csproj")}
    sources = {"src/Shop/Cart.cs", "src/Core/Money.cs", "shared/Money.cs"}
    assert set(result.read) == {"tests/Shop.Tests/Cart/CartTests.cs", *projects, *sources}


def test_in_a_large_solution_referenced_projects_are_read_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(csharp, "PROJECTS_READ", 2)
    result = walked("tests/Shop.Tests/Cart/CartTests.cs", SOLUTION)
    assert depths(result) == {
        "tests/Shop.Tests/": 0,
        "src/Shop/": 0,
        "src/Shop/Shop.csproj": 0,  # read and followed by the walk
        "src/Core/": 1,
        "src/Core/Core.csproj": 1,
    }
    [core] = [r for r in result.reached if r.path == "src/Core/"]
    assert [(s.importer, s.module) for s in core.chain] == [
        ("src/Shop/Shop.csproj", "..\\Core\\Core.csproj")
    ]
    assert "src/Admin/Admin.csproj" not in result.read


def test_a_csharp_test_without_a_project_file_is_a_partial_walk() -> None:
    # What compiles with it is unknown: src/A.cs may, so its change is not ruled out.
    result = walked("Tests/CartTests.cs", {"Tests/CartTests.cs": "", "src/A.cs": ""})
    assert depths(result) == {}
    assert result.partial


def test_a_real_project_json_solution_morelinq() -> None:
    """MoreLINQ v2.3.0 (.NET Core 1.0 tooling): MoreLinq.Test/project.json's dependency
    `"MoreLinq": {"target": "project"}` is the sibling folder MoreLinq/ (global.json's
    `projects`); there is no .csproj. mcs needs MoreLinq/Batch.cs to compile BatchTest.cs
    (the replay bench's label), which the walk once ruled out: it found no project."""
    tree, files = layout("morelinq")
    result = walked("MoreLinq.Test/BatchTest.cs", _other_sources_empty(tree, files), tree=tree)
    runs = {r.path: r.why for r in result.reached if not r.chain}
    assert runs == {
        "MoreLinq.Test/": "the test's project (MoreLinq.Test/MoreLinq.Test.xproj)",
        "MoreLinq/": "a project MoreLinq.Test/project.json references",
    }
    assert not result.partial
    assert {"global.json", "MoreLinq.Test/project.json"} <= set(result.configs)


def _other_sources_empty(tree: Tree, files: dict[str, Source]) -> dict[str, Source]:
    """The layout's files, and its other .cs files as empty: files.json holds the project
    files and the test, not the sources the walk reads for what they declare."""
    return {**{path: "" for path in tree.files if path.endswith(".cs")}, **files}


PROJECT_JSON_SOLUTION: dict[str, Source] = {
    "global.json": '{ "projects": [ "src", "test" ], "sdk": { "version": "1.0.0-preview2" } }',
    "src/Shop/project.json": '{ "dependencies": { "NETStandard.Library": "1.6.0" } }',
    "src/Shop/Cart.cs": "",
    "src/Admin/project.json": "{}",
    "src/Admin/Users.cs": "",
    "test/Shop.Tests/project.json": (
        '{ "dependencies": { "NUnit": "3.4.1" },\n'
        '  "frameworks": { "net451": { "dependencies": { "Shop": "1.0.0-*" } } } }'
    ),
    "test/Shop.Tests/CartTests.cs": "",
}


def test_a_project_json_dependency_is_found_in_global_json_projects() -> None:
    result = walked("test/Shop.Tests/CartTests.cs", PROJECT_JSON_SOLUTION)
    assert set(depths(result)) == {"test/Shop.Tests/", "src/Shop/"}
    assert not result.partial


def test_a_project_json_project_dependency_found_nowhere_is_a_partial_walk() -> None:
    files = {
        **PROJECT_JSON_SOLUTION,
        "global.json": "{}",  # src/ is no longer searched
        "test/Shop.Tests/project.json": '{"dependencies": {"Shop": {"target": "project"}}}',
    }
    result = walked("test/Shop.Tests/CartTests.cs", files)
    assert set(depths(result)) == {"test/Shop.Tests/"}
    assert result.partial


def test_a_real_solution_serilog() -> None:
    tree, files = layout("serilog")
    files = _other_sources_empty(tree, files)
    result = walked("test/Serilog.Tests/Core/LoggerTests.cs", files, tree=tree)
    assert set(depths(result)) >= {"test/Serilog.Tests/", "src/Serilog/", "test/TestDummies/"}
    assert "test/Serilog.PerformanceTests/" not in depths(result)
    assert not result.partial


CARGO = """
[package]
name = "shop"
build = "build.rs"

[lib]
path = "src/lib.rs"

[[bin]]
name = "shopd"
path = "daemon/main.rs"

[dependencies]
serde = "1"
money = { path = "../money" }
tax.workspace = true

[dev-dependencies]
fixtures = { path = "../../testing/fixtures", version = "0.1" }

[target.'cfg(unix)'.dependencies]
unixy = { path = "../unixy" }
"""


def test_a_manifest_names_the_crate_targets_and_its_path_dependencies() -> None:
    workspace = {"tax": "crates/tax"}
    assert manifest_of("crates/shop/Cargo.toml", CARGO, workspace) == Manifest(
        targets=("crates/shop/src/", "crates/shop/build.rs", "crates/shop/daemon/"),
        dependencies=(
            ("money", "crates/money"),
            ("tax", "crates/tax"),
            ("fixtures", "testing/fixtures"),
            ("unixy", "crates/unixy"),
        ),
        is_package=True,
    )
    root = '[workspace]\n[workspace.dependencies]\ntax = { path = "crates/tax" }\n'
    assert manifest_of("Cargo.toml", root).workspace == (("tax", "crates/tax"),)
    assert manifest_of("Cargo.toml", "[package\n") == Manifest()


@pytest.mark.parametrize(
    ("source", "modules"),
    [
        ("mod common;\npub(crate) mod util;\n", [("common", None), ("util", None)]),
        ("mod tests {\n    use super::*;\n}\n", []),
        ('#[path = "support/helpers.rs"]\nmod helpers;\n', [("helpers", "support/helpers.rs")]),
        ('// mod a;\n/* mod b; */\nlet s = "mod c;";\nlet r = r#"mod d;"#;\n', []),
        ("fn f<'a>(x: &'a str) -> char { 'm' }\nmod e;\n", [("e", None)]),
    ],
)
def test_modules_of(source: str, modules: list[tuple[str, str | None]]) -> None:
    assert modules_of(source) == modules


def test_unclosed_comments_and_strings_end_the_scan_in_one_pass() -> None:
    assert modules_of("mod a;\n" + "/* " * 30_000 + "\nmod b;") == [("a", None)]
    assert modules_of('"\\' * 30_000 + "x\nmod c;\n" + 'r#"' * 20_000) == [("c", None)]
    project = '<ProjectReference Include="../A/A.csproj" />' + "<Compile " * 30_000
    assert [r.path for r in references_of("t/T.csproj", project + "<!--" * 20_000)] == [
        "A/A.csproj"
    ]


WORKSPACE: dict[str, Source] = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n[workspace.dependencies]\n'
    'tax = { path = "crates/tax" }\n',
    "crates/shop/Cargo.toml": '[package]\nname = "shop"\n[dependencies]\ntax.workspace = true\n',
    "crates/shop/src/lib.rs": "pub mod cart;\n",
    "crates/shop/src/cart.rs": "",
    "crates/shop/tests/checkout.rs": "mod common;\n#[test]\nfn total() {}\n",
    "crates/shop/tests/common/mod.rs": "",
    "crates/tax/Cargo.toml": '[package]\nname = "tax"\n'
    '[dependencies]\nmoney = { path = "../money" }\n',
    "crates/tax/src/lib.rs": "",
    "crates/money/Cargo.toml": '[package]\nname = "money"\n',
    "crates/money/src/lib.rs": "",
    "crates/admin/Cargo.toml": '[package]\nname = "admin"\n',
    "crates/admin/src/lib.rs": "",
}


def test_a_rust_integration_test_runs_its_crate_and_its_path_dependencies() -> None:
    result = walked("crates/shop/tests/checkout.rs", WORKSPACE)
    assert depths(result) == {
        "crates/shop/src/": 0,
        "crates/tax/": 0,  # `tax.workspace = true`, found in the root's [workspace.dependencies]
        "crates/money/": 0,  # tax depends on money: crates/tax/Cargo.toml was read at once
        "crates/shop/tests/common/mod.rs": 1,
    }
    [money] = [r for r in result.reached if r.path == "crates/money/"]
    assert money.why == "a crate crates/tax/Cargo.toml depends on (money)"
    assert not result.partial


def test_in_a_large_workspace_dependencies_are_read_crate_by_crate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rust, "MANIFESTS_READ", 2)
    result = walked("crates/shop/tests/checkout.rs", WORKSPACE)
    assert depths(result) == {
        "crates/shop/src/": 0,
        "crates/tax/": 0,
        "crates/tax/Cargo.toml": 0,
        "crates/shop/tests/common/mod.rs": 1,
        "crates/money/": 1,
        "crates/money/Cargo.toml": 1,
    }
    assert "crates/admin/Cargo.toml" not in result.read
    # With tests of its own, a dependency is its entries; its Cargo.toml is still read.
    files = {**WORKSPACE, "crates/tax/tests/t.rs": "", "crates/money/tests/m.rs": ""}
    assert depths(walked("crates/shop/tests/checkout.rs", files)) == {
        "crates/shop/src/": 0,
        "crates/tax/src/": 0,
        "crates/tax/Cargo.toml": 0,
        "crates/shop/tests/common/mod.rs": 1,
        "crates/money/src/": 1,
        "crates/money/Cargo.toml": 1,
    }


def test_a_real_workspace_ripgrep() -> None:
    tree, files = layout("ripgrep")
    result = walked("tests/tests.rs", files, tree=tree)
    found = depths(result)
    assert found["crates/core/"] == 0  # [[bin]] path = "crates/core/main.rs"
    assert found["build.rs"] == 0
    # crates/ignore/tests/ and examples/ are not built for a crate depending on it.
    assert found["crates/ignore/src/"] == found["crates/ignore/COPYING"] == 0
    assert not any(path.startswith(("crates/ignore/tests", "crates/ignore/ex")) for path in found)
    assert found["crates/searcher/src/"] == 0  # through crates/grep/Cargo.toml, read at once
    assert found["tests/index/mod.rs"] == 1  # mod index;
    assert "crates/globset/src/" in found
    assert "fuzz/" not in found


async def test_triage_json_marks_the_file_declaring_what_the_test_uses() -> None:
    scenario = load_scenario(SCENARIOS / "csharp-project-reference.yml")
    async with Simulator(scenario, webhook_secret="-") as sim:
        sim.next_completion("dotnet")
        status, out, err = await flakybot(
            "triage", "acme/shop#21", "--json", "--api-url", sim.url,
            "--token", sim.personal_token(), env={},
        )  # fmt: skip
    assert (status, err) == (0, "")
    [verdict] = json.loads(out)["failed_checks"][0]["verdicts"]
    assert verdict["verdict"] == "related"
    footprint = verdict["footprint"]
    assert footprint["changed_paths_in_footprint"] == ["src/Shop/Pricing/Discount.cs"]
    # CartTests.cs names Cart; Cart.cs names Pricing.Discount: Discount.cs, by declaration.
    changed = [i["path"] for i in footprint["imports"] if i["changed_by_pr"]]
    assert changed == ["src/Shop/Pricing/Discount.cs"]
    assert footprint["walk"].endswith("6 files read; complete")


def test_a_dependency_is_its_folder_but_its_tests_benches_and_examples() -> None:
    files: dict[str, Source] = {
        "Cargo.toml": '[package]\nname = "root"\n[workspace]\nmembers = ["crates/*"]\n',
        "src/lib.rs": "",
        "tests/root.rs": "",
        "benches/speed.rs": "",
        "crates/cli/Cargo.toml": '[package]\nname = "cli"\n[dependencies]\n'
        'root = { path = "../.." }\ntax = { path = "../tax" }\n',
        "crates/cli/tests/run.rs": "#[test]\nfn run() {}\n",
        "crates/tax/Cargo.toml": '[package]\nname = "tax"\n',
        "crates/tax/src/lib.rs": "",
        "crates/tax/data/rates.csv": "",
        "crates/tax/tests/rates.rs": "",
        "crates/tax/examples/show.rs": "",
    }
    found = depths(walked("crates/cli/tests/run.rs", files))
    assert {p: d for p, d in found.items() if not p.startswith("crates/cli/")} == {
        "src/": 0,  # `path = "../.."`: the repository's root crate
        "crates/": 0,  # the root's folder holds the other crates too: more, never less
        "crates/tax/data/": 0,
        "crates/tax/src/": 0,
    }
