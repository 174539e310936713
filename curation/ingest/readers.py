"""Readers for the file formats corpora come in. Each yields
`(raw_ref, raw_bytes, obj_or_None, error_or_None)`, one item per source record, so
that a broken record is reported where it is and the rest of the file still loads."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

RawItem = tuple[str, bytes, Any, str | None]


def _decode(raw: bytes) -> tuple[str | None, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"


def _json_error(exc: json.JSONDecodeError, text: str) -> str:
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"truncated JSON (ends at column {exc.colno})"
    return f"invalid JSON: {exc.msg} at column {exc.colno}"


def parse_json_line(ref: str, raw: bytes) -> RawItem:
    text, error = _decode(raw)
    if text is None:
        return ref, raw, None, error
    try:
        return ref, raw, json.loads(text), None
    except json.JSONDecodeError as exc:
        return ref, raw, None, _json_error(exc, text)
    except RecursionError:
        return ref, raw, None, "JSON nested too deeply to read"
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        return ref, raw, None, f"invalid JSON: {str(exc).split(';')[0]}"


def jsonl_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line end) of each non-blank line."""
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            raw = raw.rstrip(b"\r\n")
            if raw.strip():
                yield line_no, raw


def read_jsonl(path: Path) -> Iterator[RawItem]:
    for line_no, raw in jsonl_lines(path):
        yield parse_json_line(f"{path.name}:{line_no}", raw)


BLANK_LINE_RE2 = r"[ \t\n\x0b\x0c\r]*"  # what `bytes.strip()` removes: such lines are not records
_SCAN = 1 << 24  # bytes searched for line ends at a time


def jsonl_table(path: Path) -> tuple[pa.Table, dict[int, bytes]]:
    """Every line of the file as Arrow columns `ord` (line number) and `text`, blank ones
    included (SQL drops them with BLANK_LINE_RE2). `text` keeps its line end, which JSON
    ignores, so the column shares the file's bytes instead of copying them; strip it
    (`rstrip(b"\\r\\n")`) to get the record's bytes. A file that is not all UTF-8 is read
    line by line: its bad lines have null text, and their bytes come back by line number."""
    data = path.read_bytes()
    buffer = np.frombuffer(data, np.uint8)
    ends = [np.flatnonzero(buffer[start:start + _SCAN] == 10) + start for start in range(0, len(data), _SCAN)]
    offsets = np.concatenate([[0], *(e + 1 for e in ends), [len(data)]]).astype(np.int64)
    count = len(offsets) - 1
    lines = pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    invalid: dict[int, bytes] = {}
    try:
        lines.validate(full=True)  # UTF-8, checked in C++
        ords = pa.array(np.arange(1, count + 1, dtype=np.int64))
    except pa.ArrowInvalid:
        numbered, texts = [], []
        for line_no, raw in jsonl_lines(path):
            numbered.append(line_no)
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)
                invalid[line_no] = raw
        ords, lines = pa.array(numbered, pa.int64()), pa.array(texts, pa.large_string())
    # in batches, so that DuckDB scans them on every core
    table = pa.table({"ord": ords, "text": lines})
    return pa.Table.from_batches(table.to_batches(max_chunksize=65_536)), invalid


def read_json_array(path: Path) -> Iterator[RawItem]:
    """Element by element, so a file cut off mid-way still yields what came before."""
    data = path.read_bytes()
    text, error = _decode(data)
    if text is None:
        yield f"{path.name}:0", data, None, error
        return
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip())
    if not text.startswith("[", pos):
        yield f"{path.name}:0", data, None, "not a JSON array (expected '[')"
        return
    pos += 1
    index = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            yield f"{path.name}:[{index}]", b"", None, "truncated JSON array (no closing ']')"
            return
        if text[pos] == "]":
            return
        ref = f"{path.name}:[{index}]"
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            yield ref, text[pos:].encode(), None, _json_error(exc, text)
            return
        yield ref, text[pos:end].encode(), obj, None
        pos, index = end, index + 1


def read_json_object(path: Path) -> Iterator[RawItem]:
    """A JSON object keyed by record id; each value gets the key as `$key`."""
    data = path.read_bytes()
    text, error = _decode(data)
    if text is None:
        yield f"{path.name}:0", data, None, error
        return
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        yield f"{path.name}:0", data, None, _json_error(exc, text)
        return
    if not isinstance(obj, dict):
        yield f"{path.name}:0", data, None, f"expected a JSON object keyed by id, got {type(obj).__name__}"
        return
    for key, value in obj.items():
        raw = json.dumps({key: value}, ensure_ascii=False).encode()
        if not isinstance(value, dict):
            yield f"{path.name}:[{key!r}]", raw, None, "record is not a JSON object"
            continue
        yield f"{path.name}:[{key!r}]", raw, {"$key": key, **value}, None


def read_csv(path: Path) -> Iterator[RawItem]:
    """CSV with a header row. Bare carriage returns inside unquoted fields (KuaiRec has
    four) are folded into spaces first, so they cannot split a record in two."""
    data = path.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b" ")
    text = data.decode("utf-8", errors="surrogateescape")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    line_start = reader.line_num + 1
    for row in reader:
        ref = f"{path.name}:{line_start}"
        line_start = reader.line_num + 1
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow(row)
        raw = buffer.getvalue().encode("utf-8", errors="surrogateescape")
        if any("\udc80" <= ch <= "\udcff" for cell in row for ch in cell):
            yield ref, raw, None, "invalid UTF-8"
        elif len(row) != len(header):
            yield ref, raw, None, f"expected {len(header)} columns, got {len(row)}"
        else:
            yield ref, raw, dict(zip(header, row, strict=True)), None


def read_parquet(path: Path) -> Iterator[RawItem]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    for index, row in enumerate(table.to_pylist()):
        yield (f"{path.name}:[{index}]", json.dumps(row, ensure_ascii=False, default=str).encode(),
               row, None)


READERS = {
    "jsonl": read_jsonl,
    "json-array": read_json_array,
    "json-object": read_json_object,
    "csv": read_csv,
    "parquet": read_parquet,
}


def sniff_json(path: Path) -> str:
    """`json-array` for a file that opens with '[', otherwise `jsonl`."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip()
    return "json-array" if head.startswith(b"[") else "jsonl"
