"""Issue 41: for any catalog history, what a release says about itself is what the catalog holds.

Hypothesis writes histories through the stages themselves: tasks authored here (label, L1 and L3
platform), the shortcut filter run with the lexical inspector, a language model (its replies cached
in the catalog, so no server is asked) or both, under one configuration or two; reviews and group
decisions (keep, delete, revise and round again); releases imported and accepted as inherited, one of
them written over the catalog's own feeds; videos stripped of parts of their metadata; a synthetic
video. Then it builds the release and checks the card and every Croissant RAI field against SQL over
the catalog and what the history did, and that mlcroissant validates the Croissant file."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import mlcroissant as mlc
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog, now
from curation.core.config import InspectorConfig, load_config
from curation.core.errors import PrerequisiteError
from curation.core.stage import StageRun
from curation.corpus.feeds import load_feed
from curation.qc.accept import accept_imported
from curation.qc.funnel import compute_funnel
from curation.qc.shortcut.filter import UnusableInspectorError, filter_shortcuts, load_views
from curation.qc.validate import validate_catalog
from curation.release.build import build_release
from curation.release.croissant import CROISSANT
from curation.release.livingscreen import import_livingscreen
from curation.tasks.lifecycle import move
from curation.tasks.runner_format import RUNNER_FILES
from tests.qc.helpers import plant_task, planted_catalog
from tests.release.claims import MODEL, check_release
from tests.release.helpers import settings as release_settings
from tests.release.test_livingscreen import write_release

CONFIG = load_config()
FEEDS = 8
LLM = InspectorConfig(name=MODEL, kind="openai", base_url="http://127.0.0.1:9/v1", model=MODEL)
LEXICAL = InspectorConfig()
HOMEPAGE = "https://example.org/our-team/tasks"
INHERITED_PUBLIC = "the public tasks, as published"
INHERITED_OWN = "our tasks written over our own feeds"


@pytest.fixture(scope="module")
def base(clustered_catalog_file, tmp_path_factory) -> Path:
    """Eight feeds built here, two runner releases imported and validated (not yet accepted): the public
    tasks on feeds of their own (0.9.0), and two tasks written over feeds 6 and 7 of this catalog (0.8.0)."""
    folder = tmp_path_factory.mktemp("facts")
    path = folder / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    with Catalog(path) as cat:
        feeds = planted_catalog(cat, FEEDS, seed=57)
        import_livingscreen(cat, write_release(folder / "public"), "0.9.0")
        own = {name: [] for name in RUNNER_FILES.values()}
        own[RUNNER_FILES["L2"]] = [
            {"task_id": f"counting_{80 + n}", "instruction": "这些视频里有几个讲同一件事？\nA:1 B:2 C:3",
             "video_feed": list(load_feed(cat, feeds[n]).video_feed), "eval_type": "label",
             "eval_config": [{"answer": "B"}]} for n in (6, 7)]
        import_livingscreen(cat, write_release(folder / "own", own), "0.8.0")
        validate_catalog(cat, CONFIG.feeds, CONFIG.sources)
    return path


KINDS = {
    "label": dict(tier="L2", subcategory="feature_analysis", eval_type="label", instruction="视频里的猫是什么颜色？",
                  options={"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫"}, eval_config=[{"answer": "B"}]),
    # the option is a video's title: the lexical inspector solves it
    "giveaway": dict(tier="L2", subcategory="feature_analysis", eval_type="label", instruction="哪个视频是日常视频？",
                     options={"A": "普通的日常视频1", "B": "旅行"}, eval_config=[{"answer": "A"}]),
    "L1": dict(tier="L1", subcategory="gui_like", eval_type="platform", instruction="给第二个视频点赞", options=None,
               eval_config=[{"func": "eval_like", "args": {"video_ids": 1}}]),
    "L3": dict(tier="L3", subcategory="moderation", eval_type="platform", instruction="举报不实视频", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "不实信息"}}]),
}
# what the language model replies, by task kind
REPLIES = {
    "right": {"label": "B", "giveaway": "A", "L1": '{"like": [2]}', "L3": '{"report": [{"video": 3, "category": '
              '"不实信息"}]}'},
    "wrong": {"label": "C", "giveaway": "B", "L1": '{"like": [1]}', "L3": '{"like": [1]}'},
    "abstain": dict.fromkeys(KINDS, "无法回答"),
    "garbage": dict.fromkeys(KINDS, "嗯"),
}


@dataclass
class TaskPlan:
    kind: str
    author: str
    feed: int
    end: str        # reviewed_ok, kept, deleted, revised (then round again as v2 and reviewed ok)
    blind: bool     # a blind review recorded (else moved on by hand)
    reviewer: str
    reply: str      # the language model's reply
    batch: int      # judged by the first configuration, or by the second


task_plans = st.builds(TaskPlan, st.sampled_from(sorted(KINDS)), st.sampled_from(["alice", "bob", "carol"]),
                       st.integers(0, 5), st.sampled_from(["reviewed_ok", "kept", "deleted", "revised"]),
                       st.booleans(), st.sampled_from(["dan", "erin"]), st.sampled_from(sorted(REPLIES)),
                       st.integers(0, 1))


@dataclass
class History:
    tasks: list[TaskPlan]
    inspectors: tuple[str, ...]  # () = no filter ran: tasks moved on by hand
    platform_tiers: list[str]
    second_config: bool           # batch 1 judged under another configuration, adopted
    accept_public: bool
    accept_own: bool
    stripped: list[tuple[int, int, frozenset[str]]]  # (feed, position, parts of its metadata removed)
    synthetic: bool
    homepage: str
    validate: bool                # mlcroissant reads the Croissant file (a second each: one history in four)


histories = st.builds(
    History, st.lists(task_plans, max_size=5),
    st.sampled_from([(), ("lexical",), (MODEL,), ("lexical", MODEL), (MODEL, "lexical")]),
    st.sampled_from([[], ["L3"], ["L1", "L3"]]), st.booleans(), st.booleans(), st.booleans(),
    st.lists(st.tuples(st.integers(0, FEEDS - 1), st.integers(0, 3),
                       st.frozensets(st.sampled_from(["caption", "author", "counts"]), min_size=1)), max_size=6),
    st.booleans(), st.sampled_from(["", HOMEPAGE]), st.integers(0, 3).map(lambda n: n == 0))


def _filter(cat: Catalog, history: History, batch: int, plans: dict[str, TaskPlan]) -> None:
    """The shortcut filter over what is in scope; the language model's replies are cached beforehand."""
    if not history.inspectors:
        return
    specs = [LEXICAL if name == "lexical" else LLM for name in history.inspectors]
    config = replace(CONFIG.qc.shortcut, inspectors=specs, platform_tiers=history.platform_tiers,
                     rule="mmstar" if batch and history.second_config else "paper")
    for view in load_views(cat, config.language, config.platform_tiers, config.template):
        assert view.prompt is not None
        plan = plans.get(view.task_id)  # an imported task not accepted is judged too: the model abstains
        reply = REPLIES[plan.reply][plan.kind] if plan else REPLIES["abstain"]["label"]
        cat.con.execute("INSERT OR IGNORE INTO llm_calls VALUES (?, ?, ?, 0, ?, ?, 'cached', ?)",
                        [LLM.base_url, LLM.model, view.prompt.sha256, LLM.temperature, reply, now()])
    # too many unreadable replies: the run writes nothing and the tasks wait
    with contextlib.suppress(UnusableInspectorError):
        filter_shortcuts(cat, config, adopt=bool(batch and history.second_config))


