"""`build/reports/release-vX.Y.Z.html`: the card's numbers as pictures (tasks per sub-category,
feed lengths, distractor ratios, the QC funnel), read back from the release folder itself."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pyarrow.parquet as pq

from curation.qc.funnel import funnel_svg, subcategory_bars_svg
from curation.release.card import data_path
from curation.release.facts import ReleaseFacts, summary_line
from curation.reports import histogram_svg, page, write


def release_report(folder: Path, reports_dir: Path) -> Path:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    tasks = pq.read_table(folder / data_path("all")).to_pylist()
    groups: dict[str, dict[str, int]] = {}
    for task in tasks:
        group = groups.setdefault(f"{task['tier']} {task['subcategory']}", {"tasks": 0, "shortcut_passed": 0})
        group["tasks"] += 1
        group["shortcut_passed"] += task["qc"]["shortcut_verdict"] == "shortcut_passed"  # judged or not
    facts = ReleaseFacts.from_json(manifest["facts"])
    body = [f"<p>{len(tasks)} tasks in {len(manifest['configs'])} configs; parent: "
            f"{manifest.get('parent') or 'none'}; toolkit {manifest['toolkit_version']}.</p>",
            f"<p>{html.escape(summary_line(facts))}.</p>",
            "<h2>Tasks per sub-category</h2>", subcategory_bars_svg(dict(sorted(groups.items()))),
            "<h2>Feeds</h2>", histogram_svg([len(t["video_feed"]) for t in tasks], "videos per feed", bins=15),
            histogram_svg([t["distractor_ratio"] for t in tasks if t["distractor_ratio"] is not None],
                          "distractors per anchor video", bins=15),
            histogram_svg([t["feed_runtime_s"] for t in tasks if t["feed_runtime_s"] is not None],
                          "feed runtime (s)", bins=15),
            "<h2>QC funnel</h2>", funnel_svg(manifest["qc"])]
    return write(reports_dir / f"release-v{manifest['version']}.html", page(f"Release v{manifest['version']}", body))
