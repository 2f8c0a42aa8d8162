"""Go's import walk (bot/triage/imports/golang.py, go_scan.py): the scanner, the package
that runs for a test, imports inside the module, and a failure's package found in the tree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.imports import Source
from bot.triage.imports.go_scan import go_imports
from bot.triage.imports.golang import (
    go_import_path,
    local_replacements,
    locate_package_test,
    module_path,
    repository_modules,
)
from bot.triage.models import Failure
from tests.test_imports_walk import EXCERPT_ENDS, depths, layout, tree_of, walked


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('package a\nimport "x/y"\n', ["x/y"]),
        ("package a\nimport `x/raw`\n", ["x/raw"]),
        ('package a\nimport (\n\t"a/b"\n\tz "c/d" // alias\n\t. "e/f"\n\t_ "g/h"\n)\n', None),
        ('package a; import "x"; import "y"; func f() {}', ["x", "y"]),
        ('// import "no"\npackage a\n/* import "no" */\nimport "yes"\n', ["yes"]),
        ('package a\nimport ("p"; "q")\nvar s = "import \\"r\\""\nimport "late"\n', ["p", "q"]),
        ('//go:build linux && !cgo\n\npackage a\n\nimport "os"\n', ["os"]),
        ('package a\n\nfunc main() {}\nimport "x"\n', []),
        ("package main\n", []),
        ('import "x"\n', "invalid"),
        ('package a\nimport (\n"x"\n', "invalid"),
        ('package a\nimport "unterminated\n', "invalid"),
        ("package a\nimport /* unterminated", "invalid"),
        ("package a\nimport 42\n", "invalid"),
    ],
)
def test_the_scanner_reads_every_import_declaration_and_nothing_else(
    source: str, expected: list[str] | str | None
) -> None:
    if expected is None:
        expected = ["a/b", "c/d", "e/f", "g/h"]
    assert go_imports(source) == (None if expected == "invalid" else expected)


@pytest.mark.parametrize(
    ("go_mod", "expected"),
    [
        ("module github.com/acme/bus\n\ngo 1.22\n", "github.com/acme/bus"),
        ("// comment\nmodule example.com/m // trailing\n", "example.com/m"),
        ('module "example.com/quoted"\n', "example.com/quoted"),
        ("go 1.22\n", None),
    ],
)
def test_module_path(go_mod: str, expected: str | None) -> None:
    assert module_path(go_mod) == expected


MODULE: dict[str, Source] = {
    "go.mod": "module example.com/m\n",
    "app/app.go": 'package app\nimport "example.com/m/lib"\n',
    "app/app_linux.go": 'package app\nimport "example.com/m/sys"\n',
    "app/app_test.go": 'package app\nimport (\n\t"testing"\n\t"example.com/m/util"\n)\n',
    "app/external_test.go": 'package app_test\nimport "example.com/m/app"\n',
    "app/_ignored.go": 'package app\nimport "example.com/m/never"\n',
    "app/testdata/x.go": "package x\n",
    "lib/lib.go": 'package lib\nimport "example.com/m/deep"\n',
    "lib/lib_test.go": 'package lib\nimport "example.com/m/never"\n',
    "sys/sys.go": "package sys\n",
    "util/util.go": "package util\n",
    "deep/deep.go": "package deep\n",
    "never/never.go": "package never\n",
    "vendor/golang.org/x/text/text.go": "package text\n",
}


def test_the_package_runs_and_module_imports_are_followed_to_their_folders() -> None:
    result = walked("app/app_test.go", MODULE)
    assert depths(result) == {
        "app/app.go": 0,
        "app/app_linux.go": 0,  # a build-tagged file counts: which tags CI builds is unknown
        "app/external_test.go": 0,
        "util/util.go": 1,
        "lib/lib.go": 1,
        "sys/sys.go": 1,
        "deep/deep.go": 2,  # never/ only in a test file of another package, _ignored.go
    }
    assert {r.why for r in result.reached if not r.chain} == {"a file of the test's Go package"}
    [deep] = [r for r in result.reached if r.path == "deep/deep.go"]
    assert [(s.importer, s.module) for s in deep.chain] == [
        ("app/app.go", "example.com/m/lib"),
        ("lib/lib.go", "example.com/m/deep"),
    ]


def test_a_vendored_package_is_followed_and_without_go_mod_nothing_is() -> None:
    files = {**MODULE, "app/app.go": 'package app\nimport "golang.org/x/text"\n'}
    assert "vendor/golang.org/x/text/text.go" in depths(walked("app/app_test.go", files))
    no_module = {p: s for p, s in MODULE.items() if p != "go.mod"}
    assert set(depths(walked("app/app_test.go", no_module))) == {
        "app/app.go",
        "app/app_linux.go",
        "app/external_test.go",
    }


def test_an_unparseable_package_file_makes_the_walk_partial() -> None:
    result = walked("app/app_test.go", {**MODULE, "app/app.go": "not go at all"})
    assert result.cut == ("app/app.go not read (not valid Go)",)


@pytest.mark.parametrize(
    ("test_id", "name", "expected"),
    [
        (
            "github.com/acme/bus/internal/wire.TestParse",
            "TestParse",
            "github.com/acme/bus/internal/wire",
        ),
        ("example.com/m.TestX/sub_case", "TestX/sub_case", "example.com/m"),
        (
            "github.com/acme/bus/internal/wire",
            "github.com/acme/bus/internal/wire",
            "github.com/acme/bus/internal/wire",
        ),
        ("TestParse", "TestParse", None),
    ],
)
def test_go_import_path(test_id: str, name: str, expected: str | None) -> None:
    assert go_import_path(Failure(test_id=test_id, name=name, framework="go")) == expected


@pytest.mark.parametrize(
    ("import_path", "test_name", "expected"),
    [
        ("example.com/m/app", "TestApp", "app/app_test.go"),
        ("example.com/m/app", "TestExternal", "app/external_test.go"),
        ("example.com/m/app", "TestOther", "app/app_test.go"),
        ("example.com/m/lib", "", "lib/lib_test.go"),
        ("example.com/m", "TestRoot", "root_test.go"),  # the root package: the only go.mod's
        ("example.com/m/util", "TestUtil", None),  # its folder holds no test file
        # A package in no folder of the tree is a module's root: the only go.mod's.
        ("example.com/elsewhere", "TestRoot", "root_test.go"),
    ],
)
def test_a_failures_package_is_found_in_the_tree(
    import_path: str, test_name: str, expected: str | None
) -> None:
    tree = tree_of({**MODULE, "root_test.go": "package m\n"})
    assert locate_package_test(import_path, tree, test_name) == expected


def test_the_package_in_a_subfolder_module_is_found_by_the_longest_tail() -> None:
    tree = tree_of({"go/go.mod": "", "go/internal/wire/a_test.go": "", "wire/b_test.go": ""})
    found = locate_package_test("github.com/acme/bus/internal/wire", tree, "TestParse")
    assert found == "go/internal/wire/a_test.go"


def test_a_real_package_chi_middleware() -> None:
    """go-chi/chi at a real commit: module `github.com/go-chi/chi/v5` (a major version
    suffix), a middleware test importing the root package."""
    tree, files = layout("chi")
    assert locate_package_test("github.com/go-chi/chi/v5/middleware", tree, "TestGetHead") == (
        "middleware/get_head_test.go"
    )
    assert locate_package_test("github.com/go-chi/chi/v5", tree, "TestMuxBasic") == ("mux_test.go")
    result = walked("middleware/get_head_test.go", files, tree=tree)
    found = depths(result)
    middleware = [p for p in files if p.startswith("middleware/")]
    assert {p for p, d in found.items() if d == 0} == set(middleware) - {
        "middleware/get_head_test.go"
    }
    assert "middleware/profiler.go" in found  # `//go:build !tinygo`
    root = {p for p, d in found.items() if d == 1}
    assert {"chi.go", "mux.go", "tree.go", "context.go", "chain.go"} <= root
    assert not any(p.endswith("_test.go") for p in root)
    assert all(EXCERPT_ENDS in reason for reason in result.cut)
    assert set(files) <= set(result.read)


@pytest.mark.parametrize(
    ("go_mod", "root", "expected"),
    [
        ("module a\nreplace example.com/b => ../b\n", "svc", {"example.com/b": "b"}),
        (
            "replace example.com/b v1.2.0 => ./third_party/b // pinned\n",
            "",
            {"example.com/b": "third_party/b"},
        ),
        (
            "replace (\n\texample.com/b => ./b\n"
            "\texample.com/c v1.0.0 => example.com/c v1.1.0\n)\n",
            "",
            {"example.com/b": "b"},
        ),
        ("replace example.com/up => ../../up\n", "svc", {}),  # outside the repository
        ("replace example.com/root => ..\n", "svc", {"example.com/root": ""}),
    ],
)
def test_local_replacements(go_mod: str, root: str, expected: dict[str, str]) -> None:
    assert local_replacements(go_mod, root) == expected


def test_a_module_replaced_by_a_folder_of_the_repository_is_followed() -> None:
    files: dict[str, Source] = {
        "svc/go.mod": "module example.com/svc\n\nreplace example.com/lib => ../lib\n",
        "svc/api/api_test.go": 'package api\nimport "example.com/lib/money"\n',
        "lib/go.mod": "module example.com/lib\n",
        "lib/money/money.go": "package money\n",
    }
    assert depths(walked("svc/api/api_test.go", files)) == {"lib/money/money.go": 1}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*'ab._;()"`/*\n\t ', "package", "import"])).map("".join))
def test_the_scanner_never_fails(source: str) -> None:
    found = go_imports(source)
    assert found is None or all(isinstance(path, str) for path in found)


def test_a_real_multi_module_repository_zap() -> None:
    """uber-go/zap at a real commit: the root module `go.uber.org/zap` (a vanity path, no
    tail of which is a folder) beside five nested modules; exp/ (`go.uber.org/zap/exp`)
    imports the root module through `replace go.uber.org/zap => ../`. The packages found
    match `go list -deps -test` on that checkout (checked by hand)."""
    tree, files = layout("zap")
    go_mods = {p: str(text) for p, text in files.items() if p.endswith("go.mod")}
    modules = repository_modules(go_mods)
    assert modules["go.uber.org/zap"] == "" and modules["go.uber.org/zap/exp"] == "exp"
    # The root package: in no folder by name, and one module of six; the go.mod files say.
    assert locate_package_test("go.uber.org/zap", tree, "TestLoggerAddCaller") is None
    found = locate_package_test("go.uber.org/zap", tree, "TestLoggerAddCaller", modules)
    assert found == "logger_test.go"
    assert locate_package_test(
        "go.uber.org/zap/exp/zapfield", tree, "TestFieldConstructors", modules
    ) == ("exp/zapfield/zapfield_test.go")
    assert locate_package_test("go.uber.org/other", tree, "TestX", modules) is None
    result = walked("exp/zapfield/zapfield_test.go", files, tree=tree)
    folders = {p.rpartition("/")[0] for p, d in depths(result).items() if d == 1}
    assert folders == {"", "zapcore"}  # the root package (replaced by ../) and zapcore
    assert set(go_mods) <= set(result.read)  # every module's go.mod, read with the test


def test_a_nested_module_is_its_own_folder_whatever_its_path() -> None:
    """`example.com/m/sub/v2` lives in sub/ (a major version suffix): its packages are
    under sub/, not under the root module's sub/v2/."""
    files: dict[str, Source] = {
        "go.mod": "module example.com/m\n",
        "app/app_test.go": 'package app\nimport "example.com/m/sub/v2/codec"\n',
        "sub/go.mod": "module example.com/m/sub/v2\n",
        "sub/codec/codec.go": "package codec\n",
        "sub/codec/codec_test.go": "package codec\n",
    }
    assert depths(walked("app/app_test.go", files)) == {"sub/codec/codec.go": 1}
    modules = repository_modules({p: str(t) for p, t in files.items() if p.endswith("go.mod")})
    tree = tree_of(files)
    found = locate_package_test("example.com/m/sub/v2/codec", tree, "TestCodec", modules)
    assert found == "sub/codec/codec_test.go"
