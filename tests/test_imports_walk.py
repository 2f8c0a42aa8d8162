"""The Python import walk (bot/triage/imports): what a test runs, read from the code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from bot.triage.imports import ImportWalk, Source, Tree, TreeFile, Unreadable, WalkLimits, walk
from bot.triage.imports.roots import configured_roots
from bot.triage.imports.walk import walk_from_json, walk_to_json

LAYOUTS = Path(__file__).parent / "fixtures" / "layouts"


def tree_of(files: Mapping[str, Source], *, truncated: bool = False) -> Tree:
    sizes = {p: len(s) if isinstance(s, str) else 10 for p, s in files.items()}
    return Tree(
        {p: TreeFile(sha=f"{i:040x}", size=sizes[p]) for i, p in enumerate(files)},
        truncated=truncated,
    )


# A real layout's files.json holds the files its tests read, not the whole repository.
EXCERPT_ENDS = "not in the fixture's excerpt"


def walked(
    test_file: str,
    files: Mapping[str, Source],
    limits: WalkLimits | None = None,
    tree: Tree | None = None,
) -> ImportWalk:
    """Walk as the handler does: read what is wanted, round by round, to the end."""
    tree = tree or tree_of(files)
    limits = limits or WalkLimits()
    sources: dict[str, Source] = {}
    found = walk(test_file, tree, sources, limits)
    while found.wanted:
        for path in found.wanted:
            sources[path] = files.get(path, Unreadable(EXCERPT_ENDS))
        found = walk(test_file, tree, sources, limits)
    return found


def depths(result: ImportWalk) -> dict[str, int]:
    return {reached.path: reached.depth for reached in result.reached}


def layout(name: str) -> tuple[Tree, dict[str, Source]]:
    folder = LAYOUTS / name
    listed: dict[str, TreeFile] = {}
    for line in (folder / "tree.txt").read_text().splitlines():
        sha, size, path = line.split(" ", 2)
        listed[path] = TreeFile(sha=sha, size=int(size))
    return Tree(listed), json.loads((folder / "files.json").read_text())


def test_the_invoice_case_src_layout() -> None:
    result = walked(
        "tests/test_invoice.py",
        {
            "pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
            "src/billing/__init__.py": "",
            "src/billing/tax.py": "RATE = 1\n",
            "src/billing/ledger.py": "",
            "tests/test_invoice.py": "import os\nfrom billing.tax import vat_for\n",
        },
    )
    assert depths(result) == {"src/billing/__init__.py": 1, "src/billing/tax.py": 1}
    [tax] = [r for r in result.reached if r.path == "src/billing/tax.py"]
    assert [(s.importer, s.module) for s in tax.chain] == [("tests/test_invoice.py", "billing.tax")]
    assert not result.partial
    assert set(result.read) == {"pyproject.toml", "tests/test_invoice.py", "src/billing/tax.py"} | {
        "src/billing/__init__.py"
    }


def test_import_a_b_runs_every_package_init_and_from_import_finds_submodules() -> None:
    result = walked(
        "test_x.py",
        {
            "a/__init__.py": "",
            "a/b/__init__.py": "",
            "a/b/c.py": "",
            "a/b/d.py": "",
            "a/b/unused.py": "",
            "test_x.py": "import a.b\nfrom a.b import c, d, not_a_module\n",
        },
    )
    assert set(depths(result)) == {"a/__init__.py", "a/b/__init__.py", "a/b/c.py", "a/b/d.py"}


def test_relative_imports_resolve_against_the_importing_package() -> None:
    result = walked(
        "tests/pkg/test_x.py",
        {
            "tests/__init__.py": "",
            "tests/pkg/__init__.py": "",
            "tests/helpers.py": "",
            "tests/pkg/local.py": "",
            "tests/pkg/test_x.py": "from . import local\nfrom ..helpers import make\n"
            "from .... import beyond_the_root\n",
        },
    )
    assert set(depths(result)) == {
        "tests/pkg/__init__.py",
        "tests/pkg/local.py",
        "tests/__init__.py",
        "tests/helpers.py",
    }


def test_the_walk_goes_to_the_end_of_the_closure_and_says_how_deep() -> None:
    files: dict[str, Source] = {
        "src/shop/__init__.py": "",
        "src/shop/orders.py": "from shop import rates\n",
        "src/shop/rates.py": "from shop.currency import EUR\n",
        "src/shop/currency.py": "EUR = 1\n",
        "tests/test_orders.py": "from shop.orders import total\n",
    }
    result = walked("tests/test_orders.py", files)
    assert depths(result)["src/shop/rates.py"] == 2
    assert depths(result)["src/shop/currency.py"] == 3
    assert not result.partial
    assert "4 repository files found to depth 3, 5 files read; complete" in result.describe()


def test_conftest_files_from_the_test_folder_up_run_for_it_and_their_imports_count() -> None:
    result = walked(
        "tests/api/test_orders.py",
        {
            "conftest.py": "from testing.factories import order\n",
            "tests/conftest.py": "",
            "tests/api/conftest.py": "",
            "tests/other/conftest.py": "",
            "testing/factories.py": "",
            "tests/api/test_orders.py": "def test_x(): pass\n",
        },
    )
    assert depths(result) == {
        "conftest.py": 0,
        "tests/conftest.py": 0,
        "tests/api/conftest.py": 0,
        "testing/factories.py": 1,
    }


@pytest.mark.parametrize(
    ("config", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["lib"]\n'),
        ("pyproject.toml", '[tool.pytest]\npythonpath = ["lib"]\n'),
        ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = "lib"}\n'),
        ("pyproject.toml", '[tool.hatch.build.targets.wheel]\npackages = ["lib/money"]\n'),
        ("pyproject.toml", '[tool.poetry]\npackages = [{include = "money", from = "lib"}]\n'),
        ("pytest.ini", "[pytest]\npythonpath = lib other\n"),
        ("setup.cfg", "[tool:pytest]\npythonpath = lib\n"),
        ("setup.cfg", "[options]\npackage_dir =\n    =lib\n"),
        ("setup.cfg", "[options.packages.find]\nwhere = lib\n"),
    ],
)
def test_configured_roots(config: str, text: str) -> None:
    result = walked(
        "tests/test_wallet.py",
        {config: text, "lib/money/__init__.py": "", "tests/test_wallet.py": "import money\n"},
    )
    assert depths(result) == {"lib/money/__init__.py": 1}


def test_roots_that_leave_the_repository_or_do_not_parse_add_nothing() -> None:
    assert configured_roots({"pytest.ini": "[pytest]\npythonpath = ../up /abs ./lib/\n"}) == ["lib"]
    assert configured_roots({"pyproject.toml": "[tool.pytest\nbroken"}) == []
    assert configured_roots({"setup.cfg": "no section header"}) == []


def test_the_test_folder_is_a_root_when_it_is_not_a_package() -> None:
    # pytest's default import mode puts the first folder without __init__.py on sys.path.
    result = walked(
        "tests/unit/test_a.py",
        {"tests/unit/helpers.py": "", "tests/unit/test_a.py": "import helpers\n"},
    )
    assert depths(result) == {"tests/unit/helpers.py": 1}


def test_unreadable_files_are_named_and_never_raise() -> None:
    result = walked(
        "tests/test_a.py",
        {
            "tests/conftest.py": Unreadable("binary"),
            "pkg/__init__.py": "",
            "pkg/old.py": "print 'python 2'\n",
            "pkg/deep.py": "x = " + "(" * 50_000,  # nesting no parser takes
            "tests/test_a.py": "import pkg.old\nimport pkg.deep\n",
        },
    )
    assert "tests/conftest.py not read (binary)" in result.cut
    assert "pkg/old.py not read (not valid Python)" in result.cut
    assert "pkg/deep.py not read (not valid Python)" in result.cut
    assert {"pkg/old.py", "pkg/deep.py"} <= set(depths(result))


def test_the_file_and_byte_limits_cut_the_walk_and_say_so() -> None:
    test = "import big\n" + "".join(f"import m{i}\n" for i in range(5))
    files: dict[str, Source] = {f"m{i}.py": "" for i in range(5)}
    files["big.py"] = "x = 1\n" * 100
    files["test_a.py"] = test
    by_files = walked("test_a.py", files, WalkLimits(files=3))
    assert len(by_files.read) == 3
    assert "the budget of 3 files read was spent" in by_files.cut
    too_big = walked("test_a.py", files, WalkLimits(file_bytes=100))
    assert "big.py not read (larger than 100 bytes)" in too_big.cut
    assert "big.py" in depths(too_big)  # still in the footprint: it runs, unread
    by_bytes = walked("test_a.py", files, WalkLimits(bytes=len(test) + 10))
    assert f"the budget of {len(test) + 10:,} bytes read was spent" in by_bytes.cut


def test_a_truncated_tree_makes_the_walk_partial() -> None:
    files: dict[str, Source] = {"a.py": "", "test_a.py": "import a\n"}
    result = walked("test_a.py", files, tree=tree_of(files, truncated=True))
    assert depths(result) == {"a.py": 1}
    assert result.cut == ("GitHub truncated the file list",)


def test_a_real_src_layout_pypa_sampleproject() -> None:
    tree, files = layout("sampleproject")
    result = walked("tests/test_simple.py", files, tree=tree)
    assert depths(result) == {"src/sample/__init__.py": 1, "src/sample/simple.py": 1}
    assert not result.partial


def test_a_real_package_test_tree_attrs() -> None:
    tree, files = layout("attrs")
    result = walked("tests/test_funcs.py", files, tree=tree)
    found = depths(result)
    # conftest.py runs for the test; `from .strategies import ...` inside the tests package;
    # hatch's packages = ["src/attr", ...] makes src/ a root; attr/__init__.py's relative
    # imports reach the modules it re-exports, at depth 2, and on (the fixture's excerpt
    # ends there).
    assert found["tests/conftest.py"] == 0
    assert found["tests/strategies.py"] == 1
    assert found["src/attr/validators.py"] == 1
    assert found["src/attr/_make.py"] == 2
    assert result.cut and all(EXCERPT_ENDS in reason for reason in result.cut)


def test_a_configuration_file_that_does_not_parse_leaves_the_walk_partial() -> None:
    """An alias in a tsconfig that is not valid JSON is not followed: the walk must not say
    it is complete, or the changed file behind the alias would be ruled out."""
    broken = '{ "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"] } '
    files: dict[str, Source] = {
        "tsconfig.json": broken,
        "src/money.ts": "export const cents = 100\n",
        "test/money.test.ts": "import { cents } from '@/money'\n",
    }
    result = walked("test/money.test.ts", files)
    assert result.partial
    assert "tsconfig.json not read (not valid JSON)" in result.cut
    valid = {**files, "tsconfig.json": broken + "} }"}
    assert not walked("test/money.test.ts", valid).partial
    assert "src/money.ts" in depths(walked("test/money.test.ts", valid))


def test_the_walk_reports_the_tools_its_files_may_run() -> None:
    """What runs for the test names the tool: a conftest.py with mypy's own `python -m
    mypy` (tests/fixtures/manifests/tools); a comment naming it (pypa/packaging's
    metadata.py) does not. A walk that reads no Python file reports nothing."""
    tools = LAYOUTS.parent / "manifests" / "tools"
    files: dict[str, Source] = {
        "tests/test_a.py": "from pkg import metadata\n",
        "tests/conftest.py": (tools / "mypy-testcmdline.py.txt").read_text(),
        "pkg/__init__.py": "",
        "pkg/metadata.py": (tools / "packaging-metadata.py.txt").read_text(),
    }
    assert walked("tests/test_a.py", files).tools == ("mypy",)
    del files["tests/conftest.py"]
    found = walked("tests/test_a.py", files)
    assert found.tools == () and not found.partial
    assert walk_from_json(walk_to_json(found)) == found
