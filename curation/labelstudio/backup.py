"""Backing up Label Studio's data folder while the team works, and restoring it.

Everything Label Studio keeps is in its data folder (`LS_DATA`, `build/labelstudio` by default): the
SQLite database (accounts, projects, tasks, annotations), its `.env` (the key that signs logins) and the
export and upload folders. A backup is one `.tar.gz` of that folder, the database copied with SQLite's
online backup, so it is consistent while the server keeps answering. A restore needs the server
stopped; the folder it replaces is kept beside it, renamed, never deleted.

After a restore, `curate annotate export` names the tasks sent after the backup that the server no
longer holds, and `--resend-missing` sends them again; annotations imported before stay in the catalog
(docs/deployment.md, "Backups").

A backup holds the key that signs logins and every password hash: it is written readable by its owner
only (0600), by default in `~/.local/state/livingscreen/labelstudio-backups` (0700), outside any checkout.

    python -m curation.labelstudio.backup backup --data-dir build/labelstudio [--to FOLDER]
    python -m curation.labelstudio.backup restore \
        ~/.local/state/livingscreen/labelstudio-backups/label-studio-20261204T101500Z.tar.gz \
        --data-dir build/labelstudio
"""

from __future__ import annotations

import argparse
import io
import os
import sqlite3
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from curation.core.errors import CurationError, InputError, StateError

DATABASE = "label_studio.sqlite3"
# the database's own side files (its copy is taken whole) and what a running gate announces about itself
SKIPPED = {f"{DATABASE}-wal", f"{DATABASE}-shm", f"{DATABASE}-journal", "gate.json"}


def default_folder() -> Path:
    """Where backups go unless told: the user's state folder, never inside a checkout (nor in git)."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "livingscreen" / "labelstudio-backups"


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def backup(data_dir: Path, to: Path) -> Path:
    """The data folder as one archive at `to` (a name ending .tar.gz; else a folder, which gets a new dated
    file); its path."""
    database = data_dir / DATABASE
    if not database.is_file():
        raise InputError(f"{data_dir} is not a Label Studio data folder: it has no {DATABASE}")
    target = to if to.name.endswith((".tar.gz", ".tgz")) else to / f"label-studio-{_stamp()}.tar.gz"
    if target.exists():
        raise StateError(f"{target} exists already: a backup never overwrites another")
    if not target.parent.exists():
        target.parent.mkdir(parents=True, mode=0o700)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        copy = Path(scratch) / DATABASE
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as source, sqlite3.connect(copy) as dest:
            source.backup(dest)
        partial = Path(scratch) / "partial.tar.gz"
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as raw, \
                tarfile.open(fileobj=raw, mode="w:gz") as archive:
            archive.add(copy, arcname=DATABASE)
            for path in sorted(data_dir.rglob("*")):
                relative = path.relative_to(data_dir)
                if relative.parts[0] in SKIPPED or relative.name == DATABASE and len(relative.parts) == 1:
                    continue
                archive.add(path, arcname=str(relative), recursive=False)
        os.replace(partial, target)  # whole or not at all
    return target


def running_on(data_dir: Path) -> list[int]:
    """Process ids of Label Studio servers started on this data folder (`--data-dir`, as `make labelstudio`
    and the toolkit start it; a relative folder is read from the process's own working folder)."""
    wanted = data_dir.resolve()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            words = [a.decode(errors="replace") for a in (proc / "cmdline").read_bytes().split(b"\0")]
            cwd = Path(os.readlink(proc / "cwd"))
        except OSError:
            continue
        if not any("label-studio" in w or "label_studio" in w for w in words[:3]) or "--data-dir" not in words:
            continue
        given = words[words.index("--data-dir") + 1] if words.index("--data-dir") + 1 < len(words) else ""
        if given and (cwd / given).resolve() == wanted:
            found.append(int(proc.name))
    return found


def restore(archive: Path, data_dir: Path) -> Path | None:
    """Replace the data folder by the archive's; the folder it replaced, kept renamed (None if there was none)."""
    if not archive.is_file():
        raise InputError(f"{archive}: no such backup")
    try:
        with tarfile.open(archive, "r:gz") as opened:
            names = opened.getnames()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"{archive}: not a backup this tool wrote ({exc})") from None
    if DATABASE not in names:
        raise InputError(f"{archive}: not a Label Studio backup (no {DATABASE} in it)")
    running = running_on(data_dir)
    if running:
        raise StateError(f"Label Studio is running on {data_dir} (process {', '.join(map(str, running))}): stop it, "
                         "restore, then start it again")
    data_dir = data_dir.resolve()
    incoming = data_dir.with_name(f"{data_dir.name}.restoring")
    with tarfile.open(archive, "r:gz") as opened:
        opened.extractall(incoming, filter="data")
    kept = None
    if data_dir.exists():
        kept = data_dir.with_name(f"{data_dir.name}.before-restore-{_stamp()}")
        data_dir.rename(kept)
    incoming.rename(data_dir)
    return kept


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m curation.labelstudio.backup",
                                     description="Back up or restore Label Studio's data folder.")
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("backup", help="one .tar.gz of the data folder (the server may keep running)")
    made.add_argument("--data-dir", type=Path, default=Path("build/labelstudio"))
    made.add_argument("--to", type=Path, default=default_folder(),
                      help=f"a folder (a dated file in it) or a file name ending .tar.gz (default: {default_folder()})")
    back = commands.add_parser("restore", help="the data folder from a backup (stop the server first)")
    back.add_argument("archive", type=Path)
    back.add_argument("--data-dir", type=Path, default=Path("build/labelstudio"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    try:
        if args.command == "backup":
            path = backup(args.data_dir, args.to)
            out.write(f"backed up {args.data_dir} to {path} (it holds the server's login key and every account: "
                      "keep it where only the admin can read it)\n")
        else:
            kept = restore(args.archive, args.data_dir)
            out.write(f"restored {args.data_dir} from {args.archive}"
                      + (f"; the folder it replaced is kept as {kept}" if kept else "")
                      + "\nstart Label Studio, then `curate annotate export --annotators …` names what the backup "
                      "lacks and `--resend-missing` sends it again\n")
    except CurationError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(exc.exit_code) from None
    sys.stdout.write(out.getvalue())


if __name__ == "__main__":
    main()
