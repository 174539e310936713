"""What each video starts with in the runner's app, as far as the catalog knows: the one statement that
`release env-feeds` writes into a feed and that the proofs read, so that the two cannot disagree.

Today that is the comments a video starts with (nothing is liked, collected or reported at a reset). By the runner
profile's source rules: a source whose videos start with no comments gives []; a source whose videos start with
their metadata record's comments gives the catalog's top-level comments of that video, in ingest order, each text
stripped as the runner strips it; a video whose record the catalog does not hold (only its id came in, e.g. from a
public release's task files) is left out: the runner's own metadata file decides, and the profile's
`unknown_record` says what is known of it.
"""

from __future__ import annotations

from typing import Any

from curation.core.catalog import Catalog
from curation.env.profile import RunnerProfile


def comment_order(alias: str = "") -> str:
    """The order the app shows a video's comments in. Ingest numbers them `<video>#c<n>`: by the id's length, then
    its text, puts c2 before c10."""
    a = f"{alias}." if alias else ""
    return f"coalesce({a}time_s, 0), {a}created_at NULLS LAST, length({a}comment_id), {a}comment_id"


def comment_rows(catalog: Catalog, video_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every comment row of these videos (replies too), in the order the app shows them."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in catalog.rows(f"SELECT * FROM comments WHERE list_contains(?, video_id) ORDER BY video_id, "
                            f"{comment_order()}", [video_ids]):
        out.setdefault(row["video_id"], []).append(row)
    return out


def starting_comments(catalog: Catalog, profile: RunnerProfile, video_ids: list[str] | None = None
                      ) -> dict[str, list[str]]:
    """Video id -> the comment texts it starts with in the app; a video whose starting comments only the runner's
    own metadata can say is absent. All videos of the catalog, or those of `video_ids`."""
    rows = catalog.rows(f"""
        SELECT v.video_id, v.metadata_missing,
               list(coalesce(c.text, '') ORDER BY {comment_order("c")})
                   FILTER (WHERE c.comment_id IS NOT NULL AND c.parent_id IS NULL) AS texts
        FROM videos v LEFT JOIN comments c USING (video_id)
        WHERE ? IS NULL OR list_contains(?, v.video_id)
        GROUP BY ALL""", [video_ids, video_ids])
    out: dict[str, list[str]] = {}
    for row in rows:
        source = profile.source_of(row["video_id"])
        if source is not None and source.comments == "none":
            out[row["video_id"]] = []
        elif not row["metadata_missing"]:
            out[row["video_id"]] = [str(t).strip() for t in row["texts"] or []]
    return out
