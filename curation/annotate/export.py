"""`curate annotate export`: feeds into one Label Studio authoring project per annotator.

Label Studio Community has no per-task assignment, so each annotator gets a project
of their own. Feeds are shared out evenly and a feed stays with the annotator it first
went to; a feed version already sent is never sent again: its Label Studio task id is
remembered in `ls_tasks`. Only people the catalog knows, or named with `--add`, get work.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from curation.annotate.cards import FeedCards
from curation.annotate.reconcile import Finding, compare, lose_project, mark, standing
from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError, UsageError
from curation.core.resources import resource_text
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import FeedKey, latest_versions
from curation.labelstudio.accounts import (
    Account,
    ExportResult,
    Organizations,
    ensure_accounts,
    read_passwords,
)
from curation.labelstudio.client import base_url, connect_as_admin, import_tasks, ls_call
from curation.labelstudio.guide import guide_html
from curation.labelstudio.people import check_people, split_names
from curation.labelstudio.projects import KeptProject, keep_project, tasks_annotations


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
              "people", "ls_annotations"),
       writes=("ls_projects", "ls_tasks", "people", "ls_annotations"), check=_check_export,
       summary="one Label Studio authoring project per annotator, each in the annotator's own organization; "
       "only known people or those named with --add; tasks and annotations the server lost or changed named")
def export_to_label_studio(run: StageRun, annotators: list[str], media_root: Path,
                           feed_ids: list[str] | None = None, passwords: Path | None = None,
                           add: list[str] | None = None, resend_missing: bool = False) -> ExportResult:
    """`annotators` must be people the catalog knows; `add` names new people, whose accounts are
    made here and who take part as if listed. What the catalog sent and imported is checked against what
    Label Studio holds: tasks gone from the server are named per person and project, with what
    `resend_missing` does with each (`plan_missing`), and the annotations imported from them that the server
    lost or changed are named one by one (`curation.annotate.reconcile`)."""
    catalog = run.db
    annotators = check_people(catalog, split_names(annotators), split_names(add), "annotator")
    from_file = read_passwords(passwords)
    client, (admin_id, admin_email, home) = connect_as_admin()
    url = base_url()
    chosen = None if feed_ids is None else set(feed_ids)
    feeds = [k for k in latest_versions(catalog) if chosen is None or k[0] in chosen]
    if not feeds:
        raise AnnotationError("no feeds to export: run `curate feeds build` first")
    label_config = resource_text("authoring.xml")
    run.params.update(annotators=annotators, added=split_names(add), base_url=url, feeds=len(feeds))
    owner = dict(catalog.con.execute("SELECT feed_id, any_value(annotator) FROM ls_tasks "
                                     "WHERE base_url = ? GROUP BY 1", [url]).fetchall())
    load = dict(catalog.con.execute("SELECT annotator, count(DISTINCT feed_id) FROM ls_tasks "
                                    "WHERE base_url = ? GROUP BY 1", [url]).fetchall())
    assigned = assign([f for f, _ in feeds], annotators, owner, load)
    result = ExportResult(run.counts)
    counts = run.counts
    counts.update(feeds=len(feeds), exported=0, already_exported=0, accounts_created=0, per_annotator={},
                  missing={}, resent=0, findings=[])
    run.params.update(resend_missing=resend_missing)
    people = ensure_accounts(catalog, annotators, admin_email, from_file, result, run.run_id)
    already = SentVersions(catalog)
    name_of = {admin_id: admin_email, **{r[0]: r[1] for r in catalog.con.execute(
        "SELECT annotator_user_id, annotator FROM ls_projects WHERE base_url = ? AND annotator_user_id IS NOT NULL",
        [url]).fetchall()}, **{a.user_id: name for name, a in people.items()}}
    shares = {annotator: [k for k in feeds if assigned[k[0]] == annotator] for annotator in annotators}
    with FeedCards(catalog, media_root) as cards, Organizations(client, admin_id, home) as organizations:
        # each person's feeds that look new, rendered while Label Studio answers (a feed stays with its owner)
        cards.render_ahead([[k for k in shares[annotator] if k not in already.now()] for annotator in annotators])
        for annotator in annotators:
            organizations.work_in(people[annotator].organization_id)
            _send(run, client, people[annotator], shares[annotator], label_config, cards, already, resend_missing,
                  name_of)
    return result


def sent_versions(catalog: Catalog) -> set[FeedKey]:
    """The feed versions that are not new work: sent to this server (per `ls_tasks`); produced by an annotator's
    own edit (that task's feed); or written on (imported), even if its Label Studio task is gone."""
    return {(f, v) for f, v in catalog.con.execute(
        "SELECT feed_id, feed_version FROM ls_tasks WHERE base_url = ? UNION "
        "SELECT feed_id, feed_version FROM tasks WHERE feed_version <> base_feed_version UNION "
        "SELECT feed_id, base_feed_version FROM tasks WHERE ls_project_id IS NOT NULL", [base_url()]).fetchall()}


class SentVersions:
    """`sent_versions`, read once per export and again only after the export made the catalog forget a send
    (a project or task gone from the server, an id Label Studio gave again): each person's share otherwise
    read all of it again (4 ms a person with 6,000 feeds sent)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._known: set[FeedKey] | None = None

    def now(self) -> set[FeedKey]:
        if self._known is None:
            self._known = sent_versions(self.catalog)
        return self._known

    def forget(self) -> None:
        self._known = None

    def add(self, keys: list[FeedKey]) -> None:
        if self._known is not None:
            self._known.update(keys)


def _send(run: StageRun, client: Any, account: Account, mine: list[FeedKey], label_config: str,
          cards: FeedCards, already: SentVersions, resend_missing: bool, name_of: dict[int, str]) -> None:
    """One annotator's share: their project made or checked, what the server lost named (and forgotten as
    sent with `resend_missing`, where `plan_missing` sends it), the annotations imported from it checked, and
    the feeds not there yet sent (the admin works in their organization)."""
    catalog, counts, url, annotator = run.db, run.counts, base_url(), account.annotator
    with catalog.transaction():
        before = catalog.scalar("SELECT project_id FROM ls_projects WHERE base_url = ? AND annotator = ?",
                                [url, annotator])
        project_id, held, forgot = ensure_project(client, catalog, str(run.run_id), account, label_config,
                                                  cards.media_root)
        findings = lose_project(catalog, before) if forgot and before is not None else []
        live = live_task_ids(client, catalog, project_id, annotator, held)
        plan = reconcile(live, catalog, project_id, annotator, mine, resend_missing)
        findings += check_annotations(client, catalog, project_id, annotator, name_of)
    counts["findings"] += [f.record() for f in findings]
    if plan:
        counts["missing"][annotator] = {"project": project_id, "feeds": [m.feed for m in plan],
                                        "resent": resend_missing, "plan": [m.record() for m in plan]}
    if forgot or (resend_missing and any(m.forget for m in plan)):
        already.forget()
    sent = already.now()
    todo = [k for k in mine if k not in sent]
    if todo and live is not None:  # tasks a killed run sent but never recorded are taken on, not sent twice
        todo = take_on_unrecorded(client, catalog, project_id, annotator, live, todo, str(run.run_id))
    # "already in Label Studio" only for what is there: a task gone from the server is counted as missing
    gone, going = {m.feed for m in plan}, set(todo)
    counts["already_exported"] += sum(1 for k in mine if k not in going and k not in gone)
    counts["per_annotator"][annotator] = {"feeds": len(mine), "new": len(todo)}
    if not todo:
        return
    task_ids = import_tasks(client, f"the tasks for {annotator}", project_id, cards.tasks_json(todo))
    if len(task_ids) != len(todo):
        raise AnnotationError(f"Label Studio returned {len(task_ids)} task ids for {len(todo)} feeds")
    with catalog.transaction():
        # an id Label Studio gives a new task names no earlier one any more (ids come back after a restore)
        reused = catalog.con.execute("DELETE FROM ls_tasks WHERE base_url = ? AND list_contains(?, ls_task_id)",
                                     [url, task_ids]).fetchone()
        record_tasks(catalog, [(project_id, task_id, feed, annotator)
                               for feed, task_id in zip(todo, task_ids, strict=True)], str(run.run_id))
    if reused and reused[0]:
        already.forget()
    already.add(todo)
    counts["exported"] += len(todo)
    if resend_missing:
        counts["resent"] += len({m.feed for m in plan if m.action == SEND} & set(todo))


def check_annotations(client: Any, catalog: Catalog, project_id: int, annotator: str, name_of: dict[int, str]
                      ) -> list[Finding]:
    """The annotations imported from the project that the server lost or changed since (kept as lost in
    `ls_annotations`): their tasks' annotations are read only when the catalog imported some."""
    rows = standing(catalog, project_id)
    if not rows:
        return []
    feed_of = dict(catalog.con.execute("SELECT ls_task_id, feed_id FROM ls_tasks WHERE base_url = ? AND "
                                       "project_id = ?", [base_url(), project_id]).fetchall())
    held = tasks_annotations(client, project_id, [r["ls_task_id"] for r in rows if r["ls_task_id"] in feed_of],
                             f"the annotations in {annotator}'s project")
    found, present = compare(rows, {t: (feed_of[t], annotations) for t, annotations in held.items()}, name_of)
    mark(catalog, rows, found, present)
    return found


