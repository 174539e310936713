"""Every annotation an annotator made is reconciled, not only her tasks: an imported annotation deleted in Label
Studio, changed there, or lost to a restored backup is named by task id and person at export and at import; the
answer written again is the next version of the same task, never a new task; and nothing is recorded twice.

Annotations are written as the web UI writes them, by the annotator's own logged-in session; the admin deletes
and edits through the API; a restore is Label Studio's own database taken back (a row gone, the id sequence
wound back, a row's older content), as copying back a backup does. Against a real server."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.accounts import current_admin, in_organization
from curation.labelstudio.projects import annotation_sha
from tests.annotate.authored import Author, answer, one_imported
from tests.cli.test_cli import curate

pytestmark = pytest.mark.servers  # a real Label Studio

FEEDS = load_config().feeds


@contextlib.contextmanager
def label_studio_database() -> Iterator[sqlite3.Connection]:
    """Label Studio's own SQLite database, written as a restore leaves it (no signal, no API)."""
    con = sqlite3.connect(Path(os.environ["LABEL_STUDIO_DATA_DIR"]) / "label_studio.sqlite3", timeout=30)
    try:
        with con:
            yield con
    finally:
        con.close()


def restore_without(annotation_id: int) -> None:
    """The server as a backup taken before `annotation_id` leaves it: the row gone and, as the backup's id
    sequence is older too, the next annotation may get its id again."""
    with label_studio_database() as con:
        con.execute("DELETE FROM task_completion WHERE id = ?", [annotation_id])
        con.execute("UPDATE sqlite_sequence SET seq = (SELECT coalesce(max(id), 0) FROM task_completion) "
                    "WHERE name = 'task_completion'")


def saved_row(annotation_id: int) -> tuple[str, str]:
    with label_studio_database() as con:
        return con.execute("SELECT result, updated_at FROM task_completion WHERE id = ?", [annotation_id]).fetchone()


def restore_row(annotation_id: int, saved: tuple[str, str]) -> None:
    with label_studio_database() as con:
        con.execute("UPDATE task_completion SET result = ?, updated_at = ? WHERE id = ?", [*saved, annotation_id])


def lines(out: str, start: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().removeprefix("warning: ").startswith(start)]


