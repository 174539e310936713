"""The configuration of record: which shortcut-filter configuration decides a task version's verdict.

The first run of `curate qc shortcut` makes its configuration the one of record; only
`curate qc shortcut-config adopt` changes it, after showing what it would re-decide. A run with any
other configuration keeps its answers as evidence (rows of `shortcut_verdicts` under its own
configuration hash) and moves no task. `shortcut_decisions` says which configuration decided each
task version, so the verdict behind a task's state stays readable after the record changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.fingerprint import json_sha256
from curation.core.stage import StageRun


@dataclass(frozen=True)
class Record:
    """One adoption of a configuration as the one of record."""

    seq: int
    config_sha256: str
    source: str
    run_id: str | None
    adopted_at: datetime
    config: dict[str, Any]


def config_digest(decisive: dict[str, Any]) -> str:
    return json_sha256(decisive)[:16]


def record_history(catalog: Catalog) -> list[Record]:
    """Every configuration of record, the first first."""
    return [Record(r["seq"], r["config_sha256"], r["source"] or "?", r["run_id"], r["adopted_at"],
                   json.loads(r["config"]) if r["config"] else {})
            for r in catalog.rows("SELECT r.*, c.config FROM shortcut_config_record r LEFT JOIN shortcut_configs c "
                                  "USING (config_sha256) ORDER BY r.seq")]


def current_record(catalog: Catalog) -> Record | None:
    history = record_history(catalog)
    return history[-1] if history else None


def config_changes(before: Any, after: Any, where: str = "") -> list[str]:
    """What differs between two configurations, one line per setting ("inspectors[0].minimum: 0.34 -> 1.0")."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [line for key in sorted(set(before) | set(after))
                for line in config_changes(before.get(key), after.get(key), f"{where}.{key}" if where else key)]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after) \
            and all(isinstance(x, dict) for x in before + after):
        return [line for i, (b, a) in enumerate(zip(before, after, strict=True))
                for line in config_changes(b, a, f"{where}[{i}]")]
    if before == after:
        return []
    if isinstance(before, list) and isinstance(after, list) and where == "inspectors":
        names = [[i.get("name") for i in side] for side in (before, after)]
        return [f"inspectors: {', '.join(map(str, names[0]))} -> {', '.join(map(str, names[1]))}"]
    return [f"{where}: {json.dumps(before, ensure_ascii=False)} -> {json.dumps(after, ensure_ascii=False)}"]


def difference_note(record: Record, digest: str, decisive: dict[str, Any], source: str) -> str:
    """What a person running another configuration than the one of record must be told."""
    changes = config_changes(record.config, decisive) if record.config else []
    return (f"this configuration ({digest}, from {source}) is not the configuration of record ({record.config_sha256}, "
            f"from {record.source}, since {record.adopted_at:%Y-%m-%d %H:%M})"
            + (f"; it differs in {'; '.join(changes)}" if changes else "")
            + ". Its answers are kept as evidence beside the verdicts of record and move no task; "
              "`curate qc shortcut-config adopt` (from the same folder, or with --config FILE) shows what adopting "
              "it would re-decide")


def remember_config(run: StageRun, digest: str, decisive: dict[str, Any], source: str) -> None:
    run.db.con.execute("""
        INSERT INTO shortcut_configs (config_sha256, config, source, run_id, created_at)
        SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM shortcut_configs WHERE config_sha256 = ?)""",
                       [digest, json.dumps(decisive, sort_keys=True), source, run.run_id, now(), digest])


def set_record(run: StageRun, digest: str, source: str) -> None:
    run.db.con.execute("""
        INSERT INTO shortcut_config_record (seq, config_sha256, source, run_id, adopted_at)
        SELECT coalesce(max(seq), 0) + 1, ?, ?, ?, ? FROM shortcut_config_record""",
                       [digest, source, run.run_id, now()])


def latest_decisions(catalog: Catalog) -> dict[tuple[str, int], str]:
    """(task id, version) -> the configuration whose verdict decided it last."""
    return {(r[0], r[1]): r[2] for r in catalog.con.execute(
        "SELECT task_id, task_version, config_sha256 FROM shortcut_decisions "
        "QUALIFY seq = max(seq) OVER (PARTITION BY task_id, task_version)").fetchall()}


def record_decisions(run: StageRun, decisions: list[tuple[str, int, str]], digest: str) -> None:
    """(task id, version, reason) decided by configuration `digest`, each after the ones before it."""
    if not decisions:
        return
    table = pa.table({"task_id": [d[0] for d in decisions], "task_version": pa.array([d[1] for d in decisions],
                                                                                     pa.int32()),
                      "reason": [d[2] for d in decisions]})
    with run.db.staged(decided=table):
        run.db.con.execute("""
            INSERT INTO shortcut_decisions (task_id, task_version, seq, config_sha256, reason, run_id, decided_at)
            SELECT d.task_id, d.task_version, coalesce(m.seq, 0) + 1, ?, d.reason, ?, ? FROM decided d
            LEFT JOIN (SELECT task_id, task_version, max(seq) AS seq FROM shortcut_decisions GROUP BY ALL) m
              ON m.task_id = d.task_id AND m.task_version = d.task_version""", [digest, run.run_id, now()])


def verdicts_of_record(catalog: Catalog) -> dict[tuple[str, int], str]:
    """(task id, version) -> the verdict that decided it last."""
    return {(r[0], r[1]): r[2] for r in catalog.con.execute("""
        SELECT v.task_id, v.task_version, v.verdict FROM shortcut_verdicts v
        JOIN (SELECT task_id, task_version, config_sha256 FROM shortcut_decisions
              QUALIFY seq = max(seq) OVER (PARTITION BY task_id, task_version)) d
          ON d.task_id = v.task_id AND d.task_version = v.task_version AND d.config_sha256 = v.config_sha256
        """).fetchall()}


