"""Untrusted text made inert for GitHub-flavoured markdown."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.report.markdown import (
    ZWSP,
    clean,
    code_span,
    escape_html,
    escape_inline,
    fenced_block,
    neutralise,
    one_line,
    shorten,
)
from bot.report.text import BLANK_LETTERS, CANDIDATES, HIDDEN_CATEGORIES, reveal
from tests.github_markdown import links, shown_text, tags, to_html

# What hides or reorders text: bidi controls, zero-width and other format characters,
# controls, separators, a lone surrogate, a letter that shows as nothing.
HIDDEN = ["\u202e", "\u2066", "\u2069", "\u200b", "\u200d", "\u00ad", "\ufeff", "\x00", "\x07"]
HIDDEN += ["\x7f", "\x85", "\u2028", "\u2029", "\ud800", "\u3164", "\U000e0041"]
# What GitHub makes links of.
LINKY = ["https://", "http://", "ftp://", "HTTPS://", "www.", "WWW.", "mailto:", "xmpp:"]
LINKY += ["evil.example", ".com/", "a@b.co", "(", ")"]

# Text weighted towards the characters that matter, plus anything at all.
hostile = st.lists(
    st.one_of(
        st.sampled_from([*"|`*_[]<>#~&\\@/-:.! \n\r\t", "GH-", "<script>", "@everyone", "\x1b[1m"]),
        st.sampled_from(HIDDEN + LINKY),
        st.characters(codec="utf-8"),
        st.sampled_from(list("abcXYZ0123456789")),
    )
).map("".join)
TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td", "code"}


def unescaped(char: str, text: str) -> list[int]:
    """Positions of ``char`` not preceded by an odd run of backslashes."""
    positions = []
    for index, found in enumerate(text):
        if found != char:
            continue
        run = len(text[:index]) - len(text[:index].rstrip("\\"))
        if run % 2 == 0:
            positions.append(index)
    return positions


def decode_code_span(span: str) -> str:
    """CommonMark's reading of one code span (test oracle): strip the fence, then one
    space each side when both are spaces and the content is not only spaces."""
    fence = re.match(r"`+", span)
    assert fence is not None
    width = len(fence.group())
    assert span.endswith(fence.group())
    body = span[width:-width]
    assert width not in {len(run) for run in re.findall("`+", body)}, "the span closes early"
    if len(body) >= 2 and body[0] == body[-1] == " " and body.strip(" "):
        body = body[1:-1]
    return body


@given(hostile)
def test_escape_inline_leaves_nothing_live(text: str) -> None:
    out = escape_inline(text)

    assert "\n" not in out and "\r" not in out
    assert unescaped("|", out) == []
    # No HTML element either: test_github_shows_escaped_text_as_itself_linking_nothing.
    assert re.search(r"@[A-Za-z0-9]", out) is None
    assert re.search(r"#[0-9]", out) is None
    assert re.search(r"GH-[0-9]", out, re.IGNORECASE) is None


@given(hostile)
def test_github_shows_escaped_text_as_itself_linking_nothing(text: str) -> None:
    line = f"x {escape_inline(text)} x"
    expected = f"x {one_line(text)} x"

    paragraph = to_html(line)
    cell = to_html(f"| h |\n| - |\n| {line} |")

    assert links(paragraph) == links(cell) == []
    assert tags(paragraph) <= {"p", "code"}
    assert tags(cell) <= TABLE_TAGS
    assert shown_text(paragraph).replace(ZWSP, "").strip() == expected
    (shown_cell,) = re.findall(r"<td>(.*?)</td>", cell, flags=re.DOTALL)
    assert shown_text(shown_cell).replace(ZWSP, "") == expected


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a | b", "a \\| b"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("ping @everyone and @octo-org/team", f"ping @{ZWSP}everyone and @{ZWSP}octo-org/team"),
        (
            "fixes #1, GH-12 and owner/repo#3",
            f"fixes \\#{ZWSP}1, GH-{ZWSP}12 and owner/repo\\#{ZWSP}3",
        ),
        ("**bold** _it_ [link](x) `code`", "\\*\\*bold\\*\\* \\_it\\_ \\[link\\](x) \\`code\\`"),
        ("line one\r\n\n   line two", "line one line two"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("&lt; stays text", "&amp;lt; stays text"),
        (
            "reset at https://evil.example/reset-your-password or www.evil.example.",
            "reset at `https://evil.example/reset-your-password` or `www.evil.example.`",
        ),
        ("[x](http://e.vil)|WWW.e.vil", "`[x](http://e.vil)`\\|`WWW.e.vil`"),
        (
            "test_\u202eevil\u2066 \u200b",
            "test\\_<U+202E>evil<U+2066> <U+200B>".replace("<", "&lt;").replace(">", "&gt;"),
        ),
    ],
)
def test_escape_inline_examples(raw: str, escaped: str) -> None:
    assert escape_inline(raw) == escaped


def test_escape_html_is_for_raw_html_where_backslashes_would_show() -> None:
    out = escape_html("test_a <b>bold</b> @alice #7\nnext https://e.vil/<i>\u202e")

    assert out == (
        f"test_a &lt;b&gt;bold&lt;/b&gt; @{ZWSP}alice #{ZWSP}7 next "
        "<code>https://e.vil/&lt;i&gt;&lt;U+202E&gt;</code>"
    )


@given(hostile)
def test_github_shows_a_summary_as_itself_linking_nothing(text: str) -> None:
    rendered = to_html(f"<details>\n<summary>{escape_html(text)}</summary>\n\n- x\n</details>")

    assert links(rendered) == []
    assert tags(rendered) <= {"details", "summary", "code", "ul", "li"}
    (summary,) = re.findall(r"<summary>(.*?)</summary>", rendered, flags=re.DOTALL)
    assert shown_text(summary).replace(ZWSP, "") == one_line(text)


@given(hostile)
def test_code_span_shows_the_text_exactly_on_one_line(text: str) -> None:
    span = code_span(text)

    assert "\n" not in span
    expected = one_line(text)
    if expected.strip(" ") or not expected:
        assert decode_code_span(span) == (expected or " ")


@given(hostile)
def test_code_span_in_a_table_escapes_every_pipe(text: str) -> None:
    span = code_span(text, in_table=True)

    assert unescaped("|", span) == []


@given(hostile)
def test_github_shows_a_code_span_as_one_code_element_linking_nothing(text: str) -> None:
    paragraph = to_html(f"x {code_span(text)} x")
    cell = to_html(f"| h |\n| - |\n| x {code_span(text, in_table=True)} x |")

    assert links(paragraph) == links(cell) == []
    assert tags(paragraph) == {"p", "code"}
    assert tags(cell) <= TABLE_TAGS
    assert paragraph.count("<code>") == cell.count("<code>") == 1


@pytest.mark.parametrize(
    ("raw", "span"),
    [
        ("tests/test_a.py::test_b", "`tests/test_a.py::test_b`"),
        ("a `b` c", "``a `b` c``"),
        ("`edge", "`` `edge ``"),
        ("x ``` y", "````x ``` y````"),
        ("", "` `"),
    ],
)
def test_code_span_examples(raw: str, span: str) -> None:
    assert code_span(raw) == span


def closing_fences(body: str, width: int) -> list[str]:
    pattern = re.compile(r"^ {0,3}`{" + str(width) + r",}[ \t]*$")
    return [line for line in body.split("\n") if pattern.match(line)]


fence_heavy_lines = st.lists(
    st.one_of(st.sampled_from(["```", "````", "   ```", "``` py", "~~~", "", "x"]), hostile)
).map("\n".join)


@given(fence_heavy_lines)
def test_fenced_block_keeps_its_content_inside(text: str) -> None:
    block = fenced_block(text)

    first, *body, last = block.split("\n")
    fence = first.removesuffix("text")
    assert first.endswith("text")
    assert len(fence) >= 3 and fence.strip("`") == ""
    assert last == fence
    assert closing_fences("\n".join(body), len(fence)) == []
    assert "\n".join(body) == clean(text).rstrip("\n")


@given(fence_heavy_lines)
def test_github_shows_a_fenced_block_as_itself_linking_nothing(text: str) -> None:
    rendered = to_html(fenced_block(text))

    assert links(rendered) == []
    assert tags(rendered) == {"pre", "code"}
    (content,) = re.findall(r"<code[^>]*>(.*)</code>", rendered, flags=re.DOTALL)
    assert shown_text(content) == clean(text).rstrip("\n") + "\n"


def test_fenced_block_outgrows_fences_in_the_text() -> None:
    block = fenced_block("before\n```\nnot the end\n````\nafter\n")

    assert block == "`````text\nbefore\n```\nnot the end\n````\nafter\n`````"


def test_neutralise_breaks_mentions_and_references_only() -> None:
    assert neutralise("mail a@b.c, @bob, #12, gh-3, PR#4, #x, @") == (
        f"mail a@{ZWSP}b.c, @{ZWSP}bob, #{ZWSP}12, gh-{ZWSP}3, PR#{ZWSP}4, #x, @"
    )


def test_shorten_cuts_with_an_ellipsis_within_the_limit() -> None:
    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdefg", 6) == "abcde…"
    assert len(shorten("x" * 1000, 200)) == 200


@given(st.lists(st.one_of(st.sampled_from(HIDDEN), st.text())).map("".join))
def test_reveal_leaves_no_hidden_character_and_can_be_read_back(text: str) -> None:
    shown = reveal(text)

    hidden = [c for c in shown if unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"}]
    assert [c for c in hidden if c not in "\t\n"] == []
    assert "\u3164" not in shown
    if "<U+" not in text:
        read_back = re.sub(r"<U\+([0-9A-F]{4,6})>", lambda m: chr(int(m[1], 16)), shown)
        assert read_back == text


def test_every_hidden_code_point_is_looked_at() -> None:
    """The fast pre-filter misses nothing this Python's Unicode tables call hidden."""
    every = (chr(point) for point in range(0x110000))
    hidden = [
        c for c in every if c in BLANK_LETTERS or unicodedata.category(c) in HIDDEN_CATEGORIES
    ]
    assert [c for c in hidden if c not in "\t\n" and not CANDIDATES.fullmatch(c)] == []


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("test_\u202eflow\u2066x\u2069", "test_<U+202E>flow<U+2066>x<U+2069>"),
        ("pay\u200bment", "pay<U+200B>ment"),
        ("bell\x07 del\x7f", "bell<U+0007> del<U+007F>"),
        ("tab\tand\nline", "tab\tand\nline"),
        ("café Ångström naïve", "café Ångström naïve"),
        ("日本語のテスト 테스트 тест اختبار", "日本語のテスト 테스트 тест اختبار"),
        ("emoji 🙂 👍🏽 ❤️", "emoji 🙂 👍🏽 ❤️"),
    ],
)
def test_reveal_shows_hidden_characters_and_keeps_ordinary_text(raw: str, shown: str) -> None:
    assert reveal(raw) == shown


def test_one_line_keeps_unicode_line_breaks_as_spaces_and_shows_the_rest() -> None:
    assert one_line("a\u2028b\x85c\u202ed") == "a b c<U+202E>d"
    assert clean("a\u2028b\r\nc\x1b[31md\x00") == "a<U+2028>b\nc" + "d<U+0000>"
