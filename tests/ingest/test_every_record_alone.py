"""Every record is judged alone (issue 42): a record holding text UTF-8 cannot (a lone surrogate, which JSON
can spell) is one reject naming the field, and the rest of its file loads; file names that are not UTF-8,
compressed files and symlink loops are said as such in one line; a JSON array's stray comma and an id an
earlier file loaded are warnings naming where."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import zipfile
from pathlib import Path

import pytest

from curation.core.catalog import Catalog
from curation.core.errors import InputError
from curation.ingest import ingest_path
from tests.cli.test_cli import curate
from tests.conftest import FIXTURES

MAPPING = 'source = "T"\nformat = "{fmt}"\n[fields]\nnative_id = "{key}"\ntitle = "title"\n'


def mapping(folder: Path, fmt: str = "jsonl", key: str = "id") -> Path:
    path = folder / f"{fmt}.toml"
    path.write_text(MAPPING.format(fmt=fmt, key=key), encoding="utf-8")
    return path


LINES = [b'{"id": "a", "title": "fine"}',
         b'{"id": "\\udfff", "title": "an id JSON can spell and UTF-8 cannot hold"}',
         b'{"id": "c", "title": "\\ud800 a lone high surrogate"}',
         b'{"id": "d", "title": "t", "\\udc00key": 1}',
         b'{"id": "e", "title": "t", "more": {"deep": ["x", "\\udbff"]}}',
         b'{"id": "nul\\u0000", "title": "t"}',
         b'{"id": "\xf0\x9f\x98\x80 astral", "title": "\\ud83d\\ude00 a pair is fine"}']


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "per-record"])
def test_a_record_utf8_cannot_hold_is_one_reject_naming_the_field(tmp_path, catalog, columnar):
    data = tmp_path / "d.jsonl"
    data.write_bytes(b"\n".join(LINES) + b"\n")
    result = ingest_path(catalog, "generic", data, mapping=mapping(tmp_path), columnar=columnar)
    assert (result.read, result.accepted, result.rejected) == (7, 2, 5)
    assert sorted(catalog.con.execute("SELECT native_id, title FROM videos").fetchall()) == [
        ("a", "fine"), ("😀 astral", "😀 a pair is fine")]
    rejects = {r["raw_ref"]: r for r in catalog.rows("SELECT * FROM rejects")}
    assert {ref: r["reason"] for ref, r in rejects.items()} == {
        "d.jsonl:2": "native_id has an unpaired surrogate '\\udfff' at character 0",
        "d.jsonl:3": "title has an unpaired surrogate '\\ud800' at character 0",
        "d.jsonl:4": "the name of an unmapped field has an unpaired surrogate '\\udc00' at character 0",
        "d.jsonl:5": "unmapped field more.deep[1] has an unpaired surrogate '\\udbff' at character 0",
        "d.jsonl:6": "the id 'nul\\x00' holds a control character (U+0000)"}
    # the record's own bytes are kept, and its id as the catalog can store it (the surrogate escaped)
    assert bytes(rejects["d.jsonl:2"]["raw"]) == LINES[1]
    assert rejects["d.jsonl:2"]["record_id"] == "T/\\udfff"
    assert result.first_rejected["native_id has an unpaired surrogate '\\udfff' at character 0"] == "d.jsonl:2"
    assert catalog.scalar("SELECT status FROM runs") == "ok"


def test_a_json_object_key_utf8_cannot_hold_rejects_that_record_only(tmp_path, catalog):
    data = tmp_path / "o.json"
    data.write_text('{"\\udfff": {"title": "x"}, "ok": {"title": "y"}, "\\u0000": {"title": "z"}}', encoding="utf-8")
    result = ingest_path(catalog, "generic", data, mapping=mapping(tmp_path, "json-object", "$key"))
    assert (result.read, result.accepted, result.rejected) == (3, 1, 2)
    rejects = {r["raw_ref"]: r for r in catalog.rows("SELECT * FROM rejects")}
    assert rejects["o.json:['\\udfff']"]["reason"] == "native_id has an unpaired surrogate '\\udfff' at character 0"
    assert json.loads(bytes(rejects["o.json:['\\udfff']"]["raw"])) == {"\udfff": {"title": "x"}}  # JSON's escape
    assert "control character" in rejects["o.json:['\\x00']"]["reason"]


def test_cli_prints_each_reject_kind_with_where_it_first_occurred_and_explain_finds_the_escaped_id(tmp_path):
    data, db = tmp_path / "d.jsonl", str(tmp_path / "c.duckdb")
    data.write_bytes(b"\n".join(LINES) + b"\n")
    out = curate("--catalog", db, "ingest", "generic", str(data), "--mapping", str(mapping(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert "7 read, 2 accepted, 5 rejected" in out.stdout
    assert "  rejected 1: native_id has an unpaired surrogate '\\udfff' at character 0 (first at d.jsonl:2)" \
        in out.stdout.splitlines()
    explained = curate("--catalog", db, "explain", "T/\\udfff")
    assert explained.returncode == 0, explained.stderr
    assert "at d.jsonl:2: native_id has an unpaired surrogate" in explained.stdout


def test_a_path_that_is_not_utf8_is_one_line_before_anything_is_written(tmp_path):
    name = os.fsdecode(b"\xff.jsonl")  # what Linux hands Python for that name
    (tmp_path / name).write_bytes(LINES[0] + b"\n")
    db = tmp_path / "c.duckdb"
    out = curate("--catalog", str(db), "ingest", "generic", str(tmp_path / name), "--mapping",
                 str(mapping(tmp_path)))
    assert out.returncode == 1
    assert out.stderr.splitlines() == [f"error: the corpus path {tmp_path}/\\xff.jsonl is not UTF-8 (byte 0xff in "
                                       "the name '\\xff.jsonl'): the catalog keeps names as text; rename it"]
    assert not db.exists() and not list(tmp_path.glob("*.part"))
    with Catalog(db) as cat, pytest.raises(InputError, match="not UTF-8"):  # the stage checks it too
        ingest_path(cat, "generic", tmp_path / name, mapping=mapping(tmp_path))
    with Catalog(db) as cat:
        assert cat.scalar("SELECT count(*) FROM runs") == 0


def test_a_livebot_file_name_that_is_not_utf8_rejects_that_record_and_explain_finds_it(tmp_path):
    corpus = tmp_path / "lb"
    (corpus / "video" / "cat").mkdir(parents=True)
    (corpus / "video" / "cat" / "ok.flv").write_bytes(b"")
    (corpus / "video" / "cat" / os.fsdecode(b"t\xfe.flv")).write_bytes(b"")
    db = str(tmp_path / "c.duckdb")
    out = curate("--catalog", db, "ingest", "livebot", str(corpus))
    assert out.returncode == 0, out.stderr
    assert "2 read, 1 accepted, 1 rejected" in out.stdout
    assert "rejected 1: the file name cat/t\\xfe is not UTF-8 (first at lb:cat/t\\xfe)" in out.stdout
    for spelled in ("LiveBot/cat/t\\xfe", os.fsdecode(b"LiveBot/cat/t\xfe")):  # as shown, and as the bytes
        explained = curate("--catalog", db, "explain", spelled)
        assert explained.returncode == 0, explained.stderr
        assert "at lb:cat/t\\xfe: the file name cat/t\\xfe is not UTF-8 (byte 0xfe" in explained.stdout
    missing = curate("--catalog", db, "explain", os.fsdecode(b"LiveBot/\xff"))
    assert missing.returncode == 1 and missing.stderr.splitlines() == [
        "error: LiveBot/\\xff is neither a video, a task nor a rejected record in the catalog (it is not UTF-8: "
        "looked up with each such byte written \\xNN, as rejects keep it)"]


def _zip(data: bytes) -> bytes:
    from io import BytesIO

    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("d.jsonl", data)
    return buffer.getvalue()


@pytest.mark.parametrize("kind, tool, pack", [
    ("gzip", "gunzip", gzip.compress), ("zip", "unzip", _zip), ("bzip2", "bunzip2", bz2.compress),
    ("xz", "unxz", lzma.compress), ("zstd", "unzstd", lambda d: b"\x28\xb5\x2f\xfd" + d)])
def test_a_compressed_file_is_named_as_such_not_as_invalid_utf8(tmp_path, kind, tool, pack):
    data = tmp_path / "d.jsonl"
    data.write_bytes(pack(b"\n".join(LINES)))
    for adapter, rules in (("generic", mapping(tmp_path)), ("fakesv", None), ("kuairec", None)):
        with pytest.raises(InputError) as refused:
            ingest_path(None, adapter, data, mapping=rules)
        assert str(refused.value) == f"{data} is {kind}-compressed: decompress it first ({tool})"


def test_symlink_loops_and_dangling_links_are_said_as_such(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "gone").symlink_to(tmp_path / "nothing")
    with pytest.raises(InputError, match=f"^{tmp_path}/a is a symlink loop$"):
        ingest_path(None, "fakesv", tmp_path / "a")
    with pytest.raises(InputError, match="is a symlink to .*/nothing, which does not exist$"):
        ingest_path(None, "fakesv", tmp_path / "gone")
    with pytest.raises(InputError, match="^mapping file .*/a is a symlink loop$"):
        ingest_path(None, "generic", FIXTURES / "fakesv_complete.jsonl", mapping=tmp_path / "a")


def test_a_json_array_with_a_trailing_comma_loads_with_a_warning_naming_where(tmp_path, catalog):
    data = tmp_path / "arr.json"
    data.write_text('[\n {"id": "a", "title": "x"},\n {"id": "b", "title": "y"},\n]\n', encoding="utf-8")
    result = ingest_path(catalog, "generic", data, mapping=mapping(tmp_path, "json-array"))
    assert (result.read, result.accepted, result.rejected) == (2, 2, 0)
    assert result.warnings == ["arr.json: a trailing comma after the last element at line 3, column 27 "
                               "(JSON does not allow it; the elements around it are read)"]
    recorded = json.loads(catalog.scalar("SELECT counts FROM runs"))
    assert recorded["warnings"] == result.warnings
    data.write_text('[{"id": "a"},, {"id": "b"} {"id": "c"}]', encoding="utf-8")
    warned = ingest_path(None, "generic", data, mapping=mapping(tmp_path, "json-array")).warnings
    assert warned == ["arr.json: a comma with no element before it at line 1, column 14 (JSON does not allow it; "
                      "the elements around it are read)",
                      "arr.json: no comma before element [2] at line 1, column 28 (JSON does not allow it; the "
                      "elements around it are read)"]


def test_an_id_an_earlier_file_of_the_source_loaded_is_said_with_both_files(tmp_path):
    first, second, db = tmp_path / "a.jsonl", tmp_path / "b.jsonl", str(tmp_path / "c.duckdb")
    first.write_text('{"id": "x", "title": "1"}\n{"id": "y", "title": "1"}\n', encoding="utf-8")
    second.write_text('{"id": "new", "title": "2"}\n{"id": "y", "title": "2"}\n{"id": "x", "title": "1"}\n',
                      encoding="utf-8")
    rules = str(mapping(tmp_path))
    assert curate("--catalog", db, "ingest", "generic", str(first), "--mapping", rules).returncode == 0
    out = curate("--catalog", db, "ingest", "generic", str(second), "--mapping", rules)
    assert out.returncode == 0, out.stderr
    assert "3 read, 3 accepted, 0 rejected; 2 changed (1 new, 1 updated, 1 unchanged)" in out.stdout
    warnings = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: 2 ids of b.jsonl were loaded before from another file of T (the catalog keeps one "
                        "record per id: this file's where they differ): T/y at a.jsonl:2 and b.jsonl:2; T/x at "
                        "a.jsonl:1 and b.jsonl:3"]
    again = curate("--catalog", db, "ingest", "generic", str(second), "--mapping", rules)
    assert "warning:" in again.stderr  # x stays a.jsonl's record (unchanged), so it is said again
    assert "T/x at a.jsonl:1 and b.jsonl:3" in again.stderr and "T/y" not in again.stderr