def verdicts_in_force(catalog: Catalog) -> dict[tuple[str, int], dict[str, Any]]:
    """(task id, version) -> the verdict a task version stands by: the one of record, else (a version decided
    before verdicts of record were kept) its latest. Its row: verdict, answers (parsed), config_sha256, run_id."""
    rows = catalog.rows("""
        SELECT v.task_id, v.task_version, v.verdict, v.answers, v.config_sha256, v.run_id FROM shortcut_verdicts v
        LEFT JOIN shortcut_verdicts_of_record o USING (task_id, task_version, config_sha256)
        QUALIFY row_number() OVER (PARTITION BY v.task_id, v.task_version
                                   ORDER BY o.task_id IS NULL, v.created_at DESC, v.config_sha256) = 1""")
    return {(r["task_id"], r["task_version"]): {**r, "answers": json.loads(r["answers"] or "[]")} for r in rows}


def kinds_unchanged(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The task kinds (label, platform) whose verdicts under configuration `before` hold under `after`: every
    setting but the prompts is the same, and so is that kind's prompt. None when `before` did not record its
    prompts (a configuration from before they were part of it)."""
    def rest(config: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in config.items() if k != "prompts"}
    if "prompts" not in before or "prompts" not in after or rest(before) != rest(after):
        return set()
    return {kind for kind, digest in after["prompts"].items() if before["prompts"].get(kind) == digest}


def carried_verdicts(catalog: Catalog, record: Record | None, digest: str, decisive: dict[str, Any],
                     kind_of: dict[tuple[str, int], str]) -> dict[tuple[str, int], dict[str, Any]]:
    """Verdicts of the configuration of record that hold under configuration `digest` unchanged: those of task
    versions (`kind_of`: their eval_type) whose prompt and every other setting are the same under both. Only
    the others are judged again (an edited platform prompt re-judges the platform tasks, not the label ones)."""
    if record is None or record.config_sha256 == digest:
        return {}
    kinds = kinds_unchanged(record.config, decisive)
    if not kinds:
        return {}
    return {key: row for key, row in verdicts_under(catalog, record.config_sha256).items()
            if kind_of.get(key) in kinds}


def verdict_counts(catalog: Catalog) -> dict[str, int]:
    """Configuration -> how many verdicts are kept under it."""
    return dict(catalog.con.execute(
        "SELECT config_sha256, count(*) FROM shortcut_verdicts GROUP BY 1 ORDER BY 1").fetchall())


def verdicts_under(catalog: Catalog, digest: str) -> dict[tuple[str, int], dict[str, Any]]:
    """(task id, version) -> its verdict row under one configuration."""
    return {(r["task_id"], r["task_version"]): r for r in catalog.rows(
        "SELECT task_id, task_version, verdict, answers, run_id FROM shortcut_verdicts WHERE config_sha256 = ?",
        [digest])}


@dataclass
class AdoptionPlan:
    """What adopting a configuration would re-decide, from the answers already kept under it."""

    digest: str
    record: Record | None
    changes: list[str]
    moves: list[tuple[str, int, str, str]] = field(default_factory=list)  # task, version, from, to
    unchanged: int = 0
    to_judge: list[tuple[str, int, str]] = field(default_factory=list)  # no answers under it yet
    carried: int = 0  # verdicts of record that hold under it (the same prompt and settings)

    @property
    def nothing_to_adopt(self) -> bool:
        return self.record is not None and self.record.config_sha256 == self.digest

    def summary(self) -> list[str]:
        if self.record is None:
            return [f"no configuration is of record yet: adopting {self.digest} decides every task version in scope "
                    f"({len(self.to_judge) + len(self.moves) + self.unchanged:,})"]
        if self.nothing_to_adopt:
            return [f"{self.digest} is already the configuration of record (from {self.record.source}); "
                    "nothing to adopt"]
        return [f"adopting {self.digest} in place of {self.record.config_sha256} (from {self.record.source})"
                + (f", which differs in {'; '.join(self.changes)}" if self.changes else ""),
                f"{len(self.moves):,} task versions would move on the answers kept under {self.digest}, "
                f"{self.unchanged:,} keep their state ({self.carried:,} of them on the verdicts of record, asked "
                f"with the same prompt and settings), {len(self.to_judge):,} have no answers under it yet "
                "and would be judged when adopting"]

    def task_lines(self) -> list[str]:
        return ([f"  {task_id} v{version}: {before} -> {after}" for task_id, version, before, after in self.moves]
                + [f"  {task_id} v{version}: {state}, to be judged" for task_id, version, state in self.to_judge])


def adoption_plan(catalog: Catalog, digest: str, decisive: dict[str, Any],
                  scope: list[tuple[str, int, str]],
                  carried: dict[tuple[str, int], dict[str, Any]] | None = None) -> AdoptionPlan:
    """`scope`: the task versions (id, version, state) a run of the filter judges; `carried`: the verdicts of
    record that hold under the configuration (`carried_verdicts`)."""
    record = current_record(catalog)
    plan = AdoptionPlan(digest, record, config_changes(record.config, decisive) if record and record.config else [])
    kept = verdicts_under(catalog, digest)
    for task_id, version, state in scope:
        verdict = kept.get((task_id, version))
        if verdict is None and carried and (task_id, version) in carried:
            verdict = carried[(task_id, version)]
            plan.carried += 1
        if verdict is None:
            plan.to_judge.append((task_id, version, state))
        elif verdict["verdict"] != state:
            plan.moves.append((task_id, version, state, verdict["verdict"]))
        else:
            plan.unchanged += 1
    return plan
