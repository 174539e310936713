"""`curate <stage>`: a thin command line over the stage objects, one file per command group."""

from curation.cli import (  # noqa: F401  (registers the commands)
    annotate,
    corpus,
    docs,
    env,
    feeds,
    grade,
    media,
    qc,
    release,
    shortcut,
)
from curation.cli.base import app, main

__all__ = ["app", "main"]
