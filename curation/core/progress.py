"""One progress display for every long stage."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

T = TypeVar("T")


def note(message: str) -> None:
    """A progress line on stderr, for steps too short or too opaque for a bar."""
    print(message, file=sys.stderr, flush=True)


def progress(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Yields `items` while drawing a bar on a terminal; silent when output is piped."""
    if not sys.stderr.isatty():
        # Piped output (CI logs, make): a line per tenth of the work on long jobs, no bar.
        if not total or total < 20:
            yield from items
            return
        step = max(total // 10, 1)
        for done, item in enumerate(items, start=1):
            yield item
            if done % step == 0 and done < total:
                note(f"{description}: {done:,}/{total:,}")
        return
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
