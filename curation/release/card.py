"""The release's Hugging Face dataset card (`README.md`): YAML front matter that tells the Hub
and `datasets` which parquet files make which config, then the sections of the Hub's dataset
card template, filled from the release itself: its tasks and an example row, what each field
and check means, where the videos come from, and what QC ran on which tasks (`card_facts`: no
check is claimed for a task that has no record of it)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import yaml

from curation import __version__
from curation.core.config import ReleaseConfig
from curation.core.sources import SOURCES
from curation.qc.funnel import END_STATES, PAPER, PATH, STAGES, check_line, paper_rates, percent
from curation.release.card_text import (
    DIRECT_USE,
    FUNCS,
    GLOSSARY,
    LIMITATIONS,
    OBTAIN,
    OUT_OF_SCOPE,
    PAPER_BIBTEX,
    RECOMMENDATIONS,
    sensitive,
)
from curation.release.contents import CONFIGS
from curation.release.facts import NOT_SEEN, SEEN, ReleaseFacts, inspectors_phrase, plural
from curation.release.lite_config import LitePlan, lite_lines

SPLIT = "test"
SOURCE_TERMS = {name: spec.terms for name, spec in SOURCES.items()}  # curation/resources/sources.toml
LICENCE_ANCHOR = "README.md#licence"


# what a card says where the team stated nothing (`release publish` refuses a release whose card says either)
LICENCE_NOT_STATED = ("The annotations' licence is not stated: the team sets it (`[release] annotations_license`) "
                      "before the release is published.")
CONTACT_NOT_STATED = "Not stated: the team sets a contact (`[release] contact`) before the release is published."


def annotators_line(facts: ReleaseFacts) -> str:
    inherited = sum(facts.inherited.values())
    if not facts.here:
        return ("Nobody here: every task was inherited from another release (Annotation process), written and "
                "checked by that release's annotators.")
    if not (facts.authors or facts.reviewers):
        return f"No author or reviewer is recorded for the {plural(facts.here, 'task')} written here."
    return (f"{plural(facts.authors, 'task author')} of the {plural(facts.here, 'task')} written here and "
            f"{plural(facts.reviewers, 'reviewer')}, named here only by stable pseudonyms"
            + (f"; {plural(inherited, 'further task')} inherited from another release." if inherited else "."))


def sources_phrase(facts: ReleaseFacts) -> str:
    return f"{plural(len(facts.sources), 'source')} (" + ", ".join(
        f"{s} {n}" for s, n in facts.sources.items()) + ")"


def collection_line(facts: ReleaseFacts) -> str:
    """How the feeds came about: built here from clusters, or carried in with an imported release."""
    parts = [f"The {plural(facts.videos, 'video')} and their metadata come from {sources_phrase(facts)}."]
    if facts.on_built_feeds:
        ratios = (f" ({facts.built_ratios[0]:.0%} to {facts.built_ratios[1]:.0%} as many as the anchor videos)"
                  if facts.built_ratios else "")
        models = f"embedded with {', '.join(facts.cluster_models)} and " if facts.cluster_models else ""
        parts.append(f"{plural(facts.on_built_feeds, 'task', 'is/are')} played on feeds this toolkit built: "
                     f"keyword sets were {models}clustered, and each feed joins one anchor cluster with unrelated "
                     f"distractor videos{ratios}, shuffled; authors could reorder, remove or swap videos so that "
                     "the feed supports their question.")
    if facts.on_carried_feeds:
        parts.append(f"{plural(facts.on_carried_feeds, 'task', 'is/are')} played on feeds that came with an imported "
                     "release; this toolkit did not build those feeds.")
    return " ".join(parts)


def licence_text(settings: ReleaseConfig) -> str:
    stated = (f"The annotations (instructions, options, answers, checks and the order of each feed) are released "
              f"under {settings.annotations_license}." if settings.annotations_license else LICENCE_NOT_STATED)
    hub_id = f" Licence id on the Hub: `{settings.license}`" + (
        f" (`{settings.license_name}`)." if settings.license == "other" else ".")
    return f"{stated} The videos and their metadata keep their sources' terms (Source Data below).{hub_id}"


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


def data_path(config: str) -> str:
    return f"data/{config}/{SPLIT}-00000-of-00001.parquet"


def front_matter(settings: ReleaseConfig, configs: list[str], n_tasks: int) -> dict[str, Any]:
    licence: dict[str, Any] = {"license": settings.license}
    if settings.license == "other":  # the Hub asks for a name and a link to the terms
        licence |= {"license_name": settings.license_name, "license_link": settings.license_link or LICENCE_ANCHOR}
    return {
        "pretty_name": settings.pretty_name, **licence, "language": list(settings.language),
        "task_categories": list(settings.task_categories), "size_categories": [size_category(n_tasks)],
        "tags": list(settings.tags),
        "configs": [{"config_name": c, "data_files": [{"split": SPLIT, "path": data_path(c)}],
                     **({"default": True} if c == "all" else {})} for c in configs]}


def _bullets(items: list[str]) -> list[str]:
    return [f"- {item}" for item in items] + [""]


def example_row(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """The first multiple-choice task (else the first task), as `datasets` returns it."""
    return next((t for t in tasks if t["eval_type"] == "label"), tasks[0])


def qc_lines(facts: ReleaseFacts, total: dict[str, Any]) -> list[str]:
    lines = ["Every shipped task passes the task rules of the toolkit that built this release (checked when it "
             "was built).", ""]
    if facts.reviewed:
        lines += [f"{plural(facts.reviewed, 'task')} went through this team's QC review: {facts.blind_reviews} with "
                  f"a blind review by a second annotator recorded in the catalog, {facts.group_decisions} decided "
                  "by the group after an escalation.", ""]
    lines += [f"{plural(n, 'task', 'was/were')} inherited and kept as published, without a second review here ({why})."
              for why, n in facts.inherited.items()] + ([""] if facts.inherited else [])
    lines += shortcut_lines(facts)
    lines += ["The QC funnel of every task the catalog holds (tasks that did not make it into a release "
              "included), each counted once by its latest version, in its current state:", "",
              "| end state | tasks |", "|---|---|"]
    lines += [f"| {label} | {total.get(key, 0)} |" for key, label in END_STATES]
    lines += ["", f"Check: {check_line(total).removeprefix('= ')}.", "", "| stage (tasks now at or past it) | tasks |",
              "|---|---|"]
    lines += [f"| {label} | {total.get(key, 0)} |" for key, label in STAGES]
    lines += ["", "| on the way | tasks |", "|---|---|"]
    lines += [f"| {label} | {total.get(key, 0)} |" for key, label in PATH]
    lines += ["", "Beside the paper's QC rates, from the cells above:", "", "| rate | here | from | the paper |",
              "|---|---|---|---|"]
    lines += [f"| {name} | {percent(total.get(key))} | {part} of {whole} {what} | {PAPER[key]:.1%} |"
              for name, key, part, whole, what in paper_rates(total)] + [""]
    return lines


def shortcut_lines(facts: ReleaseFacts) -> list[str]:
    why_not = "; ".join(f"{n} tasks, {why}" for why, n in facts.not_judged.items())
    if not (facts.judged or facts.unread):
        return ["No shipped task has a shortcut-filter verdict on record: the metadata-only filter did not judge "
                f"this release's tasks ({why_not}).", ""]
    lines = [f"Shortcut filter: {facts.judged} of the {facts.tasks} shipped tasks were judged by "
             f"{inspectors_phrase(facts)}, shown only the {SEEN} ({NOT_SEEN})"
             + (f"; {facts.without_metadata} of the release's {facts.videos} videos have no public metadata, so "
                "they showed as blanks" if facts.without_metadata else "") + "."
             if facts.judged else "Shortcut filter: no shipped task was judged."]
    if facts.unread:
        lines[0] += (f" {plural(facts.unread, 'task', 'has/have')} a verdict no inspector could read (the lexical "
                     "inspector reads multiple-choice tasks only): passed unjudged.")
    if len(facts.configurations) > 1:
        lines[0] += (f" The verdicts were given under {len(facts.configurations)} filter configurations (settings, "
                     "prompts or models differ): " + ", ".join(f"{n} tasks under `{c}`" for c, n in
                                                               facts.configurations.items()) + ".")
    lines += ["", "Per inspector, over the tasks with a verdict:", "",
              "| inspector | model | prompt | answered | of which right | abstained | no readable answer | "
              "could not read the task |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {i.name} | {i.model if i.is_model else 'none (built in)'} | {', '.join(i.views)} | {i.decided} | "
              f"{i.right} | {i.abstained} | {i.unreadable} | {i.not_seen} |" for i in facts.inspectors]
    lines += [""]
    if facts.not_judged:
        lines += [f"Not judged by the filter: {why_not}.", ""]
    return lines


def drift_warning(facts: ReleaseFacts) -> list[str]:
    """The tasks whose feed, as the annotator edited it, left the distractor ratio range (`feeds drift`)."""
    if not facts.drifted:
        return []
    lo, hi = facts.ratio_range
    shown = ", ".join(f"{t} ({'no anchor video left' if r is None else f'{r:.2f}'})" for t, r in facts.drifted)
    return [f"Warning: {plural(len(facts.drifted), 'task', 'is/are')} played on a feed whose distractor ratio left "
            f"[{lo}, {hi}] after its annotator's edits (distractors per anchor video): {shown}."]


def limitations(facts: ReleaseFacts, baseline: bool) -> list[str]:
    """The known limits that hold for this release: a limit of a check only where the check ran."""
    out = [LIMITATIONS["sources"], LIMITATIONS["chance"].format(
        baseline=" and a metadata-only baseline" if baseline else "")]
    if facts.judged:
        out.append(LIMITATIONS["shortcut"])
    if facts.blind_reviews:
        out.append(LIMITATIONS["review"])
    if facts.inherited:
        out.append(LIMITATIONS["inherited"])
    return out + [LIMITATIONS["judgement"]]


def render_card(settings: ReleaseConfig, version: str, repo: str | None, configs: list[str],
                tasks: list[dict[str, Any]], qc: dict[str, Any], parent: str | None, facts: ReleaseFacts,
                health: str | None = None, with_media: bool = False, baseline: bool = False,
                lite: LitePlan | None = None) -> str:
    """`health`: the health table (markdown); `baseline`: whether it has a metadata-only baseline column
    (`health.has_baseline`), which the limitations then mention; `lite`: the Lite config's choice."""
    meta = yaml.safe_dump(front_matter(settings, configs, len(tasks)), sort_keys=False, allow_unicode=True)
    by_sub = Counter((t["tier"], t["subcategory"]) for t in tasks)
    lines = [f"---\n{meta}---", "", f"# {settings.pretty_name} v{version}", "",
             "Tasks for GUI agents on a short-video app whose screen keeps playing while the agent thinks "
             "(LivingScreen). Each task is an instruction over a feed of short videos, graded either by a "
             "multiple-choice answer (`eval_type: label`) or by checks on the app's final state "
             "(`eval_type: platform`).", ""]
    delta = next((c for c in configs if "_to_" in c), None)
    if parent:
        lines += [f"This version follows v{parent}; `CHANGELOG.md` lists what changed."
                  + (f" The config `{delta}` holds only the tasks added since." if delta else ""), ""]
    lines += ["## Dataset Details", "", "### Dataset Description", "",
              f"{plural(facts.tasks, 'task')} (" + ", ".join(f"{t} {n}" for t, n in facts.tiers.items()) + ") over "
              f"{plural(facts.videos, 'video')} from {sources_phrase(facts)}, in {plural(len(configs), 'config')}; "
              f"languages: {', '.join(settings.language)}.", "", "## Licence", "",
              licence_text(settings), "", "### Dataset Sources", "",
              f"- Repository: {settings.homepage or 'not stated (`[release] homepage`)'}",
              "- Paper: https://arxiv.org/abs/2606.04701", "",
              "## Uses", "", "### Direct Use", "", *_bullets(DIRECT_USE),
              "```python", "from datasets import load_dataset", "",
              *([f'tasks = load_dataset("{repo}", "l2_cross_source_understanding",',
                 f'                     revision="v{version}", split="{SPLIT}")'] if repo else
                [f'tasks = load_dataset("./v{version}", "l2_cross_source_understanding", split="{SPLIT}")',
                 "# (built without a repo: this loads the release folder itself; `release build --repo` names the "
                 "Hub repo here)"]),
              "```", "",
              "`livingscreen/` holds `gui_action.json`, `cross_source_understanding.json` and "
              "`close_end_application.json` in the public runner's format; copy them where the runner reads "
              "its tasks and run `python main_threaded.py -t <category>`.", "",
              "### Out-of-Scope Use", "", *_bullets(OUT_OF_SCOPE), "## Dataset Structure", "",
              "| tier | config | sub-category | tasks |", "|---|---|---|---|"]
    lines += [f"| {tier} | `{CONFIGS[tier]}` | {sub} | {n} |" for (tier, sub), n in sorted(by_sub.items())]
    lines += ["", "Every config has one split, `test`; `all` holds every task. Columns: `task_id`, `task_version`, "
              "`tier`, `subcategory`, `config`, `eval_type`, `instruction` (the question, without its options), "
              "`options` (label and text), `answer` (the correct label; label tasks only), `eval_config` (JSON: "
              "the answer, or the checks below), `runner_instruction` (the instruction as the runner shows it), "
              "`feed_id` / `feed_version`, `video_feed` (video ids in the order the app shows them), "
              "`anchor_videos` and `distractor_videos` (the feed as built), `feed_runtime_s`, `distractor_ratio`, "
              "`qc` (shortcut verdict and answers, review outcome, group decision, and `inherited_from`), "
              "`author_id` / `reviewer_id` (pseudonyms) and `content_sha256` (of the runner element).", "",
              "Positions are 0-based: `video_ids: 1` in a check means the second video of `video_feed`. "
              "A platform task's `eval_config` is a list of checks, all of which must hold:", "",
              "| func | passes when |", "|---|---|"]
    lines += [f"| `{func}` | {meaning} |" for func, meaning in FUNCS.items()]
    lines += ["", "The runner compares the app's state with these checks after the episode; its code decides "
              "edge cases (a video liked by mistake, say).", "",
              "`videos.parquet` holds each video's visible metadata (caption, hashtags, author, counts), source, "
              "duration and media sha256; `feeds.parquet` every feed version used. An example row of `all`:", "",
              "```json", json.dumps(example_row(tasks), ensure_ascii=False, indent=2), "```", "",
              *(lite_lines(lite, len(tasks)) if lite else []),
              "## Dataset Creation", "", "### Curation Rationale", "",
              "Video QA benchmarks hand a model the video; GUI benchmarks show a still screen. On a short-video "
              "app the screen moves on its own and the agent chooses what to watch, so these tasks need both: "
              "finding, watching and acting on videos inside a realistic feed.", "",
              "### Source Data", "", "#### Data Collection and Processing", "",
              collection_line(facts), "", "#### Who are the source data producers?", "",
              "The uploaders of the videos on Chinese short-video platforms, as collected by the source data sets:",
              "", "| source | videos | terms | how to obtain the videos |", "|---|---|---|---|"]
    lines += [f"| {s} | {n} | {SOURCE_TERMS.get(s, 'not recorded here').split(': ', 1)[-1]} | "
              f"{OBTAIN.get(s, 'not recorded here')} |" for s, n in facts.sources.items()]
    lines += ["", "A video id is `<source>/<native id>`; the native id names the video in its source. "
              + ("This release includes the normalised video files under `media/`, named by video id."
                 if with_media else "Video files are not included in this release."), "",
              "### Annotations", "", "#### Annotation process", "",
              *qc_lines(facts, qc.get("all", {})),
              *(["Release health:", "", "![Correct answer letters per tier](health.svg)", "", health, ""]
                if health else []),
              "#### Who are the annotators?", "",
              annotators_line(facts), "",
              "#### Personal and Sensitive Information", "",
              *_bullets(sensitive(set(facts.sources), {t["subcategory"] for t in tasks})),
              "## Bias, Risks, and Limitations", "",
              *_bullets(limitations(facts, baseline) + drift_warning(facts)),
              "### Recommendations", "",
              *_bullets([line.format(baselines=" and metadata-only baselines" if baseline else " success rates",
                                     check=f"`curate release verify v{version} --remote --repo {repo}`" if repo
                                     else f"`curate release verify v{version}`")
                         for line in RECOMMENDATIONS]),
              "## Citation", "", "```bibtex", settings.citation.strip() or PAPER_BIBTEX, "```", "",
              "## Glossary", "", *_bullets([f"**{k}**: {v.format(lo=facts.ratio_range[0], hi=facts.ratio_range[1])}"
                                            for k, v in GLOSSARY.items()]),
              "## More Information", "",
              "`CHANGELOG.md` lists what changed against the parent release; `manifest.json` the sha256 of every "
              "file; `croissant.json` the Croissant metadata; `health.json` the release health.", "",
              "## Dataset Card Authors", "",
              f"Written by the LivingScreen curation toolkit {__version__} from its catalog"
              + (f", for the team at {settings.homepage}." if settings.homepage else
                 "; the team that made this release has not stated its homepage (`[release] homepage`)."), "",
              "## Dataset Card Contact", "",
              settings.contact or CONTACT_NOT_STATED, ""]
    return "\n".join(lines)
