from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from curation.catalog import Catalog

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
FAKESV_PUBLIC = RAW / "FakeSV" / "data.json"
KUAIREC_CSV = RAW / "KuaiRec" / "kuairec_caption_category.csv"

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def catalog(tmp_path: Path):
    cat = Catalog(tmp_path / "catalog.duckdb")
    yield cat
    cat.close()


def load_schema(name: str) -> dict:
    return json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))
