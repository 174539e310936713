"""Files that ship inside the package (default config, taxonomy, Label Studio config,
prompt templates, stop words), found through `importlib.resources` so that a plain
`pip install` works from any folder. `annotation/` and `qc/` at the top of the repo
link here for people browsing the source."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable


def resource(*parts: str) -> Traversable:
    """A packaged file under `curation/resources/`."""
    path = files("curation").joinpath("resources")
    for part in parts:
        path = path.joinpath(part)
    return path


@cache
def resource_text(*parts: str) -> str:
    return resource(*parts).read_text(encoding="utf-8")
