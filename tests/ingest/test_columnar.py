"""The columnar JSON Lines path against the per-record path it must equal, row for row."""

import json

import pytest

from curation.core.catalog import MIGRATIONS, Catalog
from curation.ingest import ingest_path
from tests.ingest.fuzz import MAPPINGS, build_fuzzed_corpus


def _everything(cat: Catalog) -> dict[str, list]:
    return {
        "videos": cat.con.execute("SELECT * EXCLUDE (run_id) FROM videos ORDER BY video_id").fetchall(),
        "comments": cat.con.execute("SELECT * EXCLUDE (run_id) FROM comments ORDER BY comment_id").fetchall(),
        "rejects": cat.con.execute("SELECT * EXCLUDE (run_id) FROM rejects ORDER BY raw_ref").fetchall(),
    }


def _counts(cat: Catalog, run_id: str) -> dict:
    return json.loads(cat.scalar("SELECT counts FROM runs WHERE run_id = ?", [run_id]))


@pytest.mark.parametrize("variant", sorted(MAPPINGS))
def test_columnar_and_per_record_paths_give_the_same_catalog(tmp_path, variant):
    corpus, mapping = tmp_path / "fuzz.jsonl", tmp_path / "m.toml"
    build_fuzzed_corpus(corpus)
    mapping.write_text(MAPPINGS[variant], encoding="utf-8")
    results, snapshots = {}, {}
    for columnar in (False, True):
        with Catalog(tmp_path / f"{columnar}.duckdb") as cat:
            result = ingest_path(cat, "generic", corpus, mapping=mapping, max_field_bytes=1500, columnar=columnar)
            results[columnar], snapshots[columnar] = result, _everything(cat)
            counts = _counts(cat, result.run_id)
    slow, fast = results[False], results[True]
    assert (fast.read, fast.accepted, fast.rejected) == (slow.read, slow.accepted, slow.rejected)
    assert fast.rejects_by_reason == slow.rejects_by_reason
    assert fast.read == fast.accepted + fast.rejected
    # the corpus exercises both paths: most lines are certain as columns, many are not
    assert counts["certain_as_columns"] > 0.3 * fast.read
    assert fast.read - counts["certain_as_columns"] > 0.1 * fast.read
    assert slow.rejected > 100 and slow.accepted > 1000
    for table in ("videos", "comments", "rejects"):
        assert snapshots[True][table] == snapshots[False][table], table
    # a reject keeps its line's own bytes, numbered as the file's lines are
    lines = {f"fuzz.jsonl:{n}": raw.rstrip(b"\r\n") for n, raw in enumerate(corpus.read_bytes().split(b"\n"), 1)}
    with Catalog(tmp_path / "True.duckdb") as cat:
        for ref, raw in cat.con.execute("SELECT raw_ref, raw FROM rejects").fetchall():
            assert bytes(raw) == lines[ref], ref


