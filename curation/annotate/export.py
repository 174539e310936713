"""`curate annotate export`: feeds into one Label Studio authoring project per annotator.

Label Studio Community has no per-task assignment, so each annotator gets a project
of their own. Feeds are shared out evenly and a feed stays with the annotator it first
went to; a feed version already sent is never sent again: its Label Studio task id is
remembered in `ls_tasks`. Only people the catalog knows, or named with `--add`, get work.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError, UsageError
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import Feed, latest_feeds
from curation.labelstudio.accounts import (
    Account,
    ExportResult,
    Organizations,
    current_admin,
    ensure_accounts,
    read_passwords,
)
from curation.labelstudio.client import base_url, connect, ls_call
from curation.labelstudio.guide import guide_html
from curation.labelstudio.people import check_people, split_names
from curation.labelstudio.projects import KeptProject, keep_project
from curation.labelstudio.render import feed_ref, list_fields, render_feeds


def _rank(*parts: str) -> str:
    return hashlib.sha256(":".join(parts).encode()).hexdigest()


def assign(feed_ids: list[str], annotators: list[str], owner: dict[str, str], load: dict[str, int]
           ) -> dict[str, str]:
    """Feed -> annotator. A feed already sent stays with whoever has it (listed this run or not);
    each new feed goes to the listed annotator with the fewest feeds so far (`load`: feeds each
    already has), ties broken by a hash of feed and annotator. New feeds are taken in the order
    of a hash of their id, so the split depends on the set of feeds, not on the order given."""
    out = {f: owner[f] for f in feed_ids if f in owner}
    load = {a: load.get(a, 0) for a in annotators}
    for feed_id in sorted((f for f in feed_ids if f not in owner), key=_rank):
        chosen = min(annotators, key=lambda a: (load[a], _rank(feed_id, a)))
        out[feed_id] = chosen
        load[chosen] += 1
    return out


def ensure_project(client: Any, catalog: Catalog, run_id: str, account: Account, label_config: str,
                   media_root: Path) -> KeptProject:
    """The annotator's authoring project in their organization (the admin must be working in it)."""
    annotator = account.annotator
    return keep_project(
        client, catalog, "ls_projects", "ls_tasks", {"base_url": base_url(), "annotator": annotator}, label_config,
        f"LivingScreen authoring · {annotator}", description(annotator), media_root,
        {"run_id": run_id, "organization_id": account.organization_id, "annotator_user_id": account.user_id},
        instruction=guide_html())


def description(annotator: str) -> str:
    """The project card's line; the guide itself is the project's instructions (Label Studio's
    Instructions button), not a path in the repository the annotator cannot open."""
    return (f"{annotator} 的视频流：在每条视频流上写一个任务。指南：任务上方的 Instructions 按钮。 / "
            f"Feeds for {annotator} to write tasks on. The guide: the Instructions button above each task.")


def _check_export(annotators: list[str], *_: Any, add: list[str] | None = None, **__: Any) -> None:
    if not split_names(annotators) and not split_names(add):
        raise UsageError("give at least one annotator: --annotators alice,bob (new people with --add NAME)")


@stage("annotate-export", command="curate annotate export --annotators a,b", batched=True,
       reads=("feeds", "videos", "comments", "media_outputs", "ls_projects", "ls_tasks", "tasks", "qc_projects",
              "people"),
       writes=("ls_projects", "ls_tasks", "people"), check=_check_export,
       summary="one Label Studio authoring project per annotator, each in the annotator's own organization; "
       "only known people or those named with --add")
def export_to_label_studio(run: StageRun, annotators: list[str], media_root: Path,
                           feed_ids: list[str] | None = None, passwords: Path | None = None,
                           add: list[str] | None = None, resend_missing: bool = False) -> ExportResult:
    """`annotators` must be people the catalog knows; `add` names new people, whose accounts are
    made here and who take part as if listed. What the catalog sent is checked against what Label Studio
    holds: tasks gone from the server are named per person and project, and sent again with
    `resend_missing` (a feed whose task was already imported stays imported, and is not sent again)."""
    catalog = run.db
    annotators = check_people(catalog, split_names(annotators), split_names(add), "annotator")
    from_file = read_passwords(passwords)
    client = connect()
    url = base_url()
    feeds = [f for f in latest_feeds(catalog) if feed_ids is None or f.feed_id in feed_ids]
    if not feeds:
        raise AnnotationError("no feeds to export: run `curate feeds build` first")
    label_config = resource_text("authoring.xml")
    run.params.update(annotators=annotators, added=split_names(add), base_url=url, feeds=len(feeds))
    owner = dict(catalog.con.execute("SELECT feed_id, any_value(annotator) FROM ls_tasks "
                                     "WHERE base_url = ? GROUP BY 1", [url]).fetchall())
    load = dict(catalog.con.execute("SELECT annotator, count(DISTINCT feed_id) FROM ls_tasks "
                                    "WHERE base_url = ? GROUP BY 1", [url]).fetchall())
    assigned = assign([f.feed_id for f in feeds], annotators, owner, load)
    result = ExportResult(run.counts)
    counts = run.counts
    counts.update(feeds=len(feeds), exported=0, already_exported=0, accounts_created=0, per_annotator={},
                  missing={}, resent=0)
    run.params.update(resend_missing=resend_missing)
    admin_id, admin_email, home = current_admin(client)
    people = ensure_accounts(catalog, annotators, admin_email, from_file, result, run.run_id)
    cards = FeedCards(catalog, media_root)
    already = sent_versions(catalog)
    # the cards of this run's people's feeds that look new (a feed stays with its owner, listed or not)
    cards.render([f for f in feeds if assigned[f.feed_id] in annotators and (f.feed_id, f.version) not in already])
    with Organizations(client, admin_id, home) as organizations:
        for annotator in annotators:
            organizations.work_in(people[annotator].organization_id)
            _send(run, client, people[annotator], [f for f in feeds if assigned[f.feed_id] == annotator],
                  label_config, cards, resend_missing)
    return result


