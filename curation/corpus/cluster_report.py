"""The cluster run's HTML report: quality figures against human labels, similarity and size
histograms, and a searchable table of every cluster."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from curation.core.catalog import Catalog
from curation.corpus.embed import centred_rows, load_vectors
from curation.reports import histogram_svg, page, write

QUALITY_FIGURES = [  # (key suffix, name, what it means)
    ("noise", "noise share", "labelled KuaiRec videos that no cluster took (they can still be distractors)"),
    ("nmi", "NMI, noise excluded", "agreement with the human categories over the clustered videos only; "
     "it flatters, since hard videos were left out"),
    ("ari", "ARI, noise excluded", "pair-counting agreement on the same videos; near 0 means chance, 1 identical"),
    ("nmi_noise_counted", "NMI, noise counted", "the same agreement with all noise as one more cluster: "
     "the honest figure"),
    ("ari_noise_counted", "ARI, noise counted", "pair-counting agreement with noise as one cluster"),
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
    """The source quality figures as a table with one sentence on what each means."""
    esc = html.escape
    rows = []
    for level in ("second", "third"):
        for suffix, name, meaning in QUALITY_FIGURES:
            value = stats.get(f"kuairec_{level}_{suffix}")
            if value is not None:
                shown = f"{value:.1%}" if suffix == "noise" else f"{value:.3f}"
                rows.append(f"<tr><td>KuaiRec {level}-level category</td><td>{esc(name)}</td><td>{shown}</td>"
                            f"<td class='muted'>{esc(meaning)}</td></tr>")
    if "fakesv_events" in stats:
        rows.append(f"<tr><td>FakeSV news events</td><td>events split</td><td>{stats['fakesv_events_split']} of "
                    f"{stats['fakesv_events_clustered']}</td><td class='muted'>clustered events whose videos landed in "
                    "more than one cluster (0 is right: one event's videos share one keyword set)</td></tr>")
    if not rows:
        return "<p class='muted'>No source with human labels in this catalog.</p>"
    return ("<table><tr><th>against</th><th>figure</th><th>value</th><th>what it means</th></tr>"
            + "".join(rows) + "</table>")


def cluster_report(catalog: Catalog, run_id: str, model_id: str, path: Path, sample: int = 1500, seed: int = 0,
                   titles_per_cluster: int = 4, counts: dict[str, Any] | None = None) -> Path:
    """The clusters page; `counts` are the run's (read from `runs` unless the run is still open)."""
    esc = html.escape
    video_ids, vectors = load_vectors(catalog, model_id)
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(video_ids), size=min(sample, len(video_ids)), replace=False)
    raw = vectors[pick] @ vectors[pick].T
    centred_all = centred_rows(vectors, vectors.mean(axis=0, keepdims=True)).astype(np.float64)  # as clustering
    cen = centred_all[pick] @ centred_all[pick].T
    upper = np.triu_indices(len(pick), k=1)
    clusters = catalog.rows("SELECT * FROM clusters WHERE run_id = ? ORDER BY size DESC, cluster_id", [run_id])
    total, noise = catalog.con.execute(
        "SELECT count(*), count(*) FILTER (cluster_id < 0) FROM cluster_members WHERE run_id = ?",
        [run_id]).fetchone()
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