def _review(run: StageRun, task_id: str, version: int, plan: TaskPlan) -> int | None:
    """Take a task version that passed the filter through review; the version to review next, if revised."""
    cat = run.db
    outcome = "reviewed_ok" if plan.end == "reviewed_ok" else "escalated"
    if plan.blind:
        cat.insert("reviews", {"task_id": task_id, "task_version": version, "reviewer": plan.reviewer,
                               "outcome": outcome, "run_id": run.run_id, "created_at": now()})
    assert move(run, task_id, version, outcome, who=plan.reviewer)
    if outcome == "reviewed_ok":
        return None
    decision = {"kept": "keep", "deleted": "delete", "revised": "revise"}[plan.end]
    cat.insert("decisions", {"task_id": task_id, "task_version": version, "decision": decision,
                             "decided_by": "group", "revised_version": version + 1 if decision == "revise" else None,
                             "run_id": run.run_id, "created_at": now()})
    assert move(run, task_id, version, plan.end, who="group")
    return version + 1 if decision == "revise" else None


def _state(cat: Catalog, task_id: str, version: int) -> str:
    return str(cat.scalar("SELECT to_state FROM task_transitions WHERE task_id = ? AND version = ? "
                          "ORDER BY seq DESC LIMIT 1", [task_id, version]))


