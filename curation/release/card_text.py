"""The dataset card's fixed prose: what each check of a platform task means, where each source's
videos come from, the uses the benchmark is and is not for, its known limits, and the paper's
citation (the default when `[release] citation` is empty). Facts come from the LivingScreen paper
(arXiv 2606.04701) and the sources' own pages; the wording is the toolkit's."""

from __future__ import annotations

from curation.core.sources import SOURCES
from curation.env.vocabulary import VOCABULARY

PAPER_BIBTEX = """@misc{livingscreen2026,
  title         = {Benchmarking Living-Screen-Native {GUI} Agents on Short-Video Platforms},
  author        = {{The LivingScreen authors}},
  year          = {2026},
  eprint        = {2606.04701},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2606.04701}
}"""

# one line per check a platform task's `eval_config` may hold, from the check vocabulary
FUNCS = {func: spec.card for func, spec in VOCABULARY.items()}

OBTAIN = {name: spec.obtain for name, spec in SOURCES.items()}  # curation/resources/sources.toml

DIRECT_USE = [
    "Evaluating GUI agents (multimodal models with a tool-calling loop) on a short-video app whose screen keeps "
    "playing: cross-video understanding (L2, multiple choice) and actions graded on the app's final state "
    "(L1, L3), in the LivingScreen runner's environment.",
    "Comparing agents on success rate together with their observation cost (steps, watch ratio), per tier and "
    "sub-category, always naming the release tag (`vX.Y.Z`) that was evaluated.",
]

OUT_OF_SCOPE = [
    "Training or fine-tuning on these tasks and then reporting results on them: the tasks are a test set.",
    "Using the moderation or fact-checking answers as ground truth for real content-moderation or fact-checking "
    "decisions: they were written for a benchmark feed, against the report categories of the benchmark's app.",
    "Drawing conclusions about the people who posted the videos, or profiling them from the metadata.",
    "Measuring video question answering without the GUI: many tasks depend on the feed's order and the app's "
    "controls, and the answers assume the runner's environment.",
]

LIMITATIONS = {
    "sources": "The videos and their text are Chinese short-video content from a few public research data sets; "
               "topics, language and platform conventions are those of the sources and the years they were "
               "collected, not of short-video platforms in general.",
    "chance": "Multiple-choice tasks can be passed by chance; the release health table gives the chance success "
              "rate per tier{baseline}, against which agents should be compared.",
    "shortcut": "The shortcut filter shows an inspector only the feed's text (Annotation process); passing it means "
                "that inspector could not solve the task from that text, not that the video is needed. Tasks it "
                "did not judge are counted there.",
    "review": "A task reviewed here had one reviewer besides its author.",
    "inherited": "Inherited tasks kept their original QC and were checked here only by the task rules.",
    "judgement": "Preference-simulation and moderation tasks involve judgement; their answers follow the authors' "
                 "reading of the instruction.",
}

def sensitive(sources: set[str], subcategories: set[str]) -> list[str]:
    """What a viewer of these feeds should be warned of, for the sources and sub-categories shipped."""
    out = [SOURCES[s].warning for s in sorted(sources) if s in SOURCES and SOURCES[s].warning]
    if subcategories & {"moderation", "fact_check"}:
        out.append("Moderation and fact-checking tasks place videos that break a content policy, or spread "
                   "false claims, in the feed on purpose, for the agent to find and report.")
    return out + [
        "`videos.parquet` carries each video's public metadata as the sources published it, including the "
        "uploader's display name and bio: personal data of real platform users, kept because the agent sees it on "
        "screen. Do not use it to identify or contact them.",
        "Task authors and reviewers appear only as stable pseudonyms (`annotator-NNN`); no name or e-mail address "
        "is in the release."]


RECOMMENDATIONS = [
    "Check a download before use: {check} (or the sha256 "
    "values in `manifest.json`).",
    "Report success rates beside the chance{baselines} of the release health table, per tier, with the release tag.",
    "Watch for content warnings above before showing feeds to people (annotators, study participants).",
]

GLOSSARY = {
    "feed": "the ordered list of videos the app shows for a task (`video_feed`)",
    "anchor / distractor videos": "the videos of the cluster a feed was built around, and the unrelated videos "
                                  "mixed in ({lo:.0%} to {hi:.0%} as many) to make the feed realistic",
    "tier": "L1 GUI actions, L2 cross-source understanding, L3 closed-loop applications",
    "SR": "success rate: the answer matches (L2), or the app's final state passes every check (L1, L3)",
    "NS / WR": "number of tool calls per episode / share of the feed's runtime the agent watched",
    "shortcut filter": "models (inspectors) shown only the feed's text; a task they can solve is discarded",
}