# label_studio before clustered_catalog: the suite's first test, whose server start overlaps the building of the
# session's catalog (tests/labelstudio/__init__.py)
def test_a_lost_annotation_is_named_and_written_again_as_the_same_task(label_studio, clustered_catalog, ls_client):
    person = "yusra"  # a name no other test gives an account on the session-wide server
    start = one_imported(clustered_catalog, label_studio, person, feeds=2, seed=131)
    db, base, yusra, first, task_id = start.db, start.base, start.author, start.annotation, start.task_id
    row = start.sent[0]
    project, task = row["project_id"], row["ls_task_id"]

    def versions() -> list[tuple[str, int]]:
        with Catalog(db, read_only=True) as cat:
            return [tuple(r) for r in cat.con.execute("SELECT task_id, version FROM tasks ORDER BY version").fetchall()]

    # the admin deletes her imported annotation
    admin_id, admin_email, home = current_admin(ls_client)
    with in_organization(ls_client, admin_id, row["organization_id"], home):
        ls_client.annotations.delete(id=first)
    gone = f"{task_id} v1 ({person}): annotation {first} on Label Studio task {task} (project {project}) is gone"
    for command in ("export", "import"):
        out = curate(*base, "annotate", command, *(["--annotators", person] if command == "export" else []))
        assert out.returncode == 0, out.stderr
        assert len(lines(out.stdout, gone)) == 1, (command, out.stdout)
        assert command == "export" or "0 unchanged" in out.stdout, out.stdout  # no longer "1 unchanged"
    status = curate(*base, "annotate", "status").stdout
    assert f"Label Studio lost 1 annotations of project {project} ({person};" in status, status
    assert f"  {task_id} v1 ({person}): annotation {first} on Label Studio task {task}, the annotation deleted" in (
        status)
    assert task_id in yusra.feedback(task)  # she reads it at the top of the task, empty again in her queue

    # she writes it again: the next version of the same task, and the note is gone
    second = yusra.write(task, answer("给第一个视频点赞，然后看完它"))
    out = curate(*base, "annotate", "import").stdout
    assert lines(out, f"{task_id} v1 ({person}): written again on Label Studio task {task} (project {project}) as "
                      f"annotation {second} in place of annotation {first}, which is gone; v2"), out
    assert "0 new tasks, 1 new versions" in out and not lines(out, gone)
    assert versions() == [(task_id, 1), (task_id, 2)] and yusra.feedback(task) == ""
    assert "1 of them written again since" in curate(*base, "annotate", "status").stdout

    # from here on the commands' own functions, whose findings are the lines the commands print
    cat = Catalog(db)
    try:
        def export() -> list[str]:
            return [f["line"] for f in export_to_label_studio(cat, [person], label_studio["media"])["findings"]]

        def import_() -> tuple[dict[str, Any], list[str]]:
            counts = import_from_label_studio(cat, FEEDS)
            return counts, [f["line"] for f in counts["findings"]]

        def versions_now() -> list[tuple[str, int]]:
            return [tuple(r) for r in cat.con.execute("SELECT task_id, version FROM tasks ORDER BY version").fetchall()]

        # changed on the server, by the admin: named with who changed it, then imported as the next version
        with in_organization(ls_client, admin_id, row["organization_id"], home):
            ls_client.annotations.update(id=second, result=answer("给第一个视频点赞"))
        changed = (f"{task_id} v2 ({person}): annotation {second} on Label Studio task {task} (project {project}) "
                   f"changed in Label Studio by {admin_email}")
        assert export() == [f"{changed}; the next import makes it the next version"]
        assert import_()[1] == [f"{changed}; imported as v3"] and versions_now()[-1] == (task_id, 3)

        # a backup restored from before her Update: the server's copy is older, the catalog keeps v4
        before = saved_row(second)
        yusra.update(second, answer("给第一个视频点赞并收藏它"))
        assert import_()[0]["new_versions"] == 1
        restore_row(second, before)
        older = f"{task_id} v4 ({person}): annotation {second} on Label Studio task {task} (project {project}) is older"
        assert [line.startswith(older) for line in export()] == [True]
        for _ in range(2):
            counts, said = import_()
            assert [line.startswith(older) for line in said] == [True] and counts["new_versions"] == 0
        assert versions_now()[-1] == (task_id, 4)

        # a backup from before the annotation itself: the row gone, and her next answer may get its id again
        restore_without(second)
        assert [line.startswith(f"{task_id} v4 ({person}): annotation {second} on Label Studio task {task} "
                                f"(project {project}) is gone") for line in export()] == [True]
        third = yusra.write(task, answer("给第一个视频点赞，再看评论"))
        counts, said = import_()
        assert (counts["new"], counts["new_versions"], len(said)) == (0, 1, 1), said
        assert versions_now() == [(task_id, v) for v in range(1, 6)]  # still one task
        assert cat.scalar("SELECT count(*) FROM ls_annotations WHERE ls_annotation_id = ? AND lost_at IS NULL "
                          "AND task_version = 5", [third]) == 1
        kept = cat.scalar("SELECT count(*) FROM ls_annotations")
        counts, said = import_()
        assert (counts["new"], counts["new_versions"], said) == (0, 0, [])
        assert cat.scalar("SELECT count(*) FROM ls_annotations") == kept
    finally:
        cat.close()


# One round of what happens to a task's annotation between two imports: something on the server (the admin
# deletes it, a restore loses it, she updates it, or nothing), perhaps an export, perhaps her answer written
# again (a new one, or the one imported before as it was), then the import.
ROUNDS = st.lists(st.tuples(st.sampled_from(["delete", "lose", "change", "keep"]), st.sampled_from(["export", None]),
                            st.sampled_from(["write", "write the same", None])), min_size=1, max_size=3)


