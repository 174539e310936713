"""A catalog with tasks that finished QC, as the review gates leave them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from curation.core.catalog import Catalog
from curation.core.config import ReleaseConfig, load_config
from tests.qc.helpers import finish_qc, plant_task, planted_catalog

OPTIONS = {"A": "一种", "B": "两种", "C": "三种", "D": "无法确定"}


def settings(root: Path) -> ReleaseConfig:
    """The release settings with what a team states before publishing (nothing is stated by default)."""
    return replace(load_config().release, dir=str(root), annotations_license="CC-BY-4.0",
                   contact="https://github.com/livingscreen-team/tasks/issues")


def reviewed_catalog(cat: Catalog) -> list[str]:
    """Four finished tasks (one per tier, two in L2), one deleted, one needing a fix; returns the feeds."""
    feeds = planted_catalog(cat, 6, seed=81)
    plant_task(cat, "gui_like_1", feeds[0], tier="L1", subcategory="gui_like", eval_type="platform",
               instruction="给第二个视频点赞", options=None,
               eval_config=[{"func": "eval_like", "args": {"video_ids": 1}}], author="alice")
    plant_task(cat, "feature_analysis_1", feeds[1], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="这些视频里一共出现了几种动物？", options=OPTIONS, eval_config=[{"answer": "B"}],
               author="bob")
    plant_task(cat, "feature_analysis_2", feeds[2], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里的猫是什么颜色？", options={"A": "白色", "B": "黑色", "C": "无法确定"},
               eval_config=[{"answer": "A"}], author="alice")
    plant_task(cat, "moderation_1", feeds[3], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="举报不实视频", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "不实信息"}}],
               author="bob")
    plant_task(cat, "event_association_1", feeds[4], tier="L2", subcategory="event_association", eval_type="label",
               instruction="两段视频是同一事件吗？", options={"A": "是", "B": "否"}, eval_config=[{"answer": "A"}])
    plant_task(cat, "contextual_association_1", feeds[5], tier="L2", subcategory="contextual_association",
               eval_type="label", instruction="?", options={"A": "x"}, eval_config=[{"answer": "A"}],
               status="needs_fix")
    for task in ("gui_like_1", "feature_analysis_1", "moderation_1"):
        finish_qc(cat, task)
    finish_qc(cat, "feature_analysis_2", end="kept")
    finish_qc(cat, "event_association_1", end="deleted")
    return feeds


def load_release(folder, config: str):
    """`datasets.load_dataset` of a built release folder with a cache of the test's own: the shared cache keys a
    local folder by its name and config, so a release rebuilt under the same name would be read stale from it."""
    from datasets import load_dataset

    return load_dataset(str(folder), config, split="test", cache_dir=str(folder.parent / "hf-datasets-cache"))
