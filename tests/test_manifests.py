"""Configuration that steers a test's imports: strong evidence, unless the PR changed only
fields of a manifest that cannot steer them (`bot/triage/manifests/`)."""

from __future__ import annotations

import json

import pytest

from bot.shared import Unreadable
from bot.triage.imports import ImportWalk, Reached
from bot.triage.manifests import Walked, inert_change
from bot.triage.models import Confidence, Failure, ImportStep, Strength, Verdict
from bot.triage.verdict import decide

# jaredpalmer/formik's packages/formik/package.json (Apache-2.0), trimmed: see
# tests/fixtures/layouts/PROVENANCE.md.
FORMIK = {
    "name": "formik",
    "description": "Build forms in React, without the tears",
    "version": "2.4.9",
    "license": "Apache-2.0",
    "repository": "jaredpalmer/formik",
    "main": "dist/index.js",
    "module": "dist/formik.esm.js",
    "typings": "dist/index.d.ts",
    "scripts": {"test": "tsdx test --env=jsdom", "build": "tsdx build"},
    "dependencies": {"deepmerge": "^2.1.1"},
}
MANIFEST = "packages/formik/package.json"


def walked(*files: str) -> Walked:
    return Walked(files=frozenset(files), imports=frozenset())


def changed(**fields: object) -> str:
    return json.dumps({**FORMIK, **fields}, indent=2)


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (changed(version="2.4.10"), "its version field"),
        (changed(version="3.0.0", scripts={"test": "jest"}), "its scripts and version fields"),
        (json.dumps(FORMIK), "its formatting"),
        (changed(version="2.4.10", description="Forms"), "its description and version fields"),
        # A registry version bump breaks tests, if at all, as a lockfile does (risky paths).
        (changed(dependencies={"deepmerge": "^4.0.0"}), "its dependencies field"),
        (changed(devDependencies={"jest": "^29.0.0"}), "its devDependencies field"),
    ],
)
def test_fields_that_cannot_steer_resolution(head: str, said: str) -> None:
    assert inert_change(MANIFEST, json.dumps(FORMIK, indent=4), head) == said


@pytest.mark.parametrize(
    "head",
    [
        changed(exports={".": "./dist/index.js"}),
        changed(main="dist/formik.cjs.js"),
        changed(version="2.4.10", type="module"),
        # A dependency that points into the repository steers what an import finds.
        changed(dependencies={"deepmerge": "^2.1.1", "@acme/utils": "workspace:*"}),
        changed(dependencies={"deepmerge": "file:../deepmerge"}),
        changed(imports={"#internal": "./src/internal.ts"}),
        changed(workspaces=["packages/*"]),
        "{ not json",
        "[]",
    ],
)
def test_a_field_that_can_steer_or_a_file_that_does_not_parse_counts(head: str) -> None:
    assert inert_change(MANIFEST, json.dumps(FORMIK), head) is None


def test_a_base_that_was_not_read_counts_and_other_files_are_not_compared() -> None:
    head = changed(version="2.4.10")
    assert inert_change(MANIFEST, None, head) is None
    assert inert_change(MANIFEST, Unreadable("not found"), head) is None
    assert inert_change("tsconfig.json", '{"a": 1}', '{"a": 1, "version": 2}') is None
    assert inert_change("setup.cfg", "", "") is None


def test_composer_json_autoload_counts_its_version_does_not() -> None:
    base = json.dumps({"name": "slim/slim", "autoload": {"psr-4": {"Slim\\": "Slim"}}})
    bumped = json.dumps(
        {"name": "slim/slim", "version": "4.1", "autoload": {"psr-4": {"Slim\\": "Slim"}}}
    )
    moved = json.dumps({"name": "slim/slim", "autoload": {"psr-4": {"Slim\\": "src"}}})
    assert inert_change("composer.json", base, bumped) == "its version field"
    assert inert_change("composer.json", base, moved) is None


TEST = "packages/web/test/cart.test.ts"
CART = Failure(test_id=f"{TEST} > cart > rounds", name="cart > rounds", file=TEST, framework="jest")