def live_task_ids(client: Any, catalog: Catalog, project_id: int, annotator: str, held: int | None = None
                  ) -> set[int] | None:
    """The ids of the tasks the project holds (`held`: how many, when the caller just asked Label Studio), or
    None when it holds as many as the catalog recorded sending: only the toolkit adds tasks, so those are
    taken to be the ones (a loss and an unrecorded send of the same size at once is what this does not
    see). Else listed, without their data (the cards make a full listing of 1,000 tasks take seconds, an id
    listing of 400 a tenth of one, the count a fortieth)."""
    recorded = catalog.scalar("SELECT count(*) FROM ls_tasks WHERE base_url = ? AND project_id = ?",
                              [base_url(), project_id])
    if held is None:
        held = ls_call(f"{annotator}'s project", client.projects.get, id=project_id).task_number
    if held == recorded:
        return None
    return set(ls_call(f"{annotator}'s tasks", lambda: [
        t.id for t in client.tasks.list(project=project_id, include="id", fields="task_only", page_size=1000)]))


def take_on_unrecorded(client: Any, catalog: Catalog, project_id: int, annotator: str, live: set[int],
                       todo: list[FeedKey], run_id: str) -> list[FeedKey]:
    """Record the project's tasks that carry a feed version still to send but that the catalog does not
    know (an export killed between Label Studio's import and the catalog's record); the feeds left to send."""
    recorded = {r[0] for r in catalog.con.execute("SELECT ls_task_id FROM ls_tasks WHERE base_url = ? AND "
                                                  "project_id = ?", [base_url(), project_id]).fetchall()}
    wanted = dict.fromkeys(todo)
    found = []
    for task in unrecorded_tasks(client, project_id, sorted(live - recorded)):
        key = ((task.data or {}).get("feed_id"), (task.data or {}).get("feed_version"))
        if key in wanted:
            del wanted[key]
            found.append((project_id, task.id, key, annotator))
    with catalog.transaction():
        record_tasks(catalog, found, run_id)
    return list(wanted)


