"""Why a task (or a review, or a decision) needs a fix, in Chinese as well as English: the annotators
read Chinese first. The English messages stay where they are made (the task rules, the syntax
parsers, review and adjudication); `curation/resources/reasons_zh.yaml` says each one in Chinese.

A message is read as optional prefixes ("line 2: ", "check 1: ", "the revision: ") and a body; each
prefix and the body are matched against the file's patterns, and the values they capture (the
offending answer, the line that could not be read) are put into the Chinese unchanged. A body no
pattern matches falls back to what its rule asks, in Chinese, so a reason is never English only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from curation.core.resources import resource_text
from curation.tasks.rules import RULES

RESOURCE = "reasons_zh.yaml"
# rules whose message already names the line it is about: the English line does not repeat the code
NAMED_BY_LINE = frozenset({"end-state-unreadable", "feed-edit-unreadable"})
_CODE_SUFFIX = re.compile(r"\s\(([a-z]+(?:-[a-z]+)+)\)$")  # "… (answer-not-an-option)", as adjudication writes


@dataclass(frozen=True)
class Reason:
    """One reason shown to a person: the English message and, for a task rule, its code."""

    message: str
    code: str | None = None

    def english(self) -> str:
        return self.message if self.code is None or self.code in NAMED_BY_LINE else f"{self.message} ({self.code})"

    def chinese(self) -> str:
        return chinese(self.message, self.code)


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    zh: str


@dataclass(frozen=True)
class Phrasebook:
    prefixes: tuple[_Pattern, ...]
    messages: tuple[_Pattern, ...]
    rules: dict[str, str]  # rule code -> what it asks, in Chinese
    fallback: str


def _patterns(entries: list[dict[str, Any]], anchored_end: bool) -> tuple[_Pattern, ...]:
    end = "$" if anchored_end else ""
    return tuple(_Pattern(re.compile(f"^(?:{e['en']}){end}", re.DOTALL), e["zh"]) for e in entries)


@cache
def phrasebook() -> Phrasebook:
    spec = yaml.safe_load(resource_text(RESOURCE))
    return Phrasebook(_patterns(spec["prefixes"], False), _patterns(spec["messages"], True), dict(spec["rules"]),
                      spec["fallback"])


def chinese(message: str, code: str | None = None) -> str:
    """`message` in Chinese, with the values it names kept as they are."""
    book = phrasebook()
    head, body = [], message.strip()
    while True:  # "the revision: check 2: ..." carries two prefixes
        match = next(((p, m) for p in book.prefixes if (m := p.regex.match(body))), None)
        if match is None:
            break
        pattern, found = match
        head.append(pattern.zh.format(**found.groupdict()))
        body = body[found.end():]
    suffix = _CODE_SUFFIX.search(body)
    if suffix and suffix.group(1) in RULES:
        code, body = code or suffix.group(1), body[:suffix.start()]
    for pattern in book.messages:
        whole = pattern.regex.match(body)
        if whole:
            return "".join(head) + pattern.zh.format(**{k: v or "" for k, v in whole.groupdict().items()})
    asks = book.rules.get(code or "")
    return "".join(head) + (f"{asks}（{book.fallback}）" if asks else book.fallback)
