"""Text helpers shared by adapters: hashtags, markup, missing-value sentinels."""

from __future__ import annotations

import html
import re
from typing import TypeVar

Value = TypeVar("Value")

# `#tag` (Douyin, Kuaishou, TikTok) and `#tag#` (Weibo style); a tag ends at white
# space, another '#', or sentence punctuation.
HASHTAG_STOPS = "#,，。.!！?？;；:：@、[]()（）\"“”"
_HASHTAG_RE = re.compile(r"#([^\s" + re.escape(HASHTAG_STOPS) + r"]{1,64})#?")
# What Python's `str.strip()` and `\s` treat as white space (Unicode, not only ASCII);
# the columnar ingest spells it out for DuckDB's regular expressions.
PY_WHITESPACE = "".join(chr(c) for c in (*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680,
                                         *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000))
# Only inline highlight tags go: anything else (a `<script>` in a real title, say) is
# text the author wrote, kept as is and escaped by whatever renders it.
_TAG_RE = re.compile(r"</?(?:em|b|strong|i|mark|font|span)(?:\s[^<>]{0,300})?>", re.IGNORECASE)


def extract_hashtags(text: str | None) -> list[str]:
    if not text:
        return []
    tags: list[str] = []
    for match in _HASHTAG_RE.finditer(text):
        tag = match.group(1).strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def strip_html(text: str | None) -> str | None:
    """Search-highlight markup such as `<em class="keyword">` out, entities decoded."""
    if text is None:
        return None
    return html.unescape(_TAG_RE.sub("", text))


def parse_list_string(text: str | None) -> list[str]:
    """`[a,b]` (KuaiRec `topic_tag`) into `['a', 'b']`."""
    if not text:
        return []
    inner = text.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    return [item.strip().strip("'\"") for item in inner.split(",") if item.strip().strip("'\"")]


def missing_to_none(value: Value | None, sentinels: tuple[str, ...] = ("-124", "UNKNOWN", "")) -> Value | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in sentinels:
        return None
    if isinstance(value, int) and str(value) in sentinels:
        return None
    return value
