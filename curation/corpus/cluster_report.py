"""The cluster run's HTML report: quality figures against human labels, similarity and size
histograms, and a searchable table of every cluster."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from curation.core.catalog import Catalog, one_row
from curation.corpus.embed import load_vectors
from curation.corpus.quality import agreements_of
from curation.corpus.reduce import similarity_space
from curation.reports import histogram_svg, page, write

QUALITY_COLUMNS = [  # (Agreement field, heading, what it means)
    ("videos", "videos", "videos that carry this label and a vector"),
    ("classes", "labels", "distinct values of the label"),
    ("ami", "AMI", "adjusted mutual information, noise as one cluster: 0 is what shuffled labels score, 1 is "
     "the same grouping; the figure to read"),
    ("ami_shuffled", "AMI, shuffled", "the same clusters against the labels shuffled: chance, measured"),
    ("ari", "ARI", "adjusted Rand index (pairs of videos grouped alike), noise as one cluster"),
    ("ari_shuffled", "ARI, shuffled", "chance, measured the same way"),
    ("noise", "noise", "share of these videos no cluster took (they can still be distractors)"),
    ("ami_singletons", "AMI, noise alone", "AMI with each noise video a cluster of its own"),
    ("nmi", "NMI", "normalised mutual information: rises with the number of clusters whatever they hold; "
     "compare it with its shuffled value, never alone"),
    ("nmi_shuffled", "NMI, shuffled", "what NMI gives these cluster sizes by chance"),
]

_SORT_SCRIPT = """<script>
function filterRows() {
  const q = document.getElementById('q').value.toLowerCase();
  for (const r of document.querySelectorAll('#clusters tbody tr')) {
    r.style.display = r.textContent.toLowerCase().includes(q) ? '' : 'none';
  }
}
function sortBy(col, numeric) {
  const body = document.querySelector('#clusters tbody');
  const rows = [...body.rows];
  const dir = body.dataset.sorted == col ? -1 : 1;
  body.dataset.sorted = dir == 1 ? col : '';
  const key = (r) => r.cells[col].dataset.v ?? r.cells[col].textContent;
  rows.sort((a, b) => (numeric ? Number(key(a)) - Number(key(b)) : key(a).localeCompare(key(b))) * dir);
  rows.forEach((r) => body.appendChild(r));
}
</script>"""


def quality_table(stats: dict[str, Any]) -> str:
    """The run's agreement with every human label, each figure beside its shuffled baseline, and a
    legend saying what each column means."""
    esc = html.escape
    rows = []
    for fact in agreements_of(stats):
        cells = "".join(f"<td>{_shown(key, getattr(fact, key))}</td>" for key, _, _ in QUALITY_COLUMNS)
        rows.append(f"<tr><td>{esc(fact.source)} {esc(fact.label)}</td>{cells}</tr>")
    if "fakesv_events" in stats:
        rows.append(f"<tr><td>FakeSV news events</td><td colspan='{len(QUALITY_COLUMNS)}'>"
                    f"{stats['fakesv_events_split']} of {stats['fakesv_events_clustered']} clustered events split "
                    "across clusters (0 is right: one event's videos share one keyword set)</td></tr>")
    if not rows:
        return "<p class='muted'>No source with human labels in this catalog.</p>"
    head = "".join(f"<th>{esc(name)}</th>" for _, name, _ in QUALITY_COLUMNS)
    legend = "".join(f"<li><b>{esc(name)}</b>: {esc(meaning)}</li>" for _, name, meaning in QUALITY_COLUMNS)
    return (f"<table><tr><th>against</th>{head}</tr>" + "".join(rows) + f"</table><ul class='muted'>{legend}</ul>")


def _shown(key: str, value: float) -> str:
    if key in ("videos", "classes"):
        return f"{int(value):,}"
    return f"{value:.1%}" if key == "noise" else f"{value:.3f}"


def cluster_report(catalog: Catalog, run_id: str, model_id: str, path: Path, sample: int = 1500, seed: int = 0,
                   titles_per_cluster: int = 4, counts: dict[str, Any] | None = None) -> Path:
    """The clusters page; `counts` are the run's (read from `runs` unless the run is still open)."""
    esc = html.escape
    video_ids, vectors = load_vectors(catalog, model_id)
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(video_ids), size=min(sample, len(video_ids)), replace=False)
    raw = vectors[pick] @ vectors[pick].T
    centred = similarity_space(vectors, rows=pick)  # as clustering sees them
    cen = centred @ centred.T
    upper = np.triu_indices(len(pick), k=1)
    clusters = catalog.rows("SELECT * FROM clusters WHERE run_id = ? ORDER BY size DESC, cluster_id", [run_id])
    total, noise = one_row(catalog.con, "SELECT count(*), count(*) FILTER (cluster_id < 0) FROM cluster_members "
                           "WHERE run_id = ?", [run_id])
    if counts is None:
        counts = json.loads(catalog.scalar("SELECT counts FROM runs WHERE run_id = ?", [run_id]) or "{}")
    titles: dict[int, list[str]] = {}
    for cluster_id, caption in catalog.con.execute("""
            SELECT m.cluster_id, coalesce(v.title, v.description, array_to_string(v.keywords, ' '))
            FROM cluster_members m JOIN videos v USING (video_id)
            WHERE m.run_id = ? AND m.cluster_id >= 0 ORDER BY m.cluster_id, m.video_id""", [run_id]).fetchall():
        shown = titles.setdefault(cluster_id, [])
        if len(shown) < titles_per_cluster:
            shown.append(caption or "")
    body = [
        f"<p>Run <code>{esc(run_id)}</code>, model <code>{esc(model_id)}</code>: {total:,} videos in "
        f"{len(clusters):,} clusters; {noise / max(total, 1):.1%} of them are noise.</p>",
        "<h2>Quality</h2>", quality_table(counts),
        histogram_svg(raw[upper], f"pairwise cosine, raw vectors ({len(pick)} sampled)"),
        histogram_svg(cen[upper], "pairwise cosine, centred vectors"),
        histogram_svg([c["size"] for c in clusters], "cluster size", log_y=True),
        f"<h2>All {len(clusters):,} clusters</h2><p><input id='q' placeholder='search keywords or titles' "
        "oninput='filterRows()' size='40'> <span class='muted'>click a column to sort</span></p>",
        "<table id='clusters'><thead><tr><th onclick='sortBy(0,true)'>cluster</th><th onclick='sortBy(1,true)'>size"
        "</th><th onclick='sortBy(2,true)'>mean sim</th><th onclick='sortBy(3,false)'>top keywords</th>"
        "<th>sample titles</th></tr></thead><tbody>",
    ]
    for row in clusters:
        body.append(f"<tr><td data-v='{row['cluster_id']}'>{row['cluster_id']}</td><td data-v='{row['size']}'>"
                    f"{row['size']}</td><td data-v='{row['mean_similarity']}'>{row['mean_similarity']:.3f}</td>"
                    f"<td>{esc(', '.join(row['top_keywords'] or []))}</td>"
                    f"<td>{'<br>'.join(esc(t[:80]) for t in titles.get(row['cluster_id'], []))}</td></tr>")
    body.append("</tbody></table>" + _SORT_SCRIPT)
    return write(path, page("Keyword clusters", body))
