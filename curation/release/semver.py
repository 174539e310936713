"""Release versions and the rule that moves them: tasks removed or changed need a major
version, tasks added a minor one, the card or metadata alone a patch. A change or removal the
group decided in an audit of how models answered the task (`release/audit_changes.py`) is a fix:
the task now measures what it always claimed to, so it needs only a patch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

from curation.core.errors import UsageError

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
LEVELS = ("patch", "minor", "major")


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.fullmatch(text.strip())
        if not match:
            raise UsageError(f"{text!r} is not a version: write MAJOR.MINOR.PATCH, e.g. 1.0.0")
        return cls(*(int(g) for g in match.groups()))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def __lt__(self, other: Version) -> bool:
        return (self.major, self.minor, self.patch) < (other.major, other.minor, other.patch)

    @property
    def tag(self) -> str:
        return f"v{self}"

    def bumped(self, level: str) -> Version:
        if level == "major":
            return Version(self.major + 1, 0, 0)
        if level == "minor":
            return Version(self.major, self.minor + 1, 0)
        return Version(self.major, self.minor, self.patch + 1)


def bump_level(parent: Version, version: Version) -> str | None:
    """Which part moved from `parent` to `version` (None when it did not move forward)."""
    if version <= parent:
        return None
    if version.major != parent.major:
        return "major"
    return "minor" if version.minor != parent.minor else "patch"


def required_level(added: int, removed: int, changed: int, fixed: int = 0) -> str:
    """`fixed`: how many of the removed and changed tasks an audit decided."""
    if removed + changed > fixed:
        return "major"
    return "minor" if added else "patch"


def check_bump(parent: Version, version: Version, added: int, removed: int, changed: int, fixed: int = 0) -> None:
    """Refuse a version that does not move as the changes against the parent require."""
    need = required_level(added, removed, changed, fixed)
    moved = bump_level(parent, version)
    if moved is None:
        raise UsageError(f"version {version} must come after its parent {parent}")
    if LEVELS.index(moved) < LEVELS.index(need):
        what = (f"{removed} tasks removed and {changed} changed" + (f", {fixed} of them fixes an audit decided"
                                                                   if fixed else "")
                if need == "major" else f"{added} tasks added")
        raise UsageError(f"{what} since {parent}: that is a {need} change, so the version must be at least "
                         f"{parent.bumped(need)}, not {version}")
