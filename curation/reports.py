"""HTML reports with inline SVG charts (no plotting dependency, opens anywhere)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from curation.core.catalog import Catalog
from curation.corpus.embed import load_vectors

_STYLE = """body{font-family:system-ui,'WenQuanYi Micro Hei',sans-serif;margin:2em;max-width:1100px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
.fig{display:inline-block;margin:0 2em 1em 0}.muted{color:#666}"""


def histogram_svg(values: Sequence[float], title: str, bins: int = 30, width: int = 460,
                  height: int = 200, log_y: bool = False) -> str:
    """A bar histogram as an SVG string."""
    esc = html.escape
    if len(values) == 0:
        return f'<div class="fig"><b>{esc(title)}</b><p class="muted">no data</p></div>'
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=bins)
    shown = np.log1p(counts) if log_y else counts.astype(float)
    top = max(float(shown.max()), 1e-9)
    bar_w = (width - 40) / len(counts)
    bars = []
    for i, (count, value) in enumerate(zip(counts, shown, strict=True)):
        h = (height - 40) * value / top
        x, y = 30 + i * bar_w, height - 20 - h
        bars.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bar_w - 1, 1):.1f}" '
                    f'height="{h:.1f}" fill="#4a7ab5"><title>{edges[i]:.3g}–{edges[i + 1]:.3g}: '
                    f'{count}</title></rect>')
    axis = (f'<text x="30" y="{height - 4}" font-size="11">{edges[0]:.3g}</text>'
            f'<text x="{width - 10}" y="{height - 4}" font-size="11" text-anchor="end">'
            f'{edges[-1]:.3g}</text><text x="2" y="14" font-size="11">{int(counts.max())}</text>')
    return (f'<div class="fig"><b>{esc(title)}</b>{" (log scale)" if log_y else ""}<br>'
            f'<svg width="{width}" height="{height}" role="img">{"".join(bars)}{axis}</svg></div>')


def page(title: str, body: list[str]) -> str:
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>'
            + "\n".join(body) + "</body></html>")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def cluster_report(catalog: Catalog, run_id: str, model_id: str, path: Path,
                   sample: int = 1500, seed: int = 0) -> Path:
    from curation.corpus.cluster import centre

    esc = html.escape
    video_ids, vectors = load_vectors(catalog, model_id)
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(video_ids), size=min(sample, len(video_ids)), replace=False)
    raw = vectors[pick] @ vectors[pick].T
    centred_all = centre(vectors)
    cen = centred_all[pick] @ centred_all[pick].T
    upper = np.triu_indices(len(pick), k=1)
    sizes = [r[0] for r in catalog.con.execute(
        "SELECT size FROM clusters WHERE run_id = ?", [run_id]).fetchall()]
    total, noise = catalog.con.execute(
        "SELECT count(*), count(*) FILTER (cluster_id < 0) FROM cluster_members WHERE run_id = ?",
        [run_id]).fetchone()
    counts = catalog.con.execute("SELECT counts FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    body = [
        f"<p>run <code>{esc(run_id)}</code>, model <code>{esc(model_id)}</code>: "
        f"{total:,} videos, {len(sizes):,} clusters, noise {noise / max(total, 1):.1%}</p>",
        f"<p class='muted'>quality and counts: {esc(counts or '')}</p>",
        histogram_svg(raw[upper], f"pairwise cosine, raw vectors ({len(pick)} sampled)"),
        histogram_svg(cen[upper], "pairwise cosine, centred vectors"),
        histogram_svg(sizes, "cluster size", log_y=True),
        "<h2>Largest clusters</h2><table><tr><th>cluster</th><th>size</th><th>mean sim</th>"
        "<th>top keywords</th><th>sample titles</th></tr>",
    ]
    for row in catalog.rows("SELECT * FROM clusters WHERE run_id = ? ORDER BY size DESC, "
                            "cluster_id LIMIT 25", [run_id]):
        titles = catalog.con.execute("""
            SELECT coalesce(v.title, array_to_string(v.keywords, ' ')) FROM cluster_members m
            JOIN videos v USING (video_id) WHERE m.run_id = ? AND m.cluster_id = ?
            ORDER BY m.video_id LIMIT 4""", [run_id, row["cluster_id"]]).fetchall()
        body.append(f"<tr><td>{row['cluster_id']}</td><td>{row['size']}</td>"
                    f"<td>{row['mean_similarity']:.3f}</td>"
                    f"<td>{esc(', '.join(row['top_keywords'] or []))}</td>"
                    f"<td>{'<br>'.join(esc((t[0] or '')[:80]) for t in titles)}</td></tr>")
    body.append("</table>")
    return write(path, page("Keyword clusters", body))
