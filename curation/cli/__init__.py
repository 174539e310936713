"""`curate <stage>`: a thin command line over the stage objects, one file per command group."""

from curation.cli import annotate, corpus, feeds, grade, media, qc, release, shortcut  # noqa: F401  (registers the commands)
from curation.cli.base import app, main

__all__ = ["app", "main"]
