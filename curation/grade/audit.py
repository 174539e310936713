"""`curate grade audit export | import`: people judge how agents observed. For sampled graded
trajectories (by default 50 L2 and 50 L3 per model), an auditor marks every video of the
episode as under-observed (it supports the answer and was not watched enough), over-observed
(watched at length although irrelevant or already understood), both, or neither. The import
gives per model the share of trajectories with each kind (the paper's Table 3 shape).

One project in the admin's organization; each Label Studio task shows the instruction, the
agent's answer and, per video, how long it was watched beside the feed's video cards. The model
is not named to the auditor.
"""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.errors import PrerequisiteError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.feeds import Feed
from curation.corpus.visible import video_durations
from curation.grade.grade import summary_of
from curation.grade.report import audit_rates, write_grade_page
from curation.labelstudio.projects import read_fields
from curation.labelstudio.render import render_feed
from curation.labelstudio.workspace import group_project, open_session, returned_tasks, send_missing
from curation.release.semver import Version

PURPOSE = "audit"


def audit_config(max_videos: int) -> str:
    """The auditor's form: one tick per video position, for each kind of miscalibration."""
    def choices(name: str, header: str) -> str:
        ticks = "".join(f'<Choice value="{n}"/>' for n in range(1, max_videos + 1))
        return (f'  <Header value="{header}"/>\n  <Choices name="{name}" toName="feed" choice="multiple" '
                f'showInline="true">{ticks}</Choices>\n')
    return ('<View>\n  <Header value="$audit_ref"/>\n'
            '  <HyperText name="episode" value="$episode_html" inline="true"/>\n'
            + choices("under", "Under-observed videos: support the answer, not watched enough / 观看不足的视频")
            + choices("over", "Over-observed videos: watched at length, irrelevant or already understood / "
                              "过度观看的视频")
            + '  <Header value="Tick nothing when every video was observed well / 都合适则不勾选"/>\n'
            '  <HyperText name="feed" value="$feed_html" inline="true"/>\n</View>\n')


def sample(rows: list[dict[str, Any]], per_tier: int, seed: int) -> list[dict[str, Any]]:
    """Up to `per_tier` L2 and L3 episodes per model, the same ones for a seed."""
    def rank(row: dict[str, Any]) -> str:
        return hashlib.sha256(f"{seed}:{row['model']}:{row['task_id']}".encode()).hexdigest()
    chosen = []
    for key in sorted({(r["model"], r["tier"]) for r in rows if r["tier"] in ("L2", "L3")}):
        group = sorted((r for r in rows if (r["model"], r["tier"]) == key), key=rank)
        chosen += group[:per_tier]
    return sorted(chosen, key=lambda r: (r["model"], r["tier"], r["task_id"]))


def episode_html(row: dict[str, Any], instruction: str, durations: list[float | None]) -> str:
    esc = html.escape
    cells = "".join(
        f"<tr><td>{n + 1}</td><td>{seconds:.1f} s</td><td>{'–' if d is None else f'{d:.1f} s'}</td>"
        f"<td>{esc((bucket or 'unknown').replace('_', ' '))}</td></tr>"
        for n, (seconds, d, bucket) in enumerate(zip(row["watched"], durations, row["buckets"], strict=True)))
    return (f'<div class="ls-episode"><p><b>{esc(instruction)}</b></p><p>Answer given: '
            f'{esc(row["answer"] or "(none)")} · graded {"correct" if row["sr"] == 1.0 else "incorrect"}</p>'
            f"<table><tr><th>video</th><th>watched</th><th>length</th><th>bucket</th></tr>{cells}</table></div>")


