"""One source record on its way into the catalog, and the checks every adapter shares.

An adapter turns a source file into `SourceRecord`s: where it came from (`raw_ref`),
its original bytes, and either the catalog fields it maps to or why it could not be
read. `normalise_record` then applies the same rules to every source, so a count
written `1.2w 赞` in FakeSV and `12000` in a CSV end up as the same integer.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from curation.core.storable import storable, text_problem, unstorable_at, value_problem
from curation.core.video_columns import COUNT, LIST, TEXT, names

# the fields a record may give, by kind (curation/core/video_columns.py)
STRING_FIELDS = names(kind=TEXT, from_record=True)
LIST_FIELDS = names(kind=LIST, from_record=True)
COUNT_FIELDS = names(kind=COUNT, from_record=True)
VIDEO_FIELDS = ("native_id", *STRING_FIELDS, *LIST_FIELDS, *COUNT_FIELDS,
                *(c for c in names(from_record=True) if c not in ("native_id", *STRING_FIELDS, *LIST_FIELDS,
                                                                 *COUNT_FIELDS)))
_KNOWN_FIELDS = frozenset(VIDEO_FIELDS)
COMMENT_FIELDS = ("comment_id", "parent_id", "author", "text", "like_count", "time_s",
                  "created_at")


class RecordError(ValueError):
    """A record that cannot enter the catalog; the message is the one-line reason."""


@dataclass
class SourceRecord:
    raw_ref: str
    raw: bytes
    fields: dict[str, Any] | None = None
    comments: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


_UNIT = {"w": 10_000, "万": 10_000, "亿": 100_000_000, "k": 1_000, "千": 1_000}
_COUNT_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([wW万亿kK千]?)$")


_MAX_COUNT = 2**63 - 1  # the catalog's BIGINT


def _short(value: Any, limit: int = 40) -> str:
    """`repr` of a value, cut so that a 400-digit number still gives a one-line reason."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def parse_count(value: Any, name: str = "count") -> int | None:
    count = _parse_count(value, name)
    if count is not None and count > _MAX_COUNT:
        raise RecordError(f"{name} is too large ({value!r})")
    return count