def _live(cat: Catalog, history: History, folder: Path) -> None:
    """Play the history on the catalog."""
    run = StageRun("history", "history-1", cat)
    feeds = [f"feed-57-{n:04d}" for n in range(FEEDS)]
    for feed, position, parts in history.stripped:
        video = load_feed(cat, feeds[feed]).video_feed[position]
        columns = {"caption": ["title", "description"], "author": ["author_name", "author_bio"],
                   "counts": ["like_count", "collect_count", "comment_count", "share_count"]}
        cat.con.execute("UPDATE videos SET " + ", ".join(f"{c} = NULL" for p in sorted(parts) for c in columns[p])
                        + " WHERE video_id = ?", [video])
    if history.synthetic:
        cat.con.execute("UPDATE videos SET source = 'Synthetic' WHERE video_id = ?",
                        [load_feed(cat, feeds[0]).video_feed[0]])
    for reason, version, wanted in ((INHERITED_PUBLIC, "0.9.0", history.accept_public),
                                    (INHERITED_OWN, "0.8.0", history.accept_own)):
        if wanted:
            accept_imported(cat, version, reason, sources=CONFIG.sources, feeds=CONFIG.feeds)
    plans = {f"{KINDS[p.kind]['subcategory']}_{n + 101}": p for n, p in enumerate(history.tasks)}
    pending: dict[int, list[tuple[str, int]]] = {0: [], 1: []}
    for batch in (0, 1):
        for task_id, plan in plans.items():
            if plan.batch == batch:
                plant_task(cat, task_id, feeds[plan.feed], author=plan.author, **KINDS[plan.kind])
                pending[batch].append((task_id, 1))
        _filter(cat, history, batch, plans)
        for task_id, version in pending[batch]:
            if _state(cat, task_id, version) == "valid" and not history.inspectors:
                assert move(run, task_id, version, "shortcut_passed", reason="moved on by hand", who="lead")
            if _state(cat, task_id, version) != "shortcut_passed":
                continue
            again = _review(run, task_id, version, plans[task_id])
            if again is not None:  # the revision goes round again (in the second batch, or it waits)
                plan = plans[task_id]
                plant_task(cat, task_id, feeds[plan.feed], author=plan.author, version=again, **KINDS[plan.kind])
                if batch == 0:
                    pending[1].append((task_id, again))
                    plans[task_id] = replace(plan, end="reviewed_ok")


@settings(max_examples=80, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(histories)
def test_what_a_release_says_is_what_the_catalog_holds(base, history):
    folder = Path(tempfile.mkdtemp(prefix="facts-"))
    try:
        shutil.copy(base, folder / "catalog.duckdb")
        with Catalog(folder / "catalog.duckdb") as cat:
            _live(cat, history, folder)
            config = replace(release_settings(folder), homepage=history.homepage, health_embedding="")
            try:
                built = build_release(cat, "1.0.0", config, exclude_invalid=True, sources=CONFIG.sources,
                                      feeds=CONFIG.feeds)
            except PrerequisiteError:  # nothing finished QC: the build refuses, and the catalog agrees
                assert not cat.scalar("SELECT count(*) FROM task_states WHERE state IN ('kept', 'reviewed_ok')")
                return
            release = built.folder
            assert release is not None
            want = check_release(cat, release, history.inspectors, history.homepage, ("v0.9.0", "v0.8.0"))
            assert compute_funnel(cat)["all"]["judged_by_filter"] >= want["judged"]
            if history.validate:
                dataset = mlc.Dataset(jsonld=release / CROISSANT)
                assert not dataset.metadata.ctx.issues.errors
    finally:
        shutil.rmtree(folder, ignore_errors=True)
