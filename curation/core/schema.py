"""The catalog's schema as the catalog itself states it: every table and view, its key, and the one-line
description of it and of each column that its migrations wrote (`COMMENT ON`); beside it, as data, what
the catalog cannot state: which columns refer to which table's key (`REFERENCES`; DuckDB's foreign keys
would forbid the updates the stages make) and which stage owns each table. `curate schema` prints it;
`docs/schema.md` is its Markdown, grouped by owning stage, and a test keeps the two equal."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from curation.core.catalog import UNIQUE_KEYS, Catalog

RUN_COLUMN = "run_id"  # in every table but `runs`, the run that wrote the row
_NO_BREAK = "\x00"  # stands for a space inside a code span while a paragraph is wrapped


@dataclass(frozen=True)
class Reference:
    """`columns` of a table hold the values of `target_columns` of `table` (its key, or part of it)."""

    columns: tuple[str, ...]
    table: str
    target_columns: tuple[str, ...]

    def __str__(self) -> str:
        return f"({', '.join(self.columns)}) -> {self.table} ({', '.join(self.target_columns)})"

    def markdown(self) -> str:
        if len(self.columns) == 1:
            return f"→ `{self.table}.{self.target_columns[0]}`"
        return f"`({', '.join(self.columns)})` → `{self.table} ({', '.join(self.target_columns)})`"


def _ref(columns: str, table: str, target: str) -> Reference:
    return Reference(tuple(columns.split()), table, tuple(target.split()))


_TASK = _ref("task_id task_version", "tasks", "task_id version")
_FEED = _ref("feed_id feed_version", "feeds", "feed_id version")
# Every reference but the run column's, which every table has (added by `references_of`).
REFERENCES: dict[str, tuple[Reference, ...]] = {
    "audit_flags": (_ref("release model task_id", "episode_grades", "release model task_id"),),
    "audit_decisions": (_TASK, _ref("task_id revised_version", "tasks", "task_id version"),
                        _ref("release", "releases", "version")),
    "cluster_members": (_ref("video_id", "videos", "video_id"),),
    "clusters": (_ref("medoid_video", "videos", "video_id"),),
    "comments": (_ref("video_id", "videos", "video_id"),),
    "decisions": (_TASK, _ref("task_id revised_version", "tasks", "task_id version")),
    "episode_grades": (_ref("release", "releases", "version"),),
    "feed_coherence": (_ref("feed_id version", "feeds", "feed_id version"),),
    "feeds": (_ref("cluster_run", "runs", "run_id"),
              _ref("cluster_run anchor_cluster", "clusters", "run_id cluster_id")),
    "keyword_sets": (_ref("video_id", "videos", "video_id"),),
    "ls_annotations": (_TASK, _ref("base_url project_id", "ls_projects", "base_url project_id"),
                       _ref("base_url ls_task_id", "ls_tasks", "base_url ls_task_id"), _FEED),
    "ls_tasks": (_ref("base_url project_id", "ls_projects", "base_url project_id"), _FEED),
    "media_files": (_ref("video_id", "videos", "video_id"),),
    "media_outputs": (_ref("video_id", "videos", "video_id"),),
    "media_probes": (_ref("video_id", "videos", "video_id"),),
    "publications": (_ref("version", "releases", "version"),),
    "qc_items": (_ref("base_url project_id", "qc_projects", "base_url project_id"), _TASK, _FEED),
    "release_tasks": (_ref("version", "releases", "version"), _TASK),
    "releases": (_ref("parent", "releases", "version"),),
    "reviews": (_TASK,),
    "shortcut_config_record": (_ref("config_sha256", "shortcut_configs", "config_sha256"),),
    "shortcut_decisions": (_TASK, _ref("config_sha256", "shortcut_configs", "config_sha256")),
    "shortcut_verdicts": (_TASK, _ref("config_sha256", "shortcut_configs", "config_sha256")),
    "task_transitions": (_ref("task_id version", "tasks", "task_id version"),),
    "tasks": (_ref("feed_id feed_version", "feeds", "feed_id version"),
              _ref("feed_id base_feed_version", "feeds", "feed_id version")),
}
# The tables no stage writes, and what writes them instead.
NOT_STAGES = {"runs": "the stage runner (curation/core/stage.py)",
              "schema_migrations": "the migrations (curation/core/migrations.py)"}


class Writer(Protocol):
    """What ownership needs of a stage (curation.core.stage.Stage)."""

    @property
    def name(self) -> str: ...

    @property
    def command(self) -> str: ...

    @property
    def writes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class ColumnDoc:
    name: str
    type: str
    description: str | None


@dataclass(frozen=True)
class TableDoc:
    name: str
    kind: str  # "table" or "view"
    description: str | None
    key: tuple[str, ...]
    key_checked_by_runner: bool  # the key is not a constraint: the stage runner checks it (UNIQUE_KEYS)
    unique: tuple[tuple[str, ...], ...] = ()
    columns: tuple[ColumnDoc, ...] = field(default_factory=tuple)
    references: tuple[Reference, ...] = ()
    sources: tuple[str, ...] = ()  # a view: the tables it reads

    def marks(self, column: str) -> list[str]:
        """What a column is beside its value: part of the key, unique, a reference to another table."""
        out = ["key"] if column in self.key else []
        out += ["unique"] if any(column in cols for cols in self.unique) else []
        return out + [ref.markdown() for ref in self.references if column in ref.columns]


def references_of(table: str, columns: Sequence[str]) -> tuple[Reference, ...]:
    run = (Reference((RUN_COLUMN,), "runs", (RUN_COLUMN,)),) if RUN_COLUMN in columns and table != "runs" else ()
    return REFERENCES.get(table, ()) + run


def read_schema(catalog: Catalog) -> list[TableDoc]:
    """Every user table and view of the open catalog, in name order, as its DuckDB metadata says."""
    con = catalog.con
    comments = dict(con.execute("SELECT table_name, comment FROM duckdb_tables() WHERE NOT internal").fetchall())
    views = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    view_sql = dict(con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())
    constraints: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for table, kind, names in con.execute(
            "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY table_name, constraint_index").fetchall():
        constraints.setdefault(table, []).append((kind, tuple(names)))
    columns: dict[str, list[ColumnDoc]] = {}
    for table, name, type_, comment in con.execute(
            "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() WHERE NOT internal "
            "ORDER BY table_name, column_index").fetchall():
        columns.setdefault(table, []).append(ColumnDoc(name, type_, comment))
    docs = []
    for name in sorted({*comments, *views}):
        declared = constraints.get(name, [])
        primary = next((cols for kind, cols in declared if kind == "PRIMARY KEY"), ())
        checked = name in UNIQUE_KEYS
        docs.append(TableDoc(
            name=name, kind="view" if name in views else "table",
            description=views.get(name) if name in views else comments.get(name),
            key=UNIQUE_KEYS[name].columns if checked else primary, key_checked_by_runner=checked,
            unique=tuple(cols for kind, cols in declared if kind == "UNIQUE"),
            columns=tuple(columns.get(name, ())),
            references=() if name in views else references_of(name, [c.name for c in columns.get(name, ())]),
            sources=tuple(t for t in sorted(comments) if name in views and re.search(
                rf"\b{t}\b", view_sql[name]))))
    return docs


def undescribed(docs: list[TableDoc]) -> list[str]:
    """Tables, views and table columns that carry no description (a view's columns are its sources')."""
    missing = [doc.name for doc in docs if not doc.description]
    missing += [f"{doc.name}.{col.name}" for doc in docs if doc.kind == "table"
                for col in doc.columns if not col.description]
    return missing


def owners(docs: Sequence[TableDoc], stages: Sequence[Writer]) -> dict[str, str | None]:
    """The stage that owns each table and view: the first of `stages` (in pipeline order) that writes the table;
    for a view, the owner of the table it reads that the pipeline makes last. None: no stage writes it
    (`NOT_STAGES` says what does)."""
    order = {stage.name: i for i, stage in enumerate(stages)}
    owned: dict[str, str | None] = {}
    for doc in docs:
        if doc.kind == "table":
            owned[doc.name] = next((stage.name for stage in stages if doc.name in stage.writes), None)
    for doc in docs:
        if doc.kind == "view":
            found = [owned[t] for t in doc.sources if owned.get(t) is not None]
            owned[doc.name] = max(found, key=lambda name: order[str(name)]) if found else None
    return owned


def paragraph(text: str, width: int = 120, indent: str = "") -> list[str]:
    """`text` as Markdown lines of at most `width` characters (a longer word, or `code span`, stays whole);
    continuation lines take `indent`, so that a list item (`indent="  "`) stays one item."""
    joined = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", _NO_BREAK), text)
    lines = textwrap.wrap(joined, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return [line.replace(_NO_BREAK, " ") for line in lines]


def prose(text: str) -> str:
    """`text` as Markdown shows it as written: a `<name>` outside code spans would be taken for an HTML tag."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else re.sub(r"<(?=[\w/!?])", "&lt;", part) for part in parts)


