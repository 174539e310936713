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
import json
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pyarrow.parquet as pq
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
from curation.release.card import SOURCE_TERMS, data_path
from curation.release.croissant import CROISSANT
from curation.release.livingscreen import import_livingscreen
from curation.tasks.lifecycle import move
from curation.tasks.runner_format import RUNNER_FILES
from tests.qc.helpers import plant_task, planted_catalog
from tests.release.helpers import settings as release_settings
from tests.release.test_livingscreen import write_release

CONFIG = load_config()
FEEDS = 8
LLM = InspectorConfig(name="qwen", kind="openai", base_url="http://127.0.0.1:9/v1", model="qwen-test-0.5b")
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
    st.sampled_from([(), ("lexical",), ("qwen",), ("lexical", "qwen"), ("qwen", "lexical")]),
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


def _oracle(cat: Catalog, history: History, shipped: list[dict[str, Any]], video_ids: list[str]) -> dict[str, Any]:
    """What the release must say, from SQL over the catalog and from what the history did."""
    keys = [[t["task_id"], t["task_version"]] for t in shipped]
    ids = [t["task_id"] for t in shipped]

    def count(sql: str, *params: Any) -> int:
        return int(cat.scalar(sql, list(params)) or 0)

    shipped_sql = "SELECT * FROM (SELECT unnest(?::VARCHAR[]) AS task_id, unnest(?::INTEGER[]) AS version)"
    with_keys = [[k[0] for k in keys], [k[1] for k in keys]]
    inherited = dict(cat.con.execute(
        f"SELECT x.reason, count(*) FROM task_transitions x JOIN ({shipped_sql}) s USING (task_id, version) "
        "WHERE x.to_state = 'kept' AND x.from_state = 'valid' GROUP BY 1", with_keys).fetchall())
    inherited_ids = {r[0] for r in cat.con.execute(
        f"SELECT x.task_id FROM task_transitions x JOIN ({shipped_sql}) s USING (task_id, version) "
        "WHERE x.to_state = 'kept' AND x.from_state = 'valid'", with_keys).fetchall()}
    verdicts = {(r[0], r[1]) for r in cat.con.execute(
        f"SELECT v.task_id, v.task_version FROM shortcut_verdicts v JOIN ({shipped_sql}) s "
        "ON s.task_id = v.task_id AND s.version = v.task_version", with_keys).fetchall()}
    kind = {t["task_id"]: t["eval_type"] for t in shipped}
    only_lexical = history.inspectors == ("lexical",)
    unread = sum(1 for t, _ in verdicts if only_lexical and kind[t] == "platform")
    configs = count(f"""SELECT count(DISTINCT coalesce(o.config_sha256, v.config_sha256)) FROM ({shipped_sql}) s
        JOIN shortcut_verdicts v ON v.task_id = s.task_id AND v.task_version = s.version
        LEFT JOIN shortcut_verdicts_of_record o ON o.task_id = s.task_id AND o.task_version = s.version""",
                    *with_keys)
    empty = "coalesce(trim({0}), '') = ''"
    lacks = {"caption": f"{empty.format('title')} AND {empty.format('description')}",
             "hashtags": "(hashtags IS NULL OR len(list_filter(hashtags, lambda h: coalesce(h, '') <> '')) = 0)",
             "author": f"{empty.format('author_name')} AND {empty.format('author_bio')}",
             "counts": "like_count IS NULL AND collect_count IS NULL AND comment_count IS NULL AND share_count IS NULL"}
    videos = "FROM videos WHERE list_contains(?, video_id)"
    out = {
        "tasks": len(shipped), "inherited": inherited, "here": len(shipped) - sum(inherited.values()),
        "authors": count("SELECT count(DISTINCT author) FROM tasks t JOIN (" + shipped_sql + ") s USING (task_id, "
                         "version) WHERE NOT list_contains(?, t.task_id) AND author IS NOT NULL", *with_keys,
                         sorted(inherited_ids)),
        "reviewers": count(f"SELECT count(DISTINCT reviewer) FROM reviews r JOIN ({shipped_sql}) s "
                           "ON s.task_id = r.task_id AND s.version = r.task_version", *with_keys),
        "blind_reviews": count(f"SELECT count(*) FROM reviews r JOIN ({shipped_sql}) s "
                               "ON s.task_id = r.task_id AND s.version = r.task_version", *with_keys),
        "reviewed": count(f"SELECT count(DISTINCT x.task_id) FROM task_transitions x JOIN ({shipped_sql}) s "
                          "USING (task_id, version) WHERE x.to_state IN ('reviewed_ok', 'escalated')", *with_keys),
        "group_decisions": count(f"SELECT count(DISTINCT s.task_id) FROM decisions d JOIN ({shipped_sql}) s "
                                 "ON s.task_id = d.task_id AND d.task_version <= s.version", *with_keys),
        "judged": len(verdicts) - unread, "unread": unread, "configurations": configs,
        "videos": len(video_ids),
        "sources": dict(cat.con.execute(f"SELECT source, count(*) {videos} GROUP BY 1", [video_ids]).fetchall()),
        "synthetic": count(f"SELECT count(*) {videos} AND source = 'Synthetic'", video_ids),
        "without_metadata": count(f"SELECT count(*) {videos} AND (metadata_missing OR ("
                                  + " AND ".join(f"({c})" for c in lacks.values()) + "))", video_ids),
        "lacking": {p: count(f"SELECT count(*) {videos} AND {c}", video_ids) for p, c in lacks.items()},
        "on_built_feeds": sum(1 for t in shipped if t["feed_id"].startswith("feed-")),
        "authored_here": any(not t.startswith("counting_") and t not in inherited_ids for t in ids),
        "catalog": {
            "tasks": count("SELECT count(DISTINCT task_id) FROM tasks"),
            "went_through_review": count("SELECT count(DISTINCT task_id) FROM task_transitions WHERE to_state IN "
                                         "('reviewed_ok', 'escalated')"),
            "revised": count("SELECT count(DISTINCT task_id) FROM task_transitions WHERE to_state = 'revised'"),
            "deleted": count("SELECT count(*) FROM task_states s JOIN latest_tasks t ON t.task_id = s.task_id "
                             "AND t.version = s.version WHERE s.state = 'deleted'")}}
    out["on_carried_feeds"] = out["tasks"] - out["on_built_feeds"]
    saw = {t for t, _ in verdicts}
    out["model_read"] = len(saw) if "qwen" in history.inspectors else 0
    out["lexical_read"] = sum(1 for t in saw if kind[t] == "label") if "lexical" in history.inspectors else 0
    out["model_saw"], out["lexical_saw"] = bool(out["model_read"]), bool(out["lexical_read"])
    out["tiers"] = dict(Counter(t["tier"] for t in shipped))
    out["kinds"] = dict(Counter(t["eval_type"] for t in shipped))
    return out


