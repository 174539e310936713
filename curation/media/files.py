"""Paths, hashes and the one rule for what counts as inside a media root."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from curation.core.errors import MediaError


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def inside(path: Path, root: Path) -> Path:
    """`path` resolved (links followed), or MediaError when it leaves `root`."""
    resolved = (root / path).resolve() if not path.is_absolute() else path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        kind = "symlink points" if (root / path).is_symlink() else "path escapes"
        raise MediaError(f"{kind} outside the media root {root}: {path}")
    return resolved


def one_line(text: str, path: Path | str | None = None) -> str:
    """ffmpeg's own error lines folded into one, without the file name it repeats."""
    lines: list[str] = []
    for line in text.strip().splitlines():
        line = line.strip()
        if path is not None:
            line = line.replace(f"{path}: ", "")
        line = re.sub(r"^\[[^\]]+\]\s*", "", line)  # "[mov,mp4,...] " context prefixes
        if line and line not in lines:
            lines.append(line)
    return "; ".join(lines)[:300] if lines else "no message"
