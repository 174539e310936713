"""The dataset card says what ran: the shortcut filter really run (the lexical inspector, no
network) over planted tasks, reviews as recorded; the Hub's card parser reads it; every section
of the Hub's dataset card template is there; the example row is a row of the data."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import huggingface_hub
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard

from curation.core.catalog import now
from curation.core.config import load_config
from curation.qc.shortcut.filter import filter_shortcuts
from curation.release.build import build_release
from curation.release.card import data_path
from curation.release.card_text import FUNCS, PAPER_BIBTEX
from tests.qc.helpers import plant_task, planted_catalog
from tests.release.helpers import reviewed_catalog, settings

TEMPLATE = Path(huggingface_hub.__file__).parent / "templates" / "datasetcard_template.md"


def template_sections() -> list[str]:
    """The headings of the Hub's dataset card template below its title, `[optional]` dropped."""
    text = TEMPLATE.read_text(encoding="utf-8").split("---", 2)[-1]  # past the YAML front matter
    return [re.sub(r"\s*\[optional\]$", "", m.group(2)) for m in re.finditer(r"^(#{2,}) (.+)$", text, re.M)]


def missing_sections(card: str) -> list[str]:
    have = {m.group(1).strip() for m in re.finditer(r"^#{2,} (.+)$", card, re.M)}
    return [s for s in template_sections() if s not in have]


def reviewed_ok(cat, task_id: str, reviewer: str | None = None) -> None:
    """The review gate's end, as recorded: shortcut_passed -> reviewed_ok (and the review, when given)."""
    seq = cat.scalar("SELECT max(seq) FROM task_transitions WHERE task_id = ? AND version = 1", [task_id])
    cat.insert("task_transitions", {"task_id": task_id, "version": 1, "seq": seq + 1, "from_state": "shortcut_passed",
                                    "to_state": "reviewed_ok", "reason": "test", "who": "test", "run_id": "test",
                                    "moved_at": now()})
    if reviewer:
        cat.insert("reviews", {"task_id": task_id, "task_version": 1, "reviewer": reviewer, "outcome": "ok",
                               "run_id": "test", "created_at": now()})


def test_the_card_reports_the_qc_that_ran_and_has_every_section_of_the_hub_template(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = planted_catalog(cat, 4, seed=83)
    plant_task(cat, "gui_like_1", feeds[0], tier="L1", subcategory="gui_like", eval_type="platform",
               instruction="给第二个视频点赞", options=None,
               eval_config=[{"func": "eval_like", "args": {"video_ids": 1}}])
    plant_task(cat, "feature_analysis_1", feeds[1], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="视频里一共有几只鸟？", options={"A": "三只", "B": "四只", "C": "五只"},
               eval_config=[{"answer": "B"}], author="bob")
    plant_task(cat, "feature_analysis_2", feeds[2], tier="L2", subcategory="feature_analysis", eval_type="label",
               instruction="哪个视频是日常视频？", options={"A": "普通的日常视频1", "B": "旅行"},
               eval_config=[{"answer": "A"}])  # the titles give it away: the filter discards it
    plant_task(cat, "moderation_1", feeds[3], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="举报不实视频", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "不实信息"}}])
    counts = filter_shortcuts(cat, load_config().qc.shortcut)
    assert (counts["passed"], counts["discarded"], counts["not_filtered"]) == (2, 1, 1)
    reviewed_ok(cat, "gui_like_1")
    reviewed_ok(cat, "feature_analysis_1", reviewer="carol")
    reviewed_ok(cat, "moderation_1")
    config = replace(settings(tmp_path), annotations_license="CC-BY-SA-4.0")
    folder = build_release(cat, "1.0.0", config, repo="org/ls").folder
    text = (folder / "README.md").read_text(encoding="utf-8")

    card = DatasetCard(text)  # the Hub's own parser: YAML front matter and the card's data
    assert card.data.license == "other" and card.data.license_name == "livingscreen-tasks"
    assert card.data.license_link == "README.md#licence" and "## Licence" in text
    assert [c["config_name"] for c in card.data.configs] == ["all", "l1_gui_action",
                                                             "l2_cross_source_understanding",
                                                             "l3_close_end_application"]
    assert missing_sections(text) == []
    assert len(template_sections()) > 20  # the template was read, not an empty list compared

    # the shortcut filter as it ran: lexical read the multiple-choice task (and abstained), could not read
    # the L3 platform task, and never saw the L1 task (outside qc.shortcut.platform_tiers)
    # only the multiple-choice task was judged: no inspector could read the platform task, and no model ran
    assert ("Shortcut filter: 1 of the 3 shipped tasks were judged by the built-in lexical inspector (lexical, no "
            "model") in text and "shown only the captions, hashtags, author names and author bios" in text
    assert "1 task has a verdict no inspector could read" in text
    assert "language model" not in text
    assert "| lexical | none (built in) | paper prompt (zh) | 0 | 0 | 1 | 0 | 1 |" in text
    assert ("Not judged by the filter: 1 tasks, platform tasks of a tier the filter does not judge "
            "(qc.shortcut.platform_tiers).") in text
    assert ("3 tasks went through this team's QC review: 1 with a blind review by a second annotator recorded "
            "in the catalog, 0 decided by the group") in text
    assert "inherited" not in text.split("#### Annotation process")[1].split("| end state |")[0]

    assert "annotations (instructions, options, answers, checks and the order of each feed) are released under " \
           "CC-BY-SA-4.0" in text
    assert PAPER_BIBTEX in text and "2606.04701" in text
    assert "Positions are 0-based" in text and all(f"| `{func}` |" in text for func in FUNCS)
    example = json.loads(text.split("An example row of `all`:\n\n```json\n")[1].split("\n```")[0])
    rows = pq.read_table(folder / data_path("all")).to_pylist()
    assert example == next(r for r in rows if r["eval_type"] == "label")
    assert "Video files are not included in this release." in text
    for heading in ("### Out-of-Scope Use", "#### Personal and Sensitive Information",
                    "## Bias, Risks, and Limitations"):
        assert text.split(heading)[1].split("\n#")[0].count("\n- ") >= 3, heading
    # warnings for what ships: FakeSV videos and a moderation task, no synthetic video
    assert "misinformation" in text and "break a content policy" in text and "Synthetic videos" not in text


