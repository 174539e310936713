"""Read-only views of the catalog: `curate status` and `curate explain`."""

from __future__ import annotations

import json

from rich.console import Group
from rich.table import Table
from rich.text import Text

from curation.core import lease
from curation.core.catalog import Catalog
from curation.core.stage import GONE
from curation.core.storable import shown_name, unstorable_at
from curation.tasks.lifecycle import inherited_tasks


def status_report(cat: Catalog) -> Group:
    sources = Table(title="videos by source")
    for col in ("source", "videos", "comments", "synthetic", "metadata missing"):
        sources.add_column(col)
    for row in cat.rows("""
            SELECT v.source, count(*) AS videos,
                   coalesce(sum(c.n), 0) AS comments, count(*) FILTER (v.synthetic) AS synthetic,
                   count(*) FILTER (v.metadata_missing) AS missing
            FROM videos v LEFT JOIN (SELECT video_id, count(*) AS n FROM comments GROUP BY 1) c
            USING (video_id) GROUP BY 1 ORDER BY 1"""):
        sources.add_row(*(f"{v:,}" if isinstance(v, int) else str(v) for v in row.values()))
    rejects = Table(title="rejects by reason")
    for col in ("stage", "source", "reason", "count"):
        rejects.add_column(col)
    for row in cat.rows("""
            SELECT stage, source, regexp_replace(reason, ' \\(.*$|: .*$', '') AS kind,
                   count(*) AS n FROM rejects GROUP BY ALL ORDER BY n DESC LIMIT 30"""):
        rejects.add_row(row["stage"], row["source"], row["kind"], f"{row['n']:,}")
    runs = Table(title="recent runs")
    for col in ("run_id", "status", "started_at", "counts"):
        runs.add_column(col, overflow="fold")
    failures = []
    live = lease.live_runs(cat.path)
    for row in cat.rows("SELECT run_id, status, started_at, counts, error FROM runs "
                        "ORDER BY started_at DESC LIMIT 10"):
        if row["status"] == "running" and row["run_id"] not in live:  # killed: the next run of any stage records it
            row["status"], row["error"] = "interrupted", GONE
        counts = json.loads(row["counts"] or "{}")
        # a running batched stage notes how far it got ("progress": "12/70") after each batch it wrote
        brief = ", ".join(f"{k}={v}" for k, v in counts.items() if isinstance(v, int | float) or k == "progress")
        runs.add_row(row["run_id"], row["status"], f"{row['started_at']:%Y-%m-%d %H:%M:%S}", brief)
        if row["error"]:
            failures.append(Text(f"{row['run_id']} {row['status']}: {row['error']}"))
    stubs = cat.rows("SELECT video_id FROM videos WHERE metadata_missing ORDER BY video_id LIMIT 5")
    missing = [Text(f"videos known only from an imported release (no metadata yet; ingest their source to fill "
                    f"them in): {cat.scalar('SELECT count(*) FROM videos WHERE metadata_missing'):,}, e.g. "
                    + ", ".join(r["video_id"] for r in stubs))] if stubs else []
    return Group(sources, rejects, runs, *missing,
                 *([Text("why recent runs did not finish:")] + failures if failures else []))


def version_line(cat: Catalog, task_id: str, versions: list[int]) -> str:
    """"version 3 of 3"; a renamed task's numbers go on from its old id's, so it says which it holds."""
    if versions == list(range(1, len(versions) + 1)):
        return f"version {versions[-1]} of {len(versions)}"
    origin = cat.scalar("SELECT reason FROM task_transitions WHERE task_id = ? AND to_state = 'authored' "
                        "AND reason LIKE 'renamed from %' ORDER BY version LIMIT 1", [task_id])
    held = ", ".join(str(v) for v in versions)
    return f"version {versions[-1]}; this id holds version{'s' if len(versions) > 1 else ''} {held}" + (
        f", {origin}" if origin else "")


