"""The pipeline: every stage in the order a release is made, and the registry the CLI and
`curate describe` read. It sits above every stage module (it imports them all, which is what
declares them), so nothing below it ever needs to know the whole pipeline."""

from __future__ import annotations

import curation.annotate.export
import curation.annotate.importer
import curation.corpus.cluster
import curation.corpus.embed
import curation.corpus.feed_edit
import curation.corpus.feed_export
import curation.corpus.feeds
import curation.corpus.keywords
import curation.grade.audit
import curation.grade.grade
import curation.grade.rewards
import curation.grade.task_audit
import curation.ingest
import curation.media.normalise
import curation.media.probe
import curation.media.scan
import curation.media.synthetic
import curation.qc.accept
import curation.qc.adjudicate
import curation.qc.calibrate
import curation.qc.funnel
import curation.qc.review
import curation.qc.shortcut.filter
import curation.qc.validate
import curation.release.build
import curation.release.envfeeds
import curation.release.livingscreen
import curation.release.publish  # noqa: F401  (importing a stage module declares its stages)
from curation.core.stage import STAGES, Stage

PIPELINE = ("ingest", "keywords", "embed", "cluster", "feeds", "feeds-edit", "feeds-export", "media-scan",
            "media-probe", "media-normalise", "media-register-synthetic", "annotate-export", "annotate-import",
            "qc-calibrate-export", "qc-calibrate-import", "qc-validate", "qc-accept-imported", "qc-shortcut",
            "qc-review-export",
            "qc-review-import", "qc-adjudicate-export", "qc-adjudicate-import", "qc-report", "release-build",
            "release-publish", "release-import-livingscreen", "release-export-livingscreen", "release-env-feeds",
            "grade", "rewards-build", "grade-audit-export", "grade-audit-import", "qc-audit-tasks-export",
            "qc-audit-tasks-import")


def all_stages() -> list[Stage]:
    """Every declared stage, in pipeline order. The registry of stages is the declarations (`STAGES`); PIPELINE
    only orders them, and a stage declared but not placed in it, or placed but never declared, is an error."""
    unplaced, undeclared = sorted(set(STAGES) - set(PIPELINE)), sorted(set(PIPELINE) - set(STAGES))
    if unplaced or undeclared:
        raise RuntimeError(f"curation/pipeline.py PIPELINE and the declared stages differ: not placed {unplaced}, "
                           f"not declared {undeclared}")
    return [STAGES[name] for name in PIPELINE]