class FeedCards:
    """The feeds' cards, rendered in one read of the catalog for every feed that looks new when the export
    starts; a feed found to need sending only later (a project lost on the server) is rendered then."""

    def __init__(self, catalog: Catalog, media_root: Path) -> None:
        self.catalog, self.media_root, self.html = catalog, media_root, {}

    def render(self, feeds: list[Feed]) -> list[str]:
        missing = [f for f in feeds if (f.feed_id, f.version) not in self.html]
        for feed, html in zip(missing, render_feeds(self.catalog, missing, self.media_root), strict=True):
            self.html[feed.feed_id, feed.version] = html
        return [self.html[f.feed_id, f.version] for f in feeds]


def sent_versions(catalog: Catalog) -> set[tuple[str, int]]:
    """The feed versions that are not new work: sent to this server (per `ls_tasks`); produced by an annotator's
    own edit (that task's feed); or written on (imported), even if its Label Studio task is gone."""
    return {(f, v) for f, v in catalog.con.execute(
        "SELECT feed_id, feed_version FROM ls_tasks WHERE base_url = ? UNION "
        "SELECT feed_id, feed_version FROM tasks WHERE feed_version <> base_feed_version UNION "
        "SELECT feed_id, base_feed_version FROM tasks WHERE ls_project_id IS NOT NULL", [base_url()]).fetchall()}


def _send(run: StageRun, client: Any, account: Account, mine: list[Feed], label_config: str, cards: FeedCards,
          resend_missing: bool) -> None:
    """One annotator's share: their project made or checked, what the server lost named (and forgotten as
    sent with `resend_missing`), and the feeds not there yet sent (the admin works in their organization)."""
    catalog, counts, url, annotator = run.db, run.counts, base_url(), account.annotator
    with catalog.transaction():
        project_id, held = ensure_project(client, catalog, str(run.run_id), account, label_config, cards.media_root)
        live = live_task_ids(client, catalog, project_id, annotator, held)
        gone = reconcile(live, catalog, project_id, annotator, resend_missing)
    if gone:
        counts["missing"][annotator] = {"project": project_id, "feeds": gone, "resent": resend_missing}
    sent = sent_versions(catalog)  # read after ensure_project, which forgets a deleted project's tasks
    todo = [f for f in mine if (f.feed_id, f.version) not in sent]
    if todo:  # tasks a killed run sent but never recorded are taken on, not sent twice
        todo = take_on_unrecorded(client, catalog, project_id, annotator, live, todo, str(run.run_id))
    # "already in Label Studio" only for what is there: a task gone from the server is counted as missing
    counts["already_exported"] += len(mine) - len(todo) - len(
        {f.feed_id for f in mine if (f.feed_id, f.version) in sent} & {f for f, _ in gone})
    counts["per_annotator"][annotator] = {"feeds": len(mine), "new": len(todo)}
    if not todo:
        return
    payload = [{"data": {"feed_html": html, "feed_ref": feed_ref(f), "feed_id": f.feed_id, "feed_version": f.version,
                         "feedback": "", **list_fields(f, "to_write")}}
               for f, html in zip(todo, cards.render(todo), strict=True)]
    response = ls_call(f"the tasks for {annotator}", client.projects.import_tasks, id=project_id, request=payload,
                       return_task_ids=True)
    task_ids = list(response.task_ids or [])
    if len(task_ids) != len(todo):
        raise AnnotationError(f"Label Studio returned {len(task_ids)} task ids for {len(todo)} feeds")
    with catalog.transaction():
        # an id Label Studio gives a new task names no earlier one any more (ids come back after a restore)
        catalog.con.execute("DELETE FROM ls_tasks WHERE base_url = ? AND list_contains(?, ls_task_id)",
                            [url, task_ids])
        record_tasks(catalog, [(project_id, task_id, feed, annotator)
                               for feed, task_id in zip(todo, task_ids, strict=True)], str(run.run_id))
    counts["exported"] += len(todo)
    if resend_missing:
        counts["resent"] += len({f for f, _ in counts["missing"].get(annotator, {}).get("feeds", [])}
                                & {f.feed_id for f in todo})


