"""Readers for the file formats corpora come in. Each yields
`(raw_ref, raw_bytes, obj_or_None, error_or_None)`, one item per source record, so
that a broken record is reported where it is and the rest of the file still loads."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from curation.core.storable import storable_json

RawItem = tuple[str, bytes, Any, str | None]
Warn = Callable[[str], None]  # told, one line each, what a reader read past (every reader takes one)


def unheard(line: str) -> None:
    """The `warn` of a caller that does not listen."""


BOM = "\ufeff"


def _decode(raw: bytes) -> tuple[str | None, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"


def _json_error(exc: json.JSONDecodeError, text: str) -> str:
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"truncated JSON (ends at column {exc.colno})"
    # some of Python's messages end in "at" themselves ("Invalid control character at")
    message = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
    return f"invalid JSON: {message} at column {exc.colno}"


def parse_json_line(ref: str, raw: bytes) -> RawItem:
    text, error = _decode(raw)
    if text is not None and text.startswith(BOM):  # editors on Windows write one before the first line
        text = text[1:]
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


def read_jsonl(path: Path, warn: Warn = unheard) -> Iterator[RawItem]:
    for line_no, raw in jsonl_lines(path):
        yield parse_json_line(f"{path.name}:{line_no}", raw)


BLANK_LINE_RE2 = r"[ \t\n\x0b\x0c\r]*"  # what `bytes.strip()` removes: such lines are not records


CHUNK_BYTES = 1 << 27  # a chunk of lines read and checked at a time (it grows for a longer line)


def jsonl_chunks(path: Path, chunk_bytes: int | None = None) -> Iterator[tuple[pa.Table, dict[int, bytes]]]:
    """The file's lines, a chunk of whole lines at a time, as Arrow columns `ord` (line
    number) and `text`, blank lines included (SQL drops them with BLANK_LINE_RE2).

    `text` keeps its line end, which JSON ignores, so the column shares one reused buffer's
    bytes instead of copying them: use a chunk before asking for the next. Strip the line
    end (`rstrip(b"\\r\\n")`) to get a record's bytes. A chunk that is not all UTF-8 is
    decoded line by line: its bad lines have null text, and their bytes come back by number."""
    buffer = bytearray(min(chunk_bytes or CHUNK_BYTES, path.stat().st_size + 1))
    filled, first_line = 0, 1
    with path.open("rb") as handle:
        while True:
            got = handle.readinto(memoryview(buffer)[filled:])
            end = filled + got
            cut = end if got == 0 else buffer.rfind(b"\n", 0, end) + 1
            if cut == 0 and got:  # no line end yet: a line longer than the buffer
                if end == len(buffer):
                    buffer = buffer + bytearray(len(buffer))
                filled = end
                continue
            if cut:
                table, invalid = _lines_table(memoryview(buffer)[:cut], first_line)
                yield table, invalid
                first_line += len(table)
                del table
            if got == 0:
                return
            tail = end - cut
            buffer[:tail] = buffer[cut:end]
            filled = tail


def _lines_table(data: memoryview, first_line: int) -> tuple[pa.Table, dict[int, bytes]]:
    raw = np.frombuffer(data, np.uint8)
    step = 1 << 22  # searched a few MB at a time, so the scratch array stays small
    ends = [np.flatnonzero(raw[at:at + step] == 10) + at for at in range(0, len(raw), step)]
    offsets = np.concatenate([[0], *(e + 1 for e in ends)]).astype(np.int64)
    if offsets[-1] != len(data):  # the file's last line, without a line end
        offsets = np.append(offsets, len(data))
    count = len(offsets) - 1
    ords = pa.array(np.arange(first_line, first_line + count, dtype=np.int64))
    lines = pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    invalid: dict[int, bytes] = {}
    try:
        lines.validate(full=True)  # UTF-8, checked in C++
    except pa.ArrowInvalid:
        texts: list[str | None] = []
        for number, start, stop in zip(range(first_line, first_line + count), offsets[:-1], offsets[1:], strict=True):
            line = bytes(data[start:stop])
            try:
                texts.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)
                invalid[number] = line.rstrip(b"\r\n")
        lines = pa.array(texts, pa.large_string())
    # in batches, so that DuckDB scans them on every core
    table = pa.table({"ord": ords, "text": lines})
    return pa.Table.from_batches(table.to_batches(max_chunksize=65_536)), invalid


def _line_column(text: str, pos: int) -> str:
    return f"line {text.count(chr(10), 0, pos) + 1}, column {pos - text.rfind(chr(10), 0, pos)}"


def read_json_array(path: Path, warn: Warn = unheard) -> Iterator[RawItem]:
    """Element by element, so a file cut off mid-way still yields what came before. A comma JSON does
    not allow (after the last element, or one too many) or one missing between two elements is read
    past, and `warn` is told where the first is and how many there are."""
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
    odd: dict[str, list[Any]] = {}  # what JSON does not allow -> [how often, where first]
    try:
        yield from _array_elements(path.name, text, pos + 1, decoder, odd)
    finally:
        for what, (count, where) in odd.items():
            warn(f"{path.name}: {what} at {where}" + (f" and {count - 1:,} more" if count > 1 else "")
                 + " (JSON does not allow it; the elements around it are read)")


def _array_elements(name: str, text: str, pos: int, decoder: json.JSONDecoder,
                    odd: dict[str, list[Any]]) -> Iterator[RawItem]:
    def note(what: str, at: int) -> None:
        odd.setdefault(what, [0, _line_column(text, at)])[0] += 1

    index, comma = 0, None  # the position of a comma read since the last element
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            yield f"{name}:[{index}]", b"", None, "truncated JSON array (no closing ']')"
            return
        if text[pos] == "]":
            if comma is not None:
                note("a trailing comma after the last element", comma)
            return
        if text[pos] == ",":
            if comma is not None or index == 0:
                note("a comma with no element before it", pos)
            comma, pos = pos, pos + 1
            continue
        if index and comma is None:
            note(f"no comma before element [{index}]", pos)
        ref = f"{name}:[{index}]"
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            yield ref, text[pos:].encode(), None, _json_error(exc, text)
            return
        yield ref, text[pos:end].encode(), obj, None
        pos, index, comma = end, index + 1, None


def read_json_object(path: Path, warn: Warn = unheard) -> Iterator[RawItem]:
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
        raw = storable_json({key: value})  # a key may be a lone surrogate, which the record's reject names
        if not isinstance(value, dict):
            yield f"{path.name}:[{key!r}]", raw, None, "record is not a JSON object"
            continue
        yield f"{path.name}:[{key!r}]", raw, {"$key": key, **value}, None


def read_csv(path: Path, warn: Warn = unheard) -> Iterator[RawItem]:
    """CSV with a header row. Bare carriage returns inside unquoted fields (KuaiRec has
    four) are folded into spaces first, so they cannot split a record in two."""
    data = path.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b" ")
    text = data.decode("utf-8", errors="surrogateescape")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    if header and header[0].startswith(BOM):
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


def read_parquet(path: Path, warn: Warn = unheard) -> Iterator[RawItem]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    for index, row in enumerate(table.to_pylist()):
        yield f"{path.name}:[{index}]", storable_json(row), row, None


READERS = {
    "jsonl": read_jsonl,
    "json-array": read_json_array,
    "json-object": read_json_object,
    "csv": read_csv,
    "parquet": read_parquet,
}


# how compressed files begin (their formats' specifications); bzip2's block magic makes "BZh" safe
MAGIC = ((b"\x1f\x8b", "gzip", "gunzip"), (b"PK\x03\x04", "zip", "unzip"), (b"PK\x05\x06", "zip", "unzip"),
         (b"\xfd7zXZ\x00", "xz", "unxz"), (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"))
BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")


def compressed_as(path: Path) -> str | None:
    """`is gzip-compressed: decompress it first (gunzip)` for a compressed file, else None."""
    with path.open("rb") as handle:
        head = handle.read(10)
    kind = next(((k, tool) for magic, k, tool in MAGIC if head.startswith(magic)), None)
    if kind is None and BZIP2.match(head):
        kind = ("bzip2", "bunzip2")
    return None if kind is None else f"is {kind[0]}-compressed: decompress it first ({kind[1]})"


def sniff_json(path: Path) -> str:
    """`json-array` for a file that opens with '[', otherwise `jsonl`."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip()
    return "json-array" if head.startswith(b"[") else "jsonl"