UNRECORDED_PAGE = 200  # task ids named in one listing's query (the cards make a page of tasks 2 MB)


def unrecorded_tasks(client: Any, project_id: int, task_ids: list[int]) -> list[Any]:
    """The tasks `task_ids` with their data, a page of ids per listing (one request per task took 45 s for the
    1,000 tasks a killed export of 1,000 feeds leaves)."""
    tasks = []
    for start in range(0, len(task_ids), UNRECORDED_PAGE):
        chosen = task_ids[start:start + UNRECORDED_PAGE]
        query = json.dumps({"selectedItems": {"all": False, "included": chosen}})
        tasks += ls_call("the tasks the catalog did not record", lambda q=query: list(client.tasks.list(
            project=project_id, query=q, fields="task_only", page_size=UNRECORDED_PAGE)))
    return tasks


def record_tasks(catalog: Catalog, sent: list[tuple[int, int, FeedKey, str]], run_id: str) -> None:
    """(project, Label Studio task, feed version, annotator) rows of `ls_tasks`, written in one statement."""
    if not sent:
        return
    table = pa.table({"base_url": [base_url()] * len(sent), "project_id": [s[0] for s in sent],
                      "ls_task_id": [s[1] for s in sent], "feed_id": [s[2][0] for s in sent],
                      "feed_version": pa.array([s[2][1] for s in sent], pa.int32()),
                      "annotator": [s[3] for s in sent], "run_id": [run_id] * len(sent)})
    with catalog.staged(sent=table):
        catalog.insert_staged("ls_tasks", "sent", table.column_names)


