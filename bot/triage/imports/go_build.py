"""Which runners a Go file is built on: its build constraints, read (never built).

Go leaves a file out of a build when its name ends in a system it does not target
(`_windows.go`, `_linux_amd64.go`, `_darwin_test.go`) or when its `//go:build` line (or the
older `// +build` lines), written before the `package` clause, is false for the build.
The job's runner (its log's header, `runner_header.py`) tells which system the test was
built for, but not for sure: a Linux runner also runs WebAssembly builds (`GOOS=js`,
`GOOS=wasip1`) and Android's; a Windows runner, Linux builds in WSL or a container; a
macOS runner, iOS builds and Linux ones in a container. So a file is taken for one that no
build on a runner runs only when its constraint is false for every system that runner
may build for (`TARGETS`), whatever the other tags say (an architecture, `cgo`, a Go
release, a custom tag: each may be either, so an expression is read in three-valued
logic, and only "false for sure" leaves the file out). `unix` is true for every system here
but Windows, JavaScript and WASI.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# GitHub's `runner.os` names, and the GOOS values a job on such a runner may build for.
TARGETS: Mapping[str, frozenset[str]] = {
    "Linux": frozenset({"linux", "android", "js", "wasip1"}),
    "Windows": frozenset({"windows", "linux", "js", "wasip1"}),
    "macOS": frozenset({"darwin", "ios", "linux", "js", "wasip1"}),
}
KNOWN_OS = frozenset(
    {
        "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
        "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos",
    }
)  # fmt: skip
KNOWN_ARCH = frozenset(
    {
        "386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
        "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64",
        "ppc64le", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm",
    }
)  # fmt: skip
_NOT_UNIX = frozenset({"windows", "js", "wasip1", "plan9"})
_GO_BUILD = re.compile(r"^//go:build\s+(?P<expr>.+?)\s*$")
_PLUS_BUILD = re.compile(r"^//\s*\+build\s+(?P<expr>.+?)\s*$")
_EXPR_TOKEN = re.compile(r"(&&|\|\||[!()])")  # the operators split; the rest are tags
_TAG = re.compile(r"[\w.]+")
_MAX_TOKENS = 200  # a longer expression is taken as unknown (it may be true)

Maybe = bool | None  # None: could be either


def constraint(path: str, source: str) -> str:
    """The file's build constraint as written ("`//go:build windows`", "its name
    `_windows.go`"); "" when it has none."""
    found = _header_constraint(source)
    os_of_name = name_os(path)
    named = f"its name ({path.rpartition('/')[2]})" if os_of_name else ""
    return " and ".join(part for part in (found, named) if part)


def builds_on(path: str, source: str, runner: str) -> bool:
    """Whether a job on `runner` ("Linux") may build the file; True when the runner is not
    one `TARGETS` knows or the constraint cannot be read."""
    return runner not in TARGETS or runner in systems_building(path, source)


def systems_building(path: str, source: str) -> frozenset[str]:
    """The runners (`TARGETS`' names) on which a job may build the file; the name and the
    header are read once, then tried for each system a runner may build for."""
    named, expression = name_os(path), _header_expression(source)
    if named is None and expression is None:
        return frozenset(TARGETS)

    def builds_for(goos: str) -> bool:
        if named is not None and not _os_tag(named, goos):
            return False
        return expression is None or _evaluate(expression, goos) is not False

    return frozenset(runner for runner, targets in TARGETS.items() if any(map(builds_for, targets)))


def name_os(path: str) -> str | None:
    """The system a file's name restricts it to (`x_windows.go`, `x_linux_arm64_test.go`)."""
    stem = path.rpartition("/")[2].removesuffix(".go").removesuffix("_test")
    parts = stem.split("_")[1:]  # the first element is the name itself: `linux.go` builds
    if len(parts) >= 2 and parts[-1] in KNOWN_ARCH and parts[-2] in KNOWN_OS:
        return parts[-2]
    if parts and parts[-1] in KNOWN_OS:
        return parts[-1]
    return None


