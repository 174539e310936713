"""The annotator guide as Label Studio shows it: both languages, the same guide in each, as HTML."""

from __future__ import annotations

import re

from curation.core.resources import resource_text
from curation.labelstudio.guide import guide_html, guide_markdown, same_html
from tests.conftest import ROOT


def halves(markdown: str) -> tuple[str, str]:
    zh = markdown.split("\n## 中文\n", 1)[1].split("\n## English\n", 1)[0]
    en = markdown.split("\n## English\n", 1)[1]
    return zh, en


def test_the_guide_has_the_same_sections_tables_and_points_in_chinese_and_english():
    zh, en = halves(guide_markdown())

    def shape(text: str) -> tuple[int, int, int, int]:
        lines = text.splitlines()
        return (sum(line.startswith("### ") for line in lines), sum(line.startswith("| `") for line in lines),
                sum(line.startswith("- ") for line in lines), sum(bool(re.match(r"\d+\. ", line)) for line in lines))

    assert shape(zh) == shape(en)
    assert shape(zh)[1] == 14  # every end-state line and every feed edit, explained in both
    for text in (zh, en):  # each half says where the guide is, and that reasons come in both languages
        assert "Instructions" in text and "Needs a fix" in text and "`state`" in text and "v2" in text
    # the repository's annotation/GUIDE.md is the packaged guide, not a copy that can drift
    assert (ROOT / "annotation" / "GUIDE.md").read_text(encoding="utf-8") == resource_text("GUIDE.md")


def test_the_guide_as_html_for_label_studio():
    html = guide_html()
    assert html.startswith("<h1>标注指南 / Annotator guide</h1>")
    assert "<h2>中文</h2>" in html and "<h2>English</h2>" in html
    assert html.count("<table>") == 4 and "<td><code>like 3</code></td>" in html
    assert 'href="#' not in html  # the page's own anchors lead nowhere in Label Studio's window
    # a Chinese line wrapped in the source is one line of text, with no space where it was wrapped
    assert "用你的邮箱（例如 <code>alice@annotators.local</code>）和管理员单独告诉你的密码登录" in html
    assert "and the password the admin told you" in html


def test_what_label_studio_stores_is_the_same_guide_when_only_its_markup_was_rewritten():
    html = guide_html()
    cleaned = html.replace("<hr />", "<hr>").replace("&quot;", '"')  # what its cleaner does to the guide
    assert cleaned != html and same_html(cleaned, html)
    assert not same_html(html.replace("标注指南", "旧的指南"), html)
    assert not same_html("", html) and not same_html(None, html)