def numbers(text: str, known: list[str]) -> set[int]:
    """The whole numbers a text states, leaving out the fact strings that carry digits of their own (source
    terms, release names, model names) and percentages."""
    for phrase in sorted(known, key=len, reverse=True):
        text = text.replace(phrase, " ")
    text = re.sub(r"\d+%", " ", text)
    return {int(n) for n in re.findall(r"(?<![\w.-])\d+(?![\w.-]*\w)", text)}


def _check_card(card: str, want: dict[str, Any], homepage: str) -> None:
    assert f"{want['tasks']} task{'s' if want['tasks'] != 1 else ''} (" in card
    n_sources = len(want["sources"])
    assert f"from {n_sources} source{'s' if n_sources != 1 else ''} (" in card
    if want["judged"]:
        assert f"Shortcut filter: {want['judged']} of the {want['tasks']} shipped tasks were judged by" in card
    elif want["unread"]:
        assert "Shortcut filter: no shipped task was judged." in card
    else:
        assert "No shipped task has a shortcut-filter verdict on record" in card
    assert ("a verdict no inspector could read" in card) == bool(want["unread"])
    assert (f"under {want['configurations']} filter configurations" in card) == (want["configurations"] > 1)
    assert ("filter configurations" in card) == (want["configurations"] > 1)
    assert ("a language model (qwen-test-0.5b)" in card) == want["model_saw"]
    assert ("built-in lexical inspector" in card) == want["lexical_saw"]
    if want["reviewed"]:
        assert (f"went through this team's QC review: {want['blind_reviews']} with a blind review by a second "
                f"annotator recorded in the catalog, {want['group_decisions']} decided by the group") in card
    else:
        assert "went through this team's QC review" not in card
    for reason, n in want["inherited"].items():
        assert f"{n} task{'s were' if n != 1 else ' was'} inherited and kept as published" in card and reason in card
    if want["here"] and (want["authors"] or want["reviewers"]):
        assert f"{want['authors']} task author" in card and f" and {want['reviewers']} reviewer" in card
    elif not want["here"]:
        assert "Nobody here: every task was inherited" in card
    built, carried = want["on_built_feeds"], want["on_carried_feeds"]
    assert (f"{built} task{'s are' if built != 1 else ' is'} played on feeds this toolkit built" in card) == bool(built)
    assert (f"{carried} task{'s are' if carried != 1 else ' is'} played on feeds that came with an imported release"
            in card) == bool(carried)
    assert "BITHLP" not in card
    if homepage:
        assert f"- Repository: {homepage}" in card and f"for the team at {homepage}" in card
    else:
        assert "Repository: not stated" in card and "has not stated its homepage" in card


