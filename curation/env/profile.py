"""The runner profile: one readable statement of the environment a release targets.

Which sources the runner accepts and what each video starts with, which positions the "no other video" half of a
check reads, how playback is judged and when a do-nothing agent is graded, and which checks the runner cannot
grade at all. The public runner's profile ships as `curation/resources/runners/livingscreen-f02d1bc.toml`; a team
with its own runner names its file in `[runner] profile`. Grading, both proofs, the task rules and env-feeds read
the profile and nothing else about the runner; `curate env show` prints it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from curation.core.errors import ConfigError
from curation.core.resources import resource_text

DEFAULT_PROFILE = "livingscreen-f02d1bc.toml"
StartingComments = Literal["record", "none"]


@dataclass(frozen=True)
class SourceProfile:
    name: str
    prefix: str
    url: str                            # where the runner serves a video ({id}, {native}, {category}, {name})
    shown: Literal["record", "name", "none"]  # what its author, title and counts are
    comments: StartingComments          # what a video of this source starts with
    unknown_record: Literal["some", "none"] = "none"  # when the catalog does not hold the video's record

    def url_of(self, video_id: str) -> str:
        native = video_id[len(self.prefix):]
        category, _, name = native.partition("/")
        return self.url.format(id=quote(video_id), native=quote(native), category=category, name=quote(name))


@dataclass(frozen=True)
class RunnerProfile:
    name: str
    repository: str
    commit: str
    playwright: str
    others_first: int
    others_last: int
    tolerance: float
    autoplay_position: int
    idle_window_s: tuple[float, float]
    ungradable: frozenset[str]
    sources: dict[str, SourceProfile]
    origin: str  # the file it was read from

    @property
    def max_feed(self) -> int:
        """The longest feed whose every video the "no other video" rule can read (positions 0 to `others_last`)."""
        return self.others_last + 1

    def others(self, targets: list[int], feed_len: int) -> list[int]:
        """The positions the runner reads for "no other video is liked / collected / reported"."""
        return [i for i in range(self.others_first, min(self.others_last, feed_len - 1) + 1) if i not in targets]

    def source_of(self, video_id: str) -> SourceProfile | None:
        """The source the runner serves `video_id` from, by its prefix; None when the runner refuses it."""
        return next((s for s in self.sources.values() if video_id.startswith(s.prefix)), None)

    def show(self) -> str:
        """The profile as a person reads it (`curate env show`)."""
        low, high = self.idle_window_s
        lines = [f"{self.name} ({self.repository} at {self.commit[:7]}, Playwright {self.playwright})",
                 f"  read from:             {self.origin}",
                 f"  sources accepted:      {', '.join(s.prefix for s in self.sources.values())}",
                 *(f"    {s.name + ':':<18} starts with "
                   f"{'the comments of its metadata record' if s.comments == 'record' else 'no comments'}"
                   + (f"; with no record in the catalog: {s.unknown_record} comments" if s.comments == "record"
                      else "") for s in self.sources.values()),
                 f"  longest feed:          {self.max_feed} videos",
                 f"  'no other video' rule: positions {self.others_first} to {self.others_last} (0-based)",
                 f"  playback:              within {self.tolerance:.0%} of the length; video "
                 f"{self.autoplay_position} plays from the start in a loop, the others stand at 0 s",
                 f"  do-nothing graded at:  {low:g} to {high:g} s of video {self.autoplay_position}'s playback",
                 f"  cannot grade:          {', '.join(sorted(self.ungradable)) or 'nothing'}"]
        return "\n".join(lines)


def _read(text: str, origin: str) -> RunnerProfile:
    try:
        data: dict[str, Any] = tomllib.loads(text)
        window = [float(x) for x in data["idle"]["window_s"]]
        sources = {name: SourceProfile(name, str(s["prefix"]), str(s["url"]), s["shown"], s["comments"],
                                       s.get("unknown_record", "none")) for name, s in data["sources"].items()}
        profile = RunnerProfile(
            name=str(data["name"]), repository=str(data["repository"]), commit=str(data["commit"]),
            playwright=str(data.get("playwright", "")), others_first=int(data["others"]["first"]),
            others_last=int(data["others"]["last"]), tolerance=float(data["playback"]["tolerance"]),
            autoplay_position=int(data["playback"]["autoplay_position"]), idle_window_s=(window[0], window[1]),
            ungradable=frozenset(data["grading"]["ungradable"]), sources=sources, origin=origin)
    except KeyError as exc:
        raise ConfigError(f"runner profile {origin} lacks {exc.args[0]!r} (the shipped profile, `curate env show`, "
                          "lists every key)") from exc
    except (tomllib.TOMLDecodeError, TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"runner profile {origin} cannot be read: {type(exc).__name__}: {exc}") from exc
    from curation.env.vocabulary import VOCABULARY

    unknown = profile.ungradable - set(VOCABULARY)
    if unknown:
        raise ConfigError(f"runner profile {origin}: [grading] ungradable names {', '.join(sorted(unknown))}, "
                          f"not a check ({', '.join(VOCABULARY)})")
    if not 0 <= window[0] <= window[1]:
        raise ConfigError(f"runner profile {origin}: [idle] window_s {window} is not [low, high] with 0 <= low <= high")
    for source in sources.values():
        if source.comments not in ("record", "none") or source.unknown_record not in ("some", "none") \
                or source.shown not in ("record", "name", "none"):
            raise ConfigError(f"runner profile {origin}: source {source.name}: comments is 'record' or 'none', "
                              "unknown_record 'some' or 'none', shown 'record', 'name' or 'none'")
    return profile


def profile_text(path: str = "") -> str:
    """The TOML of the profile in `path` ('' = the public runner's, shipped with the toolkit): what a team copies
    to start its own (`curate env show --toml`)."""
    if not path:
        return resource_text("runners", DEFAULT_PROFILE)
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"runner profile {path} cannot be read: {exc.strerror or exc}") from exc


@cache
def load_profile(path: str = "") -> RunnerProfile:
    """The profile in `path` ('' = the public runner's, shipped with the toolkit)."""
    return _read(profile_text(path), path or f"(built in) runners/{DEFAULT_PROFILE}")


_ACTIVE = {"path": "", "accept_ungradable": ""}


def use_profile(path: str, accept_ungradable: str = "") -> RunnerProfile:
    """Make the profile in `path` the one every door reads in this process (`[runner] profile`, set when the
    configuration is loaded), read now so that a bad file is one error up front; with the reason, if any, why
    checks it cannot grade may be kept (`[runner] accept_ungradable`)."""
    profile = load_profile(path)
    _ACTIVE.update(path=path, accept_ungradable=accept_ungradable.strip())
    return profile


def accepted_ungradable() -> str:
    """Why tasks with checks the profile cannot grade may be kept ('' = they may not)."""
    return _ACTIVE["accept_ungradable"]


def default_profile() -> RunnerProfile:
    """The profile in force: `[runner] profile` of the configuration, else the public runner's."""
    return load_profile(_ACTIVE["path"])


def default_profile_text() -> str:
    """The TOML of the profile in force."""
    return profile_text(_ACTIVE["path"])
