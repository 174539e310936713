"""Asking the model inspectors: bounded concurrency, answers cached in `llm_calls` as they arrive."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.progress import note
from curation.qc.shortcut.inspectors import InspectorError, OpenAIInspector
from curation.qc.shortcut.prompts import Prompt


def cache_key(inspector: OpenAIInspector, prompt: Prompt, sample: int) -> tuple[str, str, str, int, float]:
    return (inspector.endpoint, inspector.model, prompt.sha256, sample, inspector.temperature)


async def ask_all(catalog: Catalog, run_id: str, jobs: list[tuple[OpenAIInspector, Prompt, int]],
                  concurrency: int) -> dict[str, int]:
    semaphore = asyncio.Semaphore(concurrency)
    inspectors = {i.name: i for i, _, _ in jobs}
    clients = {name: inspector.client() for name, inspector in inspectors.items()}
    stats = {"requests": 0, "failed": 0}

    async def one(inspector: OpenAIInspector, prompt: Prompt, sample: int) -> tuple[Any, ...]:
        async with semaphore:
            stats["requests"] += 1
            try:
                text = await inspector.complete(clients[inspector.name], prompt.text, sample)
            except InspectorError as exc:  # refused, unreachable or malformed: the task is left undecided
                return inspector, prompt, sample, None, str(exc)
            return inspector, prompt, sample, text, None

    # Answers are written in small batches as they arrive (not one commit per answer,
    # which would stall the event loop): a killed run loses at most one batch.
    pending: list[list[Any]] = []

    def flush() -> None:
        if pending:
            columns = ("endpoint", "model", "prompt_sha256", "sample", "temperature", "response", "run_id",
                       "created_at")
            table = pa.table({c: [row[i] for row in pending] for i, c in enumerate(columns)})
            with catalog.staged(answered=table):
                catalog.insert_staged("llm_calls", "answered", columns)
            pending.clear()

    last_flush = time.monotonic()
    tasks = [asyncio.ensure_future(one(*job)) for job in jobs]
    try:
        for done in asyncio.as_completed(tasks):
            inspector, prompt, sample, text, error = await done
            if error is not None:
                stats["failed"] += 1
                note(f"shortcut: {error}")
                continue
            pending.append([*cache_key(inspector, prompt, sample), text, run_id, now()])
            if len(pending) >= 512 or time.monotonic() - last_flush > 1.0:
                flush()
                last_flush = time.monotonic()
        flush()
    finally:
        # a bug in one request stops the rest; their outcome is collected so that none is reported twice
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in clients.values():
            await client.close()
    return stats
