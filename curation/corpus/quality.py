"""How well clusters agree with what a source knows about its videos: KuaiRec's human
categories (NMI/ARI, noise excluded, noise share beside them) and FakeSV's news
events (how many are split across clusters). The clusterer itself knows no source."""

from __future__ import annotations

from typing import Any

import numpy as np

from curation.core.catalog import Catalog


def kuairec_category_agreement(catalog: Catalog, label_of: dict[str, int]) -> dict[str, Any]:
    """NMI and ARI against KuaiRec's human categories, twice: over the clustered videos only
    (noise excluded, which flatters) and with noise counted as one more cluster."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    quality: dict[str, Any] = {}
    for level in ("second", "third"):
        truth = catalog.con.execute(
            f"SELECT video_id, json_extract_string(extra, '$.{level}_level_category_name') "
            "FROM videos WHERE source = 'KuaiRec'").fetchall()
        pairs = [(t, label_of[v]) for v, t in truth if t and v in label_of]
        if not pairs:
            continue
        kept = [(t, lab) for t, lab in pairs if lab >= 0]
        quality[f"kuairec_{level}_noise"] = round(1 - len(kept) / len(pairs), 4)
        for suffix, scored in (("", kept), ("_noise_counted", pairs)):
            if len(scored) > 1:
                truth_labels, found = [t for t, _ in scored], [lab for _, lab in scored]
                quality[f"kuairec_{level}_nmi{suffix}"] = round(float(normalized_mutual_info_score(
                    truth_labels, found)), 4)
                quality[f"kuairec_{level}_ari{suffix}"] = round(float(adjusted_rand_score(truth_labels, found)), 4)
    return quality


def fakesv_event_split(catalog: Catalog, label_of: dict[str, int]) -> dict[str, Any]:
    events = catalog.con.execute("SELECT video_id, keywords[1] FROM videos "
                                 "WHERE source = 'FakeSV' AND keywords IS NOT NULL").fetchall()
    if not events:
        return {}
    clusters_of: dict[str, set[int]] = {}
    for vid, event in events:
        if vid in label_of and label_of[vid] >= 0:
            clusters_of.setdefault(event, set()).add(label_of[vid])
    return {"fakesv_events": len({e for _, e in events}), "fakesv_events_clustered": len(clusters_of),
            "fakesv_events_split": sum(1 for s in clusters_of.values() if len(s) > 1)}


MEASURES = (kuairec_category_agreement, fakesv_event_split)


def source_quality(catalog: Catalog, video_ids: list[str], labels: np.ndarray) -> dict[str, Any]:
    label_of = dict(zip(video_ids, labels.tolist(), strict=True))
    quality: dict[str, Any] = {}
    for measure in MEASURES:
        quality.update(measure(catalog, label_of))
    return quality
