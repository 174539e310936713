"""The task card an annotator reads: on the shipped FakeSV sample every title is empty, so the card shows the
event claim the catalog keeps for each video (marked as not shown in the app) instead of "no title"."""

from __future__ import annotations

from pathlib import Path

from curation.corpus.feeds import Feed
from curation.ingest import ingest_path
from curation.labelstudio.render import render_feed
from tests.conftest import small_corpus


def test_a_video_without_a_caption_shows_the_catalogs_event_claim(catalog, tmp_path):
    fakesv, _ = small_corpus(tmp_path / "raw")
    ingest_path(catalog, "fakesv", fakesv)
    rows = catalog.rows("SELECT video_id, keywords FROM videos WHERE title IS NULL AND description IS NULL "
                        "AND len(keywords) > 0 ORDER BY video_id LIMIT 3")
    assert len(rows) == 3  # the public sample: no titles, an event claim per video
    ids = [r["video_id"] for r in rows]
    catalog.insert("videos", {"video_id": "FakeSV/bare", "source": "FakeSV", "native_id": "bare",
                              "synthetic": False, "raw_ref": "x:1", "run_id": "t"})
    feed = Feed("feed-x", 1, 0, "r", ids, ["FakeSV/bare"], [*ids, "FakeSV/bare"], 0.33, 1)
    card = render_feed(catalog, feed, Path(tmp_path / "media"))
    for row in rows:
        assert f"not shown in the app):</span> {' / '.join(row['keywords'])}" in card
    assert card.count("(no title / 无标题)") == 1  # only the video the catalog knows nothing about