def _cell(text: str | None) -> str:
    return prose(text or "").replace("|", "\\|")


def table_markdown(doc: TableDoc, writers: Sequence[str] = (), heading: str = "###") -> list[str]:
    """One table or view: its description, key, who writes it, and its columns with their keys and references."""
    about = []
    if doc.key:
        how = "checked by the stage runner before each commit" if doc.key_checked_by_runner else "primary key"
        about.append(f"Key `({', '.join(doc.key)})`, {how}.")
    about += [f"Unique `({', '.join(cols)})`." for cols in doc.unique]
    if doc.sources:
        about.append(f"Reads {', '.join(f'`{t}`' for t in doc.sources)}.")
    if writers:
        about.append(f"Written by {', '.join(f'`{w}`' for w in writers)}.")
    lines = [f"{heading} `{doc.name}` {doc.kind}", "", *paragraph(prose(doc.description or "(no description)")), ""]
    lines += [*paragraph(" ".join(about)), ""] if about else []
    lines += ["| column | type | key / reference | description |", "|---|---|---|---|"]
    lines += [f"| `{col.name}` | {col.type} | {', '.join(doc.marks(col.name))} | "
              f"{_cell(col.description)} |" for col in doc.columns]
    return [*lines, ""]



def schema_markdown(docs: list[TableDoc], version: int, stages: Sequence[Writer] = ()) -> str:
    """docs/schema.md: the tables grouped by the stage that owns them, in pipeline order (`stages`)."""
    owned = owners(docs, stages)
    groups = [(f"`{s.name}`", f"`{s.command}`", [d for d in docs if owned[d.name] == s.name]) for s in stages]
    rest = [d for d in docs if owned[d.name] is None]
    groups.append(("Written by no stage", "; ".join(f"`{t}`: {who}" for t, who in NOT_STAGES.items()), rest))
    lines = ["# The catalog's schema", "", *paragraph(
        f"Generated from a catalog at schema version {version} by `curate docs --write` (`curate schema --markdown` "
        "prints it); `tests/core/test_schema.py` keeps this page equal to it. Descriptions live in the catalog "
        "itself (DuckDB `COMMENT ON`, written by the migrations in `curation/core/migrations.py`); keys and "
        "references are data in `curation/core/schema.py`."), "", *paragraph(
        "Each table sits under the stage that owns it: the first stage of the pipeline that writes it (every "
        "stage's reads and writes: `curate describe`). A reference `→ table.column` says that the column holds "
        f"values of that column of that table; every `{RUN_COLUMN}` names the run that wrote the row."), ""]
    for title, _, tables in groups:
        if tables:
            links = ", ".join(f"[`{d.name}`](#{d.name}-{d.kind})" for d in tables)
            lines += paragraph(f"- {title}: {links}", indent="  ")
    lines.append("")
    writers = {d.name: [s.name for s in stages if d.name in s.writes] for d in docs}
    for title, what, tables in groups:
        if not tables:
            continue
        lines += [f"## {title}", "", what, ""]
        for doc in tables:
            lines += table_markdown(doc, writers[doc.name])
    return "\n".join(lines)


def schema_text(docs: list[TableDoc]) -> str:
    """The terminal form: a table per block, key first."""
    out = []
    for doc in docs:
        key = f"  key ({', '.join(doc.key)})" if doc.key else ""
        out.append(f"{doc.name} [{doc.kind}]{key}: {doc.description or '(no description)'}")
        width = max((len(col.name) for col in doc.columns), default=0)
        out += [f"  {col.name:<{width}}  {col.type:<12} {col.description or ''}".rstrip() for col in doc.columns]
        out.append("")
    return "\n".join(out)