def test_an_empty_or_blank_file_reads_nothing(tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text(MAPPINGS["list"], encoding="utf-8")
    for name, data in (("empty.jsonl", b""), ("blank.jsonl", b"\n  \r\n\t\n")):
        (tmp_path / name).write_bytes(data)
        result = ingest_path(None, "generic", tmp_path / name, mapping=mapping)
        assert (result.read, result.accepted, result.rejected) == (0, 0, 0)


def test_a_catalog_loaded_one_way_is_unchanged_by_the_other(tmp_path):
    corpus, mapping = tmp_path / "fuzz.jsonl", tmp_path / "m.toml"
    build_fuzzed_corpus(corpus, n=1500, seed=3)
    mapping.write_text(MAPPINGS["list"], encoding="utf-8")
    with Catalog(tmp_path / "c.duckdb") as cat:
        first = ingest_path(cat, "generic", corpus, mapping=mapping, columnar=False)
        before = _everything(cat)
        again = ingest_path(cat, "generic", corpus, mapping=mapping, columnar=True)
        assert (again.new, again.updated, again.unchanged) == (0, 0, first.accepted)
        assert _everything(cat) == before


def test_moving_a_line_is_not_a_change_but_editing_one_is(tmp_path):
    corpus, mapping = tmp_path / "c.jsonl", tmp_path / "m.toml"
    mapping.write_text('source = "S"\nformat = "jsonl"\n[fields]\nnative_id = "id"\ntitle = "t"\n', "utf-8")
    rows = [json.dumps({"id": str(i), "t": f"title {i}", "more": i}) for i in range(5)]
    corpus.write_text("\n".join(rows), encoding="utf-8")
    with Catalog(tmp_path / "c.duckdb") as cat:
        ingest_path(cat, "generic", corpus, mapping=mapping)
        corpus.write_text("\n\n".join(reversed(rows)), encoding="utf-8")
        moved = ingest_path(cat, "generic", corpus, mapping=mapping)
        assert (moved.new, moved.updated, moved.unchanged) == (0, 0, 5)
        rows[2] = json.dumps({"id": "2", "t": "title 2", "more": "edited"})
        corpus.write_text("\n".join(rows), encoding="utf-8")
        edited = ingest_path(cat, "generic", corpus, mapping=mapping)
        assert (edited.new, edited.updated, edited.unchanged) == (0, 1, 4)
        assert json.loads(cat.scalar("SELECT extra FROM videos WHERE native_id = '2'")) == {"more": "edited"}


AWKWARD = {  # each once stopped an ingest, or gave the two paths different answers
    "nested": '{"id": "n", "t": "x", "deep": ' + "[" * 2000 + "]" * 2000 + "}",
    "long int": '{"id": "b", "t": "x", "big": 1' + "0" * 5000 + "}",
    "superscript epoch": '{"id": "s", "t": "x", "when": "²"}',
    "huge epoch": '{"id": "h", "t": "x", "when": 1' + "0" * 400 + "}",
    "huge duration": '{"id": "d", "t": "x", "dur": 1' + "0" * 400 + "}",
    "huge count text": '{"id": "c", "t": "x", "n": "' + "9" * 400 + '"}',
    "quoted key": '{"id": "q", "t": "x", "a\\"b": "v", "o": 1}',
    "backslash key": '{"id": "k", "t": "x", "a\\\\b": "v", "o": 1}',
    "tab key": '{"id": "tab", "t": "x", "a\\tb": "v", "o": 1}',
}
AWKWARD_MAPPING = """source = "S"
format = "jsonl"
[fields]
native_id = "id"
title = "t"
published_at = "when"
duration_s = "dur"
like_count = "n"
label = 'a"b'
category = 'a\\b'
description = "a\\tb"
"""


def test_awkward_lines_are_rejected_or_kept_alike_and_never_stop_the_ingest(tmp_path):
    corpus, mapping = tmp_path / "a.jsonl", tmp_path / "m.toml"
    corpus.write_text("\n".join(AWKWARD.values()), encoding="utf-8")
    mapping.write_text(AWKWARD_MAPPING, encoding="utf-8")
    snapshots = {}
    for columnar in (False, True):
        with Catalog(tmp_path / f"{columnar}.duckdb") as cat:
            result = ingest_path(cat, "generic", corpus, mapping=mapping, columnar=columnar)
            assert result.read == len(AWKWARD) == result.accepted + result.rejected
            snapshots[columnar] = _everything(cat)
            reasons = dict(cat.con.execute("SELECT raw_ref, reason FROM rejects").fetchall())
            extras = dict(cat.con.execute("SELECT native_id, extra FROM videos").fetchall())
    assert snapshots[True] == snapshots[False]
    assert reasons == {
        "a.jsonl:1": "JSON nested too deeply to read",
        "a.jsonl:2": reasons["a.jsonl:2"],
        "a.jsonl:3": "published_at is not an ISO time or epoch: '²'",
        "a.jsonl:4": reasons["a.jsonl:4"],
        "a.jsonl:5": reasons["a.jsonl:5"],
        "a.jsonl:6": reasons["a.jsonl:6"],
    }
    assert "4300" in reasons["a.jsonl:2"] and "(401 characters)" in reasons["a.jsonl:4"]
    assert reasons["a.jsonl:5"].startswith("duration_s must be a finite number")
    assert reasons["a.jsonl:6"].startswith("like_count is too large")
    # mapped keys with quotes, backslashes and tabs stay out of `extra`
    assert {k: json.loads(v) for k, v in extras.items()} == {"q": {"o": 1}, "k": {"o": 1}, "tab": {"o": 1}}


def test_the_sql_spellings_of_python_text_rules_agree_with_python():
    import random
    import sys

    import duckdb

    from curation.ingest.sql_text import HASHTAG_RE2, pystrip
    from curation.ingest.text import PY_WHITESPACE, extract_hashtags

    assert "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()) == PY_WHITESPACE
    con = duckdb.connect()
    rng = random.Random(5)
    alphabet = "#ab猫,，。.!?@[]()（）\"“”:：;；、x" + "长" * 3 + PY_WHITESPACE + "\u200b\ufeff"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 90))) for _ in range(3000)]
    rows = con.execute(f"SELECT t, {pystrip('t')}, regexp_extract_all(t, ?, 1) FROM unnest(?) u(t)",
                       [HASHTAG_RE2, texts]).fetchall()
    for text, stripped, tags in rows:
        assert stripped == text.strip(), repr(text)
        assert list(dict.fromkeys(tags)) == extract_hashtags(text), repr(text)