def _check_rai(body: dict[str, Any], want: dict[str, Any], homepage: str, known: list[str]) -> None:
    n = want["tasks"]
    allowed = {v for k, v in want.items() if isinstance(v, int) and not isinstance(v, bool)}
    allowed |= set(want["inherited"].values()) | set(want["sources"].values()) | set(want["lacking"].values())
    allowed |= set(want["catalog"].values()) | {want["here"] - want["blind_reviews"], len(want["sources"])}
    allowed |= set(want["tiers"].values()) | set(want["kinds"].values())
    for key, value in body.items():
        if key.startswith("rai:"):
            text = " ".join(value) if isinstance(value, list) else str(value)
            assert numbers(text, known) <= allowed, (key, text, allowed)
    missing = body["rai:dataCollectionMissingData"]
    assert missing.startswith(f"{want['without_metadata']} of {want['videos']} video")
    assert all(f"{p} {k}" in missing.split("each part: ")[1] for p, k in want["lacking"].items())
    tools = " ".join(body["rai:machineAnnotationTools"])
    assert ("language model (qwen-test-0.5b)" in tools) == want["model_saw"]
    assert ("lexical inspector" in tools) == want["lexical_saw"]
    for seen in ("model_read", "lexical_read"):
        if want[seen]:
            assert f"read {want[seen]} task" in tools, (seen, tools)
    assert ("sentence-embedding" in tools) == bool(want["on_built_feeds"])
    assert (body["rai:dataAnnotationPlatform"] == ["Label Studio"]) == want["authored_here"]
    protocol = body["rai:dataAnnotationProtocol"][1]
    assert (f"{want['judged']} of {n} were judged by a metadata-only shortcut filter" in protocol) == bool(
        want["judged"])
    assert (f"{want['unread']} of {n} passed that filter unjudged" in protocol) == bool(want["unread"])
    assert (f"{want['blind_reviews']} of {n} carry a blind review" in protocol) == bool(want["blind_reviews"])
    assert (f"given under {want['configurations']} configurations" in protocol) == (want["configurations"] > 1)
    analysis = body["rai:dataAnnotationAnalysis"][0]
    catalog = want["catalog"]
    assert analysis.startswith(f"{want['blind_reviews']} of {n} tasks carry a recorded blind-review outcome and "
                               f"{want['group_decisions']} a group decision")
    assert (f"{catalog['went_through_review']} went through review; the group deleted {catalog['deleted']} and "
            f"{catalog['revised']} were revised") in analysis
    raw = body["rai:dataCollectionRawData"]
    assert (f"{want['synthetic']} video" in raw and "synthetic, generated" in raw) == bool(want["synthetic"])
    assert ("sameAs" in body) == bool(homepage) and ("url" in body) == bool(homepage)
    assert "BITHLP" not in json.dumps(body)


@settings(max_examples=120, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
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
            shipped = pq.read_table(release / data_path("all")).to_pylist()
            video_ids = pq.read_table(release / "videos.parquet").column("video_id").to_pylist()
            want = _oracle(cat, history, shipped, video_ids)
            facts = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["facts"]
            for key in ("tasks", "here", "authors", "reviewers", "blind_reviews", "reviewed", "group_decisions",
                        "judged", "unread", "videos", "synthetic", "without_metadata", "on_built_feeds",
                        "on_carried_feeds", "inherited", "lacking", "sources"):
                assert facts[key] == want[key], key
            assert len(facts["configurations"]) == want["configurations"]
            assert {k: facts["catalog"][k] for k in want["catalog"]} == want["catalog"]
            assert compute_funnel(cat)["all"]["judged_by_filter"] >= want["judged"]
            _check_card((release / "README.md").read_text(encoding="utf-8"), want, history.homepage)
            body = json.loads((release / CROISSANT).read_text(encoding="utf-8"))
            known = [*SOURCE_TERMS.values(), *want["inherited"], "qwen-test-0.5b", *facts["cluster_models"],
                     "v0.9.0", "v0.8.0"]
            _check_rai(body, want, history.homepage, known)
            if history.validate:
                dataset = mlc.Dataset(jsonld=release / CROISSANT)
                assert not dataset.metadata.ctx.issues.errors
    finally:
        shutil.rmtree(folder, ignore_errors=True)
