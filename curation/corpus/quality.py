"""How well clusters agree with what people said about the videos: every human label the catalog
holds (a source's `labels` in resources/sources.toml, e.g. KuaiRec's three category levels, and any
label a generic mapping names), scored with chance-corrected figures.

NMI rewards many small clusters: with the cluster sizes kept and the labels shuffled it stays far
above 0. AMI and ARI are corrected for chance (0 = what shuffled labels give, 1 = identical), so
they lead; each is printed beside the same score for the same cluster sizes with the labels
shuffled, a baseline measured in the same run. Noise is scored two ways: as one more cluster, and
as one singleton cluster per noise video. FakeSV's news events are checked apart: one event's
videos share one keyword set, so none should be split.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from curation.core.catalog import Catalog
from curation.core.sources import SOURCES

SHUFFLE_SEED = 0


@dataclass(frozen=True)
class Agreement:
    """One clustering against one human label column, over the videos that carry the label."""

    source: str
    label: str
    videos: int
    classes: int
    noise: float  # share of these videos no cluster took
    ami: float  # noise as one cluster: the headline figure
    ami_singletons: float  # each noise video its own cluster
    ari: float
    ari_singletons: float
    nmi: float  # chance-inflated; kept only to compare with older runs
    ami_shuffled: float  # the same cluster sizes, the labels shuffled
    ari_shuffled: float
    nmi_shuffled: float


def noise_as_singletons(found: np.ndarray) -> np.ndarray:
    """Cluster ids where every noise point (< 0) is a cluster of its own."""
    out = np.asarray(found, dtype=np.int64).copy()
    noise = out < 0
    out[noise] = out.max(initial=-1) + 1 + np.arange(int(noise.sum()))
    return out


def agreement(source: str, label: str, truth: list[str], found: np.ndarray, seed: int = SHUFFLE_SEED) -> Agreement:
    """`found` cluster ids (noise < 0) against the human labels `truth` of the same videos."""
    from sklearn.metrics import adjusted_mutual_info_score as ami
    from sklearn.metrics import adjusted_rand_score as ari
    from sklearn.metrics import normalized_mutual_info_score as nmi

    found = np.asarray(found, dtype=np.int64)
    one_noise = np.where(found < 0, -1, found)
    singletons = noise_as_singletons(found)
    shuffled = np.random.default_rng(seed).permutation(np.asarray(truth, dtype=object)).tolist()

    def r(x: float) -> float:
        return round(float(x), 4)

    return Agreement(
        source=source, label=label, videos=len(truth), classes=len(set(truth)),
        noise=r((found < 0).mean()) if len(found) else 0.0,
        ami=r(ami(truth, one_noise)), ami_singletons=r(ami(truth, singletons)),
        ari=r(ari(truth, one_noise)), ari_singletons=r(ari(truth, singletons)), nmi=r(nmi(truth, one_noise)),
        ami_shuffled=r(ami(shuffled, one_noise)), ari_shuffled=r(ari(shuffled, one_noise)),
        nmi_shuffled=r(nmi(shuffled, one_noise)))


def label_columns(catalog: Catalog) -> dict[str, list[str]]:
    """The human label columns per source: those resources/sources.toml states, and those the
    generic mappings named (recorded by their ingest runs). A label is a key of `videos.extra`."""
    columns = {name: list(spec.labels) for name, spec in SOURCES.items() if spec.labels}
    for (params,) in catalog.con.execute("SELECT params FROM runs WHERE stage = 'ingest' AND status = 'ok' "
                                         "ORDER BY started_at").fetchall():
        for source, labels in (json.loads(params or "{}").get("labels") or {}).items():
            known = columns.setdefault(source, [])
            known += [lab for lab in labels if lab not in known]
    return columns


def labelled_videos(catalog: Catalog) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(source, label column) -> [(video id, value)] of every video that carries that label, by video id."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for source, labels in label_columns(catalog).items():
        for label in labels:
            rows = catalog.con.execute(
                "SELECT video_id, json_extract_string(extra, '$.\"' || ? || '\"') FROM videos "
                "WHERE source = ? ORDER BY video_id", [label, source]).fetchall()
            out[(source, label)] = [(v, t) for v, t in rows if t not in (None, "")]
    return out


def human_label_agreement(catalog: Catalog, label_of: dict[str, int]) -> list[Agreement]:
    """One `Agreement` per label column that at least two clustered videos carry."""
    out = []
    for (source, label), rows in labelled_videos(catalog).items():
        pairs = [(t, label_of[v]) for v, t in rows if v in label_of]
        if len(pairs) > 1:
            out.append(agreement(source, label, [t for t, _ in pairs], np.array([c for _, c in pairs])))
    return out


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


def source_quality(catalog: Catalog, video_ids: list[str], labels: np.ndarray) -> dict[str, Any]:
    """What a cluster run records of its quality (`runs.counts`): `agreement`, a list of
    `Agreement` dicts, and the FakeSV event figures."""
    label_of = dict(zip(video_ids, labels.tolist(), strict=True))
    quality: dict[str, Any] = {"agreement": [asdict(a) for a in human_label_agreement(catalog, label_of)]}
    quality.update(fakesv_event_split(catalog, label_of))
    return quality


def agreements_of(counts: dict[str, Any]) -> list[Agreement]:
    """The agreements a cluster run recorded (none for runs from before they were)."""
    return [Agreement(**a) for a in counts.get("agreement") or []]


def agreement_line(a: Agreement) -> str:
    """One line a curator reads: the chance-corrected figures beside their shuffled baseline."""
    return (f"{a.source} {a.label} ({a.videos:,} videos, {a.classes:,} labels): AMI {a.ami:.3f} "
            f"(shuffled labels {a.ami_shuffled:.3f}), ARI {a.ari:.3f} (shuffled {a.ari_shuffled:.3f}); "
            f"noise {a.noise:.1%} (AMI {a.ami_singletons:.3f} with each noise video alone); "
            f"NMI {a.nmi:.3f}, chance-inflated (shuffled {a.nmi_shuffled:.3f})")
