"""What ingest questions rather than takes (issue 32, item 7), through `curate ingest generic` as a person runs it:
a byte-order mark before the first record is stripped, a count that is not whole is rejected with its value
(never rounded), an id holding a control character is rejected, and Python's own JSON messages read right."""

from __future__ import annotations

import duckdb

from tests.cli.test_cli import curate

MAPPING = 'source = "Probe"\nformat = "jsonl"\n[fields]\nnative_id = "id"\ntitle = "title"\nlike_count = "likes"\n'


def test_doubtful_records_are_questioned_on_both_paths(tmp_path):
    lines = ['\ufeff{"id": "bom", "title": "第一行", "likes": 3}',     # BOM: stripped, accepted
             '{"id": "float", "title": "t", "likes": 12.7}',        # rejected, not 13
             '{"id": "text", "title": "t", "likes": "12.7"}',       # rejected, not 13
             '{"id": "abbr", "title": "t", "likes": "1.1w"}',       # 11000 exactly (not 11000.000000000002)
             '{"id": "whole", "title": "t", "likes": 12.0}',        # 12
             '{"id": "nul\\u0000", "title": "t"}',                  # rejected: a control character in the id
             '{"id": "bell\\u0007x", "title": "t"}',                # rejected
             '{"id": "raw", "title": "a\tb"}']                      # a raw tab inside a string: invalid JSON
    # many plain records, so that the columnar path is the one that reads most lines
    lines += [f'{{"id": "n{i}", "title": "t{i}", "likes": {i}}}' for i in range(200)]
    data, mapping, db = tmp_path / "d.jsonl", tmp_path / "m.toml", tmp_path / "c.duckdb"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mapping.write_text(MAPPING, encoding="utf-8")
    done = curate("--catalog", str(db), "ingest", "generic", str(data), "--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    kept = dict(con.execute("SELECT native_id, like_count FROM videos WHERE native_id NOT LIKE 'n%'").fetchall())
    reasons = dict(con.execute("SELECT raw_ref, reason FROM rejects").fetchall())
    assert kept == {"bom": 3, "abbr": 11000, "whole": 12}
    assert con.execute("SELECT count(*) FROM videos").fetchone()[0] + len(reasons) == len(lines)
    said = sorted(reasons.values())
    assert any("like_count is not a whole number (12.7)" in r for r in said), said
    assert any("like_count is not a whole number ('12.7'" in r for r in said), said
    assert any("holds a control character (U+0000)" in r for r in said), said
    assert any("holds a control character (U+0007)" in r for r in said), said
    bad_json = [r for r in said if r.startswith("invalid JSON")]
    column = lines[7].index("\t") + 1
    assert bad_json == [f"invalid JSON: Invalid control character at column {column}"], bad_json  # not "at at"
