"""Untrusted text made inert for GitHub-flavoured markdown."""

from __future__ import annotations

import re

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

# Text weighted towards the characters that matter, plus anything at all.
hostile = st.lists(
    st.one_of(
        st.sampled_from([*"|`*_[]<>#~&\\@/-! \n\r\t", "GH-", "<script>", "@everyone", "\x1b[1m"]),
        st.characters(codec="utf-8"),
        st.sampled_from(list("abcXYZ0123456789")),
    )
).map("".join)


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


def unescape_inline(text: str) -> str:
    """What a CommonMark renderer shows for escape_inline's output (test oracle)."""
    entities = {"lt": "<", "gt": ">", "amp": "&"}
    return re.sub(
        r"\\(.)|&(lt|gt|amp);",
        lambda m: m.group(1) if m.group(1) is not None else entities[m.group(2)],
        text,
    )


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
    assert unescaped("`", out) == []
    assert "<" not in out and ">" not in out
    assert re.search(r"@[A-Za-z0-9]", out) is None
    assert re.search(r"#[0-9]", out) is None
    assert re.search(r"GH-[0-9]", out, re.IGNORECASE) is None


@given(hostile)
def test_escape_inline_shows_the_text_itself(text: str) -> None:
    shown = unescape_inline(escape_inline(text)).replace(ZWSP, "")

    assert shown == one_line(text).replace(ZWSP, "")


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
    ],
)
def test_escape_inline_examples(raw: str, escaped: str) -> None:
    assert escape_inline(raw) == escaped


def test_escape_html_is_for_raw_html_where_backslashes_would_show() -> None:
    out = escape_html("test_a <b>bold</b> @alice #7\nnext")

    assert out == f"test_a &lt;b&gt;bold&lt;/b&gt; @{ZWSP}alice #{ZWSP}7 next"


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