def test_a_card_claims_no_filter_that_did_not_run_and_no_licence_name_for_a_named_licence(clustered_catalog,
                                                                                      tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)  # tasks moved on by hand: no verdict, no review on record
    config = replace(settings(tmp_path), license="cc-by-4.0", citation="@misc{x, title = {X}}")
    text = (build_release(cat, "1.0.0", config).folder / "README.md").read_text(encoding="utf-8")
    card = DatasetCard(text)
    assert card.data.license == "cc-by-4.0" and not {"license_name", "license_link"} & set(card.data.to_dict())
    assert ("No shipped task has a shortcut-filter verdict on record: the metadata-only filter did not judge this "
            "release's tasks (4 tasks, no verdict recorded in the catalog).") in text
    assert "| lexical |" not in text
    assert "4 tasks went through this team's QC review: 0 with a blind review" in text
    assert "@misc{x, title = {X}}" in text and PAPER_BIBTEX not in text
    assert missing_sections(text) == []


def test_a_feed_edited_out_of_the_ratio_range_is_a_warning_at_validate_and_in_the_card(clustered_catalog, tmp_path):
    """An annotator deletes anchor videos until the feed the task plays has 0.40-style drift (`feeds drift`):
    `qc validate` warns (feed-ratio-drifted) and the card says which task and what ratio."""
    from curation.qc.validate import validate_catalog

    cat = clustered_catalog
    reviewed_catalog(cat)
    row = cat.rows("SELECT * FROM feeds WHERE feed_id = (SELECT feed_id FROM tasks WHERE task_id = "
                   "'feature_analysis_1') AND version = 1")[0]
    anchors, others = list(row["keyword_videos"]), list(row["other_videos"])
    kept = [v for v in row["video_feed"] if v in others] + anchors[:max(1, len(others) // 3)]
    played = (len(kept) - min(len(anchors), max(1, len(others) // 3))) / min(len(anchors), max(1, len(others) // 3))
    assert not 0.5 <= played <= 2.0  # the edit really leaves the range
    cat.insert("feeds", {**{k: row[k] for k in ("feed_id", "anchor_cluster", "cluster_run", "keyword_videos",
                                                  "other_videos", "seed", "run_id", "total_runtime_s")},
                         "version": 2, "video_feed": kept, "ratio": row["ratio"], "created_at": now(),
                         "edit": json.dumps({"by": "bob", "delete": len(row["video_feed"]) - len(kept)})})
    cat.con.execute("UPDATE tasks SET feed_version = 2 WHERE task_id = 'feature_analysis_1'")
    found = [d for d in validate_catalog(cat, load_config().feeds).defects if d.code == "feed-ratio-drifted"]
    assert [(d.task_id, d.severity) for d in found] == [("feature_analysis_1", "warning")]
    assert f"distractor ratio {played:.2f} outside [0.5, 2.0]" in found[0].message
    text = (build_release(cat, "1.0.0", settings(tmp_path), repo="org/ls").folder / "README.md").read_text("utf-8")
    assert (f"Warning: 1 task is played on a feed whose distractor ratio left [0.5, 2.0] after its annotator's "
            f"edits (distractors per anchor video): feature_analysis_1 ({played:.2f}).") in text