def cart_walk(*, data_import: bool = False) -> ImportWalk:
    by_name = ImportStep(importer=TEST, module="@acme/money", path="packages/money/package.json")
    entry = ImportStep(importer=TEST, module="@acme/money", path="packages/money/src/index.ts")
    reached = [Reached(entry.path, (entry,)), Reached(by_name.path, (by_name,))]
    configs: tuple[str, ...] = ("tsconfig.base.json", "package.json", "packages/money/package.json")
    if data_import:
        data = ImportStep(importer=TEST, module="../../package.json", path="package.json")
        reached.append(Reached("package.json", (data,)))
        configs = ("tsconfig.base.json", "packages/money/package.json")
    return ImportWalk(
        test_file=TEST,
        language="TypeScript",
        reached=tuple(reached),
        read=(TEST, "tsconfig.base.json", "package.json"),
        wanted=(),
        cut=(),
        configs=configs,
    )


def test_a_changed_tsconfig_that_steers_the_test_is_related_and_named() -> None:
    [decision] = decide([CART], ["tsconfig.base.json"], imports={TEST: cart_walk()})
    assert decision.verdict is Verdict.RELATED
    assert decision.confidence is Confidence.HIGH
    assert decision.evidence == (
        "this PR changes tsconfig.base.json, which configures how the test's imports resolve"
    )
    [entry] = [e for e in decision.footprint if e.path == "tsconfig.base.json"]
    assert entry.strength is Strength.STRONG


def test_a_workspace_manifest_is_configuration_with_the_import_that_found_it() -> None:
    [decision] = decide([CART], ["packages/money/package.json"], imports={TEST: cart_walk()})
    assert decision.verdict is Verdict.RELATED
    assert decision.evidence == (
        "this PR changes packages/money/package.json, which configures how the test's imports "
        f"resolve ({TEST} imports @acme/money)"
    )


def test_a_manifest_changed_only_in_its_version_is_a_caveat_not_a_hit() -> None:
    inert = {"packages/money/package.json": "its version field"}
    [decision] = decide(
        [CART],
        ["packages/money/package.json"],
        imports={TEST: cart_walk()},
        passed_on_rerun=True,
        inert=inert,
    )
    assert decision.verdict is Verdict.FLAKY
    assert decision.matched_paths == []
    assert decision.caveats == [
        "this PR changes packages/money/package.json, which configures how the test's imports "
        "resolve, but only its version field, which cannot change that"
    ]
    assert decision.confidence is Confidence.MEDIUM


def test_a_manifest_the_test_imports_as_data_is_related_whatever_field_changed() -> None:
    inert = {"package.json": "its version field"}
    walked = {TEST: cart_walk(data_import=True)}
    [decision] = decide([CART], ["package.json"], imports=walked, inert=inert)
    assert decision.verdict is Verdict.RELATED


def test_a_workspace_added_is_inert_only_where_the_walk_reached_none_of_it() -> None:
    """remeda's root package.json gained `packages/brand` in `workspaces` (a logo package):
    a test of packages/remeda reaches nothing there. A test that does, or a removed entry,
    may import another file than before."""
    base = json.dumps({"name": "root", "workspaces": ["packages/remeda", "packages/docs"]})
    grown = json.dumps(
        {"name": "root", "workspaces": ["packages/remeda", "packages/docs", "packages/brand"]}
    )
    reached = walked("packages/remeda/src/chunk.test.ts", "packages/remeda/src/internal/purry.ts")
    said = "its workspaces field (adding packages/brand, where the walk reached nothing)"
    assert inert_change("package.json", base, grown, reached) == said
    assert inert_change("package.json", base, grown, walked("packages/brand/src/logo.ts")) is None
    assert inert_change("package.json", grown, base, reached) is None  # an entry went
    globbed = json.dumps({"name": "root", "workspaces": {"packages": ["packages/*", "tools/*"]}})
    only = json.dumps({"name": "root", "workspaces": {"packages": ["packages/*"]}})
    assert inert_change("package.json", only, globbed, reached) is not None
    assert inert_change("package.json", only, globbed, walked("tools/gen/index.ts")) is None
    assert inert_change("package.json", base, grown) is None  # what the walks reached: unknown