def explain_task(cat: Catalog, task_id: str) -> list[str]:
    tasks = cat.rows("SELECT * FROM tasks WHERE task_id = ? ORDER BY version", [task_id])
    if not tasks:
        return []
    task = tasks[-1]
    state = cat.scalar("SELECT state FROM task_states WHERE task_id = ? AND version = ?", [task_id, task["version"]])
    lines = [f"task {task_id} ({version_line(cat, task_id, [t['version'] for t in tasks])}, {state or 'no state'})"]
    for key in ("author", "feed_id", "feed_version", "tier", "subcategory", "instruction", "options", "eval_config"):
        lines.append(f"  {key}: {task[key]}")
    inherited = inherited_tasks(cat).get(task_id)
    if inherited:
        lines.append(f"  inherited, not reviewed by this team: {inherited}")
    moves = cat.rows("SELECT * FROM task_transitions WHERE task_id = ? ORDER BY version, seq", [task_id])
    if moves:
        lines.append("path:")
    for move in moves:
        lines.append(f"  v{move['version']}: {move['from_state'] or 'new'} -> {move['to_state']}"
                     f" ({move['who'] or '?'}, {move['moved_at']:%Y-%m-%d %H:%M})"
                     + (f": {move['reason']}" if move["reason"] else ""))
    # The verdict that decided a version first, then the earlier decisions, then other configurations' evidence.
    verdicts = cat.rows("""
        SELECT v.*, (SELECT max(d.seq) FROM shortcut_decisions d WHERE d.task_id = v.task_id
                     AND d.task_version = v.task_version AND d.config_sha256 = v.config_sha256) AS decided,
                    (SELECT max(d.seq) FROM shortcut_decisions d WHERE d.task_id = v.task_id
                     AND d.task_version = v.task_version) AS last_decision
        FROM shortcut_verdicts v WHERE v.task_id = ? ORDER BY v.task_version, v.created_at""", [task_id])
    for verdict in sorted(verdicts, key=lambda v: (v["task_version"], v["decided"] != v["last_decision"],
                                                   -(v["decided"] or 0))):
        role = ("verdict of record" if verdict["decided"] is not None and verdict["decided"] == verdict["last_decision"]
                else "earlier verdict of record" if verdict["decided"] is not None
                else "evidence, not of record")
        lines.append(f"shortcut filter, version {verdict['task_version']}, {role}: {verdict['verdict']} "
                     f"({verdict['rule']} rule, configuration {verdict['config_sha256']}, run {verdict['run_id']})")
        for answer in json.loads(verdict["answers"]):
            raw = (answer.get("raw") or "").replace("\n", " ")[:80]
            lines.append(f"  {answer['inspector']} #{answer['sample']}: {answer['parsed']} "
                         f"({'correct' if answer['correct'] else 'not correct'}) {raw!r}")
    for review in cat.rows("SELECT * FROM reviews WHERE task_id = ? ORDER BY task_version", [task_id]):
        lines.append(f"review, version {review['task_version']}: {review['outcome']} by {review['reviewer']}"
                     + (f": {review['reason']}" if review["reason"] else ""))
    for decision in cat.rows("SELECT * FROM decisions WHERE task_id = ? ORDER BY task_version", [task_id]):
        lines.append(f"decision, version {decision['task_version']}: {decision['decision']} by "
                     f"{decision['decided_by']}" + (f" ({', '.join(decision['delete_reasons'])})"
                                                    if decision["delete_reasons"] else "")
                     + (f"; note: {decision['note']}" if decision["note"] else "")
                     + (f"; new version v{decision['revised_version']}" if decision["revised_version"] else ""))
    return lines


def explain_record(cat: Catalog, record_id: str) -> str | None:
    if unstorable_at(record_id) is not None:  # not UTF-8: looked up as rejects keep it, each such byte as `\xff`
        record_id = shown_name(record_id)
    lines: list[str] = explain_task(cat, record_id)
    videos = cat.rows("SELECT * FROM videos WHERE video_id = ?", [record_id])
    if videos:
        video = videos[0]
        lines.append(f"video {record_id}")
        for key, value in video.items():
            if key == "extra" and value:
                value = json.dumps(json.loads(value), ensure_ascii=False)
            lines.append(f"  {key}: {value}")
        count = cat.rows("SELECT count(*) AS n FROM comments WHERE video_id = ?", [record_id])
        lines.append(f"  comments: {count[0]['n']}")
        # Every stage's rows carry their run id; collect the runs that wrote about this video.
        touched = cat.con.execute("""
            SELECT run_id FROM keyword_sets WHERE video_id = $v
            UNION SELECT e.run_id FROM embeddings e JOIN keyword_sets k USING (text_sha256) WHERE k.video_id = $v
            UNION SELECT run_id FROM cluster_members WHERE video_id = $v
            UNION SELECT run_id FROM feeds WHERE list_contains(video_feed, $v)
            UNION SELECT run_id FROM media_files WHERE video_id = $v
            UNION SELECT run_id FROM media_probes WHERE video_id = $v
            UNION SELECT run_id FROM media_outputs WHERE video_id = $v""", {"v": record_id}).fetchall()
        run_ids = {video["run_id"], *(r[0] for r in touched)}
        feeds = cat.con.execute("SELECT feed_id, max(version) FROM feeds WHERE list_contains(video_feed, ?) "
                                "GROUP BY 1 ORDER BY 1", [record_id]).fetchall()
        if feeds:
            lines.append(f"  in feeds: {', '.join(f'{f} (v{v})' for f, v in feeds)}")
        lines.append("runs that touched it:")
        for run in cat.rows("SELECT run_id, stage, status, started_at FROM runs "
                            "WHERE list_contains(?, run_id) ORDER BY started_at", [list(run_ids)]):
            lines.append(f"  {run['run_id']} ({run['stage']}, {run['status']}, {run['started_at']})")
    rejects = cat.rows("""
        SELECT * FROM rejects WHERE raw_ref = ? OR record_id = ? ORDER BY run_id""",
        [record_id, record_id]) if not videos else []
    for reject in rejects:
        raw = bytes(reject["raw"]).decode("utf-8", errors="replace")
        lines.append(f"rejected in {reject['run_id']} ({reject['stage']}, {reject['source']}) "
                     f"at {reject['raw_ref']}: {reject['reason']}")
        lines.append(f"  raw: {raw[:500]}")
    return "\n".join(lines) if lines else None
