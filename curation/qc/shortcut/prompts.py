"""The degraded view of a feed and the shortcut-filter prompts built from it."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from curation.core.resources import resource_text
from curation.corpus.visible import VisibleVideo
from curation.env.vocabulary import VOCABULARY
from curation.tasks.taxonomy import load_taxonomy

CANNOT_ANSWER = "cannot_answer"
UNPARSED = "unparsed"
_CANNOT = re.compile(r"无法回答|不能回答|无法确定|cannot\s+(?:be\s+)?answer", re.IGNORECASE)
# How one inspector's answers to a task read, the first that applies: it never saw the task (the lexical
# inspector reads multiple-choice tasks only), it answered, it abstained, or it said nothing readable.
NOT_SEEN, DECIDED, ABSTAINED, UNREADABLE = "not_seen", "decided", "abstained", "unreadable"


def reading(answers: list[dict[str, Any]]) -> str:
    """What one inspector's answers (all its samples) to one task amount to."""
    parsed = [a.get("parsed") for a in answers]
    if all(a.get("raw") is None for a in answers) and set(parsed) <= {CANNOT_ANSWER}:
        return NOT_SEEN
    if any(p not in (CANNOT_ANSWER, UNPARSED) for p in parsed):
        return DECIDED
    return ABSTAINED if CANNOT_ANSWER in parsed else UNREADABLE


def read_by_some_inspector(answers: list[dict[str, Any]]) -> bool:
    """Whether a verdict judged its task: some inspector saw it. One no inspector could read passed unjudged."""
    return any(a.get("raw") is not None or a.get("parsed") != CANNOT_ANSWER for a in answers)


PROMPT_KINDS = ("label", "platform")  # a task's eval_type names the prompt it is asked with
# The version of what `parse_label_answer` and `parse_platform_answer` make of a reply: part of every
# verdict's configuration, so raise it whenever a change to them can turn one reply into another answer.
PARSER_VERSION = 1


@cache
def template(kind: str, language: str, style: str = "paper") -> str:
    return resource_text("prompts", f"shortcut_{kind}_{style}_{language}.txt")


def prompt_hashes(language: str, style: str) -> dict[str, str]:
    """The sha256 of each kind's template text: a verdict was reached with these words."""
    return {kind: hashlib.sha256(template(kind, language, style).encode("utf-8")).hexdigest()[:16]
            for kind in PROMPT_KINDS}


def degraded_view(videos: list[VisibleVideo], language: str) -> str:
    """Each video's caption, hashtags and author (name and bio) in feed order: what the screen
    shows without playing anything. Counts and comments are left out, as in the paper."""
    labels = {"zh": ("视频", "标题", "话题", "作者", "作者简介"),
              "en": ("Video", "Title", "Hashtags", "Author", "Author bio")}
    video, title, tags, author, bio = labels[language]
    lines = []
    for n, v in enumerate(videos, start=1):
        hashtags = " ".join(f"#{t}" for t in v.hashtags) or "-"
        lines.append(f"{video} {n}: {title}: {v.caption or '-'} | {tags}: {hashtags} | "
                     f"{author}: {v.author_name or '-'} | {bio}: {v.author_bio or '-'}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Prompt:
    kind: str  # "label" | "platform"
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def build_prompt(kind: str, language: str, videos: list[VisibleVideo], question: str,
                 options: dict[str, str] | None, style: str = "paper") -> Prompt:
    """The template filled in: `{meta_text}` the degraded view, `{question}` the instruction
    followed by its options, one per line."""
    option_lines = "\n".join(f"{k}: {v}" for k, v in sorted((options or {}).items()))
    text = template(kind, language, style).format(meta_text=degraded_view(videos, language),
                                                  question="\n".join(p for p in (question, option_lines) if p))
    return Prompt(kind, text)


def parse_label_answer(text: str | None, letters: list[str]) -> str:
    """A letter among `letters`, `cannot_answer`, or `unparsed`.

    One option letter (alone, or with that option's words: "D: 无法确定") is that answer.
    An abstention is "Cannot answer" / "无法回答" with no option letter. Anything naming
    several letters (an echo of the option list, which may include the unanswerable
    option's words) is unparsed: neither a solution nor an abstention."""
    if not text:
        return UNPARSED
    cleaned = text.strip()
    # any option letter the taxonomy knows counts (naming an option the task lacks is no answer), but
    # "I" only where the task offers an option I: elsewhere it is the English pronoun ("I think B")
    known = "".join(x for x in load_taxonomy().option_letters if x != "I" or "I" in letters)
    found = set(re.findall(rf"(?<![A-Za-z])([{known}])(?![A-Za-z])", cleaned))
    if not found:
        return CANNOT_ANSWER if _CANNOT.search(cleaned) else UNPARSED
    return found.pop() if len(found) == 1 and found <= set(letters) else UNPARSED


def parse_platform_answer(text: str | None) -> dict[str, Any] | str:
    """{"like": {..}, "collect": {..}, "report": {(pos, cat), ..}} with 0-based positions."""
    if not text:
        return UNPARSED
    if _CANNOT.search(text) and "{" not in text:
        return CANNOT_ANSWER
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return UNPARSED
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return UNPARSED
    # the model's JSON is checked for its shape here, so that a bug below is a bug, never "unparsed"
    if not isinstance(data, dict):
        return UNPARSED
    marks = {key: data.get(key) or [] for key in ("like", "collect")}
    reports = data.get("report") or []
    if not all(isinstance(v, list) and all(map(_is_position, v)) for v in marks.values()) or not (
            isinstance(reports, list) and all(isinstance(r, dict) and _is_position(r.get("video")) for r in reports)):
        return UNPARSED
    return {
        "like": sorted({int(p) - 1 for p in marks["like"]}),
        "collect": sorted({int(p) - 1 for p in marks["collect"]}),
        "report": sorted({(int(r["video"]) - 1, str(r.get("category") or "")) for r in reports}),
    }


def _is_position(value: Any) -> bool:
    """A 1-based video position as a model may write it: 3, 3.0 or "3"."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, str) and value.strip().isdecimal()


def platform_truth(eval_config: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The like / collect / report part of a task's checks, in the shape parsed above."""
    truth: dict[str, Any] = {"like": set(), "collect": set(), "report": set()}
    relevant = False
    for check in eval_config:
        args = check.get("args") or {}
        ids = args.get("video_ids")
        ids = ids if isinstance(ids, list) else [ids]
        spec = VOCABULARY.get(str(check.get("func")))
        key = spec.shortcut_key if spec else None
        if key is None:
            continue
        relevant = True
        for pos in ids:
            truth[key].add((pos, args.get("expected_cat") or "") if key == "report" else pos)
    return {k: sorted(v) for k, v in truth.items()} if relevant else None
