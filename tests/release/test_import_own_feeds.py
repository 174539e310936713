"""Tasks written in the runner's format over the catalog's own feeds stay on those feeds when imported
(issue 41): counted on them, with their versions, and no `ls-` copy of the feed is made."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feeds import build_feed_set, load_feed
from curation.release.livingscreen import import_livingscreen
from curation.tasks.runner_format import RUNNER_FILES
from tests.cli.test_cli import curate

CONFIG = load_config()


def _label_task(task_id: str, videos: list[str], keyword: list[str] | None, other: list[str] | None) -> dict:
    element = {"task_id": task_id, "instruction": "这些视频里有几个讲同一件事？\nA:1 B:2 C:3 D:4",
               "video_feed": videos, "eval_type": "label", "eval_config": [{"answer": "B"}]}
    if keyword is not None:
        element.update(keyword_videos=keyword, other_videos=other or [])
    return element


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=4))
def test_a_task_over_a_catalog_feed_is_recorded_on_that_feed(clustered_catalog, tmp_path_factory, plan):
    """Each planned task: (which feed, whether it uses the feed's edited version, whether it names the base
    lists, whether its video order is changed by hand). A task whose video_feed is a version of a catalog feed
    is on that feed and version; any other makes an `ls-` feed as before."""
    cat = clustered_catalog
    build_feed_set(cat, CONFIG.feeds, 4, 13)
    for n in range(4):  # every feed gets an edited version 2 (the last video dropped)
        feed = load_feed(cat, f"feed-13-{n:04d}")
        if feed.version == 1:
            edit_feed(cat, feed.feed_id, [{"op": "delete", "positions": [len(feed.video_feed) - 1]}], CONFIG.feeds)
    elements, expected = [], {}
    for i, (n, edited, lists, shuffled) in enumerate(plan):
        feed = load_feed(cat, f"feed-13-{n:04d}", 2 if edited else 1)
        base = load_feed(cat, feed.feed_id, 1)
        videos = list(reversed(feed.video_feed)) if shuffled else list(feed.video_feed)
        task_id = f"counting_{900 + i}"
        elements.append(_label_task(task_id, videos, base.keyword_videos if lists else None,
                                    base.other_videos if lists else None))
        expected[task_id] = None if shuffled else (feed.feed_id, 1 if lists else feed.version, feed.version)
    folder = tmp_path_factory.mktemp("runner")
    for name in RUNNER_FILES.values():
        (folder / name).write_text(json.dumps(elements if name == RUNNER_FILES["L2"] else [], ensure_ascii=False),
                                   encoding="utf-8")
    version = f"9.{cat.scalar('SELECT count(*) FROM releases')}.0"
    counts = import_livingscreen(cat, folder, version)
    assert counts["rejected"] == 0
    for task_id, where in expected.items():
        row = cat.rows("SELECT feed_id, base_feed_version, feed_version FROM tasks WHERE task_id = ? "
                       "ORDER BY version DESC LIMIT 1", [task_id])[0]
        got = (row["feed_id"], row["base_feed_version"], row["feed_version"])
        if where is None:  # a hand-made order is not one of the catalog's feeds
            assert got[0] == f"ls-{task_id}"
        else:
            assert got == where
    on_own = sum(w is not None for w in expected.values())
    assert counts["tasks_on_catalog_feeds"] == on_own
    assert cat.scalar("SELECT count(*) FROM feeds WHERE feed_id LIKE 'ls-counting_9%'") > 0 or on_own == len(plan)


def test_feeds_list_counts_imported_tasks_on_the_catalog_feed(clustered_catalog, tmp_path):
    cat = clustered_catalog
    build_feed_set(cat, CONFIG.feeds, 2, 14)
    feed = load_feed(cat, "feed-14-0000")
    folder = tmp_path / "runner"
    folder.mkdir()
    for name in RUNNER_FILES.values():
        tasks = [_label_task("counting_1", feed.video_feed, feed.keyword_videos, feed.other_videos)] \
            if name == RUNNER_FILES["L2"] else []
        (folder / name).write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    import_livingscreen(cat, folder, "1.0.0")
    path = cat.path
    cat.close()
    listed = curate("--catalog", str(path), "feeds", "list", "--seed", "14").stdout.splitlines()
    line = next(x for x in listed if x.startswith("feed-14-0000\t"))
    assert line.endswith("\t1 tasks"), listed
    assert not any(x.startswith("ls-") for x in curate("--catalog", str(path), "feeds", "list").stdout.splitlines())
    Catalog(path).close()
