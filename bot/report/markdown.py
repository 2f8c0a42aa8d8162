"""Make untrusted text (test names, log lines, check names) inert in GitHub markdown.

Text from a CI log is written by whoever wrote the test or the PR, so it must
not format, inject HTML, close our fences or table cells, ping anyone, or link
issues. Every helper here takes raw text and returns text safe for one place:

- ``escape_inline``: running markdown text, including table cells;
- ``escape_html``: text inside a raw HTML element such as ``<summary>``, where
  markdown is not parsed but entities are;
- ``code_span``: an inline code span (nothing inside it formats, pings or links);
- ``fenced_block``: a multi-line code block.

All of them show hidden characters (bidi controls, zero-width ones) as ``<U+XXXX>``
(``bot/report/text.py``). Mentions and references are broken with a zero-width space
(``@\u200buser``, ``#\u200b123``): the text reads the same and GitHub links nothing. So is every
``<!--`` (``<\u200b!--``), even inside code where it shows as itself: the bot finds its own
comments and issue records by ``<!-- flaky-triage:... -->`` markers in the raw text, and text it
echoes must never carry one. GitHub makes a link of a bare ``https://…``, ``www.…`` or email
address in markdown text, so ``escape_inline`` and ``escape_html`` show each word holding one as
code, where nothing links.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from bot.report.text import grapheme_prefix, reveal

ZWSP = "\u200b"

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_LINE_BREAKS = re.compile(r"\s*(?:\r\n|[\r\n\u2028\u2029\x85])\s*")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_NUMBER_REF = re.compile(r"#(?=[0-9])")
_GH_REF = re.compile(r"(GH-)(?=[0-9])", re.IGNORECASE)
_BACKTICK_RUN = re.compile(r"`+")
_HTML_COMMENT = "<!--"
# GitHub makes a link of a scheme's `://`, of `www.` and of an email address (a name, `@`,
# a domain with a dot), each ending at a space or a table cell's end: a word cut at those
# holds the whole of any link.
_BETWEEN_WORDS = re.compile(r"([\s|]+)")
_LINKABLE = re.compile(r"://|[wW]{3}\.|[\w.+-]@[^@]*\.")

# Backslash escapes for markdown punctuation; entities where the character
# could open HTML, an entity, or end a table cell in GFM's row splitter.
_INLINE_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "#": "\\#",
        "~": "\\~",
        "|": "\\|",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
    }
)


def clean(text: str) -> str:
    """Drop ANSI colour codes; line ends become ``\\n``; hidden characters are shown; every
    ``<!--``, which could pass for one of the bot's markers, is broken."""
    return _break_comments(reveal(_unix_lines(text)))


def one_line(text: str) -> str:
    """Cleaned text with every line break (and the blanks around it) as one space; every
    ``<!--`` broken as by `clean`."""
    # Breaks first: U+2028, U+2029 and NEL end a line here rather than show as `<U+…>`.
    return _break_comments(reveal(_LINE_BREAKS.sub(" ", _unix_lines(text)).replace("\t", " ")))


def _break_comments(revealed: str) -> str:
    # After the reveal, which would show the zero-width space as `<U+200B>`.
    return revealed.replace(_HTML_COMMENT, "<" + ZWSP + "!--")


def _unix_lines(text: str) -> str:
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def neutralise(text: str) -> str:
    """Break @mentions and ``#123`` / ``GH-123`` / ``owner/repo#1`` references.

    Apply it to what the other helpers made, never to their input: they would show its
    zero-width spaces as ``<U+200B>``."""
    text = _MENTION.sub("@" + ZWSP, text)
    text = _NUMBER_REF.sub("#" + ZWSP, text)
    return _GH_REF.sub(lambda found: found.group(1) + ZWSP, text)


def escape_inline(text: str) -> str:
    """Text shown as itself in running markdown or a table cell, on one line."""
    return neutralise(_by_word(one_line(text), _escape_markdown, code_span))


def escape_html(text: str) -> str:
    """Text shown as itself inside a raw HTML element (``<summary>``), on one line."""
    return neutralise(_by_word(one_line(text), _escape_html, _code_element))


def _by_word(text: str, plain: Callable[[str], str], code: Callable[[str], str]) -> str:
    """``text`` with each word GitHub could make a link of shown as code, the rest as plain
    text. GitHub links no URL inside code or raw HTML today; code keeps it so either way."""
    if not _LINKABLE.search(text):
        return plain(text)
    parts = _BETWEEN_WORDS.split(text)  # words at even places, what separates them at odd
    return "".join(
        code(part) if index % 2 == 0 and _LINKABLE.search(part) else plain(part)
        for index, part in enumerate(parts)
    )


def _escape_markdown(text: str) -> str:
    return text.translate(_INLINE_ESCAPES)


def _escape_html(text: str) -> str:
    return html.escape(text, quote=False)


def _code_element(text: str) -> str:
    return f"<code>{_escape_html(text)}</code>"


_PIPE = re.compile(r"(\\*)\|")


def code_span(text: str, *, in_table: bool = False) -> str:
    """An inline code span showing ``text`` exactly (line breaks become spaces).

    The fence is one backtick longer than the longest run inside. In a table
    cell, pipes are backslash-escaped: GFM splits rows before parsing code
    spans and removes the backslash again.
    """
    body = one_line(text)
    if not body:
        return "` `"
    fence = "`" * (_longest_backtick_run(body) + 1)
    if body[0] in "` " or body[-1] in "` ":
        # A space each side is stripped again by the parser; it keeps edge
        # backticks from merging with the fence.
        body = f" {body} "
    if in_table:
        # The row splitter skips the character after each backslash: double the
        # backslashes before a pipe so the pipe's own escape is never consumed.
        body = _PIPE.sub(lambda m: m.group(1) * 2 + "\\|", body)
    return f"{fence}{body}{fence}"


def fenced_block(text: str, info: str = "text") -> str:
    """A fenced code block showing ``text`` exactly, whatever fences it contains."""
    body = clean(text).rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending in an ellipsis when cut. Cut raw text,
    before escaping, so no escape or entity is split, and between grapheme clusters, so no
    emoji, flag or accented letter is split."""
    if len(text) <= limit:
        return text
    cut = grapheme_prefix(text, limit - 1)
    # Nor inside a hidden character written out (`reveal`'s `<U+200D>`).
    written = cut.rfind("<U+", max(len(cut) - 9, 0))
    if written >= 0 and ">" not in cut[written:]:
        cut = cut[:written]
    return cut + "…"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
