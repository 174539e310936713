"""The export's feed cards: each feed's Label Studio task, rendered and encoded while the export waits on Label
Studio.

An export of 1,000 feeds to five known people spent a third of its time rendering cards and encoding tasks
with nothing else going on, and most of the rest waiting for Label Studio's answers (bench/export.py). A thread
waiting on a socket lets others run, so the cards are made in those waits: one worker thread takes the
people's shares in the order the export sends them, reading through a catalog connection of its own.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.errors import AnnotationError
from curation.corpus.feeds import Feed, FeedKey, load_feeds
from curation.labelstudio.render import VideoCards, feed_ref, list_fields, render_feeds

HANDOVER_S = 0.0005  # the longest a thread keeps the interpreter while the worker runs (CPython: 5 ms)


def task_data(feed: Feed, html: str) -> dict[str, Any]:
    """An authoring task's data: the feed's card, which version of which feed it is, the annotator's feedback
    field (empty), and the plain-text columns of the data manager."""
    return {"feed_html": html, "feed_ref": feed_ref(feed), "feed_id": feed.feed_id, "feed_version": feed.version,
            "feedback": "", **list_fields(feed, "to_write")}


@contextmanager
def _steady_interpreter() -> Iterator[None]:
    """While the worker renders. The export's thread mostly waits on sockets and the catalog, and each time it
    wakes it must take the interpreter back from the worker, which by default keeps it up to 5 ms: that alone
    slowed the first person's requests by a third, so the worker hands it over sooner. And the objects that
    exist when the export starts (modules, the SDK's models) are left out of the collector's full passes,
    which walked them all for 45 ms in one export of two; the cards themselves hold no cycles."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(HANDOVER_S)
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        sys.setswitchinterval(interval)


class FeedCards:
    """Each feed version's task as JSON, rendered once per export. Use as a context manager: leaving it stops the
    worker (what it has not started is dropped; the share it is rendering is waited for)."""

    def __init__(self, catalog: Catalog, media_root: Path) -> None:
        self.catalog, self.media_root = catalog, media_root
        self.encoded: dict[FeedKey, str] = {}
        self.videos: VideoCards = {}  # a video in many feeds is rendered once, by whichever thread meets it first
        self._ahead: dict[FeedKey, Future[dict[FeedKey, str]]] = {}
        self._stack = ExitStack()

    def __enter__(self) -> FeedCards:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def render_ahead(self, shares: list[list[FeedKey]]) -> None:
        """Start rendering `shares` (each person's feed versions that look new), in this order, in the worker."""
        shares = [[k for k in share if k not in self.encoded] for share in shares]
        if not any(shares):
            return
        reader = self._stack.enter_context(self.catalog.reader())
        self._stack.enter_context(_steady_interpreter())
        pool = ThreadPoolExecutor(1, thread_name_prefix="feed-cards")
        self._stack.callback(pool.shutdown, wait=True, cancel_futures=True)  # before the reader closes
        for share in filter(None, shares):
            future = pool.submit(self._render, reader, share)
            self._ahead.update((k, future) for k in share)

    def tasks_json(self, keys: list[FeedKey]) -> bytes:
        """The tasks of the feed versions `keys` as one JSON list, in order: waited for where the worker has them,
        else rendered here (a feed found to need sending only later, such as one whose task the server lost)."""
        for future in {self._ahead.pop(k) for k in keys if k in self._ahead}:
            self.encoded.update(future.result())  # a failure in the worker is raised here
        missing = [k for k in keys if k not in self.encoded]
        if missing:
            self.encoded.update(self._render(self.catalog, missing))
        return f"[{','.join(self.encoded[k] for k in keys)}]".encode()

    def _render(self, catalog: Catalog, keys: list[FeedKey]) -> dict[FeedKey, str]:
        found = load_feeds(catalog, keys)
        if len(found) < len(keys):
            raise AnnotationError(f"feed {next(k for k in keys if k not in found)} is not in the catalog")
        feeds = [found[k] for k in keys]
        htmls = render_feeds(catalog, feeds, self.media_root, self.videos)
        return {k: json.dumps({"data": task_data(f, html)}, ensure_ascii=False)
                for k, f, html in zip(keys, feeds, htmls, strict=True)}
