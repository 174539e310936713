"""The task taxonomy, read from `annotation/taxonomy.yaml`."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import cache

import yaml

from curation.core.resources import resource_text


@dataclass(frozen=True)
class Subcategory:
    id: str
    tier: str
    eval_type: str  # "label" or "platform"
    runner_file: str
    requires_cannot_determine: bool


@dataclass(frozen=True)
class Taxonomy:
    subcategories: dict[str, Subcategory]
    report_categories: tuple[str, ...]
    cannot_determine: tuple[str, ...]  # phrasings, folded by `fold`
    option_letters: str                # the letters an option may have, in order ("ABCDEFGHIJ")

    def is_cannot_determine(self, option_text: str) -> bool:
        """An option that says the question has no answer among the others, in any of the
        phrasings real releases use, whatever its punctuation, spacing or case."""
        folded = fold(option_text)
        return any(p in folded for p in self.cannot_determine)

    def offers_cannot_determine(self, options: dict[str, str]) -> bool:
        return any(self.is_cannot_determine(text) for text in options.values())


def fold(text: str) -> str:
    """Lower case without spaces or punctuation: '以上说法 都不对。' and '以上说法都不对' match."""
    return "".join(ch for ch in text.lower() if not ch.isspace() and not unicodedata.category(ch).startswith("P"))


@cache
def load_taxonomy() -> Taxonomy:
    spec = yaml.safe_load(resource_text("taxonomy.yaml"))
    subs: dict[str, Subcategory] = {}
    for tier, body in spec["tiers"].items():
        for sub in body["subcategories"]:
            subs[sub["id"]] = Subcategory(sub["id"], tier, body["eval"], body["file"],
                                          bool(sub.get("requires_cannot_determine")))
    phrasings = tuple(fold(p) for lang in ("zh", "en") for p in spec["cannot_determine"][lang])
    return Taxonomy(subs, tuple(spec["report_categories"]), phrasings, str(spec["option_letters"]))