def _item(catalog: Catalog, row: dict[str, Any], task: dict[str, Any], media: Path
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    ids = list(task["video_feed"])
    durations = video_durations(catalog, ids)
    feed = Feed("", 0, -1, "", [], [], ids, None, 0)
    anonymous = hashlib.sha256(f"{row['model']}/{row['task_id']}".encode()).hexdigest()[:8]
    data = {"audit_ref": f"{row['task_id']} · trajectory {anonymous}", "feed_html": render_feed(catalog, feed, media),
            "episode_html": episode_html(row, task["instruction"], [durations.get(v) for v in ids])}
    return {"item": f"{row['release']}/{row['model']}/{row['task_id']}", "round": row["release"],
            "task_id": row["task_id"]}, data


@stage("grade-audit-export", command="curate grade audit export --release vX.Y.Z", batched=True,
       reads=("episode_grades", "release_tasks", "videos", "comments", "media_outputs", "qc_projects", "qc_items"),
       writes=("qc_projects", "qc_items"),
       summary="sampled graded trajectories into an audit project: per video, under- or over-observed")
def export_audit(run: StageRun, version: str, per_tier: int = 50, seed: int = 0, media_root: Path | None = None,
                 max_videos: int = 20) -> dict[str, Any]:
    catalog = run.db
    target = str(Version.parse(version))
    rows = catalog.rows("SELECT * FROM episode_grades WHERE release = ? ORDER BY model, task_id", [target])
    if not rows:
        raise PrerequisiteError(f"no graded episodes for release {target}: run "
                                f"`curate grade LOGS_DIR --release {target}`")
    tasks = {r["task_id"]: json.loads(r["runner"]) for r in catalog.rows(
        "SELECT task_id, runner FROM release_tasks WHERE version = ?", [target])}
    chosen = sample(rows, per_tier, seed)
    run.params.update(release=target, per_tier=per_tier, seed=seed)
    run.counts.update(graded=len(rows), sampled=len(chosen), sent=0, already_sent=0)
    session = open_session()
    media = media_root or Path("build/media")
    with group_project(run, session, PURPOSE, audit_config(max_videos), "LivingScreen trajectory audit",
                       "Per video: was it observed too little, too much, or well?", media) as project_id:
        send_missing(run, session, project_id, PURPOSE, "group",
                     {f"{r['release']}/{r['model']}/{r['task_id']}": partial(_item, catalog, r, tasks[r["task_id"]],
                                                                             media) for r in chosen},
                     "the trajectories to audit")
    return run.counts


@dataclass
class AuditImport(RunResult):
    rates: list[dict[str, Any]] = field(default_factory=list)  # per model, of the release asked about
    report: Path | None = None  # grade.html, when asked for


@stage("grade-audit-import", command="curate grade audit import", batched=True,
       reads=("qc_projects", "qc_items", "episode_grades", "audit_flags"),
       writes=("audit_flags",),
       summary="the auditors' flags back: per model, the share of trajectories under-, over- and both",
       files=("out: grade.html (with a report path)",))
def import_audit(run: StageRun, release: str | None = None, report: Path | None = None) -> AuditImport:
    """The flags back; with `release`, that release's rates per model, and with `report` its grade.html again."""
    result = AuditImport(_import_flags(run))
    if release is not None:
        target = str(Version.parse(release))
        run.params.update(release=target)
        result.rates = audit_rates(run.db, target)
        if report is not None:
            rows = run.db.rows("SELECT * FROM episode_grades WHERE release = ?", [target])
            result.report = write_grade_page(run.db, target, summary_of(rows, target), report)
            run.params.update(report=str(result.report))
    return result


def _import_flags(run: StageRun) -> dict[str, Any]:
    catalog = run.db
    session = open_session()
    run.counts.update(audited=0, waiting=0)
    for _, task, item in returned_tasks(run, session, PURPOSE):
        done = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
        if not done:
            run.counts["waiting"] += 1
            continue
        annotation = max(done, key=lambda a: a["id"])
        fields = read_fields(annotation.get("result") or [])
        release, rest = item["item"].split("/", 1)  # a model may be named Org/Model; task ids have no slash
        model, task_id = rest.rsplit("/", 1)
        watched = catalog.scalar("SELECT watched FROM episode_grades WHERE release = ? AND model = ? AND task_id = ?",
                                 [release, model, task_id]) or []
        under = {int(v) - 1 for v in fields.get("under") or []}
        over = {int(v) - 1 for v in fields.get("over") or []}
        with catalog.transaction():
            catalog.con.execute("DELETE FROM audit_flags WHERE release = ? AND model = ? AND task_id = ?",
                                [release, model, task_id])
            for position in range(max(len(watched), max(under | over, default=-1) + 1)):
                catalog.insert("audit_flags", {
                    "release": release, "model": model, "task_id": task_id, "position": position,
                    "under_observed": position in under, "over_observed": position in over,
                    "auditor": str(annotation.get("completed_by")), "ls_task_id": task["id"],
                    "annotation_sha256": None, "run_id": run.run_id, "created_at": now()})
        run.counts["audited"] += 1
    return run.counts
