"""Cargo.toml: which of its parts cannot change what a test compiles (`toml_rules`).

Inert: a dependency whose version changed, came or went, in `[dependencies]`,
`[dev-dependencies]`, `[build-dependencies]`, their `[target.'cfg(...)'.*]` forms and
`[workspace.dependencies]`, unless the entry names a `path`, a `git` repository or the
workspace (`workspace = true`), before or after, or anything but its version changed (its
`features`, `optional`: an optional dependency is a feature the crate's code tests with
`cfg`); the package's `keywords`, `categories`, `documentation`, `publish`, `include` and
`exclude`, read for publishing only; `[badges]`. Everything else counts: `version`,
`name`, `authors`, `description`, `homepage`, `repository`, `license`, `readme` and
`rust-version` reach the code through `env!("CARGO_PKG_...")` (clap's `command!()` prints
them, and tests compare its output), `edition`, `[features]`, `[lib]`, `[[bin]]`,
`[[test]]`, `[profile]`, `[lints]`, `[patch]`, `[workspace]`'s members and the rest.
"""

from __future__ import annotations

from bot.triage.manifests.toml_rules import INERT, Dependencies, Table

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
RULES = Table(
    {
        **_TARGET.keys,
        "package": Table(_PUBLISHING),
        "badges": INERT,
        "target": Table(other=_TARGET),
        "workspace": Table({"dependencies": _DEPENDENCIES, "package": Table(_PUBLISHING)}),
    }
)
