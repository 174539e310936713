"""A draft judged on the feed version it was written on: the one call the authoring and the
revision doors share, so both turn a draft into the same task record and the same findings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from curation.tasks.record import Draft, TaskRecord, from_draft
from curation.tasks.rules import Defect, RuleContext, check_task


class FeedVersion(Protocol):
    """What the judge reads of a feed version (`corpus.feeds.Feed` is one; the task model sits below it)."""

    @property
    def video_feed(self) -> Sequence[str]: ...
    @property
    def keyword_videos(self) -> Sequence[str] | None: ...
    @property
    def other_videos(self) -> Sequence[str] | None: ...


def judge_draft(draft: Draft, task_id: str, base: FeedVersion, feed: FeedVersion, feed_edit_problems: list[str],
                ctx: RuleContext) -> tuple[TaskRecord, list[Defect]]:
    """A draft on its feed version (edited from `base`) as a task record, and what the task rules find."""
    record = from_draft(draft, task_id, list(feed.video_feed), keyword_videos=list(base.keyword_videos or []),
                        other_videos=list(base.other_videos or []), feed_edit_problems=feed_edit_problems)
    return record, check_task(record, ctx)
