"""Which videos the app can play: the one rule feeds, validation and reports share.

A source is playable when its video files can be obtained (`[sources.<name>] playable`;
KuaiRec publishes captions and categories but no files). Once media has been scanned for
a source, a video of it is playable only when it has a normalised file.
"""

from __future__ import annotations

from curation.core.catalog import Catalog
from curation.core.config import Config, FeedsConfig, SourceConfig
from curation.env.profile import accepted_ungradable, default_profile
from curation.env.starts import starting_comments
from curation.tasks.rules import RuleContext


def playable_sources(sources: dict[str, SourceConfig], present: list[str]) -> list[str]:
    return [s for s in present if sources.get(s, SourceConfig()).playable]


def scanned_sources(catalog: Catalog) -> set[str]:
    """Sources for which some media has been linked (scanned, or set at ingest / registration)."""
    return {r[0] for r in catalog.con.execute(
        "SELECT DISTINCT v.source FROM media_files f JOIN videos v USING (video_id)").fetchall()}


def playable_video_ids(catalog: Catalog, sources: dict[str, SourceConfig]) -> set[str]:
    present = [r[0] for r in catalog.con.execute("SELECT DISTINCT source FROM videos ORDER BY 1").fetchall()]
    allowed = playable_sources(sources, present)
    scanned = sorted(scanned_sources(catalog) & set(allowed))
    unscanned = sorted(set(allowed) - set(scanned))
    return {r[0] for r in catalog.con.execute("""
        SELECT video_id FROM videos WHERE list_contains(?, source)
        UNION ALL
        SELECT o.video_id FROM media_outputs o JOIN videos v USING (video_id) WHERE list_contains(?, v.source)""",
        [unscanned, scanned]).fetchall()}


def rule_context(catalog: Catalog, sources: dict[str, SourceConfig] | None = None,
                 feeds: FeedsConfig | None = None, accept_ungradable: str | None = None) -> RuleContext:
    """What the task rules need to know of the catalog's videos: which exist, how long they last,
    which the app can play (by `sources`), what each starts with in the runner profile's app, and the feeds' ratio
    range (defaults where not given)."""
    profile = default_profile()
    sources = Config().sources if sources is None else sources
    feeds = feeds or Config().feeds
    return RuleContext(
        known_videos={r[0] for r in catalog.con.execute("SELECT video_id FROM videos").fetchall()},
        durations=dict(catalog.con.execute(
            "SELECT video_id, duration_s FROM videos WHERE duration_s IS NOT NULL").fetchall()),
        playable=playable_video_ids(catalog, sources), scanned_sources=scanned_sources(catalog),
        ratio_range=(feeds.ratio_min, feeds.ratio_max),
        starting_comments=starting_comments(catalog, profile), profile=profile,
        accept_ungradable=accepted_ungradable() if accept_ungradable is None else accept_ungradable)
