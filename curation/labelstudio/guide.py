"""The annotator guide (`curation/resources/GUIDE.md`, Chinese and English) as the HTML Label Studio
shows as a project's instructions: the "Instructions" button above every task, and the window that
opens when an annotator starts labelling. Every project the toolkit keeps carries it, and every export
puts the current text back, so the guide people read is the one in the package.

Label Studio cleans the instructions it stores (bleach), so what it holds is compared by its shape
(tags and visible text), not byte for byte: see `same_html`.
"""

from __future__ import annotations

import html
import re
from functools import cache, lru_cache

from curation.core.resources import resource_text

GUIDE = "GUIDE.md"
_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
# a line break between two Chinese characters is a wrapped line, not a space (HTML would show one)
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])\n[ \t]*(?=[{_CJK}])")
# the guide's "[中文](#中文) · [English](#english)" line: anchors that go nowhere in Label Studio's window
_ANCHOR_LINE = re.compile(r"^\s*\[[^\]]+\]\(#[^)]*\)(\s*·\s*\[[^\]]+\]\(#[^)]*\))*\s*$", re.MULTILINE)
_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z0-9]+)[^>]*>")


def guide_markdown() -> str:
    return resource_text(GUIDE)


@cache
def guide_html() -> str:
    """The guide as HTML: headings, paragraphs, lists, tables and code, no raw HTML from the source."""
    from markdown_it import MarkdownIt

    source = _CJK_WRAP.sub("", _ANCHOR_LINE.sub("", guide_markdown()))
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(source).strip()


@lru_cache(maxsize=16)  # an export compares every person's project with the same guide
def html_shape(text: str | None) -> str:
    """Tags (names only) and visible text with runs of white space made one: what stays the same when
    Label Studio's cleaner rewrites entities, quoting or `<hr />` as `<hr>`."""
    source, out, last = text or "", [], 0
    for match in _TAG.finditer(source):
        out.append(html.unescape(source[last:match.start()]))
        out.append(f"<{match.group(1)}{match.group(2).lower()}>")
        last = match.end()
    out.append(html.unescape(source[last:]))
    return " ".join("".join(out).split())


def same_html(stored: str | None, wanted: str) -> bool:
    return html_shape(stored) == html_shape(wanted)