def test_any_sequence_of_losses_and_rewrites_keeps_one_task_and_names_every_loss(clustered_catalog, label_studio,
                                                                                  ls_client):
    """Hypothesis over sequences of what annotators, admins and restores do to one task's annotation, in-process
    (as the commands call them). Each example takes a task of its own; after every step: one task id for the
    authoring item; its latest version is the server's answer; every annotation the server lost since it was
    imported is named, with the task id and the person; and an import run twice records nothing the second time."""
    person, examples = "vera", 6
    cat = clustered_catalog
    build_feed_set(cat, FEEDS, examples, seed=133)
    media = label_studio["media"]
    export_to_label_studio(cat, [], media, add=[person])
    tasks = iter(cat.rows("SELECT ls_task_id, feed_id, project_id FROM ls_tasks WHERE annotator = ? "
                          "ORDER BY ls_task_id", [person]))
    vera = Author(label_studio, person)
    admin_id, _, home = current_admin(ls_client)
    organization = cat.scalar("SELECT organization_id FROM ls_projects WHERE annotator = ?", [person])

    def recorded() -> tuple[int, int, int]:
        return tuple(cat.con.execute("SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM ls_annotations), "
                                     "(SELECT count(*) FROM task_transitions)").fetchone())

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(ROUNDS)
    def one_task(rounds: list[tuple[str, str | None, str | None]]) -> None:
        actions = ["write", "import", *(a for steps in rounds for a in (*steps, "import") if a is not None)]
        ls_task = next(tasks)
        live: int | None = None  # her annotation on the server now
        live_fields: list[dict[str, Any]] | None = None
        standing: int | None = None  # the annotation the catalog last read for the task
        standing_fields: list[dict[str, Any]] | None = None
        versions = 0
        for n, action in enumerate(actions):
            if action in ("write", "write the same") and live is None:
                same = action == "write the same" and standing_fields is not None  # as imported, written again
                live_fields = standing_fields if same else answer(f"给第一个视频点赞 ({n})")
                live = vera.write(ls_task["ls_task_id"], live_fields)
            elif action == "change" and live is not None:
                live_fields = answer(f"给第一个视频点赞并看完 ({n})")
                vera.update(live, live_fields)
            elif action == "delete" and live is not None:
                with in_organization(ls_client, admin_id, organization, home):
                    ls_client.annotations.delete(id=live)
                live = live_fields = None
            elif action == "lose" and live is not None:
                restore_without(live)
                live = live_fields = None
            elif action in ("export", "import"):
                counts = (export_to_label_studio(cat, [person], media) if action == "export"
                          else import_from_label_studio(cat, FEEDS))
                said = [f for f in counts["findings"] if f["ls_task_id"] == ls_task["ls_task_id"]]
                if standing is not None and standing != live:  # lost since it was read: named, by task and person
                    # (by the import, as what her new answer replaced when she wrote it again)
                    named = ("annotation",) if action == "export" or live is None else ("written again",)
                    lost = [f for f in said if f["how"] in named and f["ls_annotation_id"] == standing]
                    assert len(lost) == 1 and lost[0]["person"] == person, (n, actions, standing, live, said)
                    assert lost[0]["task_id"] in lost[0]["line"] and f"({person})" in lost[0]["line"]
                if action == "import":
                    if live is not None and live_fields != standing_fields:
                        versions += 1
                    if live is not None:
                        standing, standing_fields = live, live_fields
                    before = recorded()
                    twice = import_from_label_studio(cat, FEEDS)
                    assert (twice["new"], twice["new_versions"], recorded()) == (0, 0, before), actions
            rows = cat.rows("SELECT task_id, version, annotation_sha256 FROM tasks WHERE feed_id = ? "
                            "ORDER BY created_at, version", [ls_task["feed_id"]])
            assert len({r["task_id"] for r in rows}) <= 1, (actions, rows)  # one task for the authoring item
            assert len(rows) == versions, (actions, rows)
            if rows and action == "import" and live_fields is not None:
                assert rows[-1]["annotation_sha256"] == annotation_sha(live_fields)

    one_task()
