"""How topical a feed's anchor is, recorded per feed (`feed_coherence`).

The paper's feeds mix "topical consistency and diversity": the anchor videos should be about one
thing, the distractors about other things. Two figures say whether they are:
- the anchor's *similarity*: the mean cosine between its videos, and the mean cosine between its
  videos and the feed's distractors (in the similarity space, `reduce.py`), which should be lower;
- where the anchor's videos carry a human label (`quality.label_columns`), the share of them in
  the anchor's most common label.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from curation.core.catalog import Catalog
from curation.corpus.quality import labelled_videos


@dataclass(frozen=True)
class AnchorCoherence:
    anchor_similarity: float | None  # mean pairwise cosine of the anchor videos (None: one video)
    distractor_similarity: float | None  # mean cosine of anchor video x distractor (None: no distractor)
    label: str | None  # the label column the share is over (None: the anchor videos carry no label)
    label_share: float | None  # share of the anchor videos that carry it in its most common value


def human_labels(catalog: Catalog, video_ids: list[str]) -> dict[str, dict[str, str]]:
    """Each of `video_ids` that carries a human label: {label column: value}. Reads every labelled
    video of the labelled sources once (a filter on a million ids would cost more than the read)."""
    wanted = set(video_ids)
    out: dict[str, dict[str, str]] = {}
    for (_, column), rows in labelled_videos(catalog).items():
        for video_id, value in rows:
            if video_id in wanted:
                out.setdefault(video_id, {})[column] = value
    return out


def anchor_coherence(vectors: np.ndarray, anchors: list[int], others: list[int],
                     labels: list[dict[str, str]]) -> AnchorCoherence:
    """The figures for one feed: `vectors` are unit rows, `anchors`/`others` row indices into them,
    `labels` the human labels of each anchor video (empty where none)."""
    a = vectors[anchors].astype(np.float64)
    pairs = len(anchors) * (len(anchors) - 1)
    within = float(((a @ a.T).sum() - np.trace(a @ a.T)) / pairs) if pairs else None
    across = float((a @ vectors[others].astype(np.float64).T).mean()) if others else None
    carried = Counter(column for found in labels for column in found)
    label = share = None
    if carried and max(carried.values()) >= 2:  # one labelled video would share its own label: no figure
        # the column most anchor videos carry; a tie goes to the name last in order (for KuaiRec, the finer level)
        label = max(carried, key=lambda c: (carried[c], c))
        values = Counter(found[label] for found in labels if label in found)
        share = values.most_common(1)[0][1] / carried[label]
    return AnchorCoherence(_round(within), _round(across), label, _round(share))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def write_coherence(catalog: Catalog, rows: list[tuple[str, int, str | None, AnchorCoherence]]) -> None:
    """(feed_id, version, run_id, coherence) rows, replacing any earlier row of the same feed version."""
    if not rows:
        return
    table = pa.table({
        "feed_id": [r[0] for r in rows], "version": pa.array([r[1] for r in rows], pa.int32()),
        "run_id": [r[2] for r in rows],
        **{name: pa.array([getattr(r[3], name) for r in rows], pa.float64())
           for name in ("anchor_similarity", "distractor_similarity", "label_share")},
        "label": pa.array([r[3].label for r in rows], pa.string()),
    })
    with catalog.staged(incoming_coherence=table):
        catalog.con.execute("DELETE FROM feed_coherence USING incoming_coherence i "
                            "WHERE feed_coherence.feed_id = i.feed_id AND feed_coherence.version = i.version")
        catalog.insert_staged("feed_coherence", "incoming_coherence", table.column_names)


def coherence_of(catalog: Catalog) -> dict[tuple[str, int], AnchorCoherence]:
    """Every recorded feed version's coherence."""
    return {(r[0], int(r[1])): AnchorCoherence(r[2], r[3], r[4], r[5]) for r in catalog.con.execute(
        "SELECT feed_id, version, anchor_similarity, distractor_similarity, label, label_share "
        "FROM feed_coherence").fetchall()}


def summary(found: list[AnchorCoherence], chance: list[AnchorCoherence]) -> dict[str, float | int | None]:
    """Means over feeds, for the run's counts, each beside its mean over `chance`: anchors of the same
    sizes drawn at random (`chance_anchors`), a baseline measured in the same run."""
    def mean(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return round(float(np.mean(known)), 4) if known else None
    out: dict[str, float | int | None] = {"labelled_anchors": sum(c.label is not None for c in found)}
    for name in ("anchor_similarity", "distractor_similarity", "label_share"):
        out[name] = mean([getattr(c, name) for c in found])
        out[f"{name}_chance"] = mean([getattr(c, name) for c in chance])
    return out


def chance_anchors(vectors: np.ndarray, human: list[dict[str, str]], eligible: np.ndarray, source: np.ndarray,
                   feeds: list[tuple[list[int], list[int]]], seed: int = 0) -> list[AnchorCoherence]:
    """For each (anchors, others) of `feeds`: the figures of videos drawn at random in their place, from the
    videos an anchor may hold (`eligible`: playable, not synthetic) of the same sources, with as many
    labelled videos as the anchor has (so the label share compares like with like)."""
    rng = np.random.default_rng(seed)
    labelled = np.array([bool(h) for h in human], dtype=bool)
    out = []
    for anchors, others in feeds:
        same = eligible & np.isin(source, source[anchors])
        with_label = sum(bool(human[a]) for a in anchors)
        pools = (np.flatnonzero(same & labelled), np.flatnonzero(same & ~labelled))
        if len(pools[0]) < with_label or len(pools[1]) < len(anchors) - with_label:
            continue  # too few such videos to draw from: no chance figure for this feed
        drawn = (rng.choice(pools[0], size=with_label, replace=False).tolist()
                 + rng.choice(pools[1], size=len(anchors) - with_label, replace=False).tolist())
        rest_pool = np.flatnonzero(np.isin(source, source[others])) if others else np.zeros(0, dtype=np.int64)
        rest = rng.choice(rest_pool, size=min(len(others), len(rest_pool)), replace=False).tolist()
        out.append(anchor_coherence(vectors, drawn, rest, [human[j] for j in drawn]))
    return out

def coherence_line(found: dict[str, float | int | None]) -> str:
    """The run's coherence summary as one line, each figure beside its chance value."""
    def shown(name: str) -> str:
        value, chance = found.get(name), found.get(f"{name}_chance")
        return "-" if value is None else f"{value:.3f} (random videos: {'-' if chance is None else f'{chance:.3f}'})"
    line = (f"anchors: mean cosine {shown('anchor_similarity')} between anchor videos, "
            f"{shown('distractor_similarity')} to their distractors")
    if found.get("labelled_anchors"):
        line += (f"; {found['labelled_anchors']} anchors carry a human label, "
                 f"{shown('label_share')} of their videos share its most common value")
    return line
