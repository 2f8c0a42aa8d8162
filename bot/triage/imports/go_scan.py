"""Read a Go file's import declarations with a small scanner (parsed, never built).

Go puts every import declaration after the `package` clause and before any other
declaration, so the scanner reads tokens from the top and stops at the first token that
is neither: comments (`//`, `/* */`) and the contents of strings never count, and an
`import` written inside a string or a comment is not an import. An import spec is an
optional name (an alias, `.` or `_`) and the path, an interpreted ("...") or raw
(`...`) string literal; a declaration holds one spec or a parenthesised list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# One token at a time: comments and whitespace are skipped, strings kept whole.
_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<line_comment>//[^\n]*)
    | (?P<block_comment>/\*.*?\*/)
    | (?P<string>"(?:[^"\\\n]|\\.)*")
    | (?P<raw>`[^`]*`)
    | (?P<word>[^\W\d]\w*)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPE = re.compile(r"\\(.)")


def _tokens(source: str) -> Iterator[tuple[str, str]]:
    """(kind, text) pairs; an unterminated comment or string ends the stream with "bad"."""
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None or match.lastgroup is None:  # pragma: no cover - `other` takes any char
            return
        position = match.end()
        kind = match.lastgroup
        if kind in ("space", "line_comment", "block_comment"):
            continue
        text = match.group()
        unterminated = text in ('"', "`") or (text == "/" and source.startswith("*", position))
        if kind == "other" and unterminated:
            yield "bad", text
            return
        yield kind, text


def _path(kind: str, text: str) -> str:
    # Import paths are plain ASCII in practice; an escape is kept as the character it names.
    return text[1:-1] if kind == "raw" else _ESCAPE.sub(r"\1", text[1:-1])


def go_imports(source: str) -> list[str] | None:
    """The import paths of a Go file, in order; None when it has no `package` clause or an
    import declaration is cut off (not valid Go)."""
    stream = _tokens(source)
    first = next(stream, ("", ""))
    if first != ("word", "package") or next(stream, ("", ""))[0] != "word":
        return None
    paths: list[str] = []
    kind, text = _next(stream)
    while True:
        if (kind, text) == ("other", ";"):
            kind, text = _next(stream)
            continue
        if (kind, text) != ("word", "import"):
            return paths  # the first other declaration ends the imports
        kind, text = _next(stream)
        grouped = (kind, text) == ("other", "(")
        if grouped:
            kind, text = _next(stream)
        while True:
            if grouped and (kind, text) == ("other", ")"):
                kind, text = _next(stream)
                break
            if grouped and (kind, text) == ("other", ";"):
                kind, text = _next(stream)
                continue
            if kind == "word" or (kind, text) in (("other", "."), ("other", "_")):
                kind, text = _next(stream)  # the name the package is imported as
            if kind not in ("string", "raw"):
                return None
            paths.append(_path(kind, text))
            kind, text = _next(stream)
            if not grouped:
                break


def _next(stream: Iterator[tuple[str, str]]) -> tuple[str, str]:
    return next(stream, ("end", ""))
