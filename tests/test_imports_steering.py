"""Which configuration files steer a test's imports (`ImportWalk.configs`), per language, on
real layouts where there is one (tests/fixtures/layouts) and small trees otherwise: the
files the resolver read and used, not every file it read."""

from __future__ import annotations

from bot.triage.imports.walk import walk_from_json, walk_to_json
from tests.test_imports_walk import layout, walked


def test_typescript_the_tsconfig_extends_chain_and_the_manifests_up_from_the_test() -> None:
    """jaredpalmer/formik: packages/formik/test/tsconfig.json extends ../../../tsconfig.json
    (which sets `paths`), which extends ./tsconfig.base.json; packages/formik/tsconfig.build.json
    is read with them (a variant beside the package.json) but nothing consults it."""
    tree, files = layout("formik")
    result = walked("packages/formik/test/Field.test.tsx", files, tree=tree)
    assert result.configs == (
        "packages/formik/test/tsconfig.json",
        "tsconfig.json",
        "tsconfig.base.json",
        "packages/formik/package.json",
        "package.json",
    )
    assert "packages/formik/tsconfig.build.json" in result.read


def test_typescript_the_vitest_config_and_a_tsconfig_with_paths() -> None:
    """pmndrs/zustand: tsconfig.json `paths`, vitest.config.mts (aliases, setupFiles)."""
    tree, files = layout("zustand")
    result = walked("tests/basic.test.tsx", files, tree=tree)
    assert result.configs == ("tsconfig.json", "package.json", "vitest.config.mts")


def test_a_workspace_package_json_found_by_name_steers_one_imported_as_data_does_not() -> None:
    files = {
        "package.json": '{"name": "acme", "workspaces": ["packages/*"]}',
        "packages/money/package.json": '{"name": "@acme/money", "version": "1.0.0"}',
        "packages/money/src/index.ts": "export const round = 1;\n",
        "packages/web/package.json": '{"name": "@acme/web", "version": "2.0.0"}',
        "packages/web/test/cart.test.ts": (
            "import { round } from '@acme/money';\nimport pkg from '../package.json';\n"
        ),
    }
    result = walked("packages/web/test/cart.test.ts", files)
    # packages/web/package.json is read as configuration and imported as data: the test may
    # read its `version`, so it is an import, not configuration.
    assert result.configs == ("package.json", "packages/money/package.json")
    assert {r.path for r in result.reached} >= {
        "packages/web/package.json",
        "packages/money/package.json",
    }


def test_a_tsconfig_extending_a_file_elsewhere_names_it_unread() -> None:
    files = {
        "config/tsconfig.shared.json": '{"compilerOptions": {"strict": true}}',
        "web/tsconfig.json": '{"extends": "../config/tsconfig.shared.json"}',
        "web/tsconfig.eslint.json": '{"extends": "./tsconfig.json"}',
        "web/jest.setup.ts": "",
        "web/a.test.ts": "import './b';\n",
        "web/b.ts": "",
    }
    result = walked("web/a.test.ts", files)
    assert "config/tsconfig.shared.json" not in result.read
    # tsconfig.json sets neither `paths` nor `baseUrl`: every tsconfig of the folder is
    # consulted; a setup file no configuration names is read but steers nothing.
    assert result.configs == (
        "web/tsconfig.json",
        "config/tsconfig.shared.json",
        "web/tsconfig.eslint.json",
    )
    assert "web/jest.setup.ts" in result.read


def test_python_the_pyproject() -> None:
    tree, files = layout("attrs")
    assert walked("tests/test_funcs.py", files, tree=tree).configs == ("pyproject.toml",)


def test_go_the_go_mod() -> None:
    tree, files = layout("chi")
    result = walked("middleware/get_head_test.go", files, tree=tree)
    assert result.configs == ("go.mod",)


def test_php_composer_json_and_phpunit_xml() -> None:
    tree, files = layout("slim")
    result = walked("tests/Middleware/RoutingMiddlewareTest.php", files, tree=tree)
    assert result.configs == ("composer.json", "phpunit.xml.dist")


def test_ruby_the_rspec_file() -> None:
    files = {".rspec": "--require spec_helper\n", "spec/spec_helper.rb": "", "spec/a_spec.rb": ""}
    assert walked("spec/a_spec.rb", files).configs == (".rspec",)


def test_csharp_the_test_project_and_what_it_references_not_the_other_projects_read() -> None:
    """serilog/serilog: every project file is read at once (few of them); only the test's
    project and those it references steer it."""
    tree, files = layout("serilog")
    result = walked("test/Serilog.Tests/Core/LoggerTests.cs", files, tree=tree)
    assert result.configs == (
        "test/Serilog.Tests/Serilog.Tests.csproj",
        "src/Serilog/Serilog.csproj",
        "test/TestDummies/TestDummies.csproj",
    )
    assert "test/Serilog.PerformanceTests/Serilog.PerformanceTests.csproj" in result.read


def test_rust_the_crate_and_its_path_dependencies_not_the_fuzz_crate() -> None:
    """BurntSushi/ripgrep: every Cargo.toml is read at once; fuzz/Cargo.toml steers nothing."""
    tree, files = layout("ripgrep")
    result = walked("tests/tests.rs", files, tree=tree)
    assert result.configs[0] == "Cargo.toml"
    assert {"crates/grep/Cargo.toml", "crates/searcher/Cargo.toml"} <= set(result.configs)
    assert "fuzz/Cargo.toml" in result.read
    assert "fuzz/Cargo.toml" not in result.configs


def test_jvm_reads_no_configuration() -> None:
    tree, files = layout("gson")
    test = "extras/src/test/java/com/google/gson/typeadapters/UtcDateTypeAdapterTest.java"
    assert walked(test, files, tree=tree).configs == ()


def test_the_configs_are_kept_with_the_walk() -> None:
    tree, files = layout("zustand")
    result = walked("tests/basic.test.tsx", files, tree=tree)
    assert walk_from_json(walk_to_json(result)) == result
