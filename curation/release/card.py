"""The release's Hugging Face dataset card (`README.md`): YAML front matter that tells the Hub
and `datasets` which parquet files make which config, then what the benchmark measures, its
taxonomy and QC numbers, how to load and run it, its sources and their terms, how to cite."""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml

from curation.core.config import ReleaseConfig
from curation.release.contents import CONFIGS

SPLIT = "test"
SOURCE_TERMS = {
    "FakeSV": "FakeSV (Qi et al., AAAI 2023; github.com/ICTMCG/FakeSV): no licence file; the data is "
              "released for research on signing the authors' data-use agreement.",
    "KuaiRec": "KuaiRec (github.com/chongminggao/KuaiRec): CC BY-SA 4.0.",
    "LiveBot": "LiveBot (Ma et al., AAAI 2019; github.com/lancopku/livebot): MIT licence.",
    "Synthetic": "Synthetic: videos generated for this benchmark.",
}
PAPER = {"shortcut_retained": 0.743, "deleted_after_review": 0.142, "revised_after_review": 0.220}


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


def data_path(config: str) -> str:
    return f"data/{config}/{SPLIT}-00000-of-00001.parquet"


def front_matter(settings: ReleaseConfig, configs: list[str], n_tasks: int) -> dict[str, Any]:
    return {
        "pretty_name": settings.pretty_name, "license": settings.license, "language": list(settings.language),
        "task_categories": list(settings.task_categories), "size_categories": [size_category(n_tasks)],
        "tags": list(settings.tags),
        "configs": [{"config_name": c, "data_files": [{"split": SPLIT, "path": data_path(c)}],
                     **({"default": True} if c == "all" else {})} for c in configs]}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def render_card(settings: ReleaseConfig, version: str, repo: str | None, configs: list[str],
                tasks: list[dict[str, Any]], videos: list[dict[str, Any]], qc: dict[str, Any],
                parent: str | None, health: str | None = None) -> str:
    meta = yaml.safe_dump(front_matter(settings, configs, len(tasks)), sort_keys=False, allow_unicode=True)
    by_sub = Counter((t["tier"], t["subcategory"]) for t in tasks)
    by_tier = Counter(t["tier"] for t in tasks)
    sources = Counter(v["source"] for v in videos)
    total = qc.get("all", {})
    name = repo or "ORG/NAME"
    lines = [f"---\n{meta}---", "", f"# {settings.pretty_name} v{version}", "",
             "Tasks for GUI agents on a short-video app whose screen keeps playing while the agent thinks "
             "(LivingScreen). Each task is an instruction over a feed of short videos, graded either by a "
             "multiple-choice answer (`eval_type: label`) or by checks on the app's final state "
             "(`eval_type: platform`).", ""]
    if parent:
        lines += [f"This version follows v{parent}; `CHANGELOG.md` lists what changed."
                  + (f" The config `{configs[-1]}` holds only the tasks added since." if "_to_" in configs[-1] else ""),
                  ""]
    lines += ["## Tasks", "", "| tier | config | sub-category | tasks |", "|---|---|---|---|"]
    lines += [f"| {tier} | `{CONFIGS[tier]}` | {sub} | {n} |" for (tier, sub), n in sorted(by_sub.items())]
    lines += ["", f"{len(tasks)} tasks in all (" + ", ".join(f"{t} {n}" for t, n in sorted(by_tier.items())) + f"), "
              f"over {len(videos)} videos.", "", "## Quality control", ""]
    inherited = Counter(t["qc"]["inherited_from"] for t in tasks if t["qc"].get("inherited_from"))
    reviewed = len(tasks) - sum(inherited.values())
    if reviewed:
        lines += [f"{reviewed} tasks went through this team's QC: the task rules, a metadata-only shortcut filter "
                  "and a blind review by a second annotator, with escalations decided by the group.", ""]
    lines += [f"{n} tasks were inherited and kept as published, without a second review here ({why})." for why, n in
              sorted(inherited.items())] + ([""] if inherited else [])
    lines += ["Every shipped task passes the task rules of the toolkit that built this release.", "",
              "| step | tasks |", "|---|---|"]
    lines += [f"| {step.replace('_', ' ')} | {total.get(step, 0)} |" for step in
              ("authored", "imported", "valid", "shortcut_passed", "reviewed_ok", "escalated", "kept", "inherited",
               "deleted", "revised")]
    lines += ["", f"Kept by the shortcut filter: {_pct(total.get('shortcut_retained'))} (the paper: "
              f"{PAPER['shortcut_retained']:.1%}); after review {_pct(total.get('deleted_after_review'))} deleted "
              f"(paper {PAPER['deleted_after_review']:.1%}) and {_pct(total.get('revised_after_review'))} revised "
              f"(paper {PAPER['revised_after_review']:.1%}).", "",
              *(["## Release health", "", "![Correct answer letters per tier](health.svg)", "", health, ""]
                if health else []),
              "## Load", "", "```python", "from datasets import load_dataset", "",
              f'tasks = load_dataset("{name}", "l2_cross_source_understanding",',
              f'                     revision="v{version}", split="{SPLIT}")',
              "```", "",
              "Columns: `task_id`, `task_version`, `tier`, `subcategory`, `instruction`, `options`, `answer` "
              "(label tasks), `eval_config` (JSON: the answer or the platform checks), `video_feed` (video ids "
              "in order), `anchor_videos` and `distractor_videos` (the feed as built), `feed_runtime_s`, "
              "`distractor_ratio`, `qc` (shortcut verdict and answers, review outcome, decision), and "
              "`author_id` / `reviewer_id` (pseudonyms). `videos.parquet` holds each video's visible metadata "
              "(caption, hashtags, author, counts), source, duration and media sha256; `feeds.parquet` every "
              "feed version used.", "",
              "## Run with the LivingScreen runner", "",
              "`livingscreen/` holds `gui_action.json`, `cross_source_understanding.json` and "
              "`close_end_application.json` in the public runner's format; copy them where the runner reads "
              "its tasks and run `python main_threaded.py -t <category>`.", "",
              "## Sources and terms", "", "| source | videos | terms |", "|---|---|---|"]
    lines += [f"| {s} | {n} | {SOURCE_TERMS.get(s, 'see the source for its terms').split(': ', 1)[-1]} |"
              for s, n in sorted(sources.items())]
    lines += ["", "Video files are not included; the ids name them in their source datasets.", "",
              "## Citation", "", "```bibtex",
              settings.citation.strip() or "@misc{livingscreen,\n  title = {LivingScreen},\n"
              f"  howpublished = {{{settings.homepage}}}\n}}", "```", ""]
    return "\n".join(lines)
