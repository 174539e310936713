"""What a logs folder holds, walked without following a symlink: the `log.json` files to read, the task
folders without one (crashed), and what is refused, each with the line that says why.

Refused, never silently skipped: a task folder (or any folder) that is a symlink (it is not followed: a
link could bring in another run's episodes, or the same one twice); a `log.json` that is a symlink
pointing outside the logs folder, to nothing, or round in a loop; a log whose path holds a name that is
not UTF-8 (the catalog keeps log paths as text). A `log.json` symlink to a file inside the logs folder is
read. The logs folders and `--out` themselves are checked before any run starts (`check_logs_arguments`).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from curation.core.errors import InputError, UsageError
from curation.core.storable import is_loop, missing_problem, name_problem, shown_name

LOG = "log.json"


@dataclass
class LogsFolder:
    logs: list[Path] = field(default_factory=list)  # log.json files to read, in a stable order
    crashed: dict[str, Path] = field(default_factory=dict)  # release task id -> its folder without a log.json
    refused: list[tuple[Path, str]] = field(default_factory=list)  # a log or task folder, and why


def scan_logs(folder: Path, task_ids: Collection[str]) -> LogsFolder:
    """Every log.json under `folder` at any depth (`<task_id>/log.json`); `task_ids` tells crashed task
    folders (a release task's folder with no log) from other folders."""
    if not folder.is_dir():
        raise InputError(f"{shown_name(folder)} is not a folder of episode logs")
    walked = LogsFolder()
    _walk(folder, folder.resolve(), set(task_ids), walked)
    found = LogsFolder(crashed=walked.crashed, refused=walked.refused)
    for log in walked.logs:
        if problem := name_problem(log.relative_to(folder), "the log's path"):
            found.refused.append((log, problem))
        else:
            found.logs.append(log)
    return found


def _walk(directory: Path, root: Path, task_ids: set[str], found: LogsFolder) -> None:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        found.refused.append((directory, f"the folder cannot be read: {exc.strerror}"))
        return
    if directory.name in task_ids and LOG not in {entry.name for entry in entries}:
        found.crashed[directory.name] = directory
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            if entry.name == LOG:
                _linked_log(path, root, found)
            elif entry.name in task_ids or path.is_dir() or is_loop(path):  # what may stand for a task folder
                found.refused.append((path, _linked_folder(path)))
        elif entry.name == LOG:  # a folder or a pipe of that name is no log (reading a pipe would wait for ever)
            if entry.is_file(follow_symlinks=False):
                found.logs.append(path)
            else:
                found.refused.append((path, f"{LOG} is not a file"))
        elif entry.is_dir(follow_symlinks=False):
            _walk(path, root, task_ids, found)


def _linked_folder(path: Path) -> str:
    if not path.exists():
        return f"{missing_problem(path, 'the folder')}: not followed"
    return (f"the folder is a symlink to {shown_name(path.resolve())}: not followed (task folders are read where "
            "they are; copy it into the logs folder)")


def _linked_log(path: Path, root: Path, found: LogsFolder) -> None:
    if not path.exists():
        found.refused.append((path, missing_problem(path, LOG)))
        return
    target = path.resolve()
    if not target.is_relative_to(root):
        found.refused.append((path, f"{LOG} is a symlink to {shown_name(target)}, outside the logs folder "
                                    f"{shown_name(root)}: not followed"))
    elif not target.is_file():
        found.refused.append((path, f"{LOG} is a symlink to {shown_name(target)}, which is not a file"))
    else:
        found.logs.append(path)


def _resolved(path: Path, what: str) -> Path:
    """`path` resolved, refused when it goes round a symlink loop or its real path is not UTF-8."""
    if is_loop(path):
        raise InputError(missing_problem(path, f"{what} {shown_name(path)}"))
    resolved = path.resolve()
    if problem := name_problem(resolved, what):
        raise InputError(problem)
    return resolved


def check_logs_arguments(logs: list[Path], out: Path | None = None, models: list[str] | None = None) -> None:
    """Refuse, before a catalog is opened or a run row is written, logs folders and an output folder that
    cannot be read or recorded: a name that is not UTF-8, nothing there, a symlink loop, a file."""
    for name in models or []:
        if problem := name_problem(name, "the --model name"):
            raise UsageError(problem)
    for folder in logs:
        if problem := name_problem(folder, "the logs folder"):
            raise InputError(problem)
        if not folder.exists():
            raise InputError(missing_problem(folder, f"the logs folder {shown_name(folder)}"))
        if not folder.is_dir():
            raise InputError(f"{shown_name(folder)} is not a folder of episode logs (<task_id>/{LOG})")
        _resolved(folder, "the logs folder")
    if out is not None:
        if problem := name_problem(out, "the --out folder"):
            raise InputError(problem)
        if out.exists() and not out.is_dir():
            raise InputError(f"the --out folder {shown_name(out)} is a file")
        _resolved(out, "the --out folder")