def _header(source: str) -> tuple[str | None, list[str]]:
    """The `//go:build` line's expression, and the `// +build` lines that count: those of
    the comments before the package clause that a blank line follows (Go takes the others
    for the package's documentation)."""
    go_build: str | None = None
    plus: list[str] = []
    pending: list[str] = []  # `// +build` lines not yet followed by a blank line
    for line in source[:64_000].splitlines():
        text = line.strip()
        if not text:
            plus += pending
            pending = []
            continue
        if not text.startswith("//"):
            break
        if go_build is None and (match := _GO_BUILD.match(text)) is not None:
            go_build = match.group("expr")
        elif (match := _PLUS_BUILD.match(text)) is not None:
            pending.append(match.group("expr"))
    return go_build, plus


def _header_constraint(source: str) -> str:
    go_build, plus = _header(source)
    if go_build is not None:
        return f"`//go:build {go_build}`"
    return " ".join(f"`// +build {line}`" for line in plus)


def _header_expression(source: str) -> str | None:
    """The `//go:build` expression, else the `// +build` lines as one; None when neither."""
    go_build, plus = _header(source)
    if go_build is not None:
        return go_build
    return " && ".join(f"({_plus_as_expression(line)})" for line in plus) if plus else None


def _plus_as_expression(line: str) -> str:
    """`// +build linux,amd64 darwin !cgo`: spaces are OR, commas AND."""
    ors = [" && ".join(term.split(",")) for term in line.split()]
    return " || ".join(f"({term})" for term in ors)


def _os_tag(tag: str, goos: str) -> bool:
    # GOOS=android also satisfies `linux`, GOOS=ios also `darwin`, as Go's own rules say.
    return tag == goos or (tag, goos) in {("linux", "android"), ("darwin", "ios")}


def _tag(tag: str, goos: str) -> Maybe:
    if tag in KNOWN_OS:
        return _os_tag(tag, goos)
    if tag == "unix":
        return goos not in _NOT_UNIX
    return None  # an architecture, cgo, go1.N, a custom tag: either


class _Malformed(ValueError):
    pass


def _evaluate(expression: str, goos: str) -> Maybe:
    """The expression's value for `goos`; None when it may be either, or does not parse."""
    tokens = [token.strip() for token in _EXPR_TOKEN.split(expression) if token.strip()]
    if not tokens or len(tokens) > _MAX_TOKENS:
        return None
    try:
        value, rest = _or(tokens, goos)
    except _Malformed:
        return None
    return value if not rest else None


def _or(tokens: list[str], goos: str) -> tuple[Maybe, list[str]]:
    return _joined(tokens, goos, "||", _and, True)


def _and(tokens: list[str], goos: str) -> tuple[Maybe, list[str]]:
    return _joined(tokens, goos, "&&", _not, False)


def _joined(
    tokens: list[str],
    goos: str,
    operator: str,
    operand: Callable[[list[str], str], tuple[Maybe, list[str]]],
    deciding: bool,
) -> tuple[Maybe, list[str]]:
    """Operands joined by `operator`, in three-valued logic: `deciding` (True for `||`,
    False for `&&`) if any operand is, else unknown if any is, else the other value."""
    values = []
    value, tokens = operand(tokens, goos)
    values.append(value)
    while tokens and tokens[0] == operator:
        value, tokens = operand(tokens[1:], goos)
        values.append(value)
    if deciding in values:
        return deciding, tokens
    return (None if None in values else not deciding), tokens


def _not(tokens: list[str], goos: str) -> tuple[Maybe, list[str]]:
    if not tokens:
        raise _Malformed
    first, rest = tokens[0], tokens[1:]
    if first == "!":
        value, rest = _not(rest, goos)
        return (None if value is None else not value), rest
    if first == "(":
        value, rest = _or(rest, goos)
        if not rest or rest[0] != ")":
            raise _Malformed
        return value, rest[1:]
    if not _TAG.fullmatch(first):
        raise _Malformed
    return _tag(first, goos), rest
