"""The sources the toolkit knows are stated once (curation/resources/sources.toml, issue 39): every source has
every facet, and the configuration's defaults, the card, Croissant and the media matching are derived from it."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from curation.core import sources
from curation.core.config import Config
from curation.core.sources import MATCH_RULES, SOURCES
from curation.media import synthetic
from curation.release import card, card_text


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_source_has_every_facet(name):
    spec = SOURCES[name]
    assert spec.name == name and spec.terms.startswith(f"{name}") and spec.obtain
    assert spec.media_match in MATCH_RULES and isinstance(spec.playable, bool)
    assert isinstance(spec.labels, tuple) and all(isinstance(label, str) and label for label in spec.labels)


def test_what_speaks_of_sources_is_derived_from_the_one_file():
    config = Config()
    assert {n: c.playable for n, c in config.sources.items()} == {n: s.playable for n, s in SOURCES.items()}
    assert config.media.match == {n: s.media_match for n, s in SOURCES.items()}
    assert {n: s.terms for n, s in SOURCES.items()} == card.SOURCE_TERMS
    assert {n: s.obtain for n, s in SOURCES.items()} == card_text.OBTAIN
    assert [s.name for s in SOURCES.values() if s.synthetic] == [synthetic.SOURCE]
    warned = card_text.sensitive(set(SOURCES), set())
    assert all(s.warning in warned for s in SOURCES.values() if s.warning)


def test_a_source_missing_a_facet_is_refused(monkeypatch):
    text = sources.resource_text("sources.toml") + '\n[NewSource]\nplayable = true\nmedia_match = "stem"\n'
    monkeypatch.setattr(sources, "resource_text", lambda name: text)
    lacking = sorted({f.name for f in fields(sources.SourceSpec)} - {"name", "playable", "media_match"})
    with pytest.raises(RuntimeError, match=re.escape(f"source NewSource: missing {lacking}")):
        sources._load()