SEND, KEPT, SUPERSEDED, NOT_CHOSEN = "send", "kept", "superseded", "not chosen"


@dataclass(frozen=True)
class Missing:
    """A feed version sent to a project whose Label Studio task is gone, and what `--resend-missing` does with
    it: `SEND` it again; or not: `KEPT` (a task was imported on it, `task`: the catalog keeps it, and sending
    it again would invite a second one), `SUPERSEDED` (the feed is at version `latest` now, which goes out as
    any new version does), `NOT_CHOSEN` (the feed is not among this export's feeds)."""

    feed: FeedKey
    ls_task_id: int
    action: str
    task: str | None = None
    latest: int | None = None

    @property
    def forget(self) -> bool:
        """Forgotten as sent under `--resend-missing`: what is sent again, and what will never be."""
        return self.action in (SEND, SUPERSEDED)

    def why_not(self) -> str:
        """Why `--resend-missing` does not send it, in a few words."""
        return {KEPT: f"imported as {self.task}, which the catalog keeps",
                SUPERSEDED: f"the feed is at v{self.latest} now", NOT_CHOSEN: "not among this export's feeds",
                SEND: ""}[self.action]

    def record(self) -> dict[str, Any]:
        return {"feed": self.feed[0], "version": self.feed[1], "ls_task_id": self.ls_task_id, "action": self.action,
                "why_not": self.why_not() or None}


def plan_missing(catalog: Catalog, gone: list[dict[str, Any]], project_id: int, mine: list[FeedKey]
                 ) -> list[Missing]:
    """What `--resend-missing` does with each feed version whose task the project lost: the one decision that
    both the warning without the option and the sending with it follow."""
    imported = {(r["feed_id"], r["base_feed_version"]): f"{r['task_id']} v{r['version']}" for r in catalog.rows(
        "SELECT feed_id, base_feed_version, task_id, version FROM tasks WHERE ls_project_id IS NOT NULL "
        "QUALIFY row_number() OVER (PARTITION BY feed_id, base_feed_version ORDER BY ls_project_id = ? DESC, "
        "created_at DESC, version DESC) = 1", [project_id])}
    chosen = set(mine)
    latest = dict(mine)
    plan = []
    for row in gone:
        key = (row["feed_id"], row["feed_version"])
        if key in imported:
            plan.append(Missing(key, row["ls_task_id"], KEPT, task=imported[key]))
        elif key in chosen:
            plan.append(Missing(key, row["ls_task_id"], SEND))
        elif key[0] in latest:
            plan.append(Missing(key, row["ls_task_id"], SUPERSEDED, latest=latest[key[0]]))
        else:
            plan.append(Missing(key, row["ls_task_id"], NOT_CHOSEN))
    return sorted(plan, key=lambda m: m.feed)


def reconcile(live: set[int] | None, catalog: Catalog, project_id: int, annotator: str, mine: list[FeedKey],
              resend: bool) -> list[Missing]:
    """The feeds the catalog sent to this project whose Label Studio tasks are gone (deleted on the server,
    or a restored backup that predates them), each with what `resend` does with it (`plan_missing`); with
    `resend`, those it sends again, and those it never will, are forgotten as sent. `live`: the project's task
    ids, None when it holds what the catalog recorded. `mine`: this export's feed versions for the person. An
    id Label Studio gave again after a restore is taken from the lost task when the export records the new
    one (only the toolkit adds tasks)."""
    if live is None:
        return []
    url = base_url()
    gone = catalog.rows("SELECT ls_task_id, feed_id, feed_version FROM ls_tasks WHERE base_url = ? AND project_id = ? "
                        "AND annotator = ? AND NOT list_contains(?, ls_task_id)",
                        [url, project_id, annotator, sorted(live)])
    plan = plan_missing(catalog, gone, project_id, mine)
    if resend:
        forgotten = [m.ls_task_id for m in plan if m.forget]
        if forgotten:
            catalog.con.execute("DELETE FROM ls_tasks WHERE base_url = ? AND list_contains(?, ls_task_id)",
                                [url, forgotten])
    return plan