def _parse_count(value: Any, name: str) -> int | None:
    """Integers from numbers or strings such as `1.2w`, `3.5万`, `2亿`, `1,234`, `1.2w 赞`."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise RecordError(f"{name} must be a number, got a boolean")
    if isinstance(value, int | float):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            raise RecordError(f"{name} is not a finite number")
        if value < 0:
            raise RecordError(f"{name} is negative ({value})")
        if value != int(value):
            raise RecordError(f"{name} is not a whole number ({value!r}); a count is never rounded")
        return int(value)
    if not isinstance(value, str):
        raise RecordError(f"{name} must be a number or a count string, got {type(value).__name__}")
    text = value.strip().replace(",", "").replace("，", "")
    text = re.sub(r"\s*(赞|likes?|次|个)$", "", text, flags=re.IGNORECASE).strip()
    if text == "":
        return None
    if text.startswith("-"):
        raise RecordError(f"{name} is negative ({value!r})")
    match = _COUNT_RE.match(text)
    if not match:
        raise RecordError(f"{name} is not a count: {value!r}")
    number, unit = match.groups()
    scaled = Decimal(number) * _UNIT.get(unit.lower(), 1)  # exact: "1.1w" is 11000, not 11000.000000000002
    if scaled != scaled.to_integral_value():
        raise RecordError(f"{name} is not a whole number ({value!r} is {scaled}); a count is never rounded")
    return int(scaled)


def _check_unicode(text: str, name: str) -> str:
    """JSON can spell half of a surrogate pair (`\\ud800`); no catalog column can hold it."""
    if problem := text_problem(text, name):
        raise RecordError(problem)
    return text


def _clean_str(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordError(f"{name} must be text, got {type(value).__name__}")
    text = _check_unicode(str(value).strip(), name)
    return text or None


def _clean_list(value: Any, name: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise RecordError(f"{name} must be a list of strings, got {type(value).__name__}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise RecordError(f"{name} must be a list of strings, found {type(item).__name__}")
        item = _check_unicode(item.strip(), name)
        if item and item not in out:
            out.append(item)
    return out or None


def _clean_bool(value: Any, name: str) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value >= 0:
        return value > 0  # FakeSV is_official: 0 none, 1 personal, 2 institutional
    if isinstance(value, str) and value.strip().lower() in {"true", "false", "0", "1", "2"}:
        return value.strip().lower() in {"true", "1", "2"}
    raise RecordError(f"{name} must be a boolean, got {value!r}")


def _clean_number(value: Any, name: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise RecordError(f"{name} must be a number, got a boolean")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RecordError(f"{name} must be a number, got {_short(value)}") from None
    except OverflowError:  # an integer too large for a float
        raise RecordError(f"{name} must be a finite number >= 0, got {_short(value)}") from None
    if math.isnan(number) or math.isinf(number) or number < 0:
        raise RecordError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def _clean_time(value: Any, name: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise RecordError(f"{name} must be a time, got a boolean")
    if isinstance(value, int | float):
        try:
            seconds = value / 1000 if value > 10**11 else value  # epoch milliseconds or seconds
            return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
        except (OverflowError, ValueError, OSError):
            raise RecordError(f"{name} is out of range: {_short(value)}") from None
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            try:
                number = int(text)
            except ValueError:  # "²" is a digit to isdigit(), not to int()
                raise RecordError(f"{name} is not an ISO time or epoch: {_short(value)}") from None
            return _clean_time(number, name)
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise RecordError(f"{name} is not an ISO time or epoch: {value!r}") from None
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
        return parsed
    raise RecordError(f"{name} must be a time, got {type(value).__name__}")


def _check_size(value: Any, name: str, limit: int) -> None:
    # measured before a lone surrogate is looked for, so it is counted as the 3 bytes it would take
    if isinstance(value, str) and len(value) > limit // 4 and (
            size := len(value.encode("utf-8", "surrogatepass"))) > limit:
        raise RecordError(f"field {name} is {size:,} bytes, over the {limit:,} limit")
    if isinstance(value, list):
        for item in value:
            _check_size(item, name, limit)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_size(item, f"{name}.{key}", limit)


def _normalise_comment(comment: Any, video_id: str, n: int) -> dict[str, Any]:
    if isinstance(comment, str):
        comment = {"text": comment}
    if not isinstance(comment, dict):
        raise RecordError(f"comment {n} must be text or an object, got {type(comment).__name__}")
    unknown = set(comment) - set(COMMENT_FIELDS)
    if unknown:
        raise RecordError(f"comment {n} has unknown fields {sorted(unknown)}")
    return {
        "comment_id": _clean_str(comment.get("comment_id"), "comment_id") or f"{video_id}#c{n}",
        "video_id": video_id,
        "parent_id": _clean_str(comment.get("parent_id"), f"comment {n} parent_id"),
        "author": _clean_str(comment.get("author"), f"comment {n} author"),
        "text": _clean_str(comment.get("text"), f"comment {n} text"),
        "like_count": parse_count(comment.get("like_count"), f"comment {n} like_count"),
        "time_s": _clean_number(comment.get("time_s"), f"comment {n} time_s"),
        "created_at": _clean_time(comment.get("created_at"), f"comment {n} created_at"),
    }


def extra_json(extra: dict[str, Any]) -> str | None:
    """The unmapped fields as stored: sorted keys, so that their order in a file is not a change."""
    return json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str) if extra else None


def normalise_record(source: str, record: SourceRecord, max_field_bytes: int
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The catalog row and comments of a record, or `RecordError` with the reason."""
    if record.error:
        raise RecordError(record.error)
    fields = record.fields or {}
    unknown = fields.keys() - _KNOWN_FIELDS
    if unknown:
        raise RecordError(f"unknown catalog fields {sorted(unknown)}")
    if len(record.raw) > max_field_bytes:  # no field can be larger than the whole record
        _check_size(fields, "record", max_field_bytes)
        _check_size(record.extra, "extra", max_field_bytes)
        _check_size(record.comments, "comments", max_field_bytes)
    native_id = _clean_str(fields.get("native_id"), "native_id")
    if native_id is None:
        raise RecordError("missing id")
    control = next((c for c in native_id if unicodedata.category(c) == "Cc"), None)
    if control is not None:  # an id is looked up, typed and printed: an invisible character makes it another id
        raise RecordError(f"the id {_short(native_id)} holds a control character (U+{ord(control):04X})")
    video_id = f"{source}/{native_id}"
    row: dict[str, Any] = {"video_id": video_id, "source": source, "native_id": native_id}
    for name in STRING_FIELDS:
        row[name] = _clean_str(fields.get(name), name)
    for name in LIST_FIELDS:
        row[name] = _clean_list(fields.get(name), name)
    for name in COUNT_FIELDS:
        row[name] = parse_count(fields.get(name), name)
    row["author_verified"] = _clean_bool(fields.get("author_verified"), "author_verified")
    row["duration_s"] = _clean_number(fields.get("duration_s"), "duration_s")
    row["published_at"] = _clean_time(fields.get("published_at"), "published_at")
    row["synthetic"] = bool(_clean_bool(fields.get("synthetic"), "synthetic"))
    comments = [_normalise_comment(c, video_id, n) for n, c in enumerate(record.comments)]
    first_comment: dict[str, int] = {}
    for n, comment in enumerate(comments):
        if comment["comment_id"] in first_comment:
            raise RecordError(f"comment {n} repeats comment_id {comment['comment_id']} "
                              f"(first as comment {first_comment[comment['comment_id']]})")
        first_comment[comment["comment_id"]] = n
    row["raw_ref"] = storable(record.raw_ref)
    row["extra"] = extra_json(record.extra)
    if row["extra"] is not None and unstorable_at(row["extra"]) is not None:  # which field, then
        for key, value in record.extra.items():
            if problem := text_problem(key, "the name of an unmapped field") or value_problem(
                    value, f"unmapped field {key}"):
                raise RecordError(problem)
        raise RecordError("an unmapped field holds text UTF-8 cannot hold")
    return row, comments
