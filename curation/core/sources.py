"""The sources the toolkit knows, read from one file (`curation/resources/sources.toml`): each source's default
playability, how its media files name their videos, its terms and how to obtain its videos (the dataset card and
Croissant), what a viewer should be warned of, whether its videos are synthetic. The configuration's defaults,
the card, Croissant and the media matching read `SOURCES`; `tests/core/test_sources.py` checks every source has
every facet."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from typing import Literal

from curation.core.resources import resource_text

MATCH_RULES = ("stem", "parent/stem")


@dataclass(frozen=True)
class SourceSpec:
    name: str
    playable: bool
    media_match: Literal["stem", "parent/stem"]
    terms: str
    obtain: str
    warning: str
    synthetic: bool
    labels: tuple[str, ...]  # keys of `videos.extra` that hold a human label (cluster quality)


def _load() -> dict[str, SourceSpec]:
    data = tomllib.loads(resource_text("sources.toml"))
    names = {f.name for f in fields(SourceSpec)} - {"name"}
    out = {}
    for name, facets in data.items():
        missing, extra = names - set(facets), set(facets) - names
        if missing or extra or facets["media_match"] not in MATCH_RULES:
            raise RuntimeError(f"resources/sources.toml, source {name}: missing {sorted(missing)}, unknown "
                               f"{sorted(extra)}, media_match one of {MATCH_RULES}")
        out[name] = SourceSpec(name=name, **{**facets, "labels": tuple(facets["labels"])})
    return out


SOURCES: dict[str, SourceSpec] = _load()
NOT_RECORDED = "not recorded here"


def terms_of(source: str) -> str:
    return SOURCES[source].terms if source in SOURCES else f"{source}: its terms are {NOT_RECORDED}."


def obtain_of(source: str) -> str:
    return SOURCES[source].obtain if source in SOURCES else NOT_RECORDED
