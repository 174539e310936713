"""Hypothesis over what an ingest is given (issue 42): records whose ids and texts hold lone surrogates, NUL and
other control characters, astral characters, nothing, or far too much; broken lines; JSON Lines (both paths),
arrays (with a trailing comma) and objects keyed by id; file names of any bytes (`os.fsdecode`, as Linux hands
them over). Whatever comes, no traceback, read = accepted + rejected, every reject has a position and a reason,
no run is left `running`, and exactly the records the rules accept are accepted (a model of them here).

Each example gets its own folder (`tempfile.mkdtemp`) with a copy of one small catalog made once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog
from curation.core.errors import InputError
from curation.core.storable import shown_name
from curation.ingest import ingest_path
from tests.conftest import ROOT
from tests.names import is_utf8

LIMIT = 4096  # max_field_bytes of these runs, so that "far too long" stays quick to write
MAPPING = 'source = "F"\nformat = "{fmt}"\n[fields]\nnative_id = "{key}"\ntitle = "title"\n'
ODD = ["\udfff", "\ud800", "a\udc80b", "\x00", "nul\x00", "", " ", "\u3000", "😀", "𝒳" * 3, "x" * (LIMIT + 10),
       "\udfff" * (LIMIT // 2), " a ", "a", "a\u200bb", "é\u0301", "\x1f", "\u2028"]
# every character, lone surrogates included (Hypothesis leaves them out unless told)
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=6)
TEXT = st.one_of(st.sampled_from(ODD), ANY_TEXT)
GARBAGE = {"jsonl": [b'{"id": "cut', b"\xff\xfe{}", b"[1, 2]", b"42", b'{"id": "t", "title": "x",}', b"NaN"],
           "json-array": [b"42", b"[1, 2]", b'"text"', b"null"],
           "json-object": [b"42", b"[1, 2]", b'"text"', b"null"]}
NAMES = st.one_of(st.sampled_from([b"d.jsonl", b"\xff.jsonl", b"caf\xc3\xa9.json", b"\xed\xa0\x80.json", b"a:b",
                                   b"\xe2\x80\xa8", b" "]),
                  st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\x00" not in b
                                                            and b not in (b".", b"..")))


@dataclass
class Corpus:
    fmt: str
    records: list[dict[str, Any] | bytes]  # a record, or a garbage element as written
    name: bytes
    trailing_comma: bool
    ascii: bool


@st.composite
def corpora(draw: st.DrawFn) -> Corpus:
    fmt = draw(st.sampled_from(["jsonl", "json-array", "json-object"]))
    records: list[dict[str, Any] | bytes] = []
    keys: set[str] = set()  # an object holds each key once (a repeated key would be one record, the last)
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 9)) == 0:
            records.append(draw(st.sampled_from(GARBAGE[fmt])))
            continue
        record: dict[str, Any] = {"id": draw(st.one_of(TEXT, st.none()) if fmt != "json-object" else TEXT)}
        if draw(st.booleans()):
            record["title"] = draw(st.one_of(TEXT, st.none()))
        if draw(st.integers(0, 3)) == 0:
            record[draw(TEXT.filter(lambda k: k not in ("id", "title", "$key")))] = draw(TEXT)
        if fmt != "json-object" or record["id"] not in keys:
            records.append(record)
            keys.add(record["id"])
    return Corpus(fmt, records, draw(NAMES), draw(st.booleans()), draw(st.booleans()))


def encoded(value: Any, ascii: bool) -> bytes:
    # either way valid JSON: a lone surrogate written as its escape, as JSON spells it
    return json.dumps(value, ensure_ascii=ascii).encode("utf-8", "backslashreplace")


def written(corpus: Corpus) -> bytes:
    def element(r: dict[str, Any] | bytes) -> bytes:
        return r if isinstance(r, bytes) else encoded(r, corpus.ascii)

    if corpus.fmt == "jsonl":
        return b"\n".join([b"", b"  "] + [element(r) for r in corpus.records]) + b"\n"  # blank lines are no records
    if corpus.fmt == "json-array":
        return b"[\n" + b",\n".join(element(r) for r in corpus.records) + (b",\n]" if corpus.trailing_comma else b"]")
    # an object keyed by id: a garbage value goes under a key no record has
    taken = {r["id"] for r in corpus.records if isinstance(r, dict)}
    items = []
    for n, r in enumerate(corpus.records):
        if isinstance(r, bytes):
            key = next(k for k in (f"garbage {n}{'+' * i}" for i in range(len(taken) + 1)) if k not in taken)
            items.append(encoded(key, True) + b": " + r)
        else:
            items.append(encoded(r["id"], corpus.ascii) + b": " + encoded({k: v for k, v in r.items() if k != "id"},
                                                                         corpus.ascii))
    return b"{" + b", ".join(items) + b"}"


def _storable(text: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def expected_ids(corpus: Corpus) -> list[str]:
    """The native ids the rules accept, written from the rules (docs/ingest.md), not from the code: an id
    (stripped) that is there, storable and free of control characters, text fields and unmapped keys that are
    storable, no field over the limit, and the first of a repeated id."""
    accepted: list[str] = []
    for record in corpus.records:
        if isinstance(record, bytes):
            continue
        native = record["id"].strip() if isinstance(record["id"], str) else ""
        title = record.get("title")
        unmapped = {k: v for k, v in record.items() if k not in ("id", "title")}
        texts = [record["id"] or "", title or "", *unmapped.values()]
        if (not native or not _storable(native) or any(unicodedata.category(c) == "Cc" for c in native)
                or not all(map(_storable, [title or "", *unmapped, *unmapped.values()]))
                or any(len(t.encode("utf-8", "surrogatepass")) > LIMIT for t in texts) or native in accepted):
            continue
        accepted.append(native)
    return accepted


@pytest.fixture(scope="module")
def base_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz-ingest") / "base.duckdb"
    with Catalog(path):
        pass
    return path


def _example(base: Path, corpus: Corpus) -> tuple[Path, Path, Path]:
    folder = Path(tempfile.mkdtemp(dir=base.parent))
    shutil.copy(base, folder / "c.duckdb")
    data = folder / os.fsdecode(corpus.name)
    data.write_bytes(written(corpus))
    rules = folder / "m.toml"
    rules.write_text(MAPPING.format(fmt=corpus.fmt, key="$key" if corpus.fmt == "json-object" else "id"),
                     encoding="utf-8")
    return folder, data, rules


def check_catalog(folder: Path, corpus: Corpus, read: int, accepted: int, rejected: int) -> None:
    name = os.fsdecode(corpus.name)
    assert read == accepted + rejected
    assert read == len(corpus.records)
    with Catalog(folder / "c.duckdb", read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM runs WHERE status <> 'ok'") == 0
        assert sorted(r[0] for r in cat.con.execute("SELECT native_id FROM videos").fetchall()) == sorted(
            expected_ids(corpus))
        rejects = cat.rows("SELECT raw_ref, reason FROM rejects")
    assert len(rejects) == rejected
    for reject in rejects:  # a position after the file's name, and a one-line reason
        assert reject["raw_ref"].startswith(f"{name}:") and reject["raw_ref"] != f"{name}:", reject
        assert reject["reason"] and "\n" not in reject["reason"], reject


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=corpora(), columnar=st.booleans())
def test_ingest_judges_every_record_alone(base_catalog: Path, corpus: Corpus, columnar: bool) -> None:
    folder, data, rules = _example(base_catalog, corpus)
    try:
        with Catalog(folder / "c.duckdb") as cat:
            if not is_utf8(corpus.name):
                with pytest.raises(InputError, match="is not UTF-8"):
                    ingest_path(cat, "generic", data, mapping=rules, max_field_bytes=LIMIT, columnar=columnar)
                assert cat.scalar("SELECT count(*) FROM runs") == 0  # refused before a run began
                return
            result = ingest_path(cat, "generic", data, mapping=rules, max_field_bytes=LIMIT, columnar=columnar)
        check_catalog(folder, corpus, result.read, result.accepted, result.rejected)
        elements = [r for r in corpus.records if not isinstance(r, bytes) or corpus.fmt != "jsonl"]
        if corpus.fmt == "json-array" and corpus.trailing_comma and elements:
            assert any(w.startswith(f"{os.fsdecode(corpus.name)}: a trailing comma after the last element at line")
                       for w in result.warnings), result.warnings
        assert not list(folder.glob("*.part"))
    finally:
        shutil.rmtree(folder)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=corpora())
def test_the_command_line_never_shows_a_traceback(base_catalog: Path, corpus: Corpus) -> None:
    folder, data, rules = _example(base_catalog, corpus)
    try:
        done = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(folder / "c.duckdb"), "ingest",
                               "generic", str(data), "--mapping", str(rules)], cwd=ROOT, capture_output=True,
                              timeout=300, env={**os.environ, "CURATE__INGEST__MAX_FIELD_BYTES": str(LIMIT)})
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # all of it UTF-8
        assert "Traceback" not in err
        if not is_utf8(corpus.name):
            assert done.returncode == 1 and err.splitlines()[0].startswith("error: the corpus path")
            assert len(err.splitlines()) == 1, err
        else:
            assert done.returncode == 0, err
            counts = out.splitlines()[0].split(";")[0]  # "N read, A accepted, R rejected"
            read, accepted, rejected = (int(part.split()[0].replace(",", "")) for part in counts.split(", "))
            check_catalog(folder, corpus, read, accepted, rejected)
            # a line per kind of reject, a warning or a note a line each, however odd the file's name
            assert all(line.startswith("  rejected ") for line in out.splitlines()[1:]), out
            notes = ("warning: ", f"{shown_name(os.fsdecode(corpus.name))}: ", "merging ", "ingest ")
            assert all(line.startswith(notes) for line in err.splitlines()), err
        assert not list(folder.glob("*.part"))
    finally:
        shutil.rmtree(folder)