def live_task_ids(client: Any, catalog: Catalog, project_id: int, annotator: str, held: int | None = None
                  ) -> set[int]:
    """The ids of the tasks the project holds (`held`: how many, when the caller just asked Label Studio).
    When it holds as many as the catalog recorded sending, those
    are taken to be the ones (only the toolkit adds tasks; a loss and an unrecorded send of the same size at
    once is what this does not see); else listed, without their data (the cards make a full listing of
    1,000 tasks take seconds, an id listing of 400 a tenth of one, the count a fortieth)."""
    recorded = {r[0] for r in catalog.con.execute("SELECT ls_task_id FROM ls_tasks WHERE base_url = ? AND "
                                                  "project_id = ?", [base_url(), project_id]).fetchall()}
    if held is None:
        held = ls_call(f"{annotator}'s project", client.projects.get, id=project_id).task_number
    if held == len(recorded):
        return recorded
    return set(ls_call(f"{annotator}'s tasks", lambda: [
        t.id for t in client.tasks.list(project=project_id, include="id", fields="task_only", page_size=1000)]))


def take_on_unrecorded(client: Any, catalog: Catalog, project_id: int, annotator: str, live: set[int],
                       todo: list[Feed], run_id: str) -> list[Feed]:
    """Record the project's tasks that carry a feed version still to send but that the catalog does not
    know (an export killed between Label Studio's import and the catalog's record); the feeds left to send."""
    recorded = {r[0] for r in catalog.con.execute("SELECT ls_task_id FROM ls_tasks WHERE base_url = ? AND "
                                                  "project_id = ?", [base_url(), project_id]).fetchall()}
    wanted = {(f.feed_id, f.version): f for f in todo}
    found = []
    for task_id in sorted(live - recorded):
        data = ls_call("a task the catalog did not record", client.tasks.get, id=str(task_id)).data or {}
        feed = wanted.pop((data.get("feed_id"), data.get("feed_version")), None)
        if feed is not None:
            found.append((project_id, task_id, feed, annotator))
    with catalog.transaction():
        record_tasks(catalog, found, run_id)
    return list(wanted.values())


def record_tasks(catalog: Catalog, sent: list[tuple[int, int, Feed, str]], run_id: str) -> None:
    """(project, Label Studio task, feed, annotator) rows of `ls_tasks`, written in one statement."""
    if not sent:
        return
    table = pa.table({"base_url": [base_url()] * len(sent), "project_id": [s[0] for s in sent],
                      "ls_task_id": [s[1] for s in sent], "feed_id": [s[2].feed_id for s in sent],
                      "feed_version": pa.array([s[2].version for s in sent], pa.int32()),
                      "annotator": [s[3] for s in sent], "run_id": [run_id] * len(sent)})
    with catalog.staged(sent=table):
        catalog.insert_staged("ls_tasks", "sent", table.column_names)


def reconcile(live: set[int], catalog: Catalog, project_id: int, annotator: str, resend: bool
              ) -> list[tuple[str, int]]:
    """The feeds the catalog sent to this project whose Label Studio tasks are gone (deleted on the server,
    or a restored backup that predates them): (feed, version), named either way; with `resend`, forgotten
    as sent so that this export sends them again, unless the catalog already imported a task written on
    that feed version (the annotation is kept in the catalog; sending the feed again would invite a
    second task). `live`: the project's task ids. An id Label Studio gave again after a restore is
    taken from the lost task when the export records the new one (only the toolkit adds tasks)."""
    url = base_url()
    sent = catalog.rows("SELECT ls_task_id, feed_id, feed_version FROM ls_tasks WHERE base_url = ? "
                        "AND project_id = ? AND annotator = ?", [url, project_id, annotator])
    if not sent:
        return []
    gone = [r for r in sent if r["ls_task_id"] not in live]
    if resend:
        imported = {(r[0], r[1]) for r in catalog.con.execute(
            "SELECT feed_id, base_feed_version FROM tasks WHERE ls_project_id = ?", [project_id]).fetchall()}
        for row in gone:
            if (row["feed_id"], row["feed_version"]) not in imported:
                catalog.con.execute("DELETE FROM ls_tasks WHERE base_url = ? AND ls_task_id = ?",
                                    [url, row["ls_task_id"]])
    return sorted((r["feed_id"], r["feed_version"]) for r in gone)
