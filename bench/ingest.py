"""Ingest throughput: the generic adapter (validation on) vs DuckDB's own read_json.

Builds a JSONL corpus by resampling the real KuaiRec captions, ingests it into a
fresh catalog, then loads the same file with DuckDB's `read_json` in the same run.
Prints both times and the ratio (goal: toolkit >= 0.5x DuckDB's raw throughput);
`--per-record` also times the per-record path on the same file, and `--updated` a re-ingest
of the file with every like count changed (every record "updated").

`--unchecked` adds baselines that load what the catalog stores, with DuckDB alone and no
checks at all: the mapped columns; the same with each row's fingerprint; and with the line
references too (`read_json` gives no line numbers, so they come from a window over the file).
They say how much of the gap to `read_json` is the catalog's content rather than its checks.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.fingerprint import record_hash_expr  # noqa: E402
from curation.ingest import ingest_path  # noqa: E402
from curation.ingest.kuairec import read_kuairec  # noqa: E402
from curation.ingest.load import VIDEO_COLUMNS  # noqa: E402
from curation.ingest.sql_text import HASHTAG_RE2  # noqa: E402

MAPPING = """source = "BenchKuai"
format = "jsonl"
[fields]
native_id = "video_id"
title = "caption"
hashtags = { from = "caption", extract = "hashtags" }
keywords = { from = "topic_tag", extract = "list" }
category = "category"
like_count = "likes"
"""


def build_corpus(path: Path, n: int, seed: int = 7) -> None:
    captions = [(r.fields or {}) for r in read_kuairec(ROOT / "raw/KuaiRec/kuairec_caption_category.csv")]
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            base = captions[rng.randrange(len(captions))]
            out.write(json.dumps({
                "video_id": str(i), "caption": base.get("title") or "",
                "topic_tag": "[" + ",".join(base.get("hashtags") or []) + "]",
                "category": base.get("category"), "likes": rng.randrange(0, 2_000_000),
            }, ensure_ascii=False) + "\n")


# MAPPING's catalog columns as DuckDB computes them without a check (no stripping, no
# de-duplication, no type tests); every other column is null, as it is in the catalog
_UNCHECKED = {
    "video_id": "'BenchKuai/' || video_id", "source": "'BenchKuai'", "native_id": "video_id",
    "title": "caption", "hashtags": f"regexp_extract_all(caption, '{HASHTAG_RE2}', 1)",
    "keywords": "string_split(topic_tag[2:-2], ',')", "category": "category",
    "like_count": "CAST(likes AS BIGINT)", "synthetic": "false",
}


def unchecked_load(corpus: Path, db: Path, fingerprint: bool, line_refs: bool) -> float:
    """Seconds DuckDB alone takes to write MAPPING's catalog rows of `corpus` to a new file."""
    columns = ", ".join(f"{_UNCHECKED.get(c, 'NULL')} AS {c}" for c in VIDEO_COLUMNS
                        if c not in ("raw_ref", "run_id", "extra", "record_hash"))
    ref = "'corpus.jsonl:' || row_number() OVER ()" if line_refs else "NULL"
    hashed = record_hash_expr("r", extra="NULL") if fingerprint else "NULL"
    t0 = time.perf_counter()
    con = duckdb.connect(str(db))
    con.execute("SET preserve_insertion_order = false")  # as the toolkit's ingest sets it
    con.execute(f"""CREATE TABLE videos AS SELECT r.*, {ref} AS raw_ref, 'ingest-bench' AS run_id,
                    {hashed} AS record_hash
                    FROM (SELECT {columns} FROM read_json(?, format = 'newline_delimited')) r""", [str(corpus)])
    con.close()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--per-record", action="store_true",
                        help="also time the per-record path (--per-record) on the same file")
    parser.add_argument("--updated", action="store_true",
                        help="also time re-ingesting the file with every like count changed (all records updated)")
    parser.add_argument("--unchecked", action="store_true",
                        help="also time DuckDB alone writing the catalog's rows with no checks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT / "build" if (ROOT / "build").exists() else None) as tmp:
        work = Path(tmp)
        corpus, mapping = work / "corpus.jsonl", work / "mapping.toml"
        mapping.write_text(MAPPING, encoding="utf-8")
        t0 = time.perf_counter()
        build_corpus(corpus, args.records)
        print(f"corpus: {args.records:,} records, {corpus.stat().st_size / 1e6:.0f} MB "
              f"(built in {time.perf_counter() - t0:.1f} s)")

        t0 = time.perf_counter()
        with Catalog(work / "toolkit.duckdb") as cat:
            result = ingest_path(cat, "generic", corpus, mapping=mapping)
        toolkit = time.perf_counter() - t0
        assert result.accepted == args.records, result.summary()

        per_record = None
        if args.per_record:
            t0 = time.perf_counter()
            with Catalog(work / "per-record.duckdb") as cat:
                ingest_path(cat, "generic", corpus, mapping=mapping, columnar=False)
            per_record = time.perf_counter() - t0

        t0 = time.perf_counter()
        con = duckdb.connect(str(work / "duckdb.duckdb"))
        con.execute("CREATE TABLE raw AS SELECT * FROM read_json(?, format = 'newline_delimited')",
                    [str(corpus)])
        loaded = con.execute("SELECT count(*) FROM raw").fetchone()[0]
        con.close()
        baseline = time.perf_counter() - t0
        assert loaded == args.records

        unchecked = []
        if args.unchecked:
            for label, fingerprint, line_refs in (("mapped columns", False, False),
                                                  ("+ fingerprints", True, False),
                                                  ("+ fingerprints and line refs", True, True)):
                db = work / f"unchecked-{len(unchecked)}.duckdb"
                unchecked.append((label, unchecked_load(corpus, db, fingerprint, line_refs)))

        updated = None
        if args.updated:  # last: it rewrites the corpus in place, under the same file name
            lines = corpus.read_text(encoding="utf-8").splitlines()
            with corpus.open("w", encoding="utf-8") as out:
                for line in lines:
                    record = json.loads(line)
                    record["likes"] += 1
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            del lines
            t0 = time.perf_counter()
            with Catalog(work / "toolkit.duckdb") as cat:
                again = ingest_path(cat, "generic", corpus, mapping=mapping)
            updated = time.perf_counter() - t0
            assert again.updated == args.records, again.summary()

    print(f"toolkit ingest (validation on): {toolkit:7.2f} s  "
          f"{args.records / toolkit:12,.0f} records/s")
    if per_record is not None:
        print(f"same, --per-record:             {per_record:7.2f} s  "
              f"{args.records / per_record:12,.0f} records/s  ({per_record / toolkit:.1f}x the columnar time)")
    if updated is not None:
        print(f"re-ingest, every record updated: {updated:7.2f} s  "
              f"{args.records / updated:12,.0f} records/s  ({updated / toolkit:.1f}x the first load)")
    print(f"duckdb read_json (no checks):    {baseline:7.2f} s  "
          f"{args.records / baseline:12,.0f} records/s")
    for label, seconds in unchecked:
        print(f"duckdb, catalog rows unchecked, {label}: {seconds:5.2f} s  "
              f"(toolkit at {seconds / toolkit:.2f}x its throughput)")
    print(f"ratio toolkit/duckdb throughput: {baseline / toolkit:.3f}x  (goal >= 0.5x)")


if __name__ == "__main__":
    main()
