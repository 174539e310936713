"""An adapter is wired everywhere an adapter is named: `ingest` dispatches each one to its own reader and source,
the sources file knows that source, and `curate ingest --help` lists it. An adapter added to `ADAPTERS` without
its reader (it would fall through to another adapter's) or without its source facets fails here."""

from __future__ import annotations

from pathlib import Path

from curation.core.sources import SOURCES
from curation.ingest import ADAPTERS, _adapter_records
from tests.cli.test_cli import curate

NAMED = [a for a in ADAPTERS if a != "generic"]  # the generic adapter's source is whatever its mapping says


def test_each_named_adapter_reads_its_own_source_and_the_sources_file_knows_it():
    # the readers are generators: asking which source an adapter reads opens no file
    sources = {adapter: _adapter_records(adapter, Path("not-read"), lambda _: None)[0] for adapter in NAMED}
    assert len(set(sources.values())) == len(NAMED), sources
    assert set(sources.values()) <= set(SOURCES), sorted(set(sources.values()) - set(SOURCES))


def test_the_command_line_lists_every_adapter():
    shown = curate("ingest", "--help")
    assert shown.returncode == 0, shown.stderr
    assert [a for a in ADAPTERS if a not in shown.stdout] == [], shown.stdout
