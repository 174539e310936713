"""HTML reports with inline SVG charts (no plotting dependency, opens anywhere)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

_STYLE = """body{font-family:system-ui,'WenQuanYi Micro Hei','Noto Color Emoji',sans-serif;margin:2em;max-width:1100px}
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
