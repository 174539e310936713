"""The task taxonomy, read from `annotation/taxonomy.yaml`."""

from __future__ import annotations

import re
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
    cannot_determine: re.Pattern[str]

    def offers_cannot_determine(self, options: dict[str, str]) -> bool:
        return any(self.cannot_determine.search(text) for text in options.values())


@cache
def load_taxonomy() -> Taxonomy:
    spec = yaml.safe_load(resource_text("taxonomy.yaml"))
    subs: dict[str, Subcategory] = {}
    for tier, body in spec["tiers"].items():
        for sub in body["subcategories"]:
            subs[sub["id"]] = Subcategory(sub["id"], tier, body["eval"], body["file"],
                                          bool(sub.get("requires_cannot_determine")))
    patterns = "|".join(re.escape(p) for p in spec["cannot_determine_patterns"])
    return Taxonomy(subs, tuple(spec["report_categories"]), re.compile(patterns, re.IGNORECASE))
