"""Whether a text can be stored in the catalog, and how to show one that cannot.

A Python string may hold what UTF-8 cannot: a lone surrogate, which JSON can spell (`"\\udfff"`), or, in a
file name Linux handed over, a byte that is not UTF-8 (`b"\\xff.jsonl"` arrives as `"\\udcff.jsonl"`).
DuckDB, Arrow and the UTF-8 files a run writes refuse such a string, and a refusal half-way through a
run leaves it `running`. `unstorable_at` is the one test; every path that takes text from outside (ingest
records, file and folder names, grade's log paths, explain's argument) asks it, and rejects or refuses
with a line that says which text and why.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any


def unstorable_at(text: str) -> int | None:
    """The index of the first character UTF-8 cannot hold (a lone surrogate); None when all can be stored."""
    if text.isascii():  # the common case, without encoding
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def storable(text: str) -> str:
    """`text` with every character UTF-8 cannot hold spelled as a JSON escape (`\\udfff`): text that can
    be stored and printed, and that `curate explain` finds when typed as shown."""
    if unstorable_at(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def storable_json(value: Any) -> bytes:
    """`value` as JSON bytes (non-ASCII kept as it is), a lone surrogate as its JSON escape: the raw bytes
    of a record that exists only as a parsed value."""
    return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")


def text_problem(text: str, name: str) -> str | None:
    """Why the field `name` cannot be stored, or None."""
    at = unstorable_at(text)
    return None if at is None else f"{name} has an unpaired surrogate {text[at]!r} at character {at}"


def value_problem(value: Any, name: str) -> str | None:
    """Why a JSON value cannot be stored: the first string in it (an object's keys too) that UTF-8
    cannot hold, named by its path (`extra.author.bio`, `extra[2]`); None when every string can be."""
    if isinstance(value, str):
        return text_problem(value, name)
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (problem := text_problem(key, f"a key of {name}")):
                return f"{problem} ('{storable(key)}')"
            if problem := value_problem(item, f"{name}.{storable(str(key))}"):
                return problem
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            if problem := value_problem(item, f"{name}[{n}]"):
                return problem
    return None


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # what breaks a line or hides in one


def one_line(text: str) -> str:
    """`text` with line breaks and other control characters escaped (`\\n`, `\\x1b`), so that a line naming
    it stays one line and shows what is there."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def shown_name(name: str | Path) -> str:
    """A file or folder name as the OS gave it, on one line: each byte that is not UTF-8 written `\\xff`,
    control characters escaped."""
    text = str(name)
    if unstorable_at(text) is not None:
        try:  # bytes that were not UTF-8 (os.fsdecode's surrogate escapes): shown as the bytes they are
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte
            text = storable(text)
    return one_line(text)


def name_problem(path: str | Path, what: str = "the path") -> str | None:
    """Why a file or folder path cannot be stored (a name in it is not UTF-8), or None."""
    text = str(path)
    at = unstorable_at(text)
    if at is None:
        return None
    part = next(p for p in Path(text).parts if unstorable_at(p) is not None)
    code = ord(text[at])
    byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"character {storable(text[at])}"
    named = "" if part == text else f" in the name '{shown_name(part)}'"
    return f"{what} {shown_name(text)} is not UTF-8 ({byte}{named}): the catalog keeps names as text; rename it"


def missing_problem(path: Path, called: str | None = None) -> str:
    """Why a path that does not exist to `exists()` cannot be opened: a symlink loop (which `exists()`
    calls missing too), a symlink to nothing, or nothing there. `called` names it (default: its path)."""
    name = called or shown_name(path)
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{name} {'is' if path.is_symlink() else 'goes through'} a symlink loop"
        if path.is_symlink():
            return f"{name} is a symlink to {shown_name(os.readlink(path))}, which does not exist"
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            return f"{name} cannot be reached: {os.strerror(exc.errno or 0)}"
    return f"{name} does not exist"


def is_loop(path: Path) -> bool:
    """Whether following `path` goes round a symlink loop."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
