"""GitHub's markdown parser (cmark-gfm, with GitHub's extensions: tables, autolinks) as a test
oracle: the HTML a comment or issue body the bot writes becomes on GitHub, before GitHub
adds mentions and `#N` references (tests look for those in the markdown itself)."""

from __future__ import annotations

import html
import re

import pytest

_CODE_OR_COMMENT = re.compile(r"<(code|pre)\b[^>]*>.*?</\1>|<!--.*?-->", re.DOTALL)
_HREF = re.compile(r"<a\b[^>]*\bhref=\"([^\"]*)\"")
_TAG = re.compile(r"<[^>]*>")


def to_html(markdown: str) -> str:
    """The HTML GitHub's parser makes of `markdown`. Raw HTML is kept as written (GitHub
    then sanitises it), so a test sees any element the text opened."""
    cmarkgfm = pytest.importorskip(
        "cmarkgfm",
        reason="optional tool: cmarkgfm (GitHub's markdown parser) has no wheel for this platform",
    )
    rendered = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE
    )
    return str(rendered)


def links(rendered: str) -> list[str]:
    """Where each link in the HTML points."""
    return [html.unescape(href) for href in _HREF.findall(rendered)]


def outside_code(rendered: str) -> str:
    """The HTML without its code spans, code blocks and (hidden) comments: what GitHub shows
    and could make links in."""
    return _CODE_OR_COMMENT.sub("", rendered)


def tags(rendered: str) -> set[str]:
    """The names of the elements in the HTML."""
    return {
        re.split(r"[\s/>]", tag[1:].lstrip("/"), maxsplit=1)[0] for tag in _TAG.findall(rendered)
    }


def shown_text(rendered: str) -> str:
    """What a reader sees: the HTML's text, tags dropped and entities decoded."""
    return html.unescape(_TAG.sub("", rendered))