def test_small_chunks_give_the_lines_and_the_catalog_of_one_big_one(tmp_path, monkeypatch):
    from curation.ingest import readers

    corpus, mapping = tmp_path / "fuzz.jsonl", tmp_path / "m.toml"
    build_fuzzed_corpus(corpus, n=600, seed=9)
    mapping.write_text(MAPPINGS["list"], encoding="utf-8")
    expected = [(n, raw) for n, raw in readers.jsonl_lines(corpus)]
    for size in (64, 1000, 1 << 20):  # 64 bytes: most lines are longer than a chunk
        got = []
        for table, invalid in readers.jsonl_chunks(corpus, size):
            for number, text in zip(table["ord"].to_pylist(), table["text"].to_pylist(), strict=True):
                raw = invalid[number] if text is None else text.encode().rstrip(b"\r\n")
                if raw.strip():
                    got.append((number, raw))
        assert got == expected, size
    snapshots = {}
    for size in (300, readers.CHUNK_BYTES):
        monkeypatch.setattr(readers, "CHUNK_BYTES", size)
        with Catalog(tmp_path / f"{size}.duckdb") as cat:
            ingest_path(cat, "generic", corpus, mapping=mapping)
            snapshots[size] = _everything(cat)
    assert snapshots[300] == snapshots[readers.CHUNK_BYTES]


def test_unmapped_fields_are_stored_as_before_and_their_order_is_not_a_change(tmp_path):
    corpus, mapping = tmp_path / "c.jsonl", tmp_path / "m.toml"
    mapping.write_text('source = "S"\nformat = "jsonl"\n[fields]\nnative_id = "id"\ntitle = "t"\n', "utf-8")
    corpus.write_text('{"id": 1, "t": "a", "q": 1, "z": {"y": 1, "x": [2.50, 1e2, "\\u00e9"]}, "p": "x", '
                      '"r": 1, "r": 2}\n{"id": 2, "t": "b", "q": 1, "p": "x"}\n', encoding="utf-8")
    with Catalog(tmp_path / "c.duckdb") as cat:
        ingest_path(cat, "generic", corpus, mapping=mapping)
        stored = dict(cat.con.execute("SELECT native_id, CAST(extra AS VARCHAR) FROM videos").fetchall())
        # Python's json.dumps(sort_keys=True), as every earlier version wrote it (the last "r" wins)
        assert stored == {"1": '{"p": "x", "q": 1, "r": 2, "z": {"x": [2.5, 100.0, "é"], "y": 1}}',
                          "2": '{"p": "x", "q": 1}'}
        corpus.write_text('{"p": "x", "t": "b", "id": 2, "q": 1}\n', encoding="utf-8")
        again = ingest_path(cat, "generic", corpus, mapping=mapping)
        assert (again.new, again.updated, again.unchanged) == (0, 0, 1)


@pytest.mark.parametrize("version", [14, 15])
def test_the_fingerprint_migrations_give_stored_rows_the_fingerprint_the_ingest_gives(tmp_path, version):
    corpus, mapping = tmp_path / "fuzz.jsonl", tmp_path / "m.toml"
    build_fuzzed_corpus(corpus, n=400, seed=4)
    mapping.write_text(MAPPINGS["list"], encoding="utf-8")
    path = tmp_path / "c.duckdb"
    with Catalog(path) as cat:
        first = ingest_path(cat, "generic", corpus, mapping=mapping)
        hashes = cat.con.execute("SELECT video_id, record_hash FROM videos ORDER BY 1").fetchall()
        # as a catalog of an earlier version: other fingerprints, the migration not applied
        cat.con.execute("UPDATE videos SET record_hash = md5(video_id)")
        cat.con.execute("DELETE FROM schema_migrations WHERE version >= ?", [version])
        for table, column in (("videos", "ingest_run"), ("comments", "ingest_run"), ("shortcut_configs",
                                                                                    "first_run_id")):
            cat.con.execute(f"ALTER TABLE {table} RENAME COLUMN run_id TO {column}")  # as before migration 22
        # the fingerprint steps (and the copy of videos after them) run again; the later steps, which
        # change other tables, stay applied, but for 22 (the run column's one name), which runs on opening
        cat._migrate(MIGRATIONS[:16])
        for later in range(17, 22):
            cat.con.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, now())", [later])
        cat._migrate(MIGRATIONS[:22])  # the run column's one name again
        for later in range(23, len(MIGRATIONS) + 1):
            cat.con.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, now())", [later])
    with Catalog(path) as cat:
        assert cat.con.execute("SELECT video_id, record_hash FROM videos ORDER BY 1").fetchall() == hashes
        again = ingest_path(cat, "generic", corpus, mapping=mapping)
    assert (again.new, again.updated, again.unchanged) == (0, 0, first.accepted)
