"""Cargo.toml: which of its parts cannot change what a test compiles (`toml_rules`).

Inert: a dependency whose version changed, came or went, in `[dependencies]`,
`[dev-dependencies]`, `[build-dependencies]`, their `[target.'cfg(...)'.*]` forms and
`[workspace.dependencies]`, unless the entry names a `path`, a `git` repository or the
workspace (`workspace = true`), before or after, or anything but its version changed (its
`features`, `optional`: an optional dependency is a feature the crate's code tests with
`cfg`; one that came or went may say `default-features = false`, which turns on nothing);
the package's `keywords`, `categories`, `documentation`, `publish`, `include` and
`exclude`, read for publishing only; `[badges]`; `[[bench]]` and `[[example]]` targets
when none sets `test = true`, before or after (`cargo test` does not build benches and
only compiles examples: neither runs for a test of another target), unless a failed test's
walk reached a file under a `benches/` or `examples/` folder (`cargo test --benches` runs
a bench as a test: its own entry counts for it). Everything else counts: `version`,
`name`, `authors`, `description`, `homepage`, `repository`, `license`, `readme` and
`rust-version` reach the code through `env!("CARGO_PKG_...")` (clap's `command!()` prints
them, and tests compare its output), `edition`, `[features]`, `[lib]`, `[[bin]]`,
`[[test]]`, `[profile]`, `[lints]`, `[patch]`, `[workspace]`'s members and the rest.
"""

from __future__ import annotations

from bot.triage.manifests.toml_rules import INERT, Dependencies, Table, Untested

_DEPENDENCIES = Dependencies(local=frozenset({"path", "git", "workspace"}))
_PUBLISHING = {
    key: INERT
    for key in ("keywords", "categories", "documentation", "publish", "include", "exclude")
}
_TARGET = Table(
    {
        name: _DEPENDENCIES
        for name in (
            "dependencies", "dev-dependencies", "build-dependencies",
            "dev_dependencies", "build_dependencies",
        )
    }
)  # fmt: skip
STRICT = Table(
    {
        **_TARGET.keys,
        "package": Table(_PUBLISHING),
        "badges": INERT,
        "target": Table(other=_TARGET),
        "workspace": Table({"dependencies": _DEPENDENCIES, "package": Table(_PUBLISHING)}),
    }
)
# For tests outside any bench or example: `STRICT` with those targets inert when untested.
RULES = Table({**STRICT.keys, "bench": Untested(), "example": Untested()}, STRICT.other)
_TARGET_FOLDERS = frozenset({"benches", "examples"})


def rules_for(files: frozenset[str] | None) -> Table:
    """The rules for tests whose walks reached `files` (None: not known)."""
    if files is None or any(_TARGET_FOLDERS & set(f.split("/")[:-1]) for f in files):
        return STRICT
    return RULES
